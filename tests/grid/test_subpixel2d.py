"""Sub-pixel smoothing in the plane (issue 25, 2D part).

- Fill fractions of 2D shapes (Circle from its exact distance and the plane cut,
  Polygon from its exact edge distance, Rectangle exactly) against dense sub-sampling
  of each sample's dual square.
- Planar smoothing on a flat interface: Ez (always tangential to a z-invariant
  surface) takes the arithmetic mean, Ex normal to an x-interface the harmonic one,
  Ey along it the arithmetic one.
- The dielectric-cylinder series (:func:`dielectric_cylinder_width`): no scatterer at
  eps_r = 1, the PEC series as |eps_r| grows, |1 + 2 a_n| = 1 when lossless.
- Reduced ``dielectric-cylinder-2d``: the error falls with resolution and smoothing
  beats the staircase, in TMz and TEz.
"""

from __future__ import annotations

import numpy as np
import pytest

from emjax.analysis.nf2ff2d import (
    dielectric_cylinder_coefficients,
    dielectric_cylinder_width,
    pec_cylinder_width,
)
from emjax.fdtd.setup2d import PlaneGrid
from emjax.fdtd.solver2d import FDTD2DSolver
from emjax.grid import subpixel
from emjax.grid.levelset import level
from emjax.grid.rasterize import rasterize
from emjax.model import Medium
from emjax.model.scenario2d import Circle, Polygon, Rectangle, Structure2D

D = 0.1


def _grid(n: int = 40) -> PlaneGrid:
    return PlaneGrid(cells=(n, n, 1), spacing=(D, D, D), lower=(-n * D / 2, -n * D / 2, 0.0))


def _dense_fill(geom, x, y, k: int = 200) -> np.ndarray:
    u = ((np.arange(k) + 0.5) / k - 0.5) * D
    X = x[:, None, None] + u[None, :, None]
    Y = y[:, None, None] + u[None, None, :]
    return geom.inside(X, Y, None).mean(axis=(1, 2))


@pytest.mark.parametrize("geom, tol", [
    (Circle(center=(0.013, -0.021), radius=1.17), 0.01),  # curvature: d / (12 R) ~ 0.007
    (Polygon(vertices=[(-1.23, -0.91), (1.37, -0.47), (0.11, 1.29)]), 0.01),
    (Rectangle(center=(0.031, 0.047), size=(1.53, 0.88)), 0.006),  # the sampling's own
])
def test_fill_fractions_match_dense_sampling(geom, tol):
    grid = _grid()
    cut = subpixel.cut_samples(grid, "Ez", geom, planar=True)
    x, y = (grid.coords("Ez")[a][cut.index[a]] for a in range(2))
    inner = (cut.fill > 0) & (cut.fill < 1)
    assert inner.sum() > 40
    err = np.abs(cut.fill - _dense_fill(geom, x, y))
    if isinstance(geom, Polygon):  # corners are first order: judge the edges' cells
        p = np.asarray(geom.vertices)
        far = np.min(np.hypot(x[:, None] - p[:, 0], y[:, None] - p[:, 1]), axis=1) > 1.5 * D
        assert np.median(err[~far]) < 0.1
        err = err[far]
    assert err.max() < tol
    assert np.allclose(np.linalg.norm(cut.normal, axis=1), 1.0) and not cut.normal[:, 2].any()


def test_circle_and_polygon_levels_are_signed_distances():
    c = Circle(center=(0.2, -0.1), radius=0.5)
    phi, n = level(c, np.array([0.2, 1.2]), np.array([0.3, -0.1]), np.zeros(2))
    assert np.allclose(phi, [-0.1, 0.5]) and np.allclose(n[1], [1, 0, 0])
    sq = Polygon(vertices=[(0, 0), (1, 0), (1, 1), (0, 1)])
    phi, n = level(sq, np.array([0.5, 1.5, 2.0]), np.array([0.25, 0.5, 2.0]), np.zeros(3))
    assert np.allclose(phi, [-0.25, 0.5, np.sqrt(2)])
    assert np.allclose(n[0], [0, -1, 0]) and np.allclose(n[1], [1, 0, 0])


