"""Checkpoint, resume and interruption of 3D FDTD runs.

- Resume is exact: 2N steps in one go equal N steps, a checkpoint, a resume and N
  more, bit for bit, for fields, psi, DFT accumulators, probes, snapshots and energy.
- A checkpoint of another scenario, a missing or foreign file are refused.
- SIGINT in the middle of a run stops it at a chunk end with a checkpoint and the
  partial results, from which the run resumes to the uninterrupted answer.
"""

from __future__ import annotations

import os
import signal

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
    whole = FDTDSolver(sim, chunk=10).run(progress=False)
    ck = tmp_path / "run.ckpt.h5"
    first = FDTDSolver(sim, chunk=10)
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
    whole = FDTDSolver(sim, chunk=10).run(progress=False)
    ck = tmp_path / "int.ckpt.h5"
    solver = FDTDSolver(sim, chunk=10)
    advance, calls = solver.advance, []

    def advance_then_signal(*args):
        calls.append(1)
        if len(calls) == 5:  # a real signal, delivered while the fifth chunk runs
            os.kill(os.getpid(), signal.SIGINT)
        return advance(*args)

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
