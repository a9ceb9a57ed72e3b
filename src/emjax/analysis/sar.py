"""Bio-EM maps from frequency-domain fields: B1+, local and averaged SAR.

Everything here works on phasors on one common grid of points (cell centres), in SI
units: E in V/m, H in A/m, sigma in S/m, density rho in kg/m³, SAR in W/kg. Phasors
follow emjax's convention ``X(f) = ∫ x(t) exp(-j 2π f t) dt`` (time dependence
``exp(+jωt)``); a DFT monitor's arrays carry an arbitrary common scale (the source
spectrum), which cancels in every ratio the functions below form (SAR per watt of
accepted power, B1+ per square-root watt).

Definitions:

- B1+ and B1-: the components of B = mu H rotating with and against the proton's
  precession (clockwise seen from +z). In the physics convention ``exp(-iωt)`` these are
  Hoult's ``(Bx + i By)/2`` and ``(Bx - i By)*/2``; in ours ``B1+ = conj(Bx - j By)/2`` and
  ``B1- = (Bx + j By)/2``, so a field ``B (cos ωt, -sin ωt)`` has ``|B1+| = B``, ``B1- = 0``.
- local SAR = sigma |E|² / (2 rho) (peak phasors), zero where rho = 0.
- averaged SAR over a region = absorbed power / mass = Σ sigma|E|²/2 dV / Σ rho dV.
- peak spatial-average SAR (IEEE/IEC 62704-1 style, simplified): around every tissue
  voxel a cube of odd side (1, 3, 5, ... cells) grows until it holds the target mass
  (10 g by default); the absorbed power is interpolated linearly in mass between the
  last two cubes, so the average refers to exactly the target mass. Cubes that would
  leave the grid are not formed (those voxels get no value). The standard's air-fraction
  rule and its surface-voxel cube orientation search are left out.
"""

from __future__ import annotations

import numpy as np

from ..constants import mu0


def interpolate_axis(a: np.ndarray, x_src: np.ndarray, x_dst: np.ndarray, axis: int) -> np.ndarray:
    """Linear interpolation of ``a`` along ``axis`` from positions ``x_src`` to ``x_dst``.

    ``x_src`` must be increasing and cover ``x_dst``; a ValueError names the gap
    otherwise (no extrapolation: a value outside a monitor is unknown).
    """
    x_src, x_dst = np.asarray(x_src, float), np.asarray(x_dst, float)
    if x_src.size == 1:
        if not np.allclose(x_dst, x_src[0]):
            raise ValueError(f"one sample at {x_src[0]:.6g} m cannot be moved to {x_dst}")
        return np.repeat(a, x_dst.size, axis=axis)
    tol = 1e-9 * (x_src[-1] - x_src[0])
    if x_dst.min() < x_src[0] - tol or x_dst.max() > x_src[-1] + tol:
        raise ValueError(
            f"target positions [{x_dst.min():.6g}, {x_dst.max():.6g}] m leave the sampled "
            f"range [{x_src[0]:.6g}, {x_src[-1]:.6g}] m"
        )
    i = np.clip(np.searchsorted(x_src, x_dst, side="right") - 1, 0, x_src.size - 2)
    w = (x_dst - x_src[i]) / (x_src[i + 1] - x_src[i])
    shape = [1] * a.ndim
    shape[axis] = w.size
    w = w.reshape(shape)
    return np.take(a, i, axis=axis) * (1 - w) + np.take(a, i + 1, axis=axis) * w


