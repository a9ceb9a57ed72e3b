"""Non-finite values in the fields or any monitor stop a run (issue #19, item 5).

The driver's guard (:mod:`emjax.driver.guard`) checks, at every chunk end, the fields
and every monitor: scan outputs (probes, energies, snapshots) and carried accumulators
(DFT, near-to-far). The error names the monitor and the steps and tells the likely
cause apart (``InstabilityError.cause``):

* "overflow": source amplitudes of 1e25-1e38 in float32 (the energy E^2 or a probe
  overflows while the fields stay bounded, or the fields themselves overflow with
  sources beyond the square root of float32's range); the same runs in float64 are
  finite and succeed;
* "instability": an E-update coefficient 1.5 or 10 times too large (the fields grow
  without bound; the energy monitor overflows first, or the fields do);
* "checkpoint": a resumed state holding NaN (refused before any step) or a huge value
  (non-finite in the first chunk after resuming).

FDTD3D, FDTD2D and DGATD go through the one driver; the final check of
``emjax.registry.run`` refuses non-finite results of any solver (FDFD's included).
Scenarios are the tiny ones of tests/conftest.py, 20-200 steps.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest

import emjax as em
from emjax import registry
from emjax.driver import guard, loop
from emjax.results import MonitorData, Results


def _amplified(make, amplitude: float, **kw):
    base = make(**kw)
    return make(sources=[s.model_copy(update={"amplitude": amplitude}) for s in base.sources],
                **kw)


def _raises(run, cause: str) -> em.InstabilityError:
    with pytest.raises(em.InstabilityError) as info:
        run()
    assert info.value.cause == cause, f"cause {info.value.cause!r}: {info.value}"
    return info.value


# ------------------------------------------------------------------ overflow
def test_fdtd3d_energy_overflow_in_float32_names_the_monitor(small_fdtd3d):
    sim = _amplified(small_fdtd3d, 1e25, steps=20)
    err = _raises(lambda: sim.run(progress=False), "overflow")
    msg = str(err)
    assert err.monitor == "monitors[2] 'w'" and msg.startswith("monitors[2] 'w' overflowed")
    assert "float32 holds up to 3.4e+38" in msg and 'dtype = "float64"' in msg, msg
    assert "between steps 0 and 10" in msg and "at step 4 " in msg, msg
    assert err.field == "" and err.step == 10


def test_fdtd3d_huge_amplitudes_are_fine_in_float64(small_fdtd3d):
    res = _amplified(small_fdtd3d, 1e30, steps=20, dtype="float64").run(progress=False)
    assert res.non_finite() == []
    assert np.max(res["w"].data["energy"]) > 1e40


def test_fdtd3d_fields_overflow_in_float32_is_not_called_an_instability(small_fdtd3d):
    sim = _amplified(small_fdtd3d, 1e30, steps=20)
    err = _raises(lambda: sim.run(progress=False), "overflow")
    assert str(err).startswith("the fields overflowed float32 between steps 0 and 10")
    assert err.field in ("Ex", "Ey", "Ez") and len(err.index) == 3
    assert "Courant" not in str(err) and "source amplitude" in str(err)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
def test_fdtd2d_amplitude_beyond_float32(small_fdtd2d):
    sim = _amplified(small_fdtd2d, 1e38, steps=20)
    err = _raises(lambda: sim.run(progress=False), "overflow")
    assert err.field == "Ez" and "float32" in str(err)


def test_dgatd_probe_overflow_names_the_probe(small_dgatd):
    """The issue's case: amplitude 1e38 wrote inf into a probe and exited 0."""
    sim = _amplified(small_dgatd, 1e38, steps=20)
    err = _raises(lambda: sim.run(progress=False), "overflow")
    assert err.monitor == "probes[0] 'p'", str(err)
    assert "float32 holds up to 3.4e+38" in str(err)


# --------------------------------------------------------------- instability
def _fdtd_unstable(solver_cls, sim, factor: float, chunk: int):
    solver = solver_cls(sim, chunk=chunk)
    cE = solver.setup.coeffs["E"]
    solver.setup.coeffs["E"] = dataclasses.replace(cE, b=cE.b * factor)
    return solver


def test_fdtd3d_growth_is_an_instability_even_when_a_monitor_overflows_first(small_fdtd3d):
    from emjax.fdtd.solver import FDTDSolver

    solver = _fdtd_unstable(FDTDSolver, small_fdtd3d(steps=200), 1.5, chunk=20)
    err = _raises(lambda: solver.run(progress=False), "instability")
    msg = str(err)
    assert err.monitor == "monitors[2] 'w'" and err.field == "", msg
    assert "the fields grew" in msg and "Courant factor" in msg, msg
    assert "unstable between steps 40 and 60" in msg, msg


def test_fdtd3d_fields_blowing_up_at_once(small_fdtd3d):
    from emjax.fdtd.solver import FDTDSolver

    solver = _fdtd_unstable(FDTDSolver, small_fdtd3d(steps=100), 10.0, chunk=50)
    err = _raises(lambda: solver.run(progress=False), "instability")
    assert err.field in ("Ex", "Ey", "Ez") and "Courant factor" in str(err)


