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
and directivity. Everything is NumPy, complex128; :func:`far_field`,
:func:`radiation_integrals` and :func:`rcs` also take ``xp=jax.numpy``: the fields
(and so the result) are then JAX arrays, traceable and differentiable (the FDFD
adjoint's RCS objective, :func:`emjax.fdfd.adjoint.rcs`), while the sample geometry
and the phase factors stay NumPy (static). One transform serves both.
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


def _complex(a, xp):
    """``a`` as a complex array of ``xp`` (complex128 in NumPy; JAX keeps its precision)."""
    if xp is np:
        return np.asarray(a, dtype=np.complex128)
    a = xp.asarray(a)
    return a if xp.iscomplexobj(a) else a.astype(xp.result_type(a.dtype, 1j))


def far_field(points, normals, weights, E, H, frequency, theta, phi, *, eps_r=1.0, mu_r=1.0,
              xp=np):
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
        xp: ``numpy`` or ``jax.numpy``, the array module of E, H and the result (the
            geometry and the angles are NumPy either way).

    Returns:
        (E_theta, E_phi): complex arrays of the broadcast shape of theta and phi,
        the far field times ``r e^{+j k r}``, in V (V*s for spectra).
    """
    points = np.asarray(points, dtype=np.float64)
    normals = np.asarray(normals, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    E, H = _complex(E, xp), _complex(H, xp)
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
    J = xp.cross(normals, H) * weights[:, None]
    M = -xp.cross(normals, E) * weights[:, None]
    JM = xp.concatenate([J, M], axis=1)  # (P, 6)
    r_hat, t_hat, p_hat = _unit_vectors(th, ph)
    NL = radiation_integrals(points, JM, k, r_hat, xp=xp)
    N, L = NL[:, :3], NL[:, 3:]
    N_t, N_p = xp.sum(N * t_hat, -1), xp.sum(N * p_hat, -1)
    L_t, L_p = xp.sum(L * t_hat, -1), xp.sum(L * p_hat, -1)
    E_theta = -1j * k / (4 * math.pi) * (L_p + eta * N_t)
    E_phi = 1j * k / (4 * math.pi) * (L_t - eta * N_p)
    return E_theta.reshape(shape), E_phi.reshape(shape)


def radiation_integrals(points, currents, k: float, r_hat, *, xp=np):
    """``sum_p currents_p exp(+j k r_hat . r_p)``: (A, C) for points (P, 3) m, currents
    (P, C) and directions r_hat (A, 3); ``xp`` the array module of ``currents`` and of
    the result (points and directions are NumPy).

    Samples that fill a plane's tensor grid (a face of a Huygens box on the Yee grid:
    every pair of its two in-plane coordinates present once) are summed separably,
    exp(j k (u a_u + v a_v + w a_w)) = e_u e_v e_w: a matrix product over u, then a
    sum over v, with (n_u + n_v + 1) exponentials per direction instead of n_u n_v.
    Any other sample is summed directly. Nothing is written in place (JAX arrays have
    no in-place update): the parts are summed.
    """
    points = np.asarray(points, np.float64)
    P, C = currents.shape
    A = r_hat.shape[0]
    parts = []
    left = np.ones(P, bool)
    for w_ax in range(3):
        values, counts = np.unique(points[left, w_ax], return_counts=True)
        # a face holds many more samples than the rows other faces cross it with
        for w in values[counts >= max(16, counts.max(initial=0) // 4)]:
            group = np.flatnonzero(left & (points[:, w_ax] == w))
            part = _plane_sum(points[group], currents[group], k, r_hat, w_ax, xp)
            if part is not None:
                parts.append(part)
                left[group] = False
    rest = np.flatnonzero(left)
    if rest.size:
        step_a = max(1, _CHUNK // rest.size)
        step_p = max(1, _CHUNK // max(min(A, step_a), 1))
        blocks = []
        for a0 in range(0, A, step_a):
            a1 = min(a0 + step_a, A)
            acc = 0
            for p0 in range(0, rest.size, step_p):
                idx = rest[p0:p0 + step_p]
                phase = np.exp(1j * k * (points[idx] @ r_hat[a0:a1].T))  # (p, a)
                acc = acc + xp.matmul(phase.T, currents[idx])
            blocks.append(acc)
        parts.append(xp.concatenate(blocks))
    if not parts:
        return xp.zeros((A, C), np.complex128)
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def _plane_sum(pts, cur, k: float, r_hat, w_ax: int, xp):
    """The separable sum (A, C) of the samples on the plane normal to ``w_ax``; None
    when they do not fill a tensor grid."""
    u_ax, v_ax = [a for a in range(3) if a != w_ax]
    uu, iu = np.unique(pts[:, u_ax], return_inverse=True)
    vv, iv = np.unique(pts[:, v_ax], return_inverse=True)
    if uu.size * vv.size != len(pts):
        return None
    flat = iu.ravel() * vv.size + iv.ravel()
    order = np.argsort(flat, kind="stable")
    if np.any(flat[order] != np.arange(flat.size)):  # a repeated (u, v) pair leaves a hole
        return None
    C = cur.shape[1]
    grid = cur[order].reshape(uu.size, vv.size * C)  # a gather: the same for NumPy and JAX
    w = pts[0, w_ax]
    step = max(1, _CHUNK // max(vv.size * C, 1))
    blocks = []
    for a0 in range(0, r_hat.shape[0], step):
        r = r_hat[a0:a0 + step]
        e_u = np.exp(1j * k * r[:, u_ax, None] * uu[None, :])  # (a, n_u)
        e_v = np.exp(1j * k * r[:, v_ax, None] * vv[None, :])  # (a, n_v)
        e_w = np.exp(1j * k * r[:, w_ax] * w)  # (a,)
        partial = xp.matmul(e_u, grid).reshape(len(r), vv.size, C)
        blocks.append(xp.einsum("avc,av->ac", partial, e_v) * e_w[:, None])
    return blocks[0] if len(blocks) == 1 else xp.concatenate(blocks)


def rcs(E_theta, E_phi, incident_amplitude, *, xp=np):
    """Bistatic radar cross section in m^2: ``4 pi (|E_theta|^2 + |E_phi|^2) / |E_inc|^2``.

    E_theta, E_phi: scattered far field times ``r e^{jkr}`` (from :func:`far_field`);
    incident_amplitude: the incident plane wave's complex amplitude in the same
    units without the metre (V/m for phasors, V/m*s for spectra), broadcastable.
    NaN where the incident amplitude is zero (a run too short for the wave to arrive).
    ``xp``: the array module of the fields and the result (NumPy or ``jax.numpy``).
    """
    # ratios before squares: fields near the float range (10^160 V/m and up) square to
    # inf where their ratio, the RCS, is an ordinary number
    inc = xp.abs(xp.asarray(incident_amplitude))
    safe = xp.where(inc > 0, inc, 1.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        num = (xp.abs(xp.asarray(E_theta)) / safe) ** 2 + (xp.abs(xp.asarray(E_phi)) / safe) ** 2
        return xp.where(inc > 0, 4 * math.pi * num, np.nan)


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


__all__ = ["directivity", "far_field", "radiated_power", "radiation_integrals", "rcs",
           "sphere_quadrature", "surface_power", "to_db"]
