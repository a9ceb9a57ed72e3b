"""Rasterize scenario geometry onto each Yee component's own sample positions.

The result is a list of unique media and, per component, a small-integer index
into it (uint8 when at most 256 media, else uint16). Structures are painted in
order, later ones over earlier ones (CAD geometry through :mod:`emjax.grid.cad`);
each is evaluated only inside its bounding box, in slabs along x so that memory stays
bounded on large grids.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.geometry import Voxels
from .cad import inside_grid
from .yee import COMPONENTS, YeeGrid

_SLAB = 16  # x-planes evaluated at once


@dataclass(frozen=True)
class MaterialMap:
    """media: unique media (index 0 is the background); index: comp -> int array."""

    media: tuple
    index: dict[str, np.ndarray]


def _index_dtype(n: int) -> np.dtype:
    if n <= 256:
        return np.dtype(np.uint8)
    if n <= 65536:
        return np.dtype(np.uint16)
    raise ValueError(f"{n} distinct media exceed the 65536 that uint16 indices address")


def rasterize(grid: YeeGrid, background, structures) -> MaterialMap:
    """Material index of every component sample; see the module docstring."""
    media: list = [background]

    def medium_id(m) -> int:
        for i, known in enumerate(media):
            if known == m:
                return i
        media.append(m)
        return len(media) - 1

    # Register media first so the index dtype is known before allocating.
    plans = []
    for s in structures:
        if isinstance(s.geometry, Voxels):
            lut = {int(k): medium_id(v) for k, v in s.geometry.media.items()}
            plans.append((s.geometry, lut))
        else:
            plans.append((s.geometry, medium_id(s.medium)))
    dtype = _index_dtype(len(media))

    index = {}
    for comp in COMPONENTS:
        # The stored shape: entries beyond the physical ones (the z padding, the unused
        # last entry of an extended axis) keep the background, which is harmless
        # because the update holds the fields there at zero.
        idx = np.zeros(grid.shape, dtype=dtype)
        x, y, z = grid.coords(comp)
        for geom, target in plans:
            lo, hi = geom.bounds()
            sl = []
            for a, ax in enumerate((x, y, z)):
                sel = np.nonzero((ax >= lo[a]) & (ax <= hi[a]))[0]
                sl.append((int(sel[0]), int(sel[-1]) + 1) if sel.size else None)
            if any(s is None for s in sl):
                continue
            (i0, i1), (j0, j1), (k0, k1) = sl
            ys = y[j0:j1][None, :, None]
            zs = z[k0:k1][None, None, :]
            for a0 in range(i0, i1, _SLAB):
                a1 = min(a0 + _SLAB, i1)
                xs = x[a0:a1][:, None, None]
                view = idx[a0:a1, j0:j1, k0:k1]
                if isinstance(geom, Voxels):
                    labels = geom.sample(xs, ys, zs)
                    for label, mid in target.items():
                        view[labels == label] = mid
                else:
                    # Each component's own positions: a tensor grid (CAD geometry
                    # casts one ray per (x, y) column, emjax.grid.cad).
                    view[inside_grid(geom, x[a0:a1], y[j0:j1], z[k0:k1])] = target
        index[comp] = idx
    return MaterialMap(media=tuple(media), index=index)
