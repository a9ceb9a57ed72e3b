"""Incident plane wave on the Yee grid and the scattered-field sources (seed 000 eq. 3-4).

Time convention e^{+j omega t}: E_inc(r) = A e_hat exp(-j k0 k_hat . r) on each E
component's own sample positions, H_inc = (A / eta0) h_hat exp(-j k0 k_hat . r) on each
H component's. The scattered-field right-hand side of ``x - A_e(A_h x) = b`` is

    b = -((eps - eps0) / eps) E_inc - A_e'((mu - mu0) / mu H_inc)

where A_e' = (1 / (j omega eps)) curl_H (the magnetic term vanishes where mu = mu0).
"""

from __future__ import annotations

import numpy as np

from ..constants import eps0, eta0, mu0
from ..grid.yee import YeeGrid


def plane_wave(grid: YeeGrid, k_hat, e_hat, amplitude: float, k0: float, field: str):
    """E_inc (field="E", V/m) or H_inc (field="H", A/m) sampled, (3, nx, ny, nz) complex."""
    comps = ("Ex", "Ey", "Ez") if field == "E" else ("Hx", "Hy", "Hz")
    vec = np.asarray(e_hat if field == "E" else np.cross(k_hat, e_hat), dtype=float)
    amp = amplitude if field == "E" else amplitude / eta0
    out = np.empty((3, *grid.shape), dtype=np.complex128)
    for a, c in enumerate(comps):
        x, y, z = grid.coords(c)
        ph = (np.exp(-1j * k0 * k_hat[0] * x)[:, None, None]
              * np.exp(-1j * k0 * k_hat[1] * y)[None, :, None]
              * np.exp(-1j * k0 * k_hat[2] * z)[None, None, :])
        out[a] = amp * vec[a] * ph
    return out


def rhs(grid: YeeGrid, eps, mu, inc, omega: float, apply_ae=None):
    """(b, E_inc, H_inc); ``apply_ae(h)`` applies A_e (needed only when mu != mu0)."""
    k0 = omega / 299_792_458.0
    e_inc = plane_wave(grid, inc.k_hat, inc.e_hat, inc.amplitude, k0, "E")
    h_inc = plane_wave(grid, inc.k_hat, inc.e_hat, inc.amplitude, k0, "H")
    b = -((eps - eps0) / eps) * e_inc
    mag = (mu - mu0) / mu
    if np.any(mag != 0):
        b = b - np.asarray(apply_ae(mag * h_inc))
    return b, e_inc, h_inc
