"""Killing and interrupting `emjax run` in a real subprocess.

- SIGKILL while checkpoints are being written leaves a checkpoint that loads and
  resumes to the uninterrupted answer (writes go to a temporary file, then rename).
- SIGINT stops the run at a chunk end with exit status 130, a valid partial results
  file and a valid checkpoint.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import emjax as em

SCENARIO = """
name = "kill"
steps = 4000
dtype = "float64"
[domain]
shape = [40, 40, 40]
spacing = 1e-3
[boundary]
type = "PEC"
[[sources]]
type = "PointDipole"
position = [0.3e-3, 0.2e-3, 0.1e-3]
polarization = "z"
waveform = { type = "GaussianPulse", f0 = 60e9, fwidth = 30e9 }
[[monitors]]
type = "Probe"
name = "p"
positions = [[5e-3, 4e-3, 3e-3]]
components = ["Ez"]
"""


def _start(tmp_path: Path, *extra: str) -> subprocess.Popen:
    scen = tmp_path / "kill.toml"
    scen.write_text(SCENARIO)
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(Path(em.__file__).parents[1])}
    return subprocess.Popen(
        [sys.executable, "-m", "emjax.cli", "run", str(scen), "-o", str(tmp_path / "kill.h5"),
         "--no-progress", "--checkpoint-every", "100", *extra],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    t = time.time()
    while not path.exists():
        if proc.poll() is not None or time.time() - t > timeout:
            proc.kill()
            pytest.fail(f"{path} never appeared: {proc.communicate()}")
        time.sleep(0.01)


@functools.cache
def _uninterrupted():
    """The uninterrupted run of SCENARIO (4,000 float64 steps): made once per process,
    shared by both tests when they land on the same worker."""
    from emjax.fdtd.solver import FDTDSolver

    return FDTDSolver(em.load_scenario(SCENARIO)).run(progress=False)


def _resume(tmp_path: Path, ckpt: Path) -> em.Results:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(Path(em.__file__).parents[1])}
    out = tmp_path / "resumed.h5"
    subprocess.run([sys.executable, "-m", "emjax.cli", "run", "--resume", str(ckpt), "-o",
                    str(out), "--no-progress"], env=env, check=True, capture_output=True)
    return em.Results.load(out)


@pytest.mark.slow
def test_sigkill_during_checkpointing_leaves_a_resumable_checkpoint(tmp_path):
    proc = _start(tmp_path)
    ckpt, tmp = tmp_path / "kill.ckpt.h5", tmp_path / "kill.ckpt.h5.tmp"
    _wait_for(ckpt, proc)
    t = time.time()
    while not tmp.exists() and time.time() - t < 30 and proc.poll() is None:
        time.sleep(0.001)  # catch a write in progress if we can
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    from emjax.driver.checkpoint import scenario_json

    assert em.load_scenario(scenario_json(ckpt)) == em.load_scenario(SCENARIO)
    whole, resumed = _uninterrupted(), _resume(tmp_path, ckpt)
    assert np.array_equal(whole["p"].data["Ez"], resumed["p"].data["Ez"])


@pytest.mark.slow
def test_sigint_writes_partial_results_and_checkpoint(tmp_path):
    proc = _start(tmp_path)
    ckpt = tmp_path / "kill.ckpt.h5"
    _wait_for(ckpt, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "emjax run --resume" in err
    partial = em.Results.load(tmp_path / "kill.partial.h5")
    n = partial.metadata["interrupted_at_step"]
    assert 0 < n < 4000 and partial["p"].data["Ez"].shape[0] == n
    whole, resumed = _uninterrupted(), _resume(tmp_path, ckpt)
    assert np.array_equal(whole["p"].data["Ez"][:n], partial["p"].data["Ez"])
    assert np.array_equal(whole["p"].data["Ez"], resumed["p"].data["Ez"])
