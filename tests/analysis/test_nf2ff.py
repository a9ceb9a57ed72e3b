"""Near-to-far transform against the analytic fields of a Hertzian dipole.

Set-up: the exact near fields (all 1/r, 1/r^2, 1/r^3 terms) of a current element
``I l u`` at ``r0`` sampled at face centres of a cube of side 1.2 wavelengths, 48 x 48
samples per face (midpoint rule). Metrics and references:

- far field E_theta, E_phi against ``-j k eta I l / (4 pi) (u . theta_hat, u . phi_hat)
  exp(+j k r_hat . r0)``: relative error <= 1e-2 of the peak (z dipole at the origin,
  x dipole displaced, so that the phase term is exercised);
- radiated power from the far field (sphere quadrature) and from the Poynting flux
  through the cube, against ``eta k^2 (I l)^2 / (12 pi)``: within 1%;
- directivity maximum against 1.5 (Hertzian dipole): within 1%.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from emjax.analysis import nf2ff
from emjax.constants import c0, eta0

F = 1e9
K = 2 * math.pi * F / c0


def dipole_fields(points, r0, u, Il=1.0):
    """Exact E, H (V/m, A/m) of a current element I l u at r0, e^{+jwt} phasors."""
    R = points - np.asarray(r0)
    Rn = np.linalg.norm(R, axis=1, keepdims=True)
    Rh = R / Rn
    u = np.asarray(u, dtype=np.float64)
    ph = np.exp(-1j * K * Rn)
    udR = Rh @ u
    trans = u[None, :] - udR[:, None] * Rh
    a = 1j * K / Rn + 1 / Rn**2 + 1 / (1j * K * Rn**3)
    b = 1 / Rn**2 + 1 / (1j * K * Rn**3)
    E = eta0 * Il / (4 * math.pi) * ph * (-trans * a + 2 * udR[:, None] * Rh * b)
    H = Il / (4 * math.pi) * np.cross(u, Rh) * (1j * K / Rn + 1 / Rn**2) * ph
    return E, H


def cube_surface(half: float, n: int):
    """Face-centre samples of the cube [-half, half]^3: points, normals, weights."""
    h = 2 * half / n
    c = -half + (np.arange(n) + 0.5) * h
    U, V = np.meshgrid(c, c, indexing="ij")
    pts, nrm = [], []
    for ax in range(3):
        for side in (-1.0, 1.0):
            p = np.zeros((n * n, 3))
            others = [a for a in range(3) if a != ax]
            p[:, others[0]], p[:, others[1]] = U.ravel(), V.ravel()
            p[:, ax] = side * half
            nv = np.zeros((n * n, 3))
            nv[:, ax] = side
            pts.append(p)
            nrm.append(nv)
    pts, nrm = np.concatenate(pts), np.concatenate(nrm)
    return pts, nrm, np.full(len(pts), h * h)


@pytest.mark.parametrize("r0, u", [((0, 0, 0), (0, 0, 1)), ((0.03, -0.02, 0.05), (1, 0, 0))])
def test_dipole_far_field(r0, u):
    pts, nrm, w = cube_surface(0.18, 48)
    E, H = dipole_fields(pts, r0, u)
    th = np.linspace(0.05, math.pi - 0.05, 25)[:, None]
    ph = np.linspace(0, 2 * math.pi, 13)[None, :]
    Et, Ep = nf2ff.far_field(pts, nrm, w, E, H, F, th, ph)
    assert Et.shape == (25, 13)
    _, t_hat, p_hat = nf2ff._unit_vectors(*np.broadcast_arrays(th, ph))
    r_hat, _, _ = nf2ff._unit_vectors(*np.broadcast_arrays(th, ph))
    ref = -1j * K * eta0 / (4 * math.pi) * np.exp(1j * K * (r_hat @ np.asarray(r0, float)))
    Et_ref, Ep_ref = ref * (t_hat @ np.asarray(u, float)), ref * (p_hat @ np.asarray(u, float))
    peak = K * eta0 / (4 * math.pi)
    err = max(np.abs(Et - Et_ref).max(), np.abs(Ep - Ep_ref).max()) / peak
    print(f"max far-field error {err:.2e} of the peak (limit 1e-2)")
    assert err <= 1e-2


def test_dipole_power_and_directivity():
    pts, nrm, w = cube_surface(0.18, 48)
    E, H = dipole_fields(pts, (0.01, 0.0, -0.02), (0, 0, 1))
    P_ref = eta0 * K**2 / (12 * math.pi)
    P_flux = nf2ff.surface_power(nrm, w, E, H)
    th, ph, wq = nf2ff.sphere_quadrature(32, 16)
    Et, Ep = nf2ff.far_field(pts, nrm, w, E, H, F, th, ph)
    P_far = nf2ff.radiated_power(Et, Ep, wq)
    D = nf2ff.directivity(Et, Ep, P_far)
    print(f"P_ref {P_ref:.6g} W, flux {P_flux:.6g} W, far {P_far:.6g} W, D_max {D.max():.4f}")
    assert abs(P_flux / P_ref - 1) <= 0.01
    assert abs(P_far / P_ref - 1) <= 0.01
    assert abs(D.max() / 1.5 - 1) <= 0.01


def test_rcs_and_errors():
    # Isotropic check of the normalisation: 4 pi |E|^2 / |E_inc|^2.
    assert nf2ff.rcs(np.array([1.0]), np.array([0.0]), 2.0)[0] == pytest.approx(math.pi)
    assert nf2ff.to_db(10.0) == pytest.approx(10.0)
    pts, nrm, w = cube_surface(0.1, 4)
    with pytest.raises(ValueError, match="normals has shape"):
        nf2ff.far_field(pts, nrm[:-1], w, pts, pts, F, 0.0, 0.0)
    with pytest.raises(ValueError, match="frequency"):
        nf2ff.far_field(pts, nrm, w, pts, pts, 0.0, 0.0, 0.0)


def test_radiation_integrals_separable_planes_equal_the_direct_sum():
    """Faces of a box on a grid (summed separably), a plane with a hole and scattered
    points (summed directly) give the direct sum to rounding."""
    rng = np.random.default_rng(3)
    u = np.linspace(-0.3, 0.4, 23)
    v = np.linspace(-0.2, 0.25, 17)
    U, V = (a.ravel() for a in np.meshgrid(u, v, indexing="ij"))
    face_z = np.stack([U, V, np.full_like(U, 0.5)], axis=1)
    face_x = np.stack([np.full_like(U, -0.35), U, V], axis=1)
    holed = np.stack([U, np.full_like(U, 0.1), V], axis=1)[5:]  # not a full tensor grid
    stray = rng.uniform(-0.5, 0.5, (40, 3))
    points = np.concatenate([face_z, face_x, holed, stray])
    currents = rng.normal(size=(len(points), 6)) + 1j * rng.normal(size=(len(points), 6))
    th, ph = np.meshgrid(np.linspace(0, np.pi, 13), np.linspace(0, 2 * np.pi, 7))
    r_hat, _, _ = nf2ff._unit_vectors(th.ravel(), ph.ravel())
    k = 2 * np.pi * 1.3e9 / 299792458.0
    got = nf2ff.radiation_integrals(points, currents, k, r_hat)
    want = np.exp(1j * k * r_hat @ points.T) @ currents
    assert np.max(np.abs(got - want)) <= 1e-12 * np.max(np.abs(want))
