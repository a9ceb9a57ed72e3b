"""Waveguide ports with a solved mode (mode = "solved"): the eigenmode solver's TE10 of
an empty guide against the analytic port, a square coax (TEM), and bad input."""

from __future__ import annotations

import numpy as np
import pytest

import emjax as em
from emjax.analysis.sparams import s_parameters
from emjax.analysis.waveguide import RectangularMode, mode_from_attrs
from emjax.constants import c0
from emjax.eigenmode import NoGuidedModeError
from emjax.errors import SetupError
from emjax.fdtd.setup import prepare
from emjax.model import CPML, PEC, PMC, Boundaries, WaveguidePort

A, B = 22.86e-3, 10.16e-3

pytestmark = pytest.mark.filterwarnings("ignore:.*cells per shortest wavelength")


def _guide(mode: str = "TE", n_len: int = 16, **port) -> tuple[em.FDTD3D, float]:
    """A coarse WR-90 (8 x 4 cells of 2.9 x 2.5 mm, 2.54 mm along z) with two ports."""
    dz, pml, margin = 2.54e-3, 8, 5
    nz = n_len + 2 * (pml + margin)
    z1, z2 = (pml + margin) * dz, (pml + margin + n_len) * dz
    wave = em.GaussianPulse(f0=10e9, fwidth=1e9)
    common = {"size": (A, B, 0), "mode": mode, **port}
    return em.FDTD3D(
        domain=em.Domain(size=(A, B, nz * dz), spacing=(A / 8, B / 4, dz), origin=(0, 0, 0)),
        boundary=Boundaries(x=PEC(), y=PEC(), z=CPML(thickness=pml)),
        sources=[WaveguidePort(name="p1", center=(A / 2, B / 2, z1), direction="+",
                               waveform=wave, **common),
                 WaveguidePort(name="p2", center=(A / 2, B / 2, z2), direction="-",
                               excite=False, **common)],
        steps=900), z2 - z1


def test_the_solved_te10_reproduces_the_analytic_port(tmp_path):
    f = np.linspace(8.5e9, 11.5e9, 5)
    runs = {m: _guide(m)[0].run(progress=False) for m in ("TE", "solved")}
    s = {m: s_parameters(r, f).S for m, r in runs.items()}
    assert np.all(np.abs(np.abs(s["solved"][:, 1, 0]) - 1) < 2e-3)
    assert np.all(np.abs(s["solved"][:, 0, 0]) < 10 ** (-40 / 20))
    # the same discrete mode: S21's phase equal to the analytic port's (measured 2e-6 deg)
    dphase = np.degrees(np.angle(s["solved"][:, 1, 0] / s["TE"][:, 1, 0]))
    assert np.all(np.abs(dphase) < 1e-3)
    # the record's mode (read back from its attrs) has the grid's TE10 beta and Z
    sim = _guide("TE")[0]
    grid = RectangularMode("TE", 1, 0, A, B).on_grid(*sim.domain.spacing3, sim.dt)
    solved = mode_from_attrs(runs["solved"]["p1"].attrs["mode"])
    assert np.allclose(solved.beta(f), grid.beta(f), rtol=1e-9)
    assert np.allclose(solved.impedance(f), grid.impedance(f), rtol=1e-9)
    assert solved.cutoff_frequency == pytest.approx(grid.cutoff_frequency, rel=1e-6)
    # the solved mode travels in the saved results
    runs["solved"].save(tmp_path / "r.h5")
    again = em.Results.load(tmp_path / "r.h5")
    assert np.array_equal(s_parameters(again, f).S, s["solved"])


def test_the_coax_case_on_a_coarse_grid():
    from emjax.validation.modeport import coax_port

    # 10 cells across: S meets the brief's limits; Z0 is 4.1% below the continuum's
    # (the coarse grid's discretisation, checked loosely) and equals the same-grid
    # Laplace solution to rounding
    recs = coax_port(10, length=20e-3, points=9, pml=8, margin=4, duration=2e-9,
                     limits={"z0": 0.05})
    assert len(recs) == 5
    for r in recs:
        assert r["pass"], r


def test_the_microstrip_case_on_a_coarse_grid():
    from emjax.validation.modeport import microstrip_port

    # h / 2: a quasi-TEM line whose profile drifts 0.3% over the band; S meets the
    # limits (measured 3e-4, -67 dB), eps_eff within 1.3% of Hammerstad-Jensen
    recs = microstrip_port(2, length=20e-3, points=9, pml=8, margin=4, duration=2.5e-9)
    assert len(recs) == 4
    for r in recs:
        assert r["pass"], r


def _parallel_plate(mode: str = "solved") -> tuple[em.FDTD3D, float]:
    """A parallel-plate line: PEC plates (y faces) 5 mm apart, PMC side walls (x faces)
    10 mm apart, 5 x 5 cells, 1 mm along z, ports 20 mm apart."""
    a, b, dz, n_len, pml, margin = 10e-3, 5e-3, 1e-3, 20, 8, 4
    nz = n_len + 2 * (pml + margin)
    z1, z2 = (pml + margin) * dz, (pml + margin + n_len) * dz
    wave = em.GaussianPulse(f0=5e9, fwidth=1.5e9)
    common = {"size": (a, b, 0), "mode": mode}
    return em.FDTD3D(
        domain=em.Domain(size=(a, b, nz * dz), spacing=(a / 5, b / 5, dz), origin=(0, 0, 0)),
        boundary=Boundaries(x=PMC(), y=PEC(), z=CPML(thickness=pml)),
        sources=[WaveguidePort(name="p1", center=(a / 2, b / 2, z1), direction="+",
                               waveform=wave, **common),
                 WaveguidePort(name="p2", center=(a / 2, b / 2, z2), direction="-",
                               excite=False, **common)],
        duration=2e-9), z2 - z1


