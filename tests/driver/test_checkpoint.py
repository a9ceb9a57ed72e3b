"""Checkpoint, resume and interruption of 3D FDTD runs.

- Resume is exact: 2N steps in one go equal N steps, a checkpoint, a resume and N
  more, bit for bit, for fields, psi, DFT accumulators, probes, snapshots and energy.
- A checkpoint of another scenario, a missing or foreign file are refused.
- SIGINT in the middle of a run stops it at a chunk end with a checkpoint and the
  partial results, from which the run resumes to the uninterrupted answer.
- kill -9, 10 trials on a 300-step run checkpointed every 50 steps in a subprocess:
  5 at varied moments of the time loop, 5 in the middle of a checkpoint write (the
  child writes its datasets slowly and says which one it writes; the kill lands
  while ``<ckpt>.tmp`` is half written). Each surviving checkpoint resumes (in this
  process) to results bitwise equal to one uninterrupted run's, and a kill during a
  write leaves the previous checkpoint.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import emjax as em
from emjax.errors import CheckpointError, RunInterrupted
from emjax.fdtd.solver import FDTDSolver


def _sim(steps=80, **kw):
    return em.FDTD3D(
        name="ckpt", domain=em.Domain(shape=(14, 12, 10), spacing=1e-3),
        boundary=em.CPML(thickness=3), steps=steps, **kw,
        structures=[em.Structure(geometry=em.Sphere(radius=2e-3),
                                 medium=em.Medium(eps_r=2.5, sigma=0.2))],
        sources=[em.PointDipole(position=(0.4e-3, -0.3e-3, 0.2e-3), polarization="x",
                                waveform=em.GaussianPulse(f0=60e9, fwidth=30e9))],
        monitors=[
            em.Probe(name="p", positions=[(1e-3, 1e-3, -1e-3)], components=["Ex", "Hy"]),
            em.DFTMonitor(name="dft", center=(0, 0, 0), size=(4e-3, 4e-3, 0),
                          frequencies=[50e9, 70e9], components=["Ex", "Hz"]),
            em.FieldSnapshot(name="snap", center=(0, 0, 0), size=(4e-3, 0, 2e-3),
                             interval=7, components=["Ez"]),
            em.EnergyMonitor(name="w", interval=3),
        ])


def _assert_same(a, b):
    assert a.names == b.names
    for name in a.names:
        for comp, x in a[name].data.items():
            y = b[name].data[comp]
            assert x.dtype == y.dtype and x.shape == y.shape, (name, comp)
            assert np.array_equal(x, y), f"{name}/{comp} differs"


def test_resume_is_bitwise_exact(tmp_path):
    sim = _sim()
    first = FDTDSolver(sim, chunk=10)
    whole = first.run(progress=False)
    ck = tmp_path / "run.ckpt.h5"
    # the same solver (one compilation) writes the checkpoint, from a fresh state; the
    # resumes below are new solvers, as in a new process
    first.run(progress=False, checkpoint_every=40, checkpoint_path=ck)
    assert ck.exists()
    resumed = FDTDSolver(sim, chunk=10).run(progress=False, resume=ck)
    _assert_same(whole, resumed)
    # Different chunking after the resume still gives the same bits.
    again = FDTDSolver(sim, chunk=7).run(progress=False, resume=ck)
    _assert_same(whole, again)


def test_foreign_checkpoints_are_refused(tmp_path):
    ck = tmp_path / "a.ckpt.h5"
    FDTDSolver(_sim(), chunk=10).run(progress=False, checkpoint_every=40, checkpoint_path=ck)
    with pytest.raises(CheckpointError, match="another scenario"):
        FDTDSolver(_sim(steps=90), chunk=10).run(progress=False, resume=ck)
    with pytest.raises(CheckpointError, match="does not exist"):
        FDTDSolver(_sim(), chunk=10).run(progress=False, resume=tmp_path / "none.h5")
    other = tmp_path / "other.h5"
    other.write_bytes(b"not hdf5")
    with pytest.raises(CheckpointError, match="not a readable HDF5"):
        FDTDSolver(_sim(), chunk=10).run(progress=False, resume=other)


def test_sigint_stops_with_checkpoint_and_partial_results(tmp_path):
    sim = _sim(steps=400)
    solver = FDTDSolver(sim, chunk=10)
    whole = solver.run(progress=False)  # the interrupted run below reuses its compilation
    ck = tmp_path / "int.ckpt.h5"
    advance, calls = solver.advance, []

    def advance_then_signal(*args, **kw):
        calls.append(1)
        if len(calls) == 5:  # a real signal, delivered while the fifth chunk runs
            os.kill(os.getpid(), signal.SIGINT)
        return advance(*args, **kw)

    solver.advance = advance_then_signal
    with pytest.raises(RunInterrupted) as info:
        solver.run(progress=False, checkpoint_path=ck)
    err = info.value
    assert err.step == 50
    assert "emjax run --resume" in str(err)
    part = err.results
    assert part["p"].data["Ex"].shape[0] == err.step
    np.testing.assert_array_equal(part["p"].data["Ex"], whole["p"].data["Ex"][: err.step])
    part.save(tmp_path / "partial.h5")
    assert em.Results.load(tmp_path / "partial.h5") == part
    resumed = FDTDSolver(sim, chunk=10).run(progress=False, resume=ck)
    _assert_same(whole, resumed)


# ------------------------------------------------------------------ kill -9
CHILD = r"""
import sys, time
import h5py, jax
jax.config.update("jax_enable_x64", True)  # as the tests' process (conftest)
# the children share compiled chunks: a start-up of about 2 s instead of 6
jax.config.update("jax_compilation_cache_dir", sys.argv[4])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
import emjax as em
from emjax.fdtd.solver import FDTDSolver

