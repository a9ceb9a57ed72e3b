"""Every built-in scenario end to end through ``emjax run``, shortened, on the CPU.

Time-domain scenarios run ``--steps 3``, FDFD ones ``--max-iter 2``: enough to build
the whole set-up, compile, run the loop, save the results and draw every figure. A
DFT or NearToFar monitor of several frequencies gives one figure per frequency.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

from emjax import cli
from emjax.results import Results
from emjax.scenarios import builtin_names, load_builtin

SHORT = {"steps": ["--steps", "3"], "iterations": ["--max-iter", "2"]}


def _shortening(name: str) -> list[str]:
    sim = load_builtin(name)
    return SHORT["steps" if "steps" in type(sim).model_fields else "iterations"]


@pytest.mark.slow
@pytest.mark.parametrize("name", builtin_names())
def test_builtin_scenario_runs_with_figures(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    args = ["run", name, *_shortening(name), "--no-progress", "-o", "res/r.h5",
            "--figures", "fig"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(args)
    assert rc == 0, err.getvalue()
    assert "Traceback" not in err.getvalue()
    res = Results.load(tmp_path / "res" / "r.h5")
    figures = sorted(p.name for p in (tmp_path / "fig").glob("*.png"))
    assert figures, f"{name} drew no figure"
    for mname, md in res.monitors.items():
        for key, a in md.data.items():
            assert np.all(np.isfinite(np.asarray(a))), f"{name}: {mname}.{key} not finite"
        nf = np.size(md.coords.get("f", ()))
        per_frequency = (md.kind == "NearToFar" and "E_inc" in md.data) or (
            md.kind == "DFTMonitor" and any(k.startswith("x_") for k in md.coords))
        if per_frequency:
            mine = [f for f in figures if f == f"r_{mname}.png" or f.startswith(f"r_{mname}_")]
            assert len(mine) == nf, (name, mname, nf, mine)
    # nothing outside the folders named on the command line
    assert {p.name for p in tmp_path.iterdir()} == {"res", "fig"}


def test_per_frequency_figure_names_tell_frequencies_apart():
    from emjax.plot import _per_frequency

    one = _per_frequency(Path("d/r_far.png"), np.array([4e8]))
    assert one == [Path("d/r_far.png")]
    close = _per_frequency(Path("d/r_far.png"), np.array([1.0e9, 1.0001e9, 2e9]))
    assert len({p.name for p in close}) == 3
    assert [p.name for p in _per_frequency(Path("r_far.png"), np.array([4e8, 6e8]))] == [
        "r_far_400MHz.png", "r_far_600MHz.png"]
