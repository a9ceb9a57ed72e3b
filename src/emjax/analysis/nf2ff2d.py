"""2D near-to-far transform and scattering width from DFT monitors on a rectangle.

Phasors are ``X(f) = integral x(t) exp(-j 2 pi f t) dt`` (e^{+j w t}). On a closed
contour C around the scatterer (in the scattered-field region) the equivalent
currents ``J = n x H`` and ``M = -n x E`` radiate through the 2D Green's function
``G = -(j/4) H0^(2)(k rho)``, whose far form is ``C(rho) exp(-j k rho)`` with
``C = -(j/4) sqrt(2 / (pi k rho)) exp(j pi/4)``. With the radiation integrals
``N = integral J exp(j k rho_hat . r') dl'`` and ``L`` likewise for M, the far fields
are (Balanis, Advanced Engineering Electromagnetics, ch. 6 and 11, reduced to 2D)

    TMz:  Ez = -j w mu C exp(-j k rho) (N_z - L_phi / eta)
    TEz:  Hz = -j w eps C exp(-j k rho) (L_z + eta N_phi)

and the scattering width ``sigma_2D = lim 2 pi rho |F_s|^2 / |F_i|^2`` is

    TMz:  sigma = (k eta^2 / 4) |N_z - L_phi / eta|^2 / |E_i|^2
    TEz:  sigma = (k / 4) |L_z + eta N_phi|^2 / |E_i|^2        (|H_i| = |E_i| / eta)

in metres. :func:`contour_monitors` makes the four DFT monitors (each one cell thick,
so that the staggered H samples either side of the contour can be averaged onto the
E samples on it); :func:`radiation_integrals` evaluates N and L from their data by
the midpoint (TEz: E samples at half nodes along the side) or trapezoid rule (TMz:
Ez at nodes).
"""

from __future__ import annotations

import math

import numpy as np

from ..constants import c0, eps0, mu0

_SIDES = (("xlo", 0, -1), ("xhi", 0, +1), ("ylo", 1, -1), ("yhi", 1, +1))


def contour_monitors(name: str, lo, hi, spacing: float, frequencies, polarization: str):
    """Four DFTMonitors ``<name>_xlo`` .. ``<name>_yhi`` on the rectangle [lo, hi] (m, its
    corners on grid nodes), with the components the transform needs."""
    from ..model import DFTMonitor

    comps = ["Ez", "Hx", "Hy"] if polarization == "TMz" else ["Hz", "Ex", "Ey"]
    out = []
    for side, axis, end in _SIDES:
        c = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.0]
        size = [hi[0] - lo[0], hi[1] - lo[1], 0.0]
        c[axis] = lo[axis] if end < 0 else hi[axis]
        size[axis] = spacing
        out.append(DFTMonitor(name=f"{name}_{side}", center=tuple(c), size=tuple(size),
                              frequencies=list(frequencies), components=comps))
    return out


def _side_fields(md, axis: int, polarization: str, fi: int):
    """(points (n, 2), weights (n,), E on the side (n, 3), H (n, 3)) of one side."""
    other = 1 - axis
    if polarization == "TMz":
        xs, ys, _ = md.axes("Ez")
        Ez = md.data["Ez"][fi][:, :, 0]
        hn = "Hy" if axis == 0 else "Hx"  # the H component tangential to the side
        H = md.data[hn][fi][:, :, 0]
        # Ez: one sample across the side; H: the two either side, averaged onto it.
        e = Ez[0, :] if axis == 0 else Ez[:, 0]
        h = 0.5 * (H[0, :] + H[1, :]) if axis == 0 else 0.5 * (H[:, 0] + H[:, 1])
        t = ys if axis == 0 else xs
        w = np.full(t.shape, t[1] - t[0])
        w[0] *= 0.5
        w[-1] *= 0.5
        pts = np.stack([np.full(t.shape, xs[0]), t], 1) if axis == 0 else np.stack(
            [t, np.full(t.shape, ys[0])], 1)
        E3 = np.zeros((t.size, 3), complex)
        H3 = np.zeros((t.size, 3), complex)
        E3[:, 2] = e
        H3[:, other] = h
        return pts, w, E3, H3
    en = "Ey" if axis == 0 else "Ex"
    xs, ys, _ = md.axes(en)
    E = md.data[en][fi][:, :, 0]
    Hz = md.data["Hz"][fi][:, :, 0]
    e = E[0, :] if axis == 0 else E[:, 0]
    h = 0.5 * (Hz[0, :] + Hz[1, :]) if axis == 0 else 0.5 * (Hz[:, 0] + Hz[:, 1])
    t = ys if axis == 0 else xs
    w = np.full(t.shape, t[1] - t[0])
    pts = np.stack([np.full(t.shape, xs[0]), t], 1) if axis == 0 else np.stack(
        [t, np.full(t.shape, ys[0])], 1)
    E3 = np.zeros((t.size, 3), complex)
    H3 = np.zeros((t.size, 3), complex)
    E3[:, other] = e
    H3[:, 2] = h
    return pts, w, E3, H3


