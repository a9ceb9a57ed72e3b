"""Plane-wave reflection and transmission of a stack of layers at normal incidence.

The characteristic-matrix (transfer-matrix) method of Born and Wolf, *Principles of
Optics*, 7th ed., sec. 1.6 (Airy's formulae for one layer), written for the time
convention e^{+j omega t} of :mod:`emjax.model.dispersion` (a passive index has
``Im n <= 0``; a forward wave is e^{-j k0 n x}). In a layer of index n and thickness h,
with E and U = eta0 H_y (the tangential fields), the fields at the layer's front face
follow from those at its back face by

    [E, U]_front = M [E, U]_back,   M = [[cos d, j sin d / n], [j n sin d, cos d]],
    d = k0 n h,

and a stack's M is the product of its layers' in order. With unit incidence from the
medium n_in and t the transmitted field at the stack's back face in n_out:

    t = 2 n_in / (n_in M11 + n_in n_out M12 + M21 + n_out M22),
    r = t (M11 + n_out M12) - 1.

Pure NumPy; complex indices (lossy, dispersive, metallic) are allowed.
"""

from __future__ import annotations

import numpy as np

from ..constants import c0


def stack_rt(f, indices, thicknesses, n_in=1.0, n_out=1.0) -> tuple[np.ndarray, np.ndarray]:
    """(r, t) of a layer stack at normal incidence, e^{+j omega t} (module docstring).

    f: frequencies in Hz, shape (nf,). indices: one entry per layer, each a complex
    refractive index (a scalar or an array of shape (nf,) for a dispersive layer, e.g.
    ``np.sqrt(medium.eps(f))``). thicknesses: per layer, in m. n_in, n_out: the
    half-spaces' indices (scalar or (nf,)). r is the reflected field at the front face
    per unit incident field there; t the transmitted field at the back face.
    """
    if len(indices) != len(thicknesses):
        raise ValueError(f"indices has {len(indices)} layers but thicknesses "
                         f"{len(thicknesses)}: give one thickness per layer")
    f = np.asarray(f, dtype=float)
    k0 = 2 * np.pi * f / c0
    one = np.ones_like(f, dtype=complex)
    m11, m12, m21, m22 = one, 0 * one, 0 * one, one
    for n, h in zip(indices, thicknesses, strict=True):
        n = np.asarray(n, dtype=complex) * one
        d = k0 * n * h
        a11, a12, a21, a22 = np.cos(d), 1j * np.sin(d) / n, 1j * n * np.sin(d), np.cos(d)
        m11, m12, m21, m22 = (m11 * a11 + m12 * a21, m11 * a12 + m12 * a22,
                              m21 * a11 + m22 * a21, m21 * a12 + m22 * a22)
    n_in, n_out = np.asarray(n_in, dtype=complex), np.asarray(n_out, dtype=complex)
    t = 2 * n_in / (n_in * m11 + n_in * n_out * m12 + m21 + n_out * m22)
    r = t * (m11 + n_out * m12) - 1
    return r, t


__all__ = ["stack_rt"]
