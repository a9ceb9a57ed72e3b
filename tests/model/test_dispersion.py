"""Dispersive media (issue 20, first step): pole models, Cole-Cole, library, fitter.

Convention e^{+j omega t}: eps = eps' - j eps'', passive means eps'' >= 0. Closed forms
are written out in real and imaginary parts (Taflove and Hagness, section 9.4), apart
from the code's complex expressions.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from pydantic import ValidationError

from emjax.constants import eps0
from emjax.errors import EmjaxWarning, SetupError
from emjax.materials import METALS, TISSUES, fit_poles, metal, tissue, water
from emjax.model.dispersion import (
    ColeColeMedium,
    ColeColeTerm,
    DebyePole,
    DrudePole,
    LorentzPole,
    PoleMedium,
)

F = np.array([1e6, 3e8, 1e9, 7.7e9, 5e10])
W = 2 * math.pi * F


def _eps(medium, f=F):
    return medium.eps(f)


def test_debye_closed_form():
    m = PoleMedium(eps_inf=4.9, sigma=0.3, poles=[DebyePole(delta_eps=74.1, tau=8.3e-12)])
    wt = W * 8.3e-12
    re = 4.9 + 74.1 / (1 + wt**2)
    im = 74.1 * wt / (1 + wt**2) + 0.3 / (W * eps0)
    np.testing.assert_allclose(_eps(m), re - 1j * im, rtol=1e-12)
    np.testing.assert_allclose(m.sigma_eff(F), W * eps0 * im, rtol=1e-12)


def test_drude_closed_form_and_high_frequency_asymptote():
    wp, g = 1.37e16, 1.0e14
    m = PoleMedium(eps_inf=1.0, poles=[DrudePole(omega_p=wp, gamma=g)])
    w = 2 * math.pi * np.array([1e13, 3e14, 2e15])
    re = 1 - wp**2 / (w**2 + g**2)
    im = wp**2 * g / (w * (w**2 + g**2))
    np.testing.assert_allclose(m.eps(w / (2 * math.pi)), re - 1j * im, rtol=1e-12)
    w_hi = 1e4 * g  # omega >> gamma: eps - eps_inf -> -omega_p^2 / omega^2
    chi = m.eps(w_hi / (2 * math.pi)) - 1.0
    assert abs(chi.real / (-wp**2 / w_hi**2) - 1) < 1e-7
    assert math.isinf(m.eps_static)


def test_lorentz_closed_form():
    d, w0, dl = 2.5, 2 * math.pi * 1e9, 2 * math.pi * 5e7
    m = PoleMedium(eps_inf=2.0, poles=[LorentzPole(delta_eps=d, omega_0=w0, delta=dl)])
    den = (w0**2 - W**2) ** 2 + 4 * W**2 * dl**2
    re = 2.0 + d * w0**2 * (w0**2 - W**2) / den
    im = d * w0**2 * 2 * W * dl / den
    np.testing.assert_allclose(_eps(m), re - 1j * im, rtol=1e-12)


def test_static_limit_is_eps_inf_plus_strengths():
    m = PoleMedium(eps_inf=3.0, poles=[DebyePole(delta_eps=40.0, tau=1e-9),
                                       LorentzPole(delta_eps=5.0, omega_0=1e10, delta=1e9)])
    assert m.eps_static == 48.0
    assert abs(m.eps(1e-3).real - 48.0) < 1e-9
    assert abs(m.eps(1e18).real - 3.0) < 1e-6  # far above every pole: eps_inf


def test_cole_cole_with_alpha_zero_is_debye_and_broadens_with_alpha():
    cc = ColeColeMedium(eps_inf=4.0, sigma_ionic=0.5,
                        terms=[ColeColeTerm(delta_eps=50.0, tau=8e-12, alpha=0.0)])
    pm = PoleMedium(eps_inf=4.0, sigma=0.5, poles=[DebyePole(delta_eps=50.0, tau=8e-12)])
    np.testing.assert_allclose(cc.eps(F), pm.eps(F), rtol=1e-13)
    # alpha > 0: the loss peak at omega tau = 1 is lower (Cole and Cole 1941: eps'' peak
    # = delta_eps cos(alpha pi/2) / (2 (1 + sin(alpha pi/2))))
    a = 0.2
    broad = ColeColeMedium(eps_inf=4.0, terms=[ColeColeTerm(delta_eps=50.0, tau=8e-12, alpha=a)])
    peak = -broad.eps(1 / (2 * math.pi * 8e-12)).imag
    s, c = math.sin(a * math.pi / 2), math.cos(a * math.pi / 2)
    assert abs(peak - 50.0 * c / (2 * (1 + s))) < 1e-9


def test_passive_poles_lose_energy_at_every_frequency():
    m = PoleMedium(eps_inf=2.0, sigma=0.01, poles=[
        DebyePole(delta_eps=10.0, tau=1e-10), DrudePole(omega_p=1e10, gamma=1e9),
        LorentzPole(delta_eps=3.0, omega_0=2e10, delta=1e8)])
    f = np.logspace(5, 12, 2000)
    assert np.all(m.eps(f).imag < 0) and np.all(m.sigma_eff(f) > 0)
    # the sign the validators guard: a negative Lorentz strength would be a gain
    gain = LorentzPole.model_construct(type="Lorentz", delta_eps=-3.0, omega_0=2e10, delta=1e8)
    assert np.all(gain.chi(2 * math.pi * f).imag > 0)


@pytest.mark.parametrize("pole, words", [
    ({"type": "Debye", "delta_eps": -3.0, "tau": 1e-9}, ["delta_eps = -3", "delta_eps > 0"]),
    ({"type": "Debye", "delta_eps": 3.0, "tau": 0.0}, ["tau = 0", "> 0"]),
    ({"type": "Drude", "omega_p": 1e15, "gamma": -1e13}, ["gamma = -1e+13", "gamma >= 0"]),
    ({"type": "Lorentz", "delta_eps": -2.0, "omega_0": 1e10, "delta": 1e8},
     ["delta_eps = -2", "gain", "delta_eps > 0"]),
    ({"type": "Lorentz", "delta_eps": 2.0, "omega_0": 1e10, "delta": -1e8},
     ["delta = -1e+08", "delta >= 0"]),
])
def test_non_passive_poles_are_refused_naming_pole_value_and_fix(pole, words):
    good = {"type": "Debye", "delta_eps": 1.0, "tau": 1e-9}
    with pytest.raises(ValidationError) as err:
        PoleMedium(eps_inf=2.0, poles=[good, pole])
    text = str(err.value)
    assert "poles.1" in text and "not passive" in text
    for w in words:
        assert w in text, text


def test_round_trip_through_json_keeps_pole_kinds():
    m = PoleMedium(eps_inf=2.0, sigma=0.1, poles=[
        DebyePole(delta_eps=1.0, tau=1e-9), DrudePole(omega_p=1e10, gamma=1e8),
        LorentzPole(delta_eps=1.0, omega_0=1e9, delta=1e7)])
    assert PoleMedium.model_validate_json(m.model_dump_json()) == m


def test_eps_refuses_non_positive_frequency():
    with pytest.raises(SetupError, match="f > 0"):
        tissue("muscle").eps(np.array([1e6, 0.0]))


def test_muscle_matches_quoted_values():
    m = tissue("muscle")
    f = np.array([64e6, 128e6, 300e6])
    np.testing.assert_allclose(m.eps(f).real, [72.2, 63.5, 58.2], rtol=0.01)
    np.testing.assert_allclose(m.sigma_eff(f), [0.688, 0.719, 0.770], rtol=0.01)


def test_unknown_names_list_the_library():
    with pytest.raises(SetupError) as err:
        tissue("liverwurst")
    assert "liverwurst" in str(err.value)
    for name in TISSUES:
        assert name in str(err.value)
    assert tissue("Cerebro Spinal Fluid") == tissue("csf")
    with pytest.raises(SetupError, match="Ag, Au"):
        metal("Unobtainium")


def test_water_matches_kaatze_at_25_degc():
    w = water(25.0)
    assert abs(w.eps_static / 78.36 - 1) < 0.005
    assert abs(w.poles[0].tau / 8.27e-12 - 1) < 0.03
    with pytest.raises(SetupError, match="0 to 40"):
        water(90.0)


def test_metals_are_passive_and_metallic():
    f = 299792458.0 / np.logspace(np.log10(0.25e-6), np.log10(12e-6), 200)
    for s in METALS:
        e = metal(s).eps(f)
        assert np.all(e.imag < 0), s
        assert np.all(e.real[f < 299792458.0 / 0.7e-6] < 0), s  # red and infrared: metallic


def test_fitter_reproduces_a_two_pole_debye_medium():
    target = PoleMedium(eps_inf=3.0, sigma=0.1, poles=[DebyePole(delta_eps=50.0, tau=1e-9),
                                                       DebyePole(delta_eps=10.0, tau=2e-11)])
    fit = fit_poles(target, 1e7, 1e10, n_debye=2)
    assert fit.max_error < 1e-8, fit.max_error
    m = fit.medium
    assert abs(m.eps_inf - 3.0) < 1e-6 and abs(m.sigma - 0.1) < 1e-7
    got = sorted((p.tau, p.delta_eps) for p in m.poles)
    np.testing.assert_allclose(got, [(2e-11, 10.0), (1e-9, 50.0)], rtol=1e-6)


def test_fitter_fits_a_measured_table():
    blood = tissue("blood")
    f = np.logspace(np.log10(50e6), np.log10(2e9), 60)
    table = (f, blood.eps(f).real, blood.sigma_eff(f))
    fit = fit_poles(table, 50e6, 2e9)
    assert fit.max_error <= 0.01
    np.testing.assert_allclose(fit.medium.sigma_eff(f), table[2], rtol=0.01)
    np.testing.assert_allclose(fit.medium.eps(f).real, table[1], rtol=0.01)
    with pytest.raises(SetupError, match="differ in length"):
        fit_poles((f, table[1][:-1], table[2]), 50e6, 2e9)


def test_fitter_takes_a_callable_and_lorentz_poles():
    w = water(20.0)
    fit = fit_poles(w.eps, 1e8, 2e10, n_debye=2, n_lorentz=1)
    assert fit.max_error < 0.01
    assert all(p.type in ("Debye", "Lorentz") for p in fit.medium.poles)


def test_a_fit_that_misses_the_tolerance_warns_with_the_error():
    with pytest.warns(EmjaxWarning, match="misses tol") as rec:
        fit = fit_poles(tissue("muscle"), 10e6, 3e9, n_debye=1)
    assert fit.max_error > 0.01
    assert f"{fit.max_error_eps:.3g}" in str(rec[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fit_poles(tissue("muscle"), 10e6, 3e9).max_error <= 0.01


@pytest.mark.parametrize("pole, field", [
    ({"type": "Lorentz", "delta_eps": 1.0, "omega_0": 1e300, "delta": 1e7}, "omega_0"),
    ({"type": "Lorentz", "delta_eps": 1.0, "omega_0": 1e9, "delta": 1e300}, "delta"),
    ({"type": "Drude", "omega_p": 1e300, "gamma": 1e13}, "omega_p"),
    ({"type": "Debye", "delta_eps": 1e300, "tau": 1e-9}, "delta_eps"),
    ({"type": "Debye", "delta_eps": 1.0, "tau": 1e300}, "tau"),
    ({"type": "Debye", "delta_eps": 1.0, "tau": 1e-300}, "tau"),
])
def test_pole_parameters_beyond_physical_ranges_are_refused(pole, field):
    """Values whose squares overflow eps(f) and the ADE coefficients (a fuzzed document
    with omega_0 = 1e300 once reached an OverflowError) are refused by the model, the
    error naming the field."""
    with pytest.raises(ValidationError) as err:
        PoleMedium(poles=[pole])
    assert field in str(err.value) and "poles.0" in str(err.value)
    with pytest.raises(ValidationError, match="eps_inf"):
        PoleMedium(eps_inf=1e300)
