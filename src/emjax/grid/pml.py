"""PML grading, shared by the FDTD CPML and the FDFD stretched coordinates.

Polynomial grading of Roden and Gedney (2000) / Taflove and Hagness (2005, sec. 7.9)
over the normalised depth rho in [0, 1] (0 at the inner interface, 1 at the wall):

    sigma(rho) = sigma_max rho^m,  kappa(rho) = 1 + (kappa_max - 1) rho^m,
    alpha(rho) = alpha_max (1 - rho)^m_alpha.

The FDTD recursion coefficients (Taflove eq. 7.102) are
``b = exp(-(sigma/kappa + alpha) dt / eps0)``,
``c = sigma (b - 1) / (kappa (sigma + kappa alpha))``; FDFD uses the stretch
``s = kappa + sigma / (alpha + i omega eps0)``.
"""

from __future__ import annotations

import numpy as np

from ..constants import eps0, eta0


def sigma_optimal(m: float, spacing: float, eps_r: float = 1.0, mu_r: float = 1.0) -> float:
    """The usual optimum peak conductivity 0.8 (m+1) / (eta d sqrt(eps_r mu_r)), S/m."""
    return 0.8 * (m + 1) / (eta0 * spacing * np.sqrt(eps_r * mu_r))


def grading(
    rho: np.ndarray,
    *,
    m: float,
    sigma_max: float,
    kappa_max: float,
    alpha_max: float,
    m_alpha: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sigma S/m, kappa, alpha S/m) at normalised depths ``rho`` (clipped to [0, 1])."""
    rho = np.clip(np.asarray(rho, dtype=np.float64), 0.0, 1.0)
    sigma = sigma_max * rho**m
    kappa = 1.0 + (kappa_max - 1.0) * rho**m
    alpha = alpha_max * (1.0 - rho) ** m_alpha
    return sigma, kappa, alpha


def cpml_coefficients(
    sigma: np.ndarray, kappa: np.ndarray, alpha: np.ndarray, dt: float
) -> tuple[np.ndarray, np.ndarray]:
    """Recursive-convolution coefficients (b, c) of the CPML psi update."""
    b = np.exp(-(sigma / kappa + alpha) * dt / eps0)
    denom = kappa * (sigma + kappa * alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(denom > 0, sigma * (b - 1.0) / np.where(denom > 0, denom, 1.0), 0.0)
    return b, c


def stretch(sigma: np.ndarray, kappa: np.ndarray, alpha: np.ndarray, omega: float) -> np.ndarray:
    """Complex coordinate stretch s = kappa + sigma / (alpha + i omega eps0) (e^{+i w t})."""
    return kappa + sigma / (alpha + 1j * omega * eps0)
