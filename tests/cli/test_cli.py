"""The `emjax` command line and the built-in scenarios, without running the solver.

`emjax.validation` and `emjax.bench` are replaced by fake modules holding known
records, so the table, the JSON document and the exit codes are checked exactly.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

import emjax
from emjax import cli
from emjax.errors import SetupError
from emjax.scenarios import DEFAULT, builtin_names, describe, load_builtin

OK = {"case": "fake-ok", "metric": "rel_error", "value": 1e-3, "limit": 1e-2, "unit": "",
      "pass": True}
BAD = {"case": "fake-bad", "metric": "rel_error", "value": 0.5, "limit": 1e-2, "unit": "",
       "pass": False}


def _noisy_ok():
    print("noise that must not reach stdout under --json")
    return [dict(OK)]


@pytest.fixture
def fake_validation(monkeypatch):
    fake = types.ModuleType("emjax.validation")
    fake.CASES = {"fake-ok": _noisy_ok, "fake-bad": lambda: [dict(BAD)]}
    monkeypatch.setitem(sys.modules, "emjax.validation", fake)
    return fake


@pytest.fixture
def fake_bench(monkeypatch):
    fake = types.ModuleType("emjax.bench")
    rec = {"case": "fake-step", "size": [16, 16, 16], "metric": "cells_per_s",
           "value": 1.5e8, "unit": "cells/s", "device": "cpu"}
    fake.CASES = {"fake-step": lambda: [dict(rec)]}
    monkeypatch.setitem(sys.modules, "emjax.bench", fake)
    return fake


# ---------------------------------------------------------------- scenarios


def test_builtin_names_default_first():
    names = builtin_names()
    assert names[0] == DEFAULT == "dipole-cube"
    assert "cavity" in names


@pytest.mark.parametrize("name", builtin_names())
def test_load_builtin(name):
    sim = load_builtin(name)
    assert isinstance(sim, (emjax.FDTD3D, emjax.FDTD2D, emjax.DGATD, emjax.FDFD3D))
    assert sim.name == name
    if hasattr(sim, "num_steps"):  # time-domain kinds; FDFD solves one frequency
        assert sim.num_steps > 0
    assert describe(name), f"{name}.toml lacks a '# description:' line"
    # The file round-trips through the model's own TOML writer.
    assert emjax.load_scenario(sim.to_toml()) == sim


def test_default_demo_is_small():
    sim = load_builtin(DEFAULT)
    assert sim.domain.cells == (40, 40, 40)
    assert sim.num_steps < 1000, sim.num_steps  # the demo must stay quick on a 2-core CPU
    types_ = {m.type for m in sim.monitors}
    assert types_ == {"Probe", "DFTMonitor", "EnergyMonitor", "FieldSnapshot"}


def test_unknown_builtin_names_known_ones():
    with pytest.raises(SetupError, match="dipole-cube"):
        load_builtin("nosuch")


def test_with_steps_overrides_duration():
    sim = cli.with_steps(load_builtin(DEFAULT), 7)
    assert sim.steps == 7 and sim.duration is None and sim.num_steps == 7


# --------------------------------------------------------------------- run


def test_run_unknown_scenario_exit_2(capsys):
    assert cli.main(["run", "nosuch-scenario"]) == 2
    err = capsys.readouterr().err
    assert "nosuch-scenario" in err
    for n in builtin_names():
        assert n in err
    assert "Traceback" not in err


def test_run_missing_file_exit_2(tmp_path, capsys):
    assert cli.main(["run", str(tmp_path / "missing.toml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_run_invalid_file_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('steps = 10\nfrobnicate = 1\n[domain]\nshape = [8, 8, 8]\nspacing = 1e-3\n')
    assert cli.main(["run", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "frobnicate" in err and "bad.toml" in err
    first, *problems = err.strip().splitlines()  # no traceback: a title, a line per problem
    assert first.startswith("emjax run: error: scenario file") and first.endswith(
        "1 problem in the scenario:"), err
    assert problems == [problems[0]] and problems[0].startswith("  frobnicate = 1: unknown key")


def test_run_rejects_nonpositive_steps(capsys):
    assert cli.main(["run", "--steps", "0"]) == 2


# ---------------------------------------------------------------- info, list


def test_list(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for n in builtin_names():
        assert n in out
        assert describe(n)[:30] in out
    assert "Validation cases" in out and "Benchmark cases" in out


def test_list_shows_case_names(fake_validation, fake_bench, capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "fake-ok, fake-bad" in out and "fake-step" in out


def test_info_json(capsys):
    import jax

    assert cli.main(["info", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["backend"] == jax.default_backend()
    assert data["versions"]["emjax"] == emjax.__version__
    assert data["versions"]["jax"] == jax.__version__
    assert {"python", "numpy", "jaxlib"} <= set(data["versions"])
    assert data["devices"] and {"id", "platform", "kind"} <= set(data["devices"][0])


def test_info_text(capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "backend" in out and "device" in out


def test_no_command_exit_2(capsys):
    assert cli.main([]) == 2


def test_import_is_light():
    """Importing the CLI loads neither JAX nor the solver."""
    code = "import sys, emjax.cli; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


# ------------------------------------------------------------------ validate


def test_validate_unknown_exit_2(fake_validation, capsys):
    assert cli.main(["validate", "nosuchcase"]) == 2
    err = capsys.readouterr().err
    assert "nosuchcase" in err and "fake-ok" in err and "fake-bad" in err
    assert "Traceback" not in err


def test_validate_pass_text(fake_validation, capsys):
    assert cli.main(["validate", "fake-ok"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("fake-ok"))
    assert "rel_error" in row and "PASS" in row
    assert "1 passed, 0 failed" in out


def test_validate_all_text_fails(fake_validation, capsys):
    assert cli.main(["validate", "all"]) == 1
    out = capsys.readouterr().out
    assert "PASS" in out
    bad = next(line for line in out.splitlines() if line.startswith("fake-bad"))
    assert "FAIL" in bad
    assert "1 passed, 1 failed" in out


def test_validate_json_is_one_document(fake_validation, capsys):
    assert cli.main(["validate", "all", "--json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out) == [OK, BAD]
    assert "noise" in captured.err  # what a case prints goes to stderr


def test_validate_json_pass(fake_validation, capsys):
    assert cli.main(["validate", "fake-ok", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [OK]


def test_validate_case_error_becomes_failing_record(fake_validation, capsys):
    def boom():
        raise emjax.InstabilityError("fields blew up", step=3, field="Ez", index=(1, 2, 3))

    fake_validation.CASES["boom"] = boom
    assert cli.main(["validate", "all", "--json"]) == 1
    recs = json.loads(capsys.readouterr().out)
    assert [r["case"] for r in recs] == ["fake-ok", "fake-bad", "boom"]
    assert recs[-1]["pass"] is False and "fields blew up" in recs[-1]["error"]


def test_validate_json_numpy_and_nan(fake_validation, capsys):
    np = pytest.importorskip("numpy")
    fake_validation.CASES["np"] = lambda: [
        {"case": "np", "metric": "m", "value": np.float32(0.25), "limit": float("nan"),
         "unit": "", "pass": np.bool_(True)}
    ]
    assert cli.main(["validate", "np", "--json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert rec["value"] == 0.25 and rec["limit"] is None and rec["pass"] is True


def test_validate_without_module(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "emjax.validation", None)  # as if it were not there
    assert cli.main(["validate", "all"]) == 2
    assert "not available" in capsys.readouterr().err


# --------------------------------------------------------------------- bench


def test_bench_unknown_exit_2(fake_bench, capsys):
    assert cli.main(["bench", "nosuchcase"]) == 2
    assert "fake-step" in capsys.readouterr().err


def test_bench_text(fake_bench, capsys):
    assert cli.main(["bench", "all"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("fake-step"))
    assert "16x16x16" in row and "1.5e+08" in row and "cpu" in row


def test_bench_json(fake_bench, capsys):
    assert cli.main(["bench", "fake-step", "--json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert rec == {"case": "fake-step", "size": [16, 16, 16], "metric": "cells_per_s",
                   "value": 1.5e8, "unit": "cells/s", "device": "cpu"}


# ------------------------------------------------------------ case options


def test_case_options_from_flags_and_environment():
    p = cli.build_parser()
    v = p.parse_args(["validate", "all", "--figures", "figs"])
    assert cli.case_options(v, {"EMJAX_FIGURES": "env"}) == {"figures": Path("figs")}
    v = p.parse_args(["validate", "all"])
    assert cli.case_options(v, {}) == {}
    assert cli.case_options(v, {"EMJAX_BENCH_OUT": "b"}) == {}  # a bench knob only
    b = p.parse_args(["bench", "all"])
    env = {"EMJAX_BENCH_OUT": "b", "EMJAX_FDFD_SIZES": "64,80", "EMJAX_FDFD_CANDIDATES": "0"}
    assert cli.case_options(b, env) == {"figures": Path("b"), "fdfd_sizes": (64, 80),
                                        "fdfd_candidates": False}
    with pytest.raises(SetupError, match="EMJAX_FDFD_SIZES"):
        cli.case_options(b, {"EMJAX_FDFD_SIZES": "64;80"})


def test_validate_passes_figures_to_cases_that_take_it(fake_validation, tmp_path, capsys):
    got = []

    def drawing(figures="default"):
        got.append(figures)
        return [dict(OK, case="draw")]

    fake_validation.CASES["draw"] = drawing
    assert cli.main(["validate", "draw", "--figures", str(tmp_path), "--json"]) == 0
    assert got == [tmp_path]
    assert json.loads(capsys.readouterr().out)[0]["case"] == "draw"


def test_info_shows_host_memory_on_cpu(capsys):
    """A CPU device reports no memory to JAX; ``emjax info`` shows the host's (psutil)."""
    import jax
    import psutil

    if jax.devices()[0].platform != "cpu":
        pytest.skip("a CPU device only")
    assert cli.main(["info", "--json"]) == 0
    mem = json.loads(capsys.readouterr().out)["devices"][0]["memory"]
    assert mem["bytes_limit"] == psutil.virtual_memory().total
    assert 0 < mem["bytes_in_use"] < mem["bytes_limit"]
    assert cli.main(["info"]) == 0
    assert "GiB in use" in capsys.readouterr().out
