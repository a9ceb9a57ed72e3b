"""The near-to-far-field transform, once, for every solver (FDTD, FDFD, ...).

Given time-harmonic tangential fields on a closed (Huygens) surface that encloses
every source and scatterer, the surface equivalence principle gives the fields
outside from the equivalent currents ``J = n x H`` and ``M = -n x E`` (n the outward
unit normal). In the far zone (Balanis, Antenna Theory, 3rd ed., eqs. 12-10 to 12-12;
Taflove and Hagness 2005, sec. 8.4)

    N(theta, phi) = sum_p J_p exp(+j k r_hat . r_p) w_p
    L(theta, phi) = sum_p M_p exp(+j k r_hat . r_p) w_p
    E_theta = -j k / (4 pi) (L_phi + eta N_theta) exp(-j k r) / r
    E_phi   = +j k / (4 pi) (L_theta - eta N_phi) exp(-j k r) / r

for our convention ``X(f) = int x(t) exp(-j 2 pi f t) dt`` (time factor e^{+j w t}),
with k = 2 pi f sqrt(eps mu) and eta = sqrt(mu / eps) of the medium around the
surface. The functions here return ``r exp(+j k r)`` times the far field, in V: the
angular pattern, free of the distance.

Also here: the bistatic radar cross section, the power through the surface
(Poynting flux), the power radiated to the far zone by quadrature over the sphere,
and directivity. Everything is NumPy, complex128.
"""

from __future__ import annotations

import math

import numpy as np

from ..constants import c0, eps0, mu0

_CHUNK = 1 << 22  # points x angles evaluated at once (about 64 MiB of complex128)


def _unit_vectors(theta, phi):
    st, ct, sp, cp = np.sin(theta), np.cos(theta), np.sin(phi), np.cos(phi)
    r_hat = np.stack([st * cp, st * sp, ct], axis=-1)
    t_hat = np.stack([ct * cp, ct * sp, -st], axis=-1)
    p_hat = np.stack([-sp, cp, np.zeros_like(st)], axis=-1)
    return r_hat, t_hat, p_hat


