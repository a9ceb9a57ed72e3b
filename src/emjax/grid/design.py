"""Design regions, shared by every differentiable solver (issue 22): the density
pipeline and the checks a region must pass.

A design region is a box whose permittivity (and conductivity) follows a parameter
array ``rho`` in [0, 1]: eps = eps_min + rho (eps_max - eps_min), likewise sigma. The
density pipeline in front of it is composable JAX: :func:`conic_filter` (a minimum
length scale) then :func:`tanh_projection` (towards 0/1). How a solver rasterizes the
region onto its unknowns is its own (FDFD: whole cells, :mod:`emjax.fdfd.adjoint`;
FDTD: per Yee E component with sub-cell fill weights, :mod:`emjax.fdtd.gradient`); the
checks and their messages (:func:`check_cells`, :func:`check_parameters`) are one.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..errors import SetupError


def conic_filter(rho: jax.Array, radius: float) -> jax.Array:
    """rho convolved with the normalized cone 1 - |d| / radius (cells), renormalized at the
    region's edges (so a constant stays constant)."""
    n = int(np.ceil(radius)) - 1
    if n < 1:
        return rho
    u = np.arange(-n, n + 1)
    d = np.sqrt(u[:, None, None] ** 2 + u[None, :, None] ** 2 + u[None, None, :] ** 2)
    k = jnp.asarray(np.maximum(0.0, 1.0 - d / radius), dtype=rho.dtype)
    # zero padding and a "valid" convolution: any region shape, even thinner than the cone
    num = jax.scipy.signal.convolve(jnp.pad(rho, n), k, mode="valid")
    den = jax.scipy.signal.convolve(jnp.pad(jnp.ones_like(rho), n), k, mode="valid")
    return num / den


def tanh_projection(rho: jax.Array, beta: float, eta: float = 0.5) -> jax.Array:
    """Smoothed threshold of rho at ``eta`` with sharpness ``beta`` (Wang et al. 2011);
    ``beta`` may be traced (a continuation in beta then reuses one compiled function)."""
    t = jnp.tanh(beta * eta)
    return (t + jnp.tanh(beta * (rho - eta))) / (t + jnp.tanh(beta * (1 - eta)))


def check_cells(lo, hi, shape, first, last, pml_note: str) -> None:
    """Refuse a region of cells ``lo[a] <= i < hi[a]`` unless ``first[a] <= lo[a] <
    hi[a] <= last[a]`` on every axis (inside the domain, clear of the PML and walls);
    ``pml_note`` says what bounds ``first``/``last`` (for the message)."""
    for a in range(3):
        if not (first[a] <= lo[a] < hi[a] <= last[a]):
            raise SetupError(
                f"design region: cells {lo[a]}..{hi[a]} along axis {'xyz'[a]} leave the "
                f"interior; allowed {first[a]} <= lo < hi <= {last[a]} ({shape[a]} cells, "
                f"{pml_note}); move the region inward or thin the PML")


def check_parameters(shape, expected, where: str) -> None:
    """Refuse design parameters of ``shape`` unless it is ``expected``."""
    if tuple(shape) != tuple(expected):
        raise SetupError(f"design parameters: shape {tuple(shape)}, the region {where} needs "
                         f"{tuple(expected)}")


__all__ = ["check_cells", "check_parameters", "conic_filter", "tanh_projection"]