def test_pmc_side_walls_give_the_parallel_plate_tem_mode():
    sim, L = _parallel_plate()
    res = sim.run(progress=False, chunk=sim.num_steps)  # no tail chunk: one compilation
    mode = res["p1"].attrs["mode"]
    assert mode["info"]["n_eff"] == pytest.approx(1.0, abs=1e-9)
    # uniform E between the plates, up to and on the PMC walls
    e_v = np.array(mode["e_v"])
    assert e_v.shape == (6, 5) and np.allclose(e_v, e_v[0, 0], rtol=1e-9)
    f = np.linspace(3e9, 7e9, 5)
    S = s_parameters(res, f).S
    assert np.all(np.abs(np.abs(S[:, 1, 0]) - 1) < 1e-4)   # measured 2e-8
    assert np.all(np.abs(S[:, 0, 0]) < 10 ** (-60 / 20))   # measured -84 dB
    # the phase is the grid's own TEM propagation (measured 5e-6 degree)
    w = 2 / sim.dt * np.sin(np.pi * f * sim.dt)
    dz = sim.domain.spacing3[2]
    beta = 2 / dz * np.arcsin(w * dz / (2 * c0))
    assert np.all(np.abs(np.angle(S[:, 1, 0] * np.exp(1j * beta * L))) < 1e-5)
    # the analytic TE/TM modes need PEC on every side
    with pytest.raises(SetupError, match="is not a PEC wall"):
        prepare(_parallel_plate("TE")[0])


def test_mirror_image_peaks_give_both_ports_one_sign():
    from types import SimpleNamespace

    from emjax.fdtd.modeport import _sign

    # a symmetric line's E_x peaks at its two edges with opposite signs; the solver's
    # rounding may make either the larger: the sign must not depend on it
    for wobble in (1e-12, -1e-12):
        ex = np.array([[0.0, -1.0 - wobble, 0.0, 1.0, 0.0]])
        mode = SimpleNamespace(E=(ex, np.zeros((2, 1)), None))
        assert _sign(mode) == -1.0
        flipped = SimpleNamespace(E=(-ex, np.zeros((2, 1)), None))
        assert _sign(flipped) == 1.0


def test_a_pec_edge_with_a_free_end_node_is_refused():
    from types import SimpleNamespace

    from emjax.eigenmode import cross_section
    from emjax.fdtd.modeport import _check_conductors

    # a strip of 4 x edges whose last end node is free (as a rasterized strip whose
    # face lies exactly on a grid line can come out): the solver finds no TEM mode
    ex = np.zeros((10, 7), bool)
    ex[3:7, 3] = True
    ez = np.zeros((11, 7), bool)
    ez[3:7, 3] = True
    grid = SimpleNamespace(lower=(0.0, 0.0, 0.0), spacing=(1e-3, 1e-3, 1e-3))
    xs = cross_section(np.ones((10, 6)), (1e-3, 1e-3), pec_edges=(ex, None, ez), name="p")
    with pytest.raises(SetupError, match=r"p: the PEC edge along x at \(0.0065, 0.003, 0.002\) "
                                         r"m has an end node that is not PEC"):
        _check_conductors("p", grid, xs, 2, 2, (0, 0, 0))
    ez[7, 3] = True
    _check_conductors("p", grid, cross_section(np.ones((10, 6)), (1e-3, 1e-3),
                                               pec_edges=(ex, None, ez)), 2, 2, (0, 0, 0))


def test_mode_options_belong_to_solved_modes():
    with pytest.raises(ValueError, match="mode_index and mode_frequency apply to mode = "
                                         "'solved' only"):
        WaveguidePort(name="p", center=(A / 2, B / 2, 0.05), size=(A, B, 0), direction="+",
                      mode="TE", mode_index=1, waveform=em.GaussianPulse(f0=1e10, fwidth=1e9))


def test_no_guided_mode_names_the_port():
    sim, _ = _guide("solved", mode_frequency=3e9)  # TE10 is cut off below 6.56 GHz
    with pytest.raises(NoGuidedModeError, match=r"WaveguidePort 'p1'.*no guided mode"):
        prepare(sim)


def test_a_mode_index_beyond_the_guided_modes_is_refused():
    sim, _ = _guide("solved", mode_index=3)  # only TE10 propagates at 10 GHz
    with pytest.raises(SetupError, match=r"WaveguidePort 'p1'.*mode_index 3 asked, but .* 1 "
                                         "guided mode"):
        prepare(sim)


@pytest.mark.parametrize(("medium", "z_lo", "message"), [
    (em.Medium(eps_r=2.0, sigma=0.1), -0.5, "lossless, non-dispersive media"),
    # from 1 mm before port 1's plane on: its source plane, two cells behind, is empty
    (em.Medium(eps_r=2.0), 13 * 2.54e-3 - 1e-3, "differs between the port plane and the "
                                                "source plane"),
])
def test_bad_cross_sections_are_refused(medium, z_lo, message):
    sim, _ = _guide("solved")
    box = em.Box(center=(A / 4, B / 2, z_lo + 0.5), size=(A / 2, B, 1.0))  # half the guide
    sim = sim.model_copy(update={"structures": [em.Structure(geometry=box, medium=medium)]})
    with pytest.raises(SetupError, match=message):
        prepare(sim)