def to_common_grid(
    arrays: dict[str, np.ndarray],
    axes: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    target: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> dict[str, np.ndarray]:
    """Each component moved from its own Yee positions onto the ``target`` grid.

    arrays: component name -> array of shape (nx_c, ny_c, nz_c) (complex or real);
    axes: component name -> its (x, y, z) sample positions in m;
    target: (x, y, z) positions in m of the common grid, each increasing.
    """
    out = {}
    for name, a in arrays.items():
        for ax in range(3):
            a = interpolate_axis(a, axes[name][ax], target[ax], ax)
        out[name] = a
    return out


def cell_centres(axes: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cell-centre positions common to Ex, Ey, Ez (Ex's x, Ey's y, Ez's z), clipped to
    the range every given component covers."""
    own = {"x": "Ex", "y": "Ey", "z": "Ez"}
    out = []
    for ax, comp in enumerate("xyz"):
        x = np.asarray(axes[own[comp]][ax], float)
        lo = max(float(np.min(v[ax])) for v in axes.values())
        hi = min(float(np.max(v[ax])) for v in axes.values())
        tol = 1e-9 * max(abs(hi - lo), 1e-30)
        out.append(x[(x >= lo - tol) & (x <= hi + tol)])
    return tuple(out)


def b1_plus(Hx: np.ndarray, Hy: np.ndarray, mu_r: np.ndarray | float = 1.0) -> np.ndarray:
    """Complex B1+ in T from H phasors in A/m (see the module docstring)."""
    mu = mu0 * np.asarray(mu_r)
    return np.conj(mu * (Hx - 1j * Hy)) / 2


def b1_minus(Hx: np.ndarray, Hy: np.ndarray, mu_r: np.ndarray | float = 1.0) -> np.ndarray:
    """Complex B1- in T from H phasors in A/m (see the module docstring)."""
    mu = mu0 * np.asarray(mu_r)
    return mu * (Hx + 1j * Hy) / 2


def power_density(E: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Absorbed power density sigma |E|² / 2 in W/m³; E of shape (3, ...) in V/m."""
    return 0.5 * np.asarray(sigma) * np.sum(np.abs(E) ** 2, axis=0)


def local_sar(E: np.ndarray, sigma: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """Local SAR sigma |E|² / (2 rho) in W/kg; 0 where rho is 0 (air)."""
    rho = np.asarray(rho, float)
    p = power_density(E, sigma)
    return np.where(rho > 0, p / np.where(rho > 0, rho, 1.0), 0.0)


def absorbed_power(E: np.ndarray, sigma: np.ndarray, cell_volume: float,
                   mask: np.ndarray | None = None) -> float:
    """Σ sigma|E|²/2 dV in W over the grid (or over ``mask``)."""
    p = power_density(E, sigma)
    return float(np.sum(p if mask is None else p[mask]) * cell_volume)


def average_sar(E: np.ndarray, sigma: np.ndarray, rho: np.ndarray, cell_volume: float,
                mask: np.ndarray | None = None) -> float:
    """Mass-averaged SAR in W/kg over the tissue (rho > 0) of the grid or of ``mask``."""
    rho = np.asarray(rho, float)
    m = rho > 0 if mask is None else (rho > 0) & mask
    mass = float(np.sum(rho[m]) * cell_volume)
    if mass == 0:
        raise ValueError("no tissue (rho > 0) in the region: its average SAR is undefined")
    return absorbed_power(E, sigma, cell_volume, m) / mass


def _box_sums(a: np.ndarray, h: int) -> np.ndarray:
    """Sums of ``a`` over the cube of half-width ``h`` centred on every cell that has one
    inside the grid; shape (nx-2h, ny-2h, nz-2h)."""
    s = np.pad(np.cumsum(np.cumsum(np.cumsum(a, 0), 1), 2), ((1, 0), (1, 0), (1, 0)))
    w = 2 * h + 1
    n = [d - w + 1 for d in a.shape]
    if min(n) <= 0:
        return np.zeros([max(v, 0) for v in n])

    def c(i, j, k):
        return s[i:i + n[0], j:j + n[1], k:k + n[2]]

    return (c(w, w, w) - c(0, w, w) - c(w, 0, w) - c(w, w, 0)
            + c(0, 0, w) + c(0, w, 0) + c(w, 0, 0) - c(0, 0, 0))


def peak_average_sar(local: np.ndarray, rho: np.ndarray, cell_volume: float,
                     mass: float = 0.010) -> tuple[float, np.ndarray]:
    """Peak spatial-average SAR over ``mass`` kg (default 10 g), and the map it came from.

    Returns ``(peak, sar_avg)``: ``sar_avg`` has the grid's shape, NaN where no cube of
    the target mass fits around a tissue voxel and outside tissue. See the module
    docstring for the cube-growing rule.
    """
    rho = np.asarray(rho, float)
    if np.sum(rho) * cell_volume < mass:
        raise ValueError(f"the grid holds {np.sum(rho) * cell_volume * 1e3:.4g} g of tissue, "
                         f"less than the averaging mass {mass * 1e3:.4g} g")
    power = local * rho * cell_volume  # W per cell
    dm = rho * cell_volume             # kg per cell
    out = np.full(local.shape, np.nan)
    todo = rho > 0
    prev_m = np.zeros(local.shape)
    prev_p = np.zeros(local.shape)
    for h in range(max(local.shape) // 2 + 1):
        m_h = np.full(local.shape, np.nan)
        p_h = np.full(local.shape, np.nan)
        inner = tuple(slice(h, d - h) for d in local.shape)
        m_h[inner] = _box_sums(dm, h)
        p_h[inner] = _box_sums(power, h)
        done = todo & (m_h >= mass)
        # linear in mass between the cube of half-width h-1 and h
        frac = np.where(done, (mass - prev_m) / np.where(done, m_h - prev_m, 1.0), 0.0)
        out[done] = (prev_p + frac * (p_h - prev_p))[done] / mass
        todo &= ~done
        todo &= ~np.isnan(m_h)  # the cube left the grid: no value for this voxel
        if not todo.any():
            break
        prev_m, prev_p = np.nan_to_num(m_h), np.nan_to_num(p_h)
    finite = out[np.isfinite(out)]
    if finite.size == 0:
        raise ValueError(f"no cube of {mass * 1e3:.4g} g fits inside the grid around any "
                         "tissue voxel; enlarge the region")
    return float(finite.max()), out


__all__ = [
    "absorbed_power", "average_sar", "b1_minus", "b1_plus", "cell_centres",
    "interpolate_axis", "local_sar", "peak_average_sar", "power_density", "to_common_grid",
]
