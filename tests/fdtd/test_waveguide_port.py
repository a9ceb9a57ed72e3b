"""Waveguide ports: the analytic TE/TM profiles, one-way launch, S21 of an empty
guide, the WR-90 case on a coarse grid, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

import emjax as em
from emjax.analysis.sparams import s_parameters, spectrum
from emjax.analysis.waveguide import RectangularMode, modal_waves
from emjax.constants import c0, eta0
from emjax.errors import SetupError
from emjax.fdtd.setup import prepare
from emjax.model import CPML, PEC, Boundaries, WaveguidePort

A, B = 22.86e-3, 10.16e-3

pytestmark = pytest.mark.filterwarnings("ignore:.*cells per shortest wavelength")


def _sums(mode, du, dv, field):
    """Discrete sums over a (W, H) rectangle of profile products on the Yee positions:
    u-component at (half, whole), v-component at (whole, half)."""
    nu, nv = round(mode.width / du), round(mode.height / dv)
    uh, uw = (np.arange(nu) + 0.5) * du, np.arange(nu + 1) * du
    vh, vw = (np.arange(nv) + 0.5) * dv, np.arange(nv + 1) * dv
    if field == "E":
        pu = mode.profile("E", "u", uh[:, None], vw[None, :])
        pv = mode.profile("E", "v", uw[:, None], vh[None, :])
    else:  # H_u sits where E_v does, H_v where E_u does
        pu = mode.profile("H", "u", uw[:, None], vh[None, :])
        pv = mode.profile("H", "v", uh[:, None], vw[None, :])
    return pu, pv


@pytest.mark.parametrize(("kind", "m", "n"), [("TE", 1, 0), ("TE", 2, 1), ("TM", 1, 1)])
def test_profiles_are_normalized_and_orthogonal_on_the_yee_grid(kind, m, n):
    du, dv = A / 18, B / 8
    mode = RectangularMode(kind, m, n, A, B).on_grid(du, dv, 1e-3, 1e-12)
    eu, ev = _sums(mode, du, dv, "E")
    norm = (np.sum(eu**2) + np.sum(ev**2)) * du * dv
    assert norm == pytest.approx(1, rel=2e-3)
    hu, hv = _sums(mode, du, dv, "H")
    # h = n x e on the same sample sets: the same norm, h_u = -e_v, h_v = e_u
    assert np.allclose(hu, -ev) and np.allclose(hv, eu)
    other = RectangularMode("TE", 1, 0, A, B).on_grid(du, dv, 1e-3, 1e-12)
    if (kind, m, n) != ("TE", 1, 0):
        ou, ov = _sums(other, du, dv, "E")
        assert abs(np.sum(eu * ou) + np.sum(ev * ov)) * du * dv < 1e-12


def test_te10_field_shape_cutoff_and_impedance():
    mode = RectangularMode("TE", 1, 0, A, B)
    assert mode.cutoff_frequency == pytest.approx(c0 / (2 * A))
    u = np.linspace(0, A, 7)
    # E along v only, sin(pi u / a), unit power norm sqrt(2 / (a b))
    assert np.allclose(mode.profile("E", "u", u, B / 3), 0)
    assert np.allclose(-mode.profile("E", "v", u, B / 3), math.sqrt(2 / (A * B))
                       * np.sin(np.pi * u / A))
    f = 10e9
    root = math.sqrt(1 - (mode.cutoff_frequency / f) ** 2)
    assert mode.beta(f) == pytest.approx(2 * np.pi * f / c0 * root)
    assert mode.impedance(f) == pytest.approx(eta0 / root)
    # the grid's mode tends to the continuum's as the cells shrink
    fine = mode.on_grid(A / 400, B / 200, A / 400, A / 400 / c0 / 2)
    assert fine.beta(f).real == pytest.approx(mode.beta(f), rel=1e-4)


def _guide(n_len=16, excite2=False, probes=True, dtype="float32", steps=900, mode=("TE", 1, 0),
           f0=10e9):
    """A coarse WR-90 (8 x 4 cells of 2.9 x 2.5 mm, 2.54 mm along z), two ports of
    ``mode`` (TE10)."""
    kind, m, n = mode
    dz, pml, margin = 2.54e-3, 8, 5
    nz = n_len + 2 * (pml + margin)
    z1, z2 = (pml + margin) * dz, (pml + margin + n_len) * dz
    wave = em.GaussianPulse(f0=f0, fwidth=1e9)
    mon = [em.Probe(name="probe", components=["Ey"],
                    positions=[(A / 2, B / 2, z1 - 5 * dz), (A / 2, B / 2, z1 + 3 * dz)])]
    return em.FDTD3D(
        domain=em.Domain(size=(A, B, nz * dz), spacing=(A / 8, B / 4, dz), origin=(0, 0, 0)),
        boundary=Boundaries(x=PEC(), y=PEC(), z=CPML(thickness=pml)),
        sources=[WaveguidePort(name="p1", center=(A / 2, B / 2, z1), size=(A, B, 0),
                               direction="+", waveform=wave, mode=kind, m=m, n=n),
                 WaveguidePort(name="p2", center=(A / 2, B / 2, z2), size=(A, B, 0),
                               direction="-", excite=excite2, waveform=wave, mode=kind, m=m,
                               n=n)],
        monitors=mon if probes else [], steps=steps, dtype=dtype), z2 - z1


def test_empty_guide_launches_one_way_and_transmits_fully():
    sim, L = _guide()
    res = sim.run(progress=False)
    # one way: behind the source plane only what the far CPML returns
    ey = res["probe"].data["Ey"]
    assert np.abs(ey[:, 0]).max() < 1e-3 * np.abs(ey[:, 1]).max()  # measured 3.7e-5
    f = np.linspace(8.5e9, 11.5e9, 7)
    sp = s_parameters(res, f)
    s11, s21 = sp.S[:, 0, 0], sp.S[:, 1, 0]
    assert np.all(np.abs(np.abs(s21) - 1) < 2e-3)
    assert np.all(np.abs(s11) < 10 ** (-40 / 20))
    # the phase is the grid's own propagation over L (its dispersion, not the port's)
    grid = RectangularMode("TE", 1, 0, A, B).on_grid(*sim.domain.spacing3, sim.dt)
    assert np.allclose(np.angle(s21 * np.exp(1j * grid.beta(f).real * L)), 0, atol=2e-3)
    # the launched wave is the source's: a at port 1 is V_s carried over the two cells
    # from the source plane (SOURCE_CELLS) on the grid
    w = modal_waves(res["p1"], f)
    vs = spectrum(res["p1"].data["V_source"], res["p1"].coords["t_E"], f)
    dz = sim.domain.spacing3[2]
    assert np.allclose(w["a"], vs * np.exp(-2j * grid.beta(f) * dz), rtol=2e-3)


def test_a_tm11_port_transmits_fully_too():
    # TM launches from the current (its admittance is infinite at cut-off, 16.2 GHz)
    sim, _ = _guide(mode=("TM", 1, 1), f0=20e9, probes=False, steps=700)
    f = np.linspace(19e9, 21e9, 5)
    sp = s_parameters(sim.run(progress=False), f)
    assert np.all(np.abs(np.abs(sp.S[:, 1, 0]) - 1) < 2e-3)
    assert np.all(np.abs(sp.S[:, 0, 0]) < 10 ** (-40 / 20))


def test_the_wr90_case_on_a_coarse_grid():
    from emjax.validation.waveguide import waveguide_wr90

    # a/12 over 30 mm: |S21| and |S11| meet the limits already; the phases lag
    # by the coarse grid's dispersion (1.2 and 4.4 degrees measured), checked loosely
    recs = waveguide_wr90(12, length=30e-3, block=10e-3, duration=5e-9, pml=8, margin=4,
                          limits={"s21_phase": 2.0, "block_phase": 6.0, "block_s11": 0.05})
    assert len(recs) == 7
    for r in recs:
        assert r["pass"], r


@pytest.mark.parametrize(("change", "message"), [
    ({"size": (A, 0, 0)}, "exactly one zero extent"),
    ({"m": 0, "n": 0}, "TE00 does not exist"),
    ({"mode": "TM", "m": 1, "n": 0}, "TM10 does not exist"),
    ({"waveform": None}, "needs a 'waveform'"),
])
def test_bad_port_models_are_refused(change, message):
    args = {"name": "p", "center": (A / 2, B / 2, 0.05), "size": (A, B, 0), "direction": "+",
            "waveform": em.GaussianPulse(f0=10e9, fwidth=1e9), **change}
    with pytest.raises(ValueError, match=message):
        WaveguidePort(**args)


def _with_port(**change):
    sim, _ = _guide(probes=False)
    port = sim.sources[0].model_copy(update=change)
    return sim.model_copy(update={"sources": [port, sim.sources[1]]})


def test_a_port_outside_the_domain_is_refused():
    sim, _ = _guide(probes=False)
    data = sim.model_dump()
    data["sources"][0]["center"] = [A / 2, B / 2, 1.0]
    with pytest.raises(ValueError, match=r"WaveguidePort 'p1': corner .* outside the domain"):
        em.FDTD3D.model_validate(data)


@pytest.mark.parametrize(("change", "message"), [
    ({"waveform": em.GaussianPulse(f0=2e9, fwidth=0.9e9)}, "cut off below"),
    ({"center": (A / 2, B / 2, 5 * 2.54e-3)}, "outside the CPML"),
    ({"size": (A / 2, B, 0), "center": (A / 4, B / 2, 13 * 2.54e-3)}, "is not a PEC wall"),
    ({"size": (A * 0.9, B, 0)}, "not on a grid plane"),
    ({"name": "p2"}, "is taken by another port"),
])
def test_bad_port_placements_are_refused_before_the_run(change, message):
    with pytest.raises(SetupError, match=message):
        prepare(_with_port(**change))


def test_a_port_on_a_mixed_cross_section_is_refused():
    sim, _ = _guide(probes=False)
    half = em.Structure(geometry=em.Box(center=(A / 4, B / 2, 0.05), size=(A / 2, B, 0.2)),
                        medium=em.Medium(eps_r=2.0))
    with pytest.raises(SetupError, match="one lossless, non-dispersive medium"):
        prepare(sim.model_copy(update={"structures": [half]}))
