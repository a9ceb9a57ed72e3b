"""Checkpoint integrity: damaged, edited or malformed checkpoints are refused on resume.

Set-up: the small 3D FDTD scenario of the tests (probe, snapshot, energy monitor),
50 steps, checkpointed at step 40; every case edits a copy of that checkpoint and
resumes from it.

- 20 single-byte flips at random offsets inside the stored arrays' data (found with
  h5py's ``get_offset``; state and record alike) are each refused with a
  CheckpointError naming the array whose digest no longer matches.
- 100 single-byte flips anywhere in the file (metadata too) give a CheckpointError
  or, where the byte was slack space, a load identical to the intact file's: never
  another exception.
- A field scaled by 1.0001, an altered ``step`` attribute and an edited eps_r in the
  stored scenario JSON are refused (also where the CLI reads the scenario to resume).
- Malformed files whose digest was recomputed (so that only the checks of structure
  and range speak): a step beyond the run, negative, not a whole number, missing; a
  missing dataset, group or digest attribute; a wrong count; an older format version.
  Each raises a CheckpointError naming the file and the problem, never IndexError,
  KeyError or TypeError, and the step is checked before any array is read.
"""

from __future__ import annotations

import json
import shutil

import h5py
import jax
import numpy as np
import pytest

import emjax as em
from emjax.driver import checkpoint
from emjax.errors import CheckpointError
from emjax.fdtd.solver import FDTDSolver


@pytest.fixture(scope="module")
def written(tmp_path_factory, small_fdtd3d):
    """(scenario, solver, path of the step-40 checkpoint of a 50-step run)."""
    sim = small_fdtd3d(steps=50, structures=[em.Structure(
        geometry=em.Sphere(radius=2e-3), medium=em.Medium(eps_r=4.0))])
    path = tmp_path_factory.mktemp("ckpt") / "run.ckpt.h5"
    FDTDSolver(sim, chunk=10).run(progress=False, checkpoint_every=40, checkpoint_path=path)
    return sim, FDTDSolver(sim, chunk=10), path


@pytest.fixture
def copy(written, tmp_path):
    """A fresh copy of the checkpoint to damage."""
    return shutil.copy(written[2], tmp_path / "copy.ckpt.h5")


def _datasets(path) -> list[tuple[str, int, int]]:
    """(name, file offset, bytes) of every non-empty dataset's contiguous data."""
    out = []
    with h5py.File(path, "r") as f:
        for group in ("state", "record"):
            for name, ds in f[group].items():
                offset = ds.id.get_offset()
                if ds.nbytes and offset is not None:
                    out.append((f"{group}/{name}", offset, ds.nbytes))
    return out


def _resign(path) -> None:
    """Recompute the file digest from the stored step, scenario and dataset digests."""
    with h5py.File(path, "r+") as f:
        digests = {g: [f[g][n].attrs["sha256"] for n in sorted(f[g])] for g in ("state",
                                                                            "record")}
        f.attrs["digest"] = checkpoint.file_digest(f.attrs["step"], f.attrs["scenario"],
                                                   digests)


def test_the_intact_checkpoint_loads(written):
    _, solver, path = written
    step, _, _ = checkpoint.load_checkpoint(solver, path)
    assert step == 40
    with h5py.File(path, "r") as f:
        assert f.attrs["format_version"] == 4 and len(f.attrs["digest"]) == 64


def test_twenty_byte_flips_are_each_detected(written, tmp_path):
    _, solver, path = written
    datasets = _datasets(path)
    assert len(datasets) > 20 and {n.split("/")[0] for n, _, _ in datasets} == {"state",
                                                                                 "record"}
    rng = np.random.default_rng(19)
    raw = path.read_bytes()
    for trial in range(20):
        name, offset, nbytes = datasets[rng.integers(len(datasets))]
        at = offset + int(rng.integers(nbytes))
        damaged = bytearray(raw)
        damaged[at] ^= int(rng.integers(1, 256))
        p = tmp_path / f"flip{trial}.ckpt.h5"
        p.write_bytes(bytes(damaged))
        with pytest.raises(CheckpointError, match=f"digest mismatch in array '{name}'"):
            solver.run(progress=False, resume=p)


def test_flips_anywhere_give_checkpoint_errors_or_the_same_state(written, tmp_path):
    _, solver, path = written
    _, state, record = checkpoint.load_checkpoint(solver, path)
    intact = jax.tree_util.tree_leaves((state, record))
    rng = np.random.default_rng(1919)
    raw = path.read_bytes()
    refused = 0
    for trial in range(100):
        damaged = bytearray(raw)
        damaged[rng.integers(len(raw))] ^= int(rng.integers(1, 256))
        p = tmp_path / f"any{trial}.ckpt.h5"
        p.write_bytes(bytes(damaged))
        try:
            _, state, record = checkpoint.load_checkpoint(solver, p)
        except CheckpointError as e:
            assert str(p) in str(e)
            refused += 1
            continue
        for a, b in zip(intact, jax.tree_util.tree_leaves((state, record)), strict=True):
            assert np.array_equal(a, b)
    assert refused >= 50  # most bytes of the file are data and metadata


