"""Incident plane wave on the Yee grid and the scattered-field sources (seed 000 eq. 3-4).

Time convention e^{+j omega t}: E_inc(r) = A e_hat exp(-j k0 k_hat . r) on each E
component's own sample positions, H_inc = (A / eta0) h_hat exp(-j k0 k_hat . r) on each
H component's. The scattered-field right-hand side of ``x - A_e(A_h x) = b`` is

    b = -((eps - eps0) / eps) E_inc - A_e'((mu - mu0) / mu H_inc)

where A_e' = (1 / (j omega eps)) curl_H (the magnetic term vanishes where mu = mu0).

The fields are formed on the device from three 1D phase factors per component (the
phase is separable), so a frequency sweep never builds them on the host: at 96^3 the
NumPy version took 0.28 s of each frequency's set-up on 2 CPU cores.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..constants import c0, eta0
from ..grid.yee import YeeGrid


def plane_wave(grid: YeeGrid, k_hat, e_hat, amplitude: float, k0: float, field: str,
               dtype=np.complex128):
    """E_inc (field="E", V/m) or H_inc (field="H", A/m) sampled, (3, nx, ny, nz) complex
    jax array of ``dtype``."""
    comps = ("Ex", "Ey", "Ez") if field == "E" else ("Hx", "Hy", "Hz")
    vec = np.asarray(e_hat if field == "E" else np.cross(k_hat, e_hat), dtype=float)
    amp = amplitude if field == "E" else amplitude / eta0
    lines = []
    for a, c in enumerate(comps):
        x, y, z = (np.exp(-1j * k0 * k_hat[b] * u) for b, u in enumerate(grid.coords(c)))
        x = (amp * vec[a]) * x  # the amplitude on the first factor
        lines.append(tuple(v.astype(dtype) for v in (x, y, z)))
    return _outer3(tuple(lines))


@jax.jit
def _outer3(lines):
    """(3, nx, ny, nz): per component the outer product of its three 1D factors."""
    return jnp.stack([x[:, None, None] * y[None, :, None] * z[None, None, :]
                      for x, y, z in lines])


def rhs(grid: YeeGrid, contrast, inc, omega: float, dtype=np.complex128, magnetic=None,
        apply_ae=None):
    """(b, E_inc, H_inc) as jax arrays of ``dtype``: ``contrast`` (3, nx, ny, nz), the
    (eps - eps0) / eps at the E samples (a jax or NumPy array); ``magnetic``: None where
    mu = mu0 everywhere, else (mu - mu0) / mu at the H samples, with ``apply_ae(h)``
    applying A_e."""
    k0 = omega / c0
    e_inc = plane_wave(grid, inc.k_hat, inc.e_hat, inc.amplitude, k0, "E", dtype)
    h_inc = plane_wave(grid, inc.k_hat, inc.e_hat, inc.amplitude, k0, "H", dtype)
    b = -jnp.asarray(contrast, dtype) * e_inc
    if magnetic is not None:
        b = b - jnp.asarray(apply_ae(jnp.asarray(magnetic, dtype) * h_inc), dtype)
    return b, e_inc, h_inc
