"""Poynting flux through one face of the Yee grid: the pairing every flux in emjax uses.

A face normal to axis a lies on an E-node plane p. Its tangential components are the
other two axes, b = (a + 1) % 3 and c = (a + 2) % 3, so that (a, b, c) is right-handed
and ``(E x H*) . a_hat = E_b H_c* - E_c H_b*``. The Yee grid's exact discrete Poynting
theorem pairs every tangential E sample on the plane (the rim of the face included,
with the full cell area ``d_b d_c``) with the tangential H sample half a cell to the
side the flux is counted towards, at the same tangential position. Summed over the
six faces of a closed box of E nodes, each with its H half a cell outside, this is
exactly the power the sources inside deliver less what the E edges inside dissipate
(:func:`emjax.analysis.sar.box_flux`, the FluxMonitor's closed box); one face alone is
the flux through an open plane (the FluxMonitor's plane).

Spectra: with E and H each Fourier-transformed at its own sample times (emjax's DFT,
``X(f) = sum_n x^n exp(-j 2 pi f t_n) dt``, field units times s), the flux
``0.5 Re sum (E x H*) . n dA`` is in W s^2: the spectral power of the pulsed fields.
Dividing by ``|S(f)|^2`` of a source spectrum S (s^2 times its unit squared) gives W
per unit source amplitude squared.
"""

from __future__ import annotations

import numpy as np


def tangential_pair(axis: int) -> tuple[int, int]:
    """(b, c): the tangential axes of a face normal to ``axis``, right-handed with it."""
    return (axis + 1) % 3, (axis + 2) % 3


def face_flux(e_b: np.ndarray, e_c: np.ndarray, h_b: np.ndarray, h_c: np.ndarray,
              side: float, area: float, xp=np) -> np.ndarray:
    """``side * 0.5 Re sum (E_b H_c* - E_c H_b*) dA`` over one face, in W (W s^2 for
    spectra): the Yee pairing of the module docstring.

    e_b, h_c: the face's E_b samples and the H_c samples half a cell towards ``side``,
    same shape (..., n1, n2, n3), one axis of length 1 (the face's normal); e_c, h_b
    likewise. Leading axes (frequencies) are kept: the sum runs over the last three.
    side: +1 counts the flux along +axis, -1 along -axis; area: ``d_b d_c`` in m^2.
    xp: the array module (``jax.numpy`` for a differentiable flux, issue 22).
    """
    s = (xp.sum(e_b * xp.conj(h_c), axis=(-3, -2, -1))
         - xp.sum(e_c * xp.conj(h_b), axis=(-3, -2, -1)))
    return side * 0.5 * xp.real(s) * area


__all__ = ["face_flux", "tangential_pair"]