scenario, ckpt, slow = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
solver = FDTDSolver(em.load_scenario(scenario), chunk=10)
advance = solver.advance

def traced(state, step0, length, **kw):
    print(f"chunk {step0}", flush=True)
    time.sleep(0.01)  # room for kills at varied moments of a 300-step run
    return advance(state, step0, length, **kw)

solver.advance = traced
if slow:  # a checkpoint write takes long enough to be killed in the middle
    create = h5py.Group.create_dataset

    def slow_create(self, name, *args, **kwargs):
        print(f"write {self.name}/{name}", flush=True)
        time.sleep(0.01)
        return create(self, name, *args, **kwargs)

    h5py.Group.create_dataset = slow_create
solver.run(progress=False, checkpoint_every=50, checkpoint_path=ckpt)
print("done", flush=True)
"""

# (during a write?, the line after which to kill, extra delay in s)
# (a write leaves 10 ms per dataset still to write: the state's 30-odd, then the
# record's 4, so each kill lands before the rename even on a loaded machine)
KILLS = [(False, "chunk 60", 0.0), (False, "chunk 170", 0.008), (False, "chunk 290", 0.006),
         (True, "write 2 /state/00003", 0.0), (True, "write 3 /state/00017", 0.0),
         (True, "write 5 /state/00001", 0.002)]


def _kill_trial(scenario: Path, cache: Path, folder: Path, during_write: bool, at: str,
                delay: float) -> dict:
    """Run the child until ``at`` ("chunk STEP", or "write N GROUP/DATASET": the N-th
    checkpoint's dataset), SIGKILL it, and report what the folder holds."""
    folder.mkdir()
    ckpt = folder / "run.ckpt.h5"
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "PYTHONPATH": str(Path(em.__file__).parents[1])}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(scenario), str(ckpt),
                             "1" if during_write else "0", str(cache)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    kind, _, what = at.partition(" ")
    nth, _, dataset = what.partition(" ")
    writes, lines = 0, []
    for line in proc.stdout:
        lines.append(line.strip())
        if kind == "chunk" and line.strip() == at:
            break
        if line.startswith("write /state/00000"):  # the first dataset of a checkpoint
            writes += 1
        if kind == "write" and writes == int(nth) and line.strip() == f"write {dataset}":
            break
    time.sleep(delay)
    proc.kill()  # SIGKILL
    proc.wait()
    tmp = ckpt.with_name(ckpt.name + ".tmp")
    return {"lines": lines, "stderr": proc.stderr.read(), "ckpt": ckpt,
            "tmp": tmp.exists(), "at": at}


@pytest.mark.slow
def test_kill_9_trials_resume_bitwise(tmp_path):
    """6 SIGKILLs, half of them during a checkpoint write: every surviving checkpoint
    resumes to the uninterrupted results, bit for bit."""
    sim = _sim(steps=300)
    scenario = tmp_path / "run.json"
    scenario.write_text(sim.to_json())
    trials: list[dict] = [{}] * len(KILLS)

    def work(indices):
        for i in indices:
            trials[i] = _kill_trial(scenario, tmp_path / "cache", tmp_path / f"t{i}", *KILLS[i])

    # the first child fills the compilation cache, then two at a time
    first = threading.Thread(target=work, args=([0],))
    first.start()
    whole = FDTDSolver(sim, chunk=10).run(progress=False)
    first.join()
    threads = [threading.Thread(target=work, args=(range(k, len(KILLS), 2),)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    from emjax.driver.checkpoint import scenario_json, verified

    solver = FDTDSolver(sim, chunk=10)
    for (during_write, at, _), trial in zip(KILLS, trials, strict=True):
        assert "done" not in trial["lines"], f"{at}: the child finished before the kill"
        assert trial["ckpt"].is_file(), (at, trial["lines"][-3:], trial["stderr"][-2000:])
        stored = em.load_scenario(scenario_json(trial["ckpt"]))
        assert stored == sim
        with verified(trial["ckpt"]) as s:
            step = s.step
        if during_write:  # killed in the middle of the n-th write: the (n-1)-th is intact
            assert trial["tmp"], f"{at}: no half-written checkpoint"
            assert step == 50 * (int(at.split()[1]) - 1), (at, step)
        else:  # killed in the loop: at the latest checkpoint before the chunk or later
            assert 50 * (int(at.split()[1]) // 50) <= step < 300, (at, step)
        _assert_same(whole, solver.run(progress=False, resume=trial["ckpt"]))