def far_field(points, normals, weights, E, H, frequency, theta, phi, *, eps_r=1.0, mu_r=1.0):
    """Far-zone E_theta and E_phi of the fields (E, H) given on a closed surface.

    Args:
        points: (P, 3) sample positions on the surface, m.
        normals: (P, 3) outward unit normals.
        weights: (P,) surface area each sample stands for, m^2.
        E, H: (P, 3) complex phasors at ``frequency`` (V/m, A/m; or V/m*s, A/m*s for
            running-DFT spectra: the result then carries the extra s), convention
            X(f) = int x(t) e^{-j 2 pi f t} dt.
        frequency: Hz (> 0).
        theta, phi: observation angles in rad (polar from +z, azimuth from +x),
            broadcastable against each other.
        eps_r, mu_r: relative permittivity and permeability of the (homogeneous,
            lossless) medium around the surface.

    Returns:
        (E_theta, E_phi): complex arrays of the broadcast shape of theta and phi,
        the far field times ``r e^{+j k r}``, in V (V*s for spectra).
    """
    points = np.asarray(points, dtype=np.float64)
    normals = np.asarray(normals, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    E = np.asarray(E, dtype=np.complex128)
    H = np.asarray(H, dtype=np.complex128)
    P = points.shape[0]
    for name, a in (("normals", normals), ("E", E), ("H", H)):
        if a.shape != (P, 3):
            raise ValueError(f"{name} has shape {a.shape}; points give (P, 3) = {(P, 3)}")
    if weights.shape != (P,):
        raise ValueError(f"weights has shape {weights.shape}; expected ({P},)")
    if not frequency > 0:
        raise ValueError(f"frequency {frequency} Hz must be > 0")
    theta, phi = np.broadcast_arrays(np.asarray(theta, np.float64), np.asarray(phi, np.float64))
    shape = theta.shape
    th, ph = theta.ravel(), phi.ravel()
    k = 2 * math.pi * frequency * math.sqrt(eps_r * mu_r) / c0
    eta = math.sqrt(mu0 * mu_r / (eps0 * eps_r))
    J = np.cross(normals, H) * weights[:, None]
    M = -np.cross(normals, E) * weights[:, None]
    JM = np.concatenate([J, M], axis=1)  # (P, 6)
    r_hat, t_hat, p_hat = _unit_vectors(th, ph)
    A = th.size
    NL = np.zeros((A, 6), np.complex128)
    step_a = max(1, _CHUNK // max(P, 1))
    step_p = max(1, _CHUNK // max(min(A, step_a), 1))
    for a0 in range(0, A, step_a):
        a1 = min(a0 + step_a, A)
        for p0 in range(0, P, step_p):
            p1 = min(p0 + step_p, P)
            phase = np.exp(1j * k * (points[p0:p1] @ r_hat[a0:a1].T))  # (p, a)
            NL[a0:a1] += phase.T @ JM[p0:p1]
    N, L = NL[:, :3], NL[:, 3:]
    N_t, N_p = np.sum(N * t_hat, -1), np.sum(N * p_hat, -1)
    L_t, L_p = np.sum(L * t_hat, -1), np.sum(L * p_hat, -1)
    E_theta = -1j * k / (4 * math.pi) * (L_p + eta * N_t)
    E_phi = 1j * k / (4 * math.pi) * (L_t - eta * N_p)
    return E_theta.reshape(shape), E_phi.reshape(shape)


def rcs(E_theta, E_phi, incident_amplitude):
    """Bistatic radar cross section in m^2: ``4 pi (|E_theta|^2 + |E_phi|^2) / |E_inc|^2``.

    E_theta, E_phi: scattered far field times ``r e^{jkr}`` (from :func:`far_field`);
    incident_amplitude: the incident plane wave's complex amplitude in the same
    units without the metre (V/m for phasors, V/m*s for spectra), broadcastable.
    """
    num = np.abs(np.asarray(E_theta)) ** 2 + np.abs(np.asarray(E_phi)) ** 2
    return 4 * math.pi * num / np.abs(np.asarray(incident_amplitude)) ** 2


def to_db(x, floor: float = 1e-30):
    """``10 log10(x)`` with a floor, e.g. RCS in dBsm from m^2."""
    return 10 * np.log10(np.maximum(np.asarray(x, dtype=np.float64), floor))


def sphere_quadrature(n_theta: int = 64, n_phi: int = 128):
    """Nodes and weights for integrals over all directions.

    Returns (theta (n_theta, 1), phi (1, n_phi), w (n_theta, n_phi) in sr): Gauss-
    Legendre in cos(theta), uniform in phi (exact for band-limited patterns).
    """
    x, wx = np.polynomial.legendre.leggauss(n_theta)
    theta = np.arccos(x)[:, None]
    phi = (np.arange(n_phi) * 2 * math.pi / n_phi)[None, :]
    return theta, phi, np.outer(wx, np.full(n_phi, 2 * math.pi / n_phi))


def radiated_power(E_theta, E_phi, weights, *, eps_r=1.0, mu_r=1.0):
    """Power (W) carried to the far zone: ``sum w |E|^2 / (2 eta)``.

    E_theta, E_phi: far field times ``r e^{jkr}`` (V, peak phasors) at the nodes of
    :func:`sphere_quadrature`; weights: its solid-angle weights (sr).
    """
    eta = math.sqrt(mu0 * mu_r / (eps0 * eps_r))
    U = (np.abs(E_theta) ** 2 + np.abs(E_phi) ** 2) / (2 * eta)
    return float(np.sum(U * weights))


def directivity(E_theta, E_phi, power, *, eps_r=1.0, mu_r=1.0):
    """Directivity ``4 pi U / P`` (linear) at the given angles, with P the radiated power
    in W (from :func:`radiated_power`) and U the radiation intensity in W/sr."""
    eta = math.sqrt(mu0 * mu_r / (eps0 * eps_r))
    U = (np.abs(E_theta) ** 2 + np.abs(E_phi) ** 2) / (2 * eta)
    return 4 * math.pi * U / power


def surface_power(normals, weights, E, H):
    """Time-averaged power out through the surface, ``0.5 Re sum w (E x H*) . n``, in W
    (peak phasors; for spectra the result is in W*s^2)."""
    S = np.cross(np.asarray(E, np.complex128), np.conj(np.asarray(H, np.complex128)))
    return float(0.5 * np.real(np.sum(np.sum(S * np.asarray(normals), -1) * weights)))


__all__ = ["directivity", "far_field", "radiated_power", "rcs", "sphere_quadrature",
           "surface_power", "to_db"]
