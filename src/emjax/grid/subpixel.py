"""Sub-cell averaging of permittivity where a dielectric surface cuts a Yee cell.

Staircasing moves a curved surface by up to half a cell, a first-order error that
makes, for example, a sphere's RCS wander with resolution instead of converging.
Here each E sample whose dual cell (the cell-sized box centred on it) is cut by a
structure's surface gets an effective permittivity from the filling fraction f of
that box and the surface normal n (Farjadpour et al., Opt. Lett. 31, 2972 (2006);
as Meep does, keeping the diagonal term only):

    1 / eps_eff = n_c^2 <1/eps> + (1 - n_c^2) / <eps>,
    <eps> = f eps_s + (1 - f) eps_b,  <1/eps> = f / eps_s + (1 - f) / eps_b,

for component c; conductivity is averaged arithmetically. f and n come from
``samples^3`` points in the dual cell (n points from the filled part's centroid
towards the empty part's). Effective media are quantised to ``levels`` steps of f
between the two media so that the coefficient table stays small. Averaging is done
against the background medium only, and only where the sample holds the background
or the structure's own medium (later structures keep their cells). PEC and Voxels
structures are left staircased.
"""

from __future__ import annotations

import numpy as np

from ..model.geometry import Voxels
from ..model.media import Medium
from .cad import inside_grid, is_cad
from .yee import COMPONENTS, YeeGrid

_SLAB = 8  # x-planes evaluated at once


def _medium_id(media: list, m, background, q: int, levels: int, mid: int) -> int:
    if q == 0:
        return 0
    if q == levels:
        return mid
    t = q / levels
    media.append(Medium(
        eps_r=background.eps_r + t * (m.eps_r - background.eps_r),
        sigma=background.sigma + t * (m.sigma - background.sigma),
        mu_r=m.mu_r, sigma_m=m.sigma_m, name=f"{m.name or 'medium'} averaged {q}/{levels}"))
    return len(media) - 1


def average(grid: YeeGrid, background, structures, media: list, index: dict, *,
            samples: int = 4, levels: int = 64) -> tuple[list, dict]:
    """(media, index) with averaged media at cut E samples; inputs are not modified."""
    media = list(media)
    index = {c: a.copy() for c, a in index.items()}
    cache: dict[tuple, int] = {}
    eps_b = background.eps_r
    d = np.asarray(grid.spacing)
    u = (np.arange(samples) + 0.5) / samples - 0.5  # sub-sample offsets in cells
    for s in structures:
        m = s.medium
        if isinstance(s.geometry, Voxels) or not isinstance(m, Medium):
            continue
        mid = next(i for i, x in enumerate(media) if x == m)
        lo_b, hi_b = s.geometry.bounds()
        for comp in COMPONENTS[:3]:
            coords = grid.coords(comp)
            sel = []
            for a in range(3):
                x = coords[a]
                k = np.nonzero((x >= lo_b[a] - d[a]) & (x <= hi_b[a] + d[a]))[0]
                sel.append(k)
            if any(k.size == 0 for k in sel):
                continue
            i0, j0, k0 = (int(k[0]) for k in sel)
            i1, j1, k1 = (int(k[-1]) + 1 for k in sel)
            ox, oy, oz = (np.array(np.meshgrid(u, u, u, indexing="ij")).reshape(3, -1)
                          * d[:, None])
            offs = np.stack([ox, oy, oz], axis=-1) / d  # (S, 3) in cells
            Y = coords[1][j0:j1][None, :, None, None]
            Z = coords[2][k0:k1][None, None, :, None]
            for a0 in range(i0, i1, _SLAB):  # bounded memory on large grids
                a1 = min(a0 + _SLAB, i1)
                X = coords[0][a0:a1][:, None, None, None]
                shape = (a1 - a0, j1 - j0, k1 - k0, ox.size)
                if is_cad(s.geometry):  # the sub-samples form one finer tensor grid
                    inside = _fine(s.geometry, X[:, 0, 0, 0], Y[0, :, 0, 0], Z[0, 0, :, 0],
                                   u, d, shape)
                else:
                    inside = s.geometry.inside(X + ox, Y + oy, Z + oz)  # (.., samples^3)
                inside = np.broadcast_to(inside, shape)
                f = inside.mean(axis=-1)
                view = index[comp][a0:a1, j0:j1, k0:k1]
                cut = (f > 0) & (f < 1) & ((view == 0) | (view == mid))
                if not cut.any():
                    continue
                # Normal: from the filled centroid towards the empty one.
                w_in = inside[cut].astype(np.float64)
                c_in = w_in @ offs / w_in.sum(-1, keepdims=True)
                c_out = (1 - w_in) @ offs / (1 - w_in).sum(-1, keepdims=True)
                n = c_out - c_in
                n2 = (n[:, COMPONENTS.index(comp)] ** 2) / np.maximum((n**2).sum(-1), 1e-300)
                fc = f[cut]
                mean = fc * m.eps_r + (1 - fc) * eps_b
                inv = fc / m.eps_r + (1 - fc) / eps_b
                eps_eff = 1.0 / (n2 * inv + (1 - n2) / mean)
                # Quantise as an equivalent filling fraction of the arithmetic mix.
                g = (eps_eff - eps_b) / (m.eps_r - eps_b) if m.eps_r != eps_b else fc
                q = np.clip(np.rint(g * levels), 0, levels).astype(np.int64)
                ids = np.empty(q.shape, np.int64)
                for qv in np.unique(q):
                    key = (mid, int(qv))
                    if key not in cache:
                        cache[key] = _medium_id(media, m, background, int(qv), levels, mid)
                    ids[q == qv] = cache[key]
                if len(media) > 256 and view.dtype == np.uint8:
                    for c in index:
                        index[c] = index[c].astype(np.uint16)
                    view = index[comp][a0:a1, j0:j1, k0:k1]
                view[cut] = ids
    return media, index


def _fine(geom, xs, ys, zs, u, d, shape) -> np.ndarray:
    """Membership at the sub-samples ``x + u * dx`` (the points ``X + ox`` above, same
    floating-point values) from one tensor-grid test, as (nx, ny, nz, samples^3) with
    the sub-sample order of ``np.meshgrid(u, u, u, indexing="ij")``."""
    s = len(u)
    fine = inside_grid(geom, *((ax[:, None] + u * d[a]).ravel()
                               for a, ax in enumerate((xs, ys, zs))))
    fine = fine.reshape(shape[0], s, shape[1], s, shape[2], s).transpose(0, 2, 4, 1, 3, 5)
    return fine.reshape(shape)


__all__ = ["average"]
