"""The 2D eigenmode solver against analytic modes: the hollow rectangular guide (n_eff
at second order, TE10's sine profile and power), power orthogonality, a dielectric slab
(the slab's dispersion equation), TEM lines (n_eff and impedance exact), bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from emjax.constants import c0, eta0
from emjax.eigenmode import (
    NoGuidedModeError,
    cross_power,
    cross_section,
    impedance,
    solve_modes,
)
from emjax.errors import SetupError

A, B, F = 0.02, 0.01, 20e9  # guide (m) and frequency: TE10, TE20, TE01, TE11, TM11 propagate


def _hollow(n: int):
    return cross_section(np.ones((n, n // 2)), (A / n, B / (n // 2)), name="wr")


def _analytic(m: int, k: int) -> float:
    fc = 0.5 * c0 * math.hypot(m / A, k / B)
    return math.sqrt(1 - (fc / F) ** 2)


def test_hollow_guide_n_eff_converges_at_second_order():
    want = sorted([_analytic(1, 0), _analytic(2, 0), _analytic(0, 1), _analytic(1, 1),
                   _analytic(1, 1)], reverse=True)
    errs = []
    for n in (16, 32):
        got = sorted((m.n_eff.real for m in solve_modes(_hollow(n), F, 5)), reverse=True)
        errs.append(np.abs(np.array(got) - want))
    assert np.all(errs[1] < 2e-3)
    # TE20 / TE01 are degenerate (a = 2b), as are TE11 / TM11: all five fall as h^2
    ratio = errs[0] / errs[1]
    assert np.all((ratio > 3.6) & (ratio < 4.4)), ratio


def test_te10_profile_power_and_orthogonality():
    xs = _hollow(24)
    modes = solve_modes(xs, F, 3)
    te10 = modes[0]
    ex, ey, ez = te10.E
    assert np.max(np.abs(ex)) < 1e-9 * np.max(np.abs(ey)) and np.max(np.abs(ez)) < 1e-9
    x, _ = xs.coords("Ey")
    profile = np.real(ey[:, 3])
    assert np.allclose(profile / profile.max(), np.sin(np.pi * x / A), atol=1e-9)
    # 1 W, and the analytic TE10 power |E0|^2 a b / (4 Z_TE), Z_TE = eta0 / n_eff
    assert te10.power == pytest.approx(1.0, rel=1e-12)
    e0 = np.max(np.abs(ey))
    p_analytic = e0**2 * A * B / (4 * eta0 / te10.n_eff.real)
    assert p_analytic == pytest.approx(1.0, rel=2e-3)
    for i in range(3):
        for j in range(3):
            if i != j:
                assert abs(cross_power(xs, modes[i].E, modes[j].H)) < 1e-9


def _slab_n_eff(n1: float, n2: float, half: float, k0: float) -> float:
    """Fundamental TE mode of a symmetric slab of half-thickness ``half``: with
    u = kappa half and V = k0 half sqrt(n1^2 - n2^2), u tan u = sqrt(V^2 - u^2)."""
    v = k0 * half * math.sqrt(n1**2 - n2**2)
    u = brentq(lambda u: u * math.tan(u) - math.sqrt(v**2 - u**2), 1e-12,
               min(math.pi / 2, v) - 1e-12)
    return math.sqrt(n1**2 - (u / (k0 * half)) ** 2)


def test_dielectric_slab_matches_the_dispersion_equation():
    """x-invariant: one cell across x between PEC walls (Ex normal to them), so the
    section's mode is the slab's TE mode E = Ex(y)."""
    lam, n1, n2, t, span = 1.0e-6, 1.5, 1.0, 0.6e-6, 4.0e-6
    k0 = 2 * math.pi / lam
    want = _slab_n_eff(n1, n2, t / 2, k0)
    errs = []
    for d in (0.04e-6, 0.02e-6):
        ny = round(span / d)
        y = -span / 2 + (np.arange(ny) + 0.5) * d
        eps = np.where(np.abs(y) < t / 2, n1**2, n2**2)[None, :]
        xs = cross_section(eps, (d, d), lower=(0.0, -span / 2), name="slab")
        mode = solve_modes(xs, c0 / lam, 1, n_min=n2)[0]
        errs.append(abs(mode.n_eff.real - want))
    assert errs[1] < 2e-4 * want
    assert errs[0] / errs[1] > 3.0, errs


def test_tem_lines_exact_n_eff_and_impedance():
    # parallel plate: PEC top and bottom, PMC sides; Z0 = eta0 h / (w sqrt(eps))
    w, h, eps_r = 4e-3, 1e-3, 2.2
    xs = cross_section(np.full((16, 4), eps_r), (w / 16, h / 4),
                       boundaries=("pmc", "pmc", "pec", "pec"), name="plates")
    mode = solve_modes(xs, 1e9, 1)[0]
    assert mode.n_eff.real == pytest.approx(math.sqrt(eps_r), rel=1e-9)
    z_ref = eta0 * h / (w * math.sqrt(eps_r))
    x_mid = 8 * w / 16
    zv = impedance(mode, voltage_path=((x_mid, 0.0), (x_mid, h)))
    assert zv.real == pytest.approx(z_ref, rel=1e-9)
    # square coax: the inner conductor as PEC cells, TEM n_eff exact
    pec = np.zeros((12, 12), dtype=bool)
    pec[4:8, 4:8] = True
    coax = cross_section(np.full((12, 12), 4.0), (1e-3, 1e-3), pec_cells=pec, name="coax")
    m = solve_modes(coax, 1e9, 1)[0]
    assert m.n_eff.real == pytest.approx(2.0, rel=1e-9)
    # V from inner to outer conductor and I around the inner: Z_VI = Z_PV = Z_PI
    zv = impedance(m, voltage_path=((4e-3, 6e-3), (0.0, 6e-3)))
    zi = impedance(m, current_loop=((2.5e-3, 2.5e-3), (9.5e-3, 9.5e-3)))
    zvi = impedance(m, voltage_path=((4e-3, 6e-3), (0.0, 6e-3)),
                    current_loop=((2.5e-3, 2.5e-3), (9.5e-3, 9.5e-3)))
    assert zi.real == pytest.approx(zv.real, rel=1e-6)
    assert abs(zvi) == pytest.approx(zv.real, rel=1e-6)


def test_errors_name_the_section_and_the_values():
    xs = _hollow(8)
    with pytest.raises(NoGuidedModeError, match=r"'wr' at 5e\+09 Hz.*largest Re n_eff"):
        solve_modes(xs, 5e9, 1)  # below TE10's cutoff of 7.5 GHz
    with pytest.raises(SetupError, match="frequency -1"):
        solve_modes(xs, -1.0)
    with pytest.raises(SetupError, match="num_modes 0"):
        solve_modes(xs, F, 0)
    with pytest.raises(SetupError, match=r"eps must be a 2D per-cell array"):
        cross_section(np.ones(5), (1e-3, 1e-3))
    with pytest.raises(SetupError, match=r"pec_cells has shape \(3, 3\)"):
        cross_section(np.ones((4, 4)), (1e-3, 1e-3), pec_cells=np.zeros((3, 3), bool))
    with pytest.raises(SetupError, match="boundaries"):
        cross_section(np.ones((4, 4)), (1e-3, 1e-3), boundaries="abc")
    with pytest.raises(SetupError, match="spacing"):
        cross_section(np.ones((4, 4)), (0.0, 1e-3))