def radiation_integrals(res, name: str, polarization: str, phi, frequency_index: int = 0,
                        eps_r: float = 1.0, mu_r: float = 1.0, origin=(0.0, 0.0)):
    """(N, L): complex arrays (len(phi), 3) of the radiation integrals at angles ``phi``
    (rad, from +x) of the contour monitors ``name_*`` in ``res``."""
    phi = np.atleast_1d(np.asarray(phi, dtype=np.float64))
    f = float(res[f"{name}_xlo"].coords["f"][frequency_index])
    k = 2 * math.pi * f * math.sqrt(eps_r * mu_r) / c0
    rhat = np.stack([np.cos(phi), np.sin(phi)], 1)
    N = np.zeros((phi.size, 3), complex)
    L = np.zeros((phi.size, 3), complex)
    for side, axis, end in _SIDES:
        pts, w, E, H = _side_fields(res[f"{name}_{side}"], axis, polarization, frequency_index)
        n = np.zeros(3)
        n[axis] = end
        J = np.cross(n, H)
        M = -np.cross(n, E)
        phase = np.exp(1j * k * ((pts - np.asarray(origin)) @ rhat.T)) * w[:, None]  # (np, nphi)
        N += phase.T @ J
        L += phase.T @ M
    return N, L


def scattering_width(res, name: str, polarization: str, phi, incident: complex | float,
                     frequency_index: int = 0, eps_r: float = 1.0, mu_r: float = 1.0,
                     origin=(0.0, 0.0)) -> np.ndarray:
    """Scattering width sigma_2D (m) at angles ``phi`` (rad); ``incident`` is the
    incident E phasor amplitude |E_i(f)| at the scatterer (V/m times s, as the DFT)."""
    phi = np.atleast_1d(np.asarray(phi, dtype=np.float64))
    N, L = radiation_integrals(res, name, polarization, phi, frequency_index, eps_r, mu_r,
                               origin)
    f = float(res[f"{name}_xlo"].coords["f"][frequency_index])
    k = 2 * math.pi * f * math.sqrt(eps_r * mu_r) / c0
    eta = math.sqrt(mu0 * mu_r / (eps0 * eps_r))
    phihat = np.stack([-np.sin(phi), np.cos(phi), np.zeros_like(phi)], 1)
    N_phi = np.sum(N * phihat, 1)
    L_phi = np.sum(L * phihat, 1)
    if polarization == "TMz":
        return k * eta**2 / 4 * np.abs(N[:, 2] - L_phi / eta) ** 2 / abs(incident) ** 2
    return k / 4 * np.abs(L[:, 2] + eta * N_phi) ** 2 / abs(incident) ** 2


def pec_cylinder_width(ka: float, phi, polarization: str, k: float, phi_inc: float = 0.0,
                       nmax: int | None = None) -> np.ndarray:
    """Analytic scattering width (m) of a PEC circular cylinder of radius a = ka / k
    lit by a plane wave travelling along ``phi_inc`` (rad); ``phi`` is the observation
    angle. TMz (E along z): a_n = -J_n(ka) / H_n^(2)(ka); TEz (H along z):
    a_n = -J_n'(ka) / H_n^(2)'(ka); sigma = (4/k) |sum_n a_n exp(j n (phi - phi_inc))|^2
    (Balanis, Advanced Engineering Electromagnetics, sec. 11.5)."""
    from scipy.special import h2vp, hankel2, jv, jvp

    nmax = nmax or int(ka + 10 * ka ** (1 / 3) + 10)
    n = np.arange(-nmax, nmax + 1)
    if polarization == "TMz":
        a = -jv(n, ka) / hankel2(n, ka)
    else:
        a = -jvp(n, ka) / h2vp(n, ka)
    phi = np.atleast_1d(np.asarray(phi, dtype=np.float64))
    s = np.exp(1j * np.outer(phi - phi_inc, n)) @ a
    return 4 / k * np.abs(s) ** 2


