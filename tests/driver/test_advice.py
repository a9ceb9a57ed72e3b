"""The run advice (emjax.driver.advice): each warning fires for a set-up built to
trigger it, names the value, the limit and the fix, and stays silent for a sound one.

Cases: a pulse cut off by a short run (FDTD3D, FDTD2D, DGATD; a continuous wave
never warns), 2 cells per wavelength, a DFT at 1e15 Hz on a grid whose Nyquist
frequency is about 5e10 Hz, a DFT frequency 60 dB down the pulse's spectrum, and
every built-in scenario lowered with EmjaxWarning as an error.

Dispersive media (PoleMedium): a water (Debye) sphere at 5 mm cells, fine for its
eps_inf (11 cells per wavelength at the band's top) but not for its eps(f) near
eps_static (about 3), warns naming the medium; at 0.5 mm it is silent, and so is a
Drude metal (Re eps < 0 over the band: not checked, resolved_index's rule) at 5 mm.
The same in FDFD3D's check_resolution at the solve frequency.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import emjax as em
from emjax.driver import advice
from emjax.errors import EmjaxWarning
from emjax.fdtd import plan, setup, setup2d

PULSE = em.GaussianPulse(f0=1e9, fwidth=0.5e9)  # peak near 1.6 ns, gone by 2.8 ns


def cube(spacing=5e-3, duration=6e-9, waveform=PULSE, frequencies=(1e9,), **kw):
    """A dipole in a 16-cell CPML cube; a DFT monitor at ``frequencies``."""
    n = 16
    return em.FDTD3D(
        domain=em.Domain(shape=(n, n, n), spacing=spacing), boundary=em.CPML(thickness=3),
        sources=[em.PointDipole(position=(0, 0, 0), polarization="z", waveform=waveform)],
        monitors=[em.DFTMonitor(name="dft", size=(4 * spacing, 4 * spacing, 0),
                                frequencies=list(frequencies), components=["Ez"])],
        duration=duration, **kw)


def silent(fn, *args):
    """Run ``fn`` with EmjaxWarning as an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", EmjaxWarning)
        return fn(*args)


def test_sound_set_up_is_silent():
    s = silent(setup.prepare, cube())
    assert s.steps > 0


def test_cut_pulse_warns_with_the_time_it_needs():
    with pytest.warns(EmjaxWarning, match=r"sources\[0\] PointDipole: its waveform is still at") \
            as rec:
        setup.prepare(cube(duration=1.5e-9))
    msg = str(rec[0].message)
    assert "limit 0.001" in msg and "cut off" in msg
    # the suggested end: where the envelope falls to 1e-3, t0 + 3.72 tau
    end = float(msg.split("run to at least ")[1].split(" s")[0])
    tau = PULSE.tau
    assert end == pytest.approx((PULSE.offset + np.sqrt(2 * np.log(1e3))) * tau, rel=0.05)
    # not cut at that time: silent
    silent(setup.prepare, cube(duration=end * 1.02))


def test_cut_pulse_2d_and_dga(small_fdtd2d, small_dgatd):
    sim = small_fdtd2d(steps=20)
    with pytest.warns(EmjaxWarning, match=r"sources\[0\] LineSource: its waveform is still"):
        setup2d.prepare(sim)
    from emjax.dga.solver import prepare

    with pytest.warns(EmjaxWarning, match=r"sources\[0\] MeshEdgeSource: its waveform is"):
        prepare(small_dgatd(steps=5))
    long = small_dgatd(steps=None, duration=20e-9)  # the 0.5 GHz pulse is over by 10 ns
    assert silent(prepare, long).steps > 5


def test_continuous_wave_never_cut():
    cw = em.ContinuousWave(frequency=1e9, ramp=2e-9)
    silent(setup.prepare, cube(duration=3e-9, waveform=cw))


def test_two_cells_per_wavelength():
    # 1 GHz +- 0.5 GHz in eps_r 100: lambda 11 mm at the band's top, 5 mm cells
    sim = cube(background=em.Medium(eps_r=100.0), duration=8e-9)
    with pytest.warns(EmjaxWarning, match=r"cells per shortest wavelength") as rec:
        setup.prepare(sim)
    msg = str(rec[0].message)
    n = float(msg.split(" cells")[0])
    assert 2.0 < n < 2.5, msg
    assert "eps_r*mu_r = 100" in msg and "use at least 10" in msg and "spacing <=" in msg
    # the same at 0.5 mm cells is resolved (22 cells)
    silent(setup.prepare, cube(spacing=0.5e-3, background=em.Medium(eps_r=100.0),
                               duration=8e-9, frequencies=(1e9,)))


WATER = em.PoleMedium(eps_inf=4.9, name="water",
                      poles=[em.DebyePole(delta_eps=74.0, tau=8.3e-12)])
COPPER = em.PoleMedium(name="copper", poles=[em.DrudePole(omega_p=1.37e16, gamma=4.05e13)])


