"""First-order Mur absorbing boundary (G. Mur, IEEE Trans. EMC 23, 377, 1981).

Seed 001 quotes its GPU speed with this boundary as the reference the CPML variants
are judged against. On a face normal to axis ``a``, each tangential E component on the
boundary plane (index 0, or the last physical index on the upper face) follows the
one-way wave equation discretised as (Taflove and Hagness 2005, eq. 6.35)

    E_0^{n+1} = E_1^n + (c dt - d_a) / (c dt + d_a) (E_1^{n+1} - E_0^n)

with c the wave speed of the medium at the face and E_1 the first interior plane.
Everything it needs is in E^n and E^{n+1}, so the boundary holds no state of its
own (a checkpoint of E is a checkpoint of the boundary). The upper face sits on the
last physical plane (``nodes``: arrays padded along z carry inert zeros beyond it);
the half cell beyond it is dead: the update zeroes the tangential H there
(``update3d``), so nothing beyond the Mur plane carries energy. At normal
incidence the reflection is the discrete one of the scheme, -50 dB at 30 cells per
wavelength and -38 dB at 12 (tests/test_mur.py); a dipole's wave 4 cells from the
walls came back at -24 dB, against -64 dB for a 6-cell CPML: it is a speed
reference, not an accurate boundary.

Where two Mur faces meet (an edge line), the faces are applied in order and a later
face's interior plane already holds the earlier faces' values, as in the sequential
reference :func:`apply_mur`.

The planes are written folded: :func:`mur_planes` computes them from slices of E^n
and of the updated E^{n+1} and the update writes them with ``jnp.where`` against an
index comparison in its one fused pass, behind an optimization barrier so that XLA
does not recompute the planes per element (the CPML slab terms do the same; the GPU
compiler keeps the barrier through fusion). Writing each plane in place with
``dynamic_update_slice`` gave the same numbers bit for bit but moved more bytes: XLA's
cost analysis of a 48^3 CPU step with Mur on all faces counted 206 B/cell folded and
307 in place, against 108 for PEC walls; that variant left src/ (BENCHMARKS.md).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

MurFace = tuple[int, int, float]
"""(axis, side, k): axis 0/1/2, side 0 (low) or 1 (high), k the Mur coefficient."""


def mur_coefficient(c_dt: float, d: float) -> float:
    """(c dt - d) / (c dt + d): the Mur factor for a face with cell size ``d`` in m,
    ``c_dt`` the wave speed (m/s) times the time step (s)."""
    return (c_dt - d) / (c_dt + d)


def planes_index(n: int, side: int) -> tuple[int, int]:
    """(boundary index, first interior index) along an axis of ``n`` stored entries."""
    return (0, 1) if side == 0 else (n - 1, n - 2)


def _plane(F, axis: int, index: int):
    return lax.slice_in_dim(F, index, index + 1, axis=axis)


def _iota(shape, axis: int):
    return lax.broadcasted_iota(jnp.int32, shape, axis)


def mur_planes(F_old, F_new, comp: int, faces: tuple[MurFace, ...], nodes=None) -> list:
    """Mur values of component ``comp`` on each face it is tangential to.

    F_old, F_new: the component at steps n and n+1 (before any Mur face), V/m;
    nodes: the physical shape (None: the arrays' own shape). Returns [(axis,
    boundary index, plane)], the plane of size 1 along ``axis``, in face order;
    each face's interior plane holds the earlier faces' values.
    """
    out: list = []
    for axis, side, k in faces:
        if axis == comp:  # the normal component is not touched
            continue
        b, i = planes_index((nodes or F_new.shape)[axis], side)
        inner = _plane(F_new, axis, i)
        for ax2, b2, v2 in out:
            if ax2 == axis:  # the opposite face: its plane never crosses this one (n >= 3)
                continue
            inner = jnp.where(_iota(inner.shape, ax2) == b2, _plane(v2, axis, i), inner)
        out.append((axis, b, _plane(F_old, axis, i) + k * (inner - _plane(F_old, axis, b))))
    return out


def put_planes(F, planes: list):
    """F with each (axis, index, plane) of ``planes`` written in order (later wins)."""
    for axis, b, v in planes:
        F = jnp.where(_iota(F.shape, axis) == b, v.astype(F.dtype), F)
    return F


def apply_mur(E_old: tuple, E_new: tuple, faces: tuple[MurFace, ...]) -> tuple:
    """E^{n+1} with every Mur face's tangential planes replaced by the Mur update.

    E_old, E_new: (Ex, Ey, Ez) at steps n and n+1, each of the grid's shape, V/m.
    faces: static tuple of (axis, side, k) with side 0 (low) or 1 (high) and k the
    :func:`mur_coefficient` of that face. The reference form, applied after an
    update; ``update3d`` applies the same planes inside its E update.
    """
    return tuple(put_planes(E_new[c], mur_planes(E_old[c], E_new[c], c, faces))
                 for c in range(3))


__all__ = ["MurFace", "apply_mur", "mur_coefficient", "mur_planes",
           "planes_index", "put_planes"]
