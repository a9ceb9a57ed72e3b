"""FDFD interruption and its checkpoints.

Set-up: the tests' small FDFD sphere (13^3 cells + 3-cell PML) with plain COCG
(no preconditioner, so that the solve takes a few hundred iterations), 4 iterations
per host round trip.

- SIGINT during the Krylov solve (a real signal, sent from the host callback of the
  third round trip) stops it there: RunInterrupted with ``step`` = 12 iterations, the
  checkpoint at the default path ``<name>.ckpt.h5`` holding that iterate and the
  residual history, and partial results (the scattered fields, 12 residuals) that
  save and load. Resuming converges to the uninterrupted fields (relative 1e-8) with
  the whole residual history (12 stored + the rest).
- The FDFD checkpoint is the shared, digest-checked format: a flipped byte in the
  iterate, an edited eps_r in the stored scenario or a history of the wrong length
  are refused with CheckpointError.
- End to end: ``emjax run`` on an FDFD scenario that would iterate for ever
  (tol 1e-15), SIGINT once its first checkpoint exists: exit 130, the message, the
  checkpoint and ``<stem>.partial.h5`` with a residual history; the checkpoint then
  warm-starts a solve to 1e-8.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest

import emjax as em
from emjax.driver import checkpoint
from emjax.errors import CheckpointError, RunInterrupted
from emjax.model.fdfd import FDFDSolver

fsolver = pytest.importorskip("emjax.fdfd.solver")


def _sim(small_fdfd, tol=1e-8, max_iter=4000):
    return small_fdfd(name="intr", solver=FDFDSolver(tol=tol, max_iter=max_iter,
                                                     progress_every=4, preconditioner="none"))


def _quiet_run(sim, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the coarse grid's resolution warning
        return fsolver.run(sim, **kw)


def _sigint_at_round_trip(monkeypatch, n: int) -> None:
    """Send SIGINT to this process from the host callback of the ``n``-th round trip."""
    solve = fsolver.solve

    def solve_with_sigint(prep, **kw):
        callback, calls = kw["callback"], []

        def signalling(it, res, x, history):
            calls.append(it)
            if len(calls) == n:
                os.kill(os.getpid(), signal.SIGINT)
            return callback(it, res, x, history)

        return solve(prep, **{**kw, "callback": signalling})

    monkeypatch.setattr(fsolver, "solve", solve_with_sigint)


@pytest.fixture(scope="module")
def uninterrupted(small_fdfd):
    return _quiet_run(_sim(small_fdfd))


def test_sigint_stops_saves_and_resumes(small_fdfd, uninterrupted, tmp_path, monkeypatch):
    sim = _sim(small_fdfd)
    monkeypatch.chdir(tmp_path)  # the default checkpoint path is relative
    _sigint_at_round_trip(monkeypatch, 3)
    with pytest.raises(RunInterrupted) as info:
        _quiet_run(sim)
    monkeypatch.undo()
    err = info.value
    assert err.step == 12 and err.checkpoint == Path("intr.ckpt.h5")
    assert "stopped by SIGINT at iteration 12" in str(err) and "emjax run --resume" in str(err)
    part = err.results
    hist = np.array(part.metadata["residual_history"])
    assert hist.shape == (12,) and part.metadata["interrupted_at_iteration"] == 12
    assert not part.metadata["converged"] and "rcs_E_dBsm" not in part.metadata
    full_hist = np.array(uninterrupted.metadata["residual_history"])
    np.testing.assert_array_equal(hist, full_hist[:12])
    part.save(tmp_path / "partial.h5")
    assert em.Results.load(tmp_path / "partial.h5") == part
    ckpt = tmp_path / err.checkpoint
    with checkpoint.verified(ckpt) as stored:
        assert stored.step == 12 and stored.attrs["solver"] == "fdfd"
        np.testing.assert_array_equal(stored.read("record", [(np.float64, (12,))])[0], hist)
    resumed = _quiet_run(sim, resume=ckpt)
    assert resumed.metadata["converged"]
    it = resumed.metadata["iterations"]
    assert it > 12 and len(resumed.metadata["residual_history"]) == it
    assert resumed.metadata["residual_history"][:12] == hist.tolist()
    a, b = uninterrupted["scattered"].data["Ex"], resumed["scattered"].data["Ex"]
    assert np.linalg.norm(a - b) / np.linalg.norm(a) <= 1e-8


@pytest.fixture
def fdfd_checkpoint(small_fdfd, tmp_path):
    """A checkpoint of the small sphere after 8 iterations (max_iter reached)."""
    sim = _sim(small_fdfd, max_iter=8)
    path = tmp_path / "f.ckpt.h5"
    _quiet_run(sim, checkpoint_every=8, checkpoint_path=path)
    return sim, path


def test_damaged_fdfd_checkpoints_are_refused(small_fdfd, fdfd_checkpoint, tmp_path):
    sim, path = fdfd_checkpoint
    with h5py.File(path, "r") as f:
        offset, nbytes = f["state/00000"].id.get_offset(), f["state/00000"].nbytes
        scenario = json.loads(f.attrs["scenario"])
    raw = bytearray(path.read_bytes())
    raw[offset + nbytes // 3] ^= 0x10
    flipped = tmp_path / "flipped.ckpt.h5"
    flipped.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match="digest mismatch in array 'state/00000'"):
        _quiet_run(sim, resume=flipped)
    scenario["structures"][0]["medium"]["eps_r"] = 9.0
    with h5py.File(path, "r+") as f:
        f.attrs["scenario"] = json.dumps(scenario)
    with pytest.raises(CheckpointError, match="digest mismatch"):
        checkpoint.scenario_json(path)
    with pytest.raises(CheckpointError, match="digest mismatch"):
        _quiet_run(em.load_scenario(scenario), resume=path)


def test_fdfd_checkpoint_counts_are_checked(small_fdfd, fdfd_checkpoint):
    """A consistent (re-signed) file whose history is shorter than its step."""
    sim, path = fdfd_checkpoint
    with h5py.File(path, "r+") as f:
        short = f["record/00000"][()][:-1]
        del f["record/00000"]
        f["record"].create_dataset("00000", data=short).attrs["sha256"] = \
            checkpoint.array_digest(short)
        digests = {g: [f[g][n].attrs["sha256"] for n in sorted(f[g])] for g in ("state",
                                                                            "record")}
        f.attrs["digest"] = checkpoint.file_digest(f.attrs["step"], f.attrs["scenario"],
                                                   digests)
    with pytest.raises(CheckpointError, match=r"record array 0 is float64\(7,\), expected "
                                              r"float64\(8,\)"):
        _quiet_run(sim, resume=path)


def test_cli_sigint_exits_130_with_checkpoint_and_partial_results(small_fdfd, tmp_path):
    sim = _sim(small_fdfd, tol=1e-15, max_iter=10**6)
    scenario = tmp_path / "intr.json"
    scenario.write_text(sim.to_json())
    out = tmp_path / "out" / "intr.h5"
    ckpt = out.with_suffix(".ckpt.h5")
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "PYTHONPATH": str(Path(em.__file__).parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "emjax.cli", "run", str(scenario), "-o", str(out),
         "--no-progress", "--checkpoint-every", "4"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t = time.time()
    while not ckpt.exists():  # the solve is iterating: its first checkpoint is there
        if proc.poll() is not None or time.time() - t > 120:
            proc.kill()
            pytest.fail(f"{ckpt} never appeared: {proc.communicate()}")
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "FDFD solve stopped by SIGINT" in err and "Traceback" not in err
    partial = em.Results.load(out.with_name("intr.partial.h5"))
    n = partial.metadata["interrupted_at_iteration"]
    assert n >= 4 and n % 4 == 0 and len(partial.metadata["residual_history"]) == n
    with checkpoint.verified(ckpt) as stored:
        assert stored.step == n
    # the iterate warm-starts a solve of the same scenario to a reachable tolerance
    resumed = _quiet_run(_sim(small_fdfd, tol=1e-8, max_iter=10**6), resume=ckpt)
    assert resumed.metadata["converged"] and resumed.metadata["iterations"] > n
