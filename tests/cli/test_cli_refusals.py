"""Issue #19's categories through ``emjax run``: each problem ends with exit status 2
and one line ``emjax run: error: ...`` (warnings aside), no traceback, and nothing
written where the problem was knowable before computing.

Output targets, parsers and mesh files have their own command-line tests
(``tests/cli/test_outputs.py``, ``tests/model/test_parsers.py``,
``tests/dga/test_mesh_input.py``); these are the names, the non-finite guard and
damaged checkpoints.
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from emjax import cli

SMALL = """\
type = "FDTD2D"
name = "{name}"
polarization = "TMz"
steps = {steps}
dtype = "float32"
domain = {{ shape = [24, 24], spacing = 1e-3 }}
boundary = {{ type = "CPML", thickness = 4 }}

[[sources]]
type = "LineSource"
position = [0.0, 0.0]
amplitude = {amplitude}
waveform = {{ type = "GaussianPulse", f0 = 10e9, fwidth = 5e9 }}

[[monitors]]
type = "{monitor}"
name = "m"
"""


def _doc(tmp_path: Path, *, name="small", steps=40, amplitude=1.0,
         monitor="EnergyMonitor") -> Path:
    path = tmp_path / "s.toml"
    path.write_text(SMALL.format(name=name, steps=steps, amplitude=amplitude, monitor=monitor))
    return path


def _run(args: list[str], capsys) -> tuple[int, list[str]]:
    rc = cli.main(["run", *args, "--no-progress"])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err + cap.out
    errors = [ln for ln in cap.err.splitlines() if ln.strip()
              and not ln.startswith("emjax run: warning:")]
    return rc, errors


@pytest.mark.parametrize("name", ["../up", "/abs/x", "a/b", ".hidden", "x" * 101, "sp ace"])
def test_hostile_names_are_refused_before_anything_is_written(name, tmp_path, capsys,
                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    doc = _doc(tmp_path, name=name)
    rc, errors = _run([str(doc)], capsys)
    assert rc == 2 and errors[0].startswith("emjax run: error:"), errors
    assert len(errors) == 2 and errors[1].startswith("  name = "), errors  # one problem
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]


def test_overflow_stops_the_run_naming_the_monitor(tmp_path, capsys):
    """float32 energy (E^2) of a 1e30 source overflows while the fields stay bounded."""
    out = tmp_path / "r.h5"
    rc, errors = _run([str(_doc(tmp_path, amplitude=1e30)), "-o", str(out)], capsys)
    assert rc == 2 and len(errors) == 1, errors
    assert "'m'" in errors[0] and "overflow" in errors[0], errors[0]
    assert not out.exists()  # no results with inf in them


def test_damaged_checkpoint_is_refused_on_resume(tmp_path, capsys):
    doc = _doc(tmp_path, steps=40, monitor="EnergyMonitor")
    ckpt = tmp_path / "ck.h5"
    rc = cli.main(["run", str(doc), "-o", str(tmp_path / "a.h5"), "--no-progress",
                   "--checkpoint-every", "20", "--checkpoint", str(ckpt)])
    capsys.readouterr()
    assert rc == 0 and ckpt.is_file()
    with h5py.File(ckpt, "r") as f:  # one byte inside the first field array
        offset = f["state/00000"].id.get_offset()
    raw = bytearray(ckpt.read_bytes())
    raw[offset + 7] ^= 0x10
    ckpt.write_bytes(bytes(raw))
    out = tmp_path / "b.h5"
    rc, errors = _run(["--resume", str(ckpt), "-o", str(out)], capsys)
    assert rc == 2 and len(errors) == 1 and "digest" in errors[0], errors
    assert not out.exists()


def test_finite_run_writes_finite_results(tmp_path, capsys):
    """The same scenario at a sane amplitude runs and its energy is finite."""
    from emjax.results import Results

    out = tmp_path / "r.h5"
    rc, errors = _run([str(_doc(tmp_path)), "-o", str(out)], capsys)
    assert rc == 0, errors
    energy = Results.load(out).monitors["m"].data["energy"]
    assert np.all(np.isfinite(energy)) and np.max(energy) > 0


def test_a_defect_reaches_the_user_as_one_line(tmp_path, capsys, monkeypatch):
    """An exception that is not an emjax error (a bug) ends with exit 3 and one line;
    EMJAX_DEBUG=1 lets the traceback through."""
    from emjax import registry

    def broken(sim, **kwargs):
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(registry, "run", broken)
    monkeypatch.delenv("EMJAX_DEBUG", raising=False)
    doc = _doc(tmp_path)
    rc, errors = _run([str(doc), "-o", str(tmp_path / "r.h5")], capsys)
    assert rc == 3 and len(errors) == 1 and "internal error: ZeroDivisionError" in errors[0]
    monkeypatch.setenv("EMJAX_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        cli.main(["run", str(doc), "-o", str(tmp_path / "s.h5"), "--no-progress"])