def test_flat_interface_means():
    """Ez and Ey (tangential) take <eps>, Ex (normal) 1 / <1/eps>, at the exact f."""
    grid, eps_s, x0 = _grid(20), 6.0, 0.237  # interface between samples
    slab = Structure2D(geometry=Rectangle(center=(x0 + 5.0, 0.0), size=(10.0, 10.0)),
                       medium=Medium(eps_r=eps_s))
    mat = rasterize(grid, Medium(), [slab])
    levels = 4096
    media, index = subpixel.average(grid, Medium(), [slab], mat.media, dict(mat.index),
                                    planar=True, levels=levels)
    tol = (eps_s - 1) / levels
    for comp, normal in (("Ez", False), ("Ex", True), ("Ey", False)):
        x = grid.coords(comp)[0]
        f = np.clip((x + D / 2 - x0) / D, 0, 1)
        want = 1 / (f / eps_s + (1 - f)) if normal else f * eps_s + (1 - f)
        got = np.array([media[i].eps_r for i in index[comp][:, grid.shape[1] // 2, 0]])
        cut = (f > 0) & (f < 1)
        assert cut.sum() == 1 and np.allclose(got, want, atol=tol)
        assert abs(want[cut][0] - (f[cut][0] * eps_s + 1 - f[cut][0])) > 0.5 or not normal


@pytest.mark.parametrize("pol", ["TMz", "TEz"])
def test_dielectric_series_limits(pol):
    phi = np.radians(np.arange(0, 360, 5.0))
    assert dielectric_cylinder_width(3.0, 1.0, phi, pol, 1.0).max() < 1e-25
    _, a = dielectric_cylinder_coefficients(3.0, 4.0, pol, 20)
    assert np.allclose(np.abs(1 + 2 * a), 1.0, atol=1e-12)
    err = [np.abs(np.log(dielectric_cylinder_width(3.0, 1 - 1j * e, phi, pol, 1.0)
                         / pec_cylinder_width(3.0, phi, pol, 1.0))).max()
           for e in (1e4, 1e6)]
    assert err[1] < 0.1 * err[0] and err[1] < 0.05  # the PEC limit, as 1 / sqrt|eps|


@pytest.mark.parametrize("pol", ["TMz", "TEz"])
def test_reduced_convergence(pol):
    from emjax.validation.dielectric2d import (
        dielectric_cylinder_rms_db,
        dielectric_cylinder_scenario,
    )

    kw = dict(polarization=pol, radius=0.34, dtype="float32", periods=25)

    def err(n, smooth):
        return dielectric_cylinder_rms_db(dielectric_cylinder_scenario(n, subpixel=smooth,
                                                                        **kw))

    coarse, fine = err(7, True), err(11, True)
    assert fine < 0.6 * coarse
    assert fine < err(11, False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_smoothed_tez_cavity_does_not_grow(dtype):
    """A closed lossless PEC box holding a smoothed eps_r = 12 disc (off-diagonal terms
    included) and a conformal PEC disc at courant 0.99: 30000 steps, no growth."""
    import emjax as em

    wave = em.GaussianPulse(f0=20e9, fwidth=10e9)
    sim = em.FDTD2D(
        domain=em.Domain2D(shape=(26, 22), spacing=1e-3), boundary=em.PEC(), steps=30000,
        polarization="TEz", subpixel=True, courant=0.99, dtype=dtype,
        structures=[em.Structure2D(geometry=Circle(center=(-3.3e-3, 0.4e-3), radius=5.3e-3),
                                   medium=Medium(eps_r=12.0)),
                    em.Structure2D(geometry=Circle(center=(7.1e-3, -2.2e-3), radius=2.7e-3),
                                   medium=em.PEC())],
        sources=[em.LineSource(position=(-3.1e-3, 5.2e-3), polarization="y", waveform=wave)],
        monitors=[em.Probe(name="p", positions=[(2.1e-3, 6.3e-3, 0.0)], components=["Hz"])])
    assert sim.sources and FDTD2DSolver(sim).setup.offdiag is not None
    hz = np.abs(sim.run(progress=False)["p"].data["Hz"]).ravel()
    early, late = hz[5000:15000].max(), hz[-10000:].max()
    assert np.isfinite(hz).all() and 0 < late < 2 * early


def test_off_diagonal_term_on_flat_interfaces():
    """K = n_x n_y (<1/eps> - 1/<eps>): zero on an axis-aligned interface, half the
    gap between the series and parallel means on a 45-degree one (n_x n_y = -1/2 here)."""
    grid, eps_s = _grid(20), 6.0
    for geom, nxny in ((Rectangle(center=(5.237, 0.0), size=(10.0, 10.0)), 0.0),
                       (Polygon(vertices=[(-9.0, -9.113), (9.0, 8.887), (9.0, -9.113)]), -0.5)):
        s = Structure2D(geometry=geom, medium=Medium(eps_r=eps_s))
        mat = rasterize(grid, Medium(), [s])
        K = subpixel.off_diagonal(grid, Medium(), [s], mat.media, dict(mat.index))
        for comp in ("Ex", "Ey"):
            cut = subpixel.cut_samples(grid, comp, geom, planar=True)
            f = cut.fill
            want = nxny * (f / eps_s + 1 - f - 1 / (f * eps_s + 1 - f))
            assert np.allclose(K[comp][cut.index], want, atol=1e-12)
            assert (nxny == 0) == (not K[comp].any())