def test_dispersive_sphere_resolution():
    def advise(medium, spacing=5e-3):
        sim = cube(spacing=spacing, duration=8e-9, structures=[
            em.Structure(geometry=em.Sphere(radius=4 * spacing), medium=medium)])
        return plan.advise(sim, sim.dt, sim.num_steps, sim.domain.spacing3)

    assert silent(advise, em.Medium(eps_r=WATER.eps_inf)) == []  # eps_inf alone: resolved
    with pytest.warns(EmjaxWarning, match=r"cells per shortest wavelength") as rec:
        advise(WATER)
    msg = str(rec[0].message)
    n = float(msg.split(" cells")[0])
    # at the band's top (about 2.5 GHz) |eps| is about 78: 11 cells / sqrt(78 / 4.9)
    assert 2.4 < n < 3.2 and "dispersive medium water, |eps(f)| = 7" in msg, msg
    assert "spacing <=" in msg and "narrower-band" not in msg
    assert silent(advise, WATER, 0.5e-3) == []
    assert silent(advise, COPPER) == []  # a metal: no absurd demand for micron cells
    assert advice.resolved_index(COPPER.eps(np.array([1e9, 3e9]))).max() == 0


def test_fdfd_dispersive_resolution():
    from emjax.fdfd import setup as fdfd_setup

    def check(medium, spacing):
        sim = em.FDFD3D(domain=em.Domain(size=(0.4, 0.4, 0.4), spacing=spacing), frequency=1e9,
                        structures=[em.Structure(geometry=em.Sphere(radius=0.04),
                                                 medium=medium)])
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            fdfd_setup.check_resolution(sim)
        return [str(w.message) for w in rec], dict(sim.cells_per_wavelength())

    # 1 GHz: 13.5 cells of 1 cm per wavelength at eps_inf, 3.4 in water (|eps| 78)
    msgs, cpw = check(WATER, 0.01)
    assert len(msgs) == 1 and "medium 'water': 3.38 cells per wavelength" in msgs[0], msgs
    assert check(em.Medium(eps_r=WATER.eps_inf), 0.01)[0] == []
    msgs, cpw = check(WATER, 0.002)
    assert msgs == [] and 16 < cpw["water"] < 18
    msgs, cpw = check(COPPER, 0.01)
    assert msgs == [] and "copper" not in cpw


def test_dft_above_nyquist():
    sim = cube(spacing=5.2e-3, frequencies=(1e9, 1e15))
    assert 4.5e10 < 1 / (2 * sim.dt) < 5.5e10
    with pytest.warns(EmjaxWarning, match=r"monitor DFTMonitor 'dft': frequencies 1e\+15 Hz "
                      r"lie above the Nyquist frequency") as rec:
        setup.prepare(sim)
    assert len(rec) == 1  # 1 GHz is fine; 1e15 is not also reported as out of band


def test_dft_outside_the_band():
    # the spectrum of the 1 +- 0.5 GHz pulse is 60 dB down near 2.9 GHz
    spec = advice.spectrum(advice.Signal("s", PULSE.sampler()), cube().dt, cube().num_steps)
    f = np.linspace(1.5e9, 5e9, 35001)
    f60 = float(f[np.argmin(np.abs(spec.db(f) + 60))])
    assert spec.db(np.array([f60]))[0] == pytest.approx(-60, abs=0.5)
    with pytest.warns(EmjaxWarning, match=r"outside the sources' band") as rec:
        setup.prepare(cube(frequencies=(1e9, f60)))
    msg = str(rec[0].message)
    assert "-60 dB" in msg and f"{f60:.4g} Hz" in msg and "within -40 dB" in msg
    silent(setup.prepare, cube(frequencies=(0.5e9, 1e9, 2e9)))


def test_near_to_far_and_continuous_wave_band():
    cw = em.ContinuousWave(frequency=1e9, ramp=1e-9)
    sim = em.FDTD3D(
        domain=em.Domain(shape=(24, 24, 24), spacing=5e-3), boundary=em.CPML(thickness=4),
        sources=[em.PointDipole(position=(0, 0, 0), polarization="z", waveform=cw)],
        monitors=[em.NearToFar(name="far", frequencies=[1e9, 1.2e9])], duration=10e-9)
    with pytest.warns(EmjaxWarning, match=r"monitor NearToFar 'far': frequencies 1.2e\+09 Hz"):
        plan.advise(sim, sim.dt, sim.num_steps, sim.domain.spacing3)


def test_warning_points_at_the_callers_line():
    with pytest.warns(EmjaxWarning) as rec:
        setup.prepare(cube(duration=1e-9))
    assert rec[0].filename == __file__


@pytest.mark.parametrize("name", __import__("emjax.scenarios", fromlist=["x"]).builtin_names())
def test_builtins_lower_without_warnings(name):
    """Every built-in's advice with EmjaxWarning as an error, and its whole lowering
    where the run takes under 256 MiB (mri-coil and car-rcs, 0.7-1 GiB, would add 7 s
    each of rasterizing to CI for the same checks)."""
    from emjax.scenarios import load_builtin

    sim = load_builtin(name)
    if sim.type == "FDFD3D":
        pytest.skip("FDFD has no time-domain advice")
    if sim.type == "DGATD":
        from emjax.dga.solver import prepare

        silent(prepare, sim)
        return
    spacing = sim.domain.spacing3 if sim.type == "FDTD3D" else sim.domain.spacing2
    assert silent(plan.advise, sim, sim.dt, sim.num_steps, spacing) == []
    if sim.estimate()["total"] < 2**28:
        silent(setup2d.prepare if sim.type == "FDTD2D" else setup.prepare, sim)
