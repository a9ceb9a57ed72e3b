"""Output targets of `emjax run` and of the Python API, checked before any computation
(issue #19, items 1 and 6; :mod:`emjax.io.targets`, :mod:`emjax.cli_run`).

* Refusals: `-o` naming a folder, a path under a regular file, the input scenario
  itself, an existing results file or an unrelated `notes.txt` (without
  `--overwrite`), an existing checkpoint, `--figures`/`--checkpoint` into a file or a
  folder that takes no file, two targets naming one file. Each answers exit 2 with one
  `emjax run: error:` line naming the path, no traceback, the file untouched, and
  neither the memory estimate nor the run called (``emjax.registry`` is replaced by a
  recorder).
* `--overwrite` replaces what exists; `sim.save` creates folders and refuses an
  existing file unless `overwrite=True`.
* `--resume` with a scenario other than the checkpoint's is refused naming the
  differing fields and both values; with the same scenario, or none, it runs.
* Warnings print as one line each; a write failing after the run names the path.
* A file-system walk around runs with hostile names (refused) and normal ones: nothing
  appears outside the output and figures folders, and no temporary is left.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest

import emjax as em
import emjax.registry as registry
from emjax import cli
from emjax.errors import EmjaxWarning, OutputError, SetupError


def _cli(args: list[str], capsys) -> tuple[int, str, str]:
    rc = cli.main(args)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.fixture
def scenario(tmp_path, small_fdtd2d) -> Path:
    """A 2-step FDTD2D scenario file (name 'small2d') in its own folder."""
    return small_fdtd2d(steps=2).save(tmp_path / "inputs" / "s.toml")


@pytest.fixture
def no_compute(monkeypatch) -> list[str]:
    """Records any call of the memory estimate or the run: a refusal must come first."""
    calls: list[str] = []
    monkeypatch.setattr(registry, "run", lambda *a, **k: calls.append("run"))
    monkeypatch.setattr(registry, "estimate", lambda *a, **k: calls.append("estimate"))
    return calls


def _refused(args: list[str], capsys, calls: list[str], *needles: str) -> str:
    rc, out, err = _cli(args, capsys)
    assert rc == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("emjax run: error: "), err
    assert "Traceback" not in err and "device memory" not in out
    assert calls == [], calls
    for n in needles:
        assert n in err, (n, err)
    return err


# ----------------------------------------------------------------- refusals


def test_folder_file_and_input_targets_refused(tmp_path, scenario, no_compute, capsys):
    s = str(scenario)
    folder = tmp_path / "already"
    folder.mkdir()
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    _refused(["run", s, "-o", str(folder)], capsys, no_compute, f"-o '{folder}' is a folder")
    _refused(["run", s, "-o", str(tmp_path) + "/"], capsys, no_compute, "names a folder")
    _refused(["run", s, "-o", str(notes / "r.h5")], capsys, no_compute,
             f"'{notes}' is a file, not a folder")
    _refused(["run", s, "-o", str(notes / "deeper" / "r.h5")], capsys, no_compute,
             f"'{notes}' is a file")
    for extra in ([], ["--overwrite"]):  # never the input, even when asked to overwrite
        _refused(["run", s, "-o", s, *extra], capsys, no_compute, "is an input of this run")
    _refused(["run", s, "-o", str(tmp_path / "inputs" / ".." / "inputs" / "s.toml")], capsys,
             no_compute, "is an input")
    _refused(["run", s, "-o", str(tmp_path / "r.h5"), "--figures", str(notes)], capsys,
             no_compute, f"--figures '{notes}'", "is a file, not a folder")
    _refused(["run", s, "-o", str(tmp_path / "r.h5"), "--figures", str(notes / "figs")],
             capsys, no_compute, "is a file, not a folder")
    _refused(["run", s, "-o", str(tmp_path / "r.h5"), "--checkpoint", str(folder)], capsys,
             no_compute, f"--checkpoint '{folder}' is a folder")
    _refused(["run", s, "-o", str(tmp_path / "r.h5"), "--checkpoint", str(notes / "c.h5")],
             capsys, no_compute, "is a file, not a folder")
    _refused(["run", s, "-o", str(tmp_path / "r.h5"), "--checkpoint", str(tmp_path / "r.h5")],
             capsys, no_compute, "is also the -o target")
    _refused(["run", s, "-o", str(tmp_path / "r.h5"), "--checkpoint", s], capsys, no_compute,
             "is an input")
    assert notes.read_text() == "my notes" and scenario.read_text().startswith('type = "FDTD2D"')
    assert not (tmp_path / "r.h5").exists()


def test_existing_files_refused_then_replaced_with_overwrite(tmp_path, scenario, capsys,
                                                             monkeypatch):
    s = str(scenario)
    old = tmp_path / "old.h5"
    notes = tmp_path / "notes.txt"
    for path, text in ((old, "previous results"), (notes, "my notes")):
        path.write_text(text)
        os.utime(path, (1e9, 1e9))
    calls: list[str] = []
    real_run = registry.run
    monkeypatch.setattr(registry, "run", lambda *a, **k: (calls.append("run"),
                                                          real_run(*a, **k))[1])
    for path in (old, notes):
        err = _refused(["run", s, "-o", str(path), "--no-progress"], capsys, calls,
                       f"-o '{path}' already exists", "pass --overwrite")
        assert path.stat().st_mtime == 1e9 and "choose another -o" in err
    # An existing checkpoint (an interrupted run?) is refused too, with the way to resume.
    ckpt = tmp_path / "fresh.ckpt.h5"
    ckpt.write_text("a checkpoint")
    _refused(["run", s, "-o", str(tmp_path / "fresh.h5")], capsys, calls,
             f"--checkpoint '{ckpt}' already exists", f"--resume {ckpt}")
    # With --overwrite both are replaced by real results.
    for path in (old, notes):
        rc, _, err = _cli(["run", s, "-o", str(path), "--no-progress", "--overwrite"], capsys)
        assert rc == 0, err
        assert em.Results.load(path)["p"].data["Ez"].shape == (2, 1)
    assert calls == ["run", "run"]


def test_unwritable_folder_refused(tmp_path, scenario, no_compute, capsys, monkeypatch):
    """The write test itself fails (as on a read-only mount): the folder is named."""
    import tempfile

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    _refused(["run", str(scenario), "-o", str(tmp_path / "o" / "r.h5")], capsys, no_compute,
             f"cannot write in folder '{tmp_path / 'o'}' (Permission denied)")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root writes into folders without write permission")
def test_read_only_folder_refused(tmp_path, scenario, no_compute, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        _refused(["run", str(scenario), "-o", str(ro / "r.h5")], capsys, no_compute,
                 f"cannot write in folder '{ro}'")
        _refused(["run", str(scenario), "-o", str(ro / "sub" / "r.h5")], capsys, no_compute,
                 f"cannot create folder '{ro / 'sub'}'")
        _refused(["run", str(scenario), "-o", str(tmp_path / "r.h5"), "--figures", str(ro)],
                 capsys, no_compute, f"--figures '{ro}'")
        _refused(["run", str(scenario), "-o", str(tmp_path / "r.h5"), "--checkpoint",
                  str(ro / "c.h5")], capsys, no_compute, "cannot write in folder")
    finally:
        ro.chmod(0o755)


def test_scenario_save_targets(tmp_path, small_fdtd2d):
    sim = small_fdtd2d(steps=2)
    path = sim.save(tmp_path / "nodir" / "deeper" / "x.toml")
    assert em.load_scenario(path) == sim
    other = small_fdtd2d(steps=3)
    with pytest.raises(OutputError, match=r"x\.toml' already exists; pass overwrite=True"):
        other.save(path)
    assert em.load_scenario(path) == sim
    with pytest.raises(OutputError, match="is a folder"):
        other.save(tmp_path / "nodir")
    assert other.save(path, overwrite=True) == path and em.load_scenario(path) == other
    assert not list(tmp_path.rglob("*.tmp"))


# ------------------------------------------------------------------ resume


def test_resume_refuses_another_scenario(tmp_path, small_fdtd2d, capsys):
    sim = small_fdtd2d(steps=2)
    ckpt = tmp_path / "a.ckpt.h5"
    sim.run(progress=False, checkpoint_every=1, checkpoint_path=ckpt)
    same = sim.save(tmp_path / "same.toml")
    text = sim.to_toml()
    assert "f0 = 1000000000.0" in text
    other = tmp_path / "other.toml"
    other.write_text(text.replace("f0 = 1000000000.0", "f0 = 1200000000.0"))
    calls: list[str] = []
    err = _refused(["run", str(other), "--resume", str(ckpt), "-o", str(tmp_path / "b.h5")],
                   capsys, calls, "sources[0].waveform.f0: 1000000000.0 in the checkpoint, "
                   f"1200000000.0 in '{other}'", "another scenario")
    assert "--resume" in err and not (tmp_path / "b.h5").exists()
    _refused(["run", "--resume", str(ckpt), "--steps", "3", "-o", str(tmp_path / "b.h5")],
             capsys, calls, "steps: 2 in the checkpoint, 3 in --steps 3")
    # The same scenario, given or not, resumes, writing over its own checkpoint and the
    # partial results its interruption left.
    (tmp_path / "c.partial.h5").write_text("partial results of the interrupted run")
    rc, _, err = _cli(["run", str(same), "--resume", str(ckpt), "-o", str(tmp_path / "c.h5"),
                       "--checkpoint", str(ckpt), "--no-progress"], capsys)
    assert rc == 0, err
    rc, _, err = _cli(["run", "--resume", str(ckpt), "-o", str(tmp_path / "d.h5"),
                       "--no-progress"], capsys)
    assert rc == 0, err
    whole = sim.run(progress=False)
    for name in ("c.h5", "d.h5"):
        assert em.Results.load(tmp_path / name)["p"] == whole["p"]
    # The checkpoint is an input: never the results.
    _refused(["run", "--resume", str(ckpt), "-o", str(ckpt), "--overwrite"], capsys, calls,
             "is an input")


# --------------------------------------------------- warnings, late failures


def test_warnings_print_one_line_each(tmp_path, scenario, capsys, monkeypatch):
    original = warnings.showwarning

    def estimate(sim):
        warnings.warn("a pulse cut off:\n  run longer", EmjaxWarning, stacklevel=2)
        raise SetupError("stop here")

    monkeypatch.setattr(registry, "estimate", estimate)
    rc, _, err = _cli(["run", str(scenario), "-o", str(tmp_path / "r.h5")], capsys)
    assert rc == 2
    assert err.splitlines() == ["emjax run: warning: a pulse cut off: run longer",
                                "emjax run: error: stop here"], err
    assert warnings.showwarning is original  # the Python API keeps Python's warnings
    with pytest.warns(EmjaxWarning, match="cut off"), pytest.raises(SetupError):
        em.load_scenario(scenario).estimate()


def test_write_failing_after_the_run_names_the_path(tmp_path, scenario, capsys, monkeypatch):
    import emjax.io.hdf5 as hdf5

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(registry, "run", lambda sim, **k: em.Results(sim, {}, {}))
    monkeypatch.setattr(hdf5, "save_results", full)
    out = tmp_path / "r.h5"
    rc, _, err = _cli(["run", str(scenario), "-o", str(out)], capsys)
    assert rc == 2 and "Traceback" not in err
    assert f"-o '{out}': writing the results failed after the run (No space left on device)" \
        in err, err


# ------------------------------------------------------- file-system walk


def _tree(root: Path) -> set[Path]:
    out = set()
    for folder, dirs, files in os.walk(root):
        out.update(Path(folder, n).relative_to(root) for n in dirs + files)
    return out


def test_nothing_is_written_outside_the_output_folders(tmp_path, monkeypatch, capsys,
                                                       small_fdtd2d, small_fdtd3d):
    work, inputs = tmp_path / "work", tmp_path / "inputs"
    work.mkdir()
    inputs.mkdir()
    monkeypatch.chdir(work)  # "out/" lands in tmp_path
    ok2d = small_fdtd2d(steps=2).save(inputs / "ok2d.toml")
    ok3d = small_fdtd3d(steps=2).save(inputs / "ok3d.toml")
    text = ok2d.read_text()
    escaped = tmp_path.parent / f"{tmp_path.name}-escaped"
    hostile = ["../x", "../../x", str(escaped), "a/b", "a\\b", "", ".hidden", "x" * 101]
    docs = []
    for name in hostile:
        for old in ('name = "small2d"', 'name = "p"'):  # the scenario, then the monitor
            assert old in text
            doc = inputs / f"hostile{len(docs)}.toml"
            doc.write_text(text.replace(old, f"name = {json.dumps(name)}"))
            docs.append(doc)
    before = _tree(tmp_path)
    for doc in docs:
        rc, _, err = _cli(["run", str(doc), "--steps", "2", "--no-progress"], capsys)
        assert rc == 2 and "Traceback" not in err and "is not allowed" in err, (doc, err)
    assert _tree(tmp_path) == before and not escaped.exists()

    runs = [([str(ok2d)], ["work/out"], "work/out/small2d.h5"),
            ([str(ok2d), "-o", "results/r.h5", "--figures", "figs", "--checkpoint-every", "1"],
             ["work/results", "work/figs"], "work/results/r.ckpt.h5"),
            ([str(ok3d), "-o", "res3/y.h5", "--figures", "figs3"],
             ["work/res3", "work/figs3"], "work/res3/y_s.xdmf"),
            ([str(ok3d), "-o", "res4/z.h5", "--figures", "figs4", "--no-figures"],
             ["work/res4", "work/figs4"], "work/res4/z_s.xdmf")]
    for args, allowed, expected in runs:
        before = _tree(tmp_path)
        rc, _, err = _cli(["run", *args, "--steps", "2", "--no-progress"], capsys)
        assert rc == 0, err
        new = _tree(tmp_path) - before
        assert Path(expected) in new, sorted(new)
        stray = [p for p in new if not any(p == Path(a) or Path(a) in p.parents
                                           for a in allowed)]
        assert not stray, (args, sorted(stray))
        assert not [p for p in new if p.suffix == ".tmp" or "probe" in p.name], sorted(new)
    figures = {p.name for p in (work / "figs3").iterdir()}
    assert {"y_p.png", "y_w.png"} <= figures and all(n.startswith("y_") for n in figures)
    # --no-figures: the results and the ParaView files, no drawing
    assert not list((work / "figs4").glob("*.png")), list((work / "figs4").iterdir())
    assert {p.name for p in (work / "res4").iterdir()} >= {"z.h5", "z_s.xdmf"}
