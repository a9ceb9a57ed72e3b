"""First-order Mur absorbing boundary (G. Mur, IEEE Trans. EMC 23, 377, 1981).

Seed 001 quotes its GPU speed with this boundary as the reference the CPML variants
are judged against. On a face normal to axis ``a``, each tangential E component on the
boundary plane (index 0, or the last stored index on the upper face) follows the
one-way wave equation discretised as (Taflove and Hagness 2005, eq. 6.35)

    E_0^{n+1} = E_1^n + (c dt - d_a) / (c dt + d_a) (E_1^{n+1} - E_0^n)

with c the wave speed of the medium at the face and E_1 the first interior plane.
Everything it needs is in E^n and E^{n+1}, so the boundary holds no state of its
own. The upper face sits on the last stored plane: the half cell beyond it is never
read by any kept value. Normal incidence is absorbed to about -30 to -40 dB, oblique
incidence much worse: it is a speed reference, not an accurate boundary.

The patched planes are written with ``jnp.where`` against an index comparison, so XLA
fuses them into the E update instead of copying whole fields (``.at[].set`` did).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax


def mur_coefficient(c_dt: float, d: float) -> float:
    """(c dt - d) / (c dt + d): the Mur factor for a face with cell size ``d`` in m."""
    return (c_dt - d) / (c_dt + d)


def _plane(F, axis: int, index: int):
    return lax.slice_in_dim(F, index, index + 1, axis=axis)


def apply_mur(E_old: tuple, E_new: tuple, faces: tuple[tuple[int, int, float], ...]) -> tuple:
    """E^{n+1} with every Mur face's tangential planes replaced by the Mur update.

    E_old, E_new: (Ex, Ey, Ez) at steps n and n+1, each of the grid's shape, V/m.
    faces: static tuple of (axis, side, k) with side 0 (low) or 1 (high) and k the
    :func:`mur_coefficient` of that face.
    """
    out = list(E_new)
    for axis, side, k in faces:
        for c in range(3):
            if c == axis:
                continue
            F_old, F_new = E_old[c], out[c]
            n = F_new.shape[axis]
            b, i = (0, 1) if side == 0 else (n - 1, n - 2)
            value = _plane(F_old, axis, i) + k * (_plane(F_new, axis, i) - _plane(F_old, axis, b))
            at_face = lax.broadcasted_iota(jnp.int32, F_new.shape, axis) == b
            out[c] = jnp.where(at_face, value, F_new)
    return tuple(out)


__all__ = ["apply_mur", "mur_coefficient"]