def test_a_field_scaled_by_1_0001_is_refused(written, copy):
    solver = written[1]
    with h5py.File(copy, "r+") as f:
        name = max(f["state"], key=lambda n: f["state"][n].size)  # a field
        f["state"][name][...] = f["state"][name][()] * 1.0001
    with pytest.raises(CheckpointError, match=rf"array 'state/{name}' \(state\.[EH]\[\d\], "
                       ".*damaged or edited"):
        solver.run(progress=False, resume=copy)


def test_an_altered_step_is_refused(written, copy):
    solver = written[1]
    with h5py.File(copy, "r+") as f:
        f.attrs["step"] = 20
    with pytest.raises(CheckpointError, match=r"digest mismatch: the step \(20\)"):
        solver.run(progress=False, resume=copy)


def test_an_edited_eps_r_in_the_stored_scenario_is_refused(written, copy):
    solver = written[1]
    with h5py.File(copy, "r+") as f:
        data = json.loads(f.attrs["scenario"])
        assert data["structures"][0]["medium"]["eps_r"] == 4.0
        data["structures"][0]["medium"]["eps_r"] = 9.0
        f.attrs["scenario"] = json.dumps(data)
    # as `emjax run --resume` reads it: the stored scenario itself is refused
    with pytest.raises(CheckpointError, match=r"digest mismatch.*scenario"):
        checkpoint.scenario_json(copy)
    edited = em.load_scenario(data)
    with pytest.raises(CheckpointError, match="digest mismatch"):
        FDTDSolver(edited, chunk=10).run(progress=False, resume=copy)
    with pytest.raises(CheckpointError, match="digest mismatch"):
        solver.run(progress=False, resume=copy)


@pytest.mark.parametrize(("step", "problem"), [
    (10**12, "step 1000000000000 is outside the run's 0..50 steps"),
    (-3, "step -3 is outside"),
    (51, "step 51 is outside"),
])
def test_a_step_beyond_the_run_is_refused_before_reading(written, copy, monkeypatch, step,
                                                         problem):
    solver = written[1]
    with h5py.File(copy, "r+") as f:
        f.attrs["step"] = step
    _resign(copy)

    def no_reads(*args):
        raise AssertionError("arrays read before the step was checked")

    monkeypatch.setattr(checkpoint.Stored, "read", no_reads)
    with pytest.raises(CheckpointError, match=problem) as info:
        solver.run(progress=False, resume=copy)
    assert str(copy) in str(info.value)


def _set(key, value):
    def edit(f):
        f.attrs[key] = value
    return edit


def _delete(name, key=None):
    def edit(f):
        if key is None:
            del f[name]
        else:
            del (f[name] if name else f).attrs[key]
    return edit


@pytest.mark.parametrize(("edit", "problem"), [
    (_set("step", "forty"), "attribute 'step' of the file is 'forty' .*not a whole number"),
    (_set("step", 40.5), "attribute 'step' .*not a whole number"),
    (_set("step", True), "attribute 'step' .*not a whole number"),
    (_delete("", "step"), "attribute 'step' of the file is missing"),
    (_delete("", "digest"), "attribute 'digest' of the file is missing"),
    (_delete("", "scenario"), "attribute 'scenario' of the file is missing"),
    (_set("format_version", 3), "format version 3; this emjax reads version 4: rerun"),
    (_delete("", "format_version"), "format version 0"),
    (_delete("record"), "group 'record' is missing"),
    (_delete("state/00002"), "group 'state' holds .* where its count says"),
    (_set("scenario", "{not json"), "digest mismatch"),
    (lambda f: f["record"].attrs.__setitem__("count", 99), "count says 99"),
    (lambda f: f["record"].attrs.__setitem__("count", "x"), "'count' of the group 'record'"),
    (_delete("state/00000", "sha256"), "'sha256' of the 'state/00000' is missing"),
    (lambda f: f["state"].create_dataset("00000x", data=[1]), "group 'state' holds"),
])
def test_malformed_checkpoints_raise_checkpoint_errors(written, copy, edit, problem):
    solver = written[1]
    with h5py.File(copy, "r+") as f:
        edit(f)
    with pytest.raises(CheckpointError, match=problem) as info:
        solver.run(progress=False, resume=copy)
    assert str(copy) in str(info.value)


def test_resigned_but_reshaped_or_retyped_arrays_are_refused(written, copy):
    """A consistent file (digests recomputed) whose arrays do not fit the scenario."""
    solver = written[1]
    with h5py.File(copy, "r+") as f:
        a = f["state/00000"][()]
        del f["state/00000"]
        ds = f["state"].create_dataset("00000", data=a[:-1].astype(np.float32))
        ds.attrs["sha256"] = checkpoint.array_digest(ds[()])
    _resign(copy)
    with pytest.raises(CheckpointError, match=r"state array 0 is float32\(.*expected"):
        solver.run(progress=False, resume=copy)


def test_a_forged_scenario_that_is_not_json_is_refused(written, copy):
    solver = written[1]
    with h5py.File(copy, "r+") as f:
        f.attrs["scenario"] = "{not json"
    _resign(copy)
    with pytest.raises(CheckpointError, match="not JSON"):
        solver.run(progress=False, resume=copy)