def dielectric_cylinder_coefficients(k0a: float, eps_r: complex, polarization: str,
                                     nmax: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, a_n): scattering coefficients n = -nmax..nmax of a homogeneous dielectric
    circular cylinder (mu_r = 1, relative permittivity ``eps_r``, complex = lossy as
    eps_r' - j eps_r'' in the e^{+j w t} convention) of electrical radius k0 a.

    With x0 = k0 a, x1 = sqrt(eps_r) x0 and p = sqrt(eps_r) (TMz: E_z and H_phi
    continuous) or 1 / sqrt(eps_r) (TEz: H_z and E_phi = (1/(j w eps)) dH_z/drho
    continuous), matching the field and its weighted radial derivative at rho = a:

        a_n = (p J_n(x0) J_n'(x1) - J_n'(x0) J_n(x1)) / (H_n'(x0) J_n(x1) - p H_n(x0) J_n'(x1))

    (H = H^(2); Balanis, Advanced Engineering Electromagnetics, sec. 11.5 for the
    method). eps_r = 1 gives a_n = 0; |eps_r| -> infinity (p -> infinity in TMz, 0 in
    TEz) the PEC coefficients of :func:`pec_cylinder_width`; a lossless cylinder has
    |1 + 2 a_n| = 1 (each mode's outgoing power equals its incoming)."""
    from scipy.special import h2vp, hankel2, jv, jve, jvp

    n = np.arange(-nmax, nmax + 1)
    m = np.sqrt(complex(eps_r))
    x0, x1 = k0a, m * k0a
    p = m if polarization == "TMz" else 1 / m
    j0, dj0, h0, dh0 = jv(n, x0), jvp(n, x0), hankel2(n, x0), h2vp(n, x0)
    # inside, J_n and J_n' scaled alike by exp(-|Im x1|) (a lossy core overflows jv)
    j1, dj1 = jve(n, x1), 0.5 * (jve(n - 1, x1) - jve(n + 1, x1))
    return n, (p * j0 * dj1 - dj0 * j1) / (dh0 * j1 - p * h0 * dj1)


def dielectric_cylinder_width(k0a: float, eps_r: complex, phi, polarization: str, k: float,
                              phi_inc: float = 0.0, nmax: int | None = None) -> np.ndarray:
    """Analytic scattering width (m) of a dielectric circular cylinder of radius
    a = k0a / k (``k`` the background wavenumber in rad/m) and relative permittivity
    ``eps_r`` at observation angles ``phi`` (rad), lit along ``phi_inc``:
    sigma = (4/k) |sum_n a_n exp(j n (phi - phi_inc))|^2 with the coefficients of
    :func:`dielectric_cylinder_coefficients`."""
    x = abs(np.sqrt(complex(eps_r))) * k0a
    # orders past the inside's x1 add nothing; past ~ 30 x0^(1/3) beyond x0 H_n(x0)
    # overflows while a_n is long negligible
    nmax = nmax or int(min(x + 10 * x ** (1 / 3), k0a + 30 * k0a ** (1 / 3)) + 10)
    n, a = dielectric_cylinder_coefficients(k0a, eps_r, polarization, nmax)
    phi = np.atleast_1d(np.asarray(phi, dtype=np.float64))
    s = np.exp(1j * np.outer(phi - phi_inc, n)) @ a
    return 4 / k * np.abs(s) ** 2


__all__ = ["contour_monitors", "dielectric_cylinder_coefficients",
           "dielectric_cylinder_width", "pec_cylinder_width", "radiation_integrals",
           "scattering_width"]
