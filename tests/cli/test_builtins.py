"""Every built-in scenario end to end through ``emjax run``, shortened, on the CPU.

Time-domain scenarios run ``--steps 3``, FDFD ones ``--max-iter 2``: enough to build
the whole set-up, compile, run the loop, save the results and draw every figure. A
DFT or NearToFar monitor of several frequencies gives one figure per frequency.
The dispersive variants of the phantoms (``*-dispersive``) share their geometry,
solver and outputs with a built-in run here; they are covered by a dry run and by
checks of their fitted tissue (their broadband SAR by tests/validation/
test_dispersive_sar.py), to keep this file's time in check.
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


DISPERSIVE = [n for n in builtin_names() if n.endswith("-dispersive")]


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in builtin_names() if n not in DISPERSIVE])
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


@pytest.mark.parametrize("name", DISPERSIVE)
def test_dispersive_builtin_dry_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(["run", name, "--dry-run"])
    assert rc == 0, err.getvalue()
    text = out.getvalue()
    assert f"'{name}'" in text and "total" in text, text
    if name.startswith("mri-coil"):  # the poles' auxiliary arrays are sized
        assert "polarization" in text, text
    assert not list(tmp_path.iterdir())  # a dry run writes nothing


def test_dispersive_builtins_hold_the_fitted_tissue():
    """Each tissue of the dispersive phantoms is a pole fit that, at the frequency its
    constant sibling was tabulated at, gives that sibling's eps' and sigma to 2% (the
    fits are 1% from Gabriel's model; the tables round it); the eyes, which the library
    lacks, and the 128 MHz table's CSF (IT'IS v4.1, 72.7 against Gabriel's 84.0) are
    not compared. Fits are made once per process."""
    from emjax.model.dispersion import PoleMedium
    from emjax.scenarios.dispersive import fitted_tissue
    from emjax.scenarios.mri import BROADBAND_FREQUENCIES, TISSUES_128MHZ

    pairs = [("head-900mhz", "head-900mhz-dispersive", 9e8),
             ("mri-coil", "mri-coil-dispersive", 128e6)]
    for const_name, disp_name, f in pairs:
        const, disp = load_builtin(const_name), load_builtin(disp_name)
        assert disp.name == disp_name
        fitted = 0
        for a, b in zip(const.structures, disp.structures, strict=True):
            assert a.geometry == b.geometry
            if not isinstance(b.medium, PoleMedium):
                assert b.medium == a.medium
                continue
            fitted += 1
            assert b.medium.name == a.medium.name
            if b.medium.name == "csf" and f == 128e6:
                continue
            eps = complex(b.medium.eps(f))
            assert eps.real == pytest.approx(a.medium.eps_r, rel=0.02), b.medium.name
            assert float(b.medium.sigma_eff(f)) == pytest.approx(a.medium.sigma, rel=0.02)
        assert fitted >= 5, disp_name
    assert fitted_tissue("muscle") is fitted_tissue("muscle")
    sim = load_builtin("mri-coil-dispersive")
    assert {m.name: tuple(m.frequencies) for m in sim.monitors if hasattr(m, "frequencies")
            } == {"head": BROADBAND_FREQUENCIES, "body": BROADBAND_FREQUENCIES}
    assert set(TISSUES_128MHZ) == {s.medium.name for s in sim.structures
                                   if isinstance(s.medium, PoleMedium)}