def test_fdtd2d_growth_is_an_instability(small_fdtd2d):
    from emjax.fdtd.solver2d import FDTD2DSolver

    sim = small_fdtd2d(steps=200, monitors=[
        em.Probe(name="p", positions=[(0.05, 0.05, 0)], components=["Ez"]),
        em.EnergyMonitor(name="w", interval=1)])
    solver = _fdtd_unstable(FDTD2DSolver, sim, 1.5, chunk=20)
    err = _raises(lambda: solver.run(progress=False), "instability")
    assert err.monitor == "monitors[1] 'w'" and "the fields grew" in str(err), str(err)


def test_dgatd_growth_is_an_instability(small_dgatd):
    from emjax.dga.solver import DGASolver, prepare

    sim = small_dgatd(steps=200, energy=[em.EnergyMonitor(name="w", interval=1)])
    setup = prepare(sim)
    solver = DGASolver(sim, chunk=20, setup=dataclasses.replace(setup, dt=setup.dt * 1.5))
    err = _raises(lambda: solver.run(progress=False), "instability")
    assert err.monitor == "energy[0] 'w'" and "lower 'safety'" in str(err), str(err)


# ---------------------------------------------------------------- checkpoint
def _fake_resume(monkeypatch, state_change=None, record_change=None, step=10):
    """Make ``run(resume=...)`` start from a state and record built here, as if read
    from a checkpoint (the checkpoint's own integrity check is another test's)."""

    def load(solver, path):
        del path
        state = solver.init_state()
        if state_change:
            state = state_change(state)
        record = solver.empty_record()
        if record_change:
            record = record_change(record)
        return step, state, record

    monkeypatch.setattr(loop, "load_checkpoint", load)


def test_huge_value_in_a_resumed_state_blames_the_checkpoint(small_fdtd3d, monkeypatch):
    def poison(state):
        E = list(state.E)
        E[2] = E[2].at[4, 4, 4].set(1e37)
        return dataclasses.replace(state, E=tuple(E))

    _fake_resume(monkeypatch, state_change=poison)
    sim = small_fdtd3d(steps=20)
    err = _raises(lambda: sim.run(progress=False, resume="x.h5"), "checkpoint")
    assert "right after resuming from checkpoint 'x.h5'" in str(err)
    assert "may be corrupted" in str(err) and "between steps 10 and 20" in str(err)


def test_nan_in_a_resumed_state_is_refused_before_any_step(small_fdtd3d, monkeypatch):
    from emjax.fdtd.solver import FDTDSolver

    def poison(state):
        return dataclasses.replace(state, dft=state.dft, E=(state.E[0].at[1, 1, 1].set(
            jnp.nan), *state.E[1:]))

    _fake_resume(monkeypatch, state_change=poison)
    advanced = []
    monkeypatch.setattr(FDTDSolver, "advance", lambda *a, **kw: advanced.append(a))
    sim = small_fdtd3d(steps=20)
    err = _raises(lambda: sim.run(progress=False, resume="x.h5"), "checkpoint")
    assert "holds non-finite values" in str(err) and "fields" in str(err)
    assert advanced == []


def test_nan_in_a_resumed_record_names_the_monitor(small_dgatd, monkeypatch):
    def poison(record):
        record["probe"][0] = [np.full((10, 1, 3), np.nan, np.float32)] * 2
        return record

    _fake_resume(monkeypatch, record_change=poison)
    sim = small_dgatd(steps=20)
    err = _raises(lambda: sim.run(progress=False, resume="x.h5"), "checkpoint")
    assert err.monitor == "probes[0] 'p'" and "checkpoint 'x.h5'" in str(err)


def test_nan_in_a_dft_accumulator_is_caught(small_fdtd3d, monkeypatch):
    """A carried accumulator, not a scan output: the resumed-state check reads it."""
    sim = small_fdtd3d(steps=20, monitors=[
        em.DFTMonitor(name="d", size=(2e-3, 2e-3, 0), frequencies=[60e9])])

    def poison(state):
        d = state.dft[0]
        comp = next(iter(d))
        return dataclasses.replace(state, dft=[{**d, comp: d[comp].at[0].set(jnp.inf)}])

    _fake_resume(monkeypatch, state_change=poison)
    err = _raises(lambda: sim.run(progress=False, resume="x.h5"), "checkpoint")
    assert err.monitor == "monitors[0] 'd'", str(err)


# ------------------------------------------------------------------ building blocks
def test_peaks_see_nan_even_where_a_max_reduction_skips_it():
    """XLA:CPU's max of an all-NaN array is -inf; the guard maps NaN to inf first."""
    fields, monitors = guard.peaks((jnp.full((3, 3), jnp.nan),),
                                   [jnp.array([1.0, jnp.nan]), jnp.array([1 + 2j, 3j])])
    assert np.isinf(fields[0]) and np.isinf(monitors[0]) and float(monitors[1]) == 3.0


def test_registry_refuses_non_finite_results_of_any_solver(small_fdfd, monkeypatch):
    """FDFD has no chunks: a non-finite solution is refused after the solve."""
    sim = small_fdfd()
    data = {"Ex": np.array([[1 + 0j, np.inf]]), "Ey": np.zeros((1, 2), complex)}

    def solve(s, **kw):
        del kw
        return Results(scenario=s, monitors={"scattered": MonitorData(
            name="scattered", kind="DFTMonitor", data=data, coords={})})

    monkeypatch.setattr(registry, "entry", lambda scenario, name: solve)
    err = _raises(lambda: sim.run(), "result")
    assert err.monitor == "scattered" and "monitor 'scattered' Ex: 1 of 2 values" in str(err)
