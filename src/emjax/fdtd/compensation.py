"""float32 residuals around point sources for 16-bit field storage (:mod:`.fieldstore`).

A point source's near field is far above the field around it (the dipole's grows as
1/r^3 towards its edge), so rounding it to 16 bits every half-step injects noise that
is large next to the radiated field a few cells away (one H100: a dipole 3 cells from a
CPML, probed 6 cells away, -12 dB with bfloat16, -33 dB with float16 against float32).
In a box around each source the run therefore keeps the rounding error as a float32
residual r = F - stored(F), so that the box's fields are float32 to the update:

    H_new = a (H_s + r_H) + sign b curl(E_s + r_E)
          = [the bulk update of the stored fields] + sign b (curl r_E + a r_H / (sign b))

The bracketed correction is a patch on the box grown by one cell (r is zero outside
it), added to the curl like the TF/SF corrections (``extra`` of
:func:`emjax.fdtd.update3d.update_H`, inside the fused update); after the half-step the
new residual is the float32 result minus its stored value, on the box. Cells outside a
box read the stored values at its edge, where the source's field has fallen by the
box's half-width cubed. Terms that read the fields elsewhere (dispersive poles, smoothed
couplings, conformal faces, monitors) see the stored values: they miss only what a run
without the boxes misses everywhere.

Boxes stay two cells clear of the outer walls, and boxes that overlap are merged. In
a CPML slab the residual enters the bulk curl but not psi: the slab treats it as
vacuum, an error of the residual's own (rounding) size.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
from jax import lax

from .cpml import CURL_TERMS
from .update3d import coefficient

SOURCE_BOX = 6
"""Half-width in cells of the residual box about each point source's edge (13^3 cells:
the near field at its edge is 6^3 times below the source cell's)."""

LARGEST_BOX = 64**3
"""Merged boxes above this many cells keep no residual (a line of close sources)."""


def source_boxes(indices, nodes, half: int | None = None) -> tuple:
    """((start, shape), ...) of the residual boxes of point sources on grid ``indices``
    ((i, j, k) each), ``nodes`` the physical node counts, ``half`` the half-width (None:
    :data:`SOURCE_BOX`); clipped two cells inside the outer walls (the patches then miss
    the walls' masks), overlapping ones merged."""
    half = SOURCE_BOX if half is None else half
    lo_ok = [2, 2, 2]
    hi_ok = [nodes[a] - 3 for a in range(3)]  # the last index a box may hold
    boxes = []
    for idx in indices:
        lo = [max(int(idx[a]) - half, lo_ok[a]) for a in range(3)]
        hi = [min(int(idx[a]) + half, hi_ok[a]) for a in range(3)]
        if all(h >= l_ for l_, h in zip(lo, hi, strict=True)):
            boxes.append((lo, hi))
    merged = True
    while merged:  # merge until no two boxes overlap
        merged = False
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                (a0, a1), (b0, b1) = boxes[i], boxes[j]
                if all(a0[a] <= b1[a] and b0[a] <= a1[a] for a in range(3)):
                    boxes[i] = ([min(a0[a], b0[a]) for a in range(3)],
                                [max(a1[a], b1[a]) for a in range(3)])
                    del boxes[j]
                    merged = True
                    break
            if merged:
                break
    out = []
    for lo, hi in sorted(boxes):
        shape = tuple(h - l_ + 1 for l_, h in zip(lo, hi, strict=True))
        if math.prod(shape) <= LARGEST_BOX:
            out.append((tuple(lo), shape))
    return tuple(out)


def zeros(boxes, dtype) -> tuple:
    """(r_E, r_H): per box, three zero residual arrays of each field."""
    return tuple(tuple(tuple(jnp.zeros(shape, dtype) for _ in range(3)) for _, shape in boxes)
                 for _ in "EH")


def _slices(start, shape) -> tuple:
    return tuple(slice(s, s + n) for s, n in zip(start, shape, strict=True))


def _diff(r, axis: int, backward: bool):
    """r[i] - r[i-1] (backward) or r[i+1] - r[i] along ``axis``, zero beyond r."""
    z = jnp.zeros_like(lax.slice_in_dim(r, 0, 1, axis=axis))
    n = r.shape[axis]
    if backward:
        return r - jnp.concatenate([z, lax.slice_in_dim(r, 0, n - 1, axis=axis)], axis)
    return jnp.concatenate([lax.slice_in_dim(r, 1, n, axis=axis), z], axis) - r


def patches(r_drive, r_self, coeffs, lay, boxes, *, electric: bool) -> list:
    """Per component, the (start, patch) curl terms that put the residuals into the
    update of E (``electric``) or H: ``r_drive`` the residuals of the field whose curl
    drives it, ``r_self`` its own (per box, three arrays)."""
    sign = 1.0 if electric else -1.0
    out: list = [[], [], []]
    for (start, shape), rd, rs in zip(boxes, r_drive, r_self, strict=True):
        grown = tuple(s - 1 for s in start)
        pad = [(1, 1, 0)] * 3
        for comp in range(3):
            term = None
            for s_, src, ax in CURL_TERMS[comp]:
                d = s_ * lay.inv_d[ax] * _diff(lax.pad(rd[src], jnp.zeros((), rd[src].dtype),
                                                       pad), ax, electric)
                term = d if term is None else term + d
            a, b = coefficient(coeffs, comp, _slices(start, shape))
            a, b = jnp.broadcast_to(a, shape), jnp.broadcast_to(b, shape)
            own = jnp.where(b != 0, a * rs[comp] / jnp.where(b != 0, sign * b, 1), 0)
            out[comp].append((grown, term + lax.pad(own.astype(term.dtype),
                                                    jnp.zeros((), term.dtype), pad)))
    return out


def residuals(F, kept, storage, kind: str, boxes) -> tuple:
    """Per box, F - stored(F) of the three components: ``F`` the float32 result of the
    half-step, ``kept`` its stored form (``storage.store(F)``)."""
    out = []
    for start, shape in boxes:
        sl = _slices(start, shape)
        out.append(tuple(f[sl] - g for f, g in zip(
            F, storage.load(tuple(k[sl] for k in kept), kind), strict=True)))
    return tuple(out)


def merged(extra, more) -> list | None:
    """Two ``extra`` lists (per component, (start, patch) terms; None: none) as one."""
    if extra is None:
        return more
    return [list(a) + list(b) for a, b in zip(extra, more, strict=True)]
