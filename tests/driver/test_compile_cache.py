"""JAX's persistent compilation cache in `emjax run` and the stage times of a run
(issue #24, item 2; :mod:`emjax.driver.compile_cache`).

* Two CLI runs of one scenario with ``EMJAX_CACHE_DIR`` set: the first misses and
  fills the folder, the second finds every compilation there (``compile_cache: hit``
  in the results file, and in the printed ``times:`` line).
* ``EMJAX_CACHE_DIR=off`` and ``--no-cache`` switch it off (the folder is not made);
  a folder that cannot be made prints one warning line and the run goes on uncached.
* The metadata's stage times (FDTD2D, FDTD3D, DGATD) are non-negative and together
  within the command's wall time; stepping is the loop's wall time less compiling; the
  set-up's own stages (``setup_stages``: FDTD2D, FDTD3D, DGATD) lie within the set-up
  time.
* JAX's settings are the same after a CLI run as before (the cache is the run's only);
  ``emjax.enable_compilation_cache`` switches it on for the process.

The rest of the suite runs with ``EMJAX_CACHE_DIR=off`` (tests/conftest.py): no test
writes into the real user cache. (The suite's own cache, a temporary folder per test
process that tests/conftest.py switches on, is off during these tests.)
"""

from __future__ import annotations

import time

import jax
import pytest

import emjax as em
from emjax import cli
from emjax.driver.compile_cache import _OPTIONS, default_cache_dir

STAGES = ("setup_time_s", "compile_time_s", "stepping_time_s")


@pytest.fixture(autouse=True)
def jax_settings():
    """Each test starts with the cache off, as in a user's process (the suite's own
    cache, tests/conftest.py, is switched off around it); JAX's cache settings are put
    back after it, whatever the test did."""
    from jax.experimental.compilation_cache import compilation_cache as cc

    from emjax.driver.compile_cache import disable_compilation_cache

    session = {name: getattr(jax.config, name) for name in _OPTIONS}
    disable_compilation_cache()
    saved = {name: getattr(jax.config, name) for name in _OPTIONS}
    yield saved
    for name, value in session.items():
        jax.config.update(name, value)
    cc.reset_cache()


@pytest.fixture(autouse=True)
def no_figures(monkeypatch):
    """The runs draw no figures (tested in tests/cli; here they would only cost time)."""
    monkeypatch.setattr("emjax.outputs.write_outputs", lambda *a, **k: [])


def _run(args: list[str], capsys) -> tuple[int, str, str, float]:
    t0 = time.perf_counter()
    rc = cli.main(["run", *args, "--no-progress"])
    wall = time.perf_counter() - t0
    cap = capsys.readouterr()
    return rc, cap.out, cap.err, wall


def test_second_run_hits_the_persistent_cache(tmp_path, monkeypatch, capsys, small_fdtd2d,
                                             jax_settings):
    cache = tmp_path / "user-cache" / "jax"
    monkeypatch.setenv("EMJAX_CACHE_DIR", str(cache))
    doc = small_fdtd2d(steps=12).save(tmp_path / "s.toml")
    verdicts = []
    for k in range(2):
        rc, out, err, wall = _run([str(doc), "-o", str(tmp_path / f"r{k}.h5")], capsys)
        assert rc == 0, err
        meta = em.Results.load(tmp_path / f"r{k}.h5").metadata
        assert {"grid", "rasterization", "coefficient tables"} <= set(meta["setup_stages"])
        verdicts.append(meta["compile_cache"])
        assert f"compilation cache: {meta['compile_cache']}" in out
        # every stage measured, none negative, together within the command's wall time
        assert all(meta[key] >= 0 for key in STAGES), meta
        assert sum(meta[key] for key in STAGES) <= wall
        line = next(ln for ln in out.splitlines() if ln.startswith("times: "))
        assert all(f"{label} " in line for label in ("set-up", "compile", "stepping",
                                                    "writing")), line
        # the run's settings are its own: JAX's are as before after it
        assert {n: getattr(jax.config, n) for n in _OPTIONS} == jax_settings
    assert verdicts == ["miss", "hit"]
    assert meta["compile_cache_hits"] >= 1 and meta["compile_cache_misses"] == 0
    assert any(cache.iterdir())
    assert not (tmp_path / "out").exists()  # nothing beside the outputs asked for


@pytest.mark.parametrize(("how", "factory"), [("env", "small_fdtd3d"), ("flag", "small_dgatd")])
def test_cache_off_and_the_stage_times_of_each_solver(tmp_path, monkeypatch, capsys, request,
                                                      how, factory):
    cache = tmp_path / "cache"
    monkeypatch.setenv("EMJAX_CACHE_DIR", "off" if how == "env" else str(cache))
    doc = request.getfixturevalue(factory)(steps=4).save(tmp_path / "s.toml")
    extra = ["--no-cache"] if how == "flag" else []
    rc, out, err, wall = _run([str(doc), "-o", str(tmp_path / "r.h5"), *extra], capsys)
    assert rc == 0, err
    meta = em.Results.load(tmp_path / "r.h5").metadata
    assert meta["compile_cache"] == "off"
    assert "compilation cache: off" in out and not cache.exists()
    assert all(meta[key] >= 0 for key in STAGES), meta
    assert sum(meta[key] for key in STAGES) <= wall
    # the loop's wall time is compiling plus stepping (the set-up came before it)
    assert meta["stepping_time_s"] == pytest.approx(meta["wall_time_s"]
                                                    - meta["compile_time_s"])
    # the lowering's own stages, each measured, together within the set-up
    stages = meta["setup_stages"]
    first = {"small_fdtd3d": "grid", "small_dgatd": "mesh generation"}[factory]
    assert first in stages and len(stages) >= 5, stages
    assert all(v >= 0 for v in stages.values())
    assert sum(stages.values()) <= meta["setup_time_s"] + 1e-3


def test_unusable_cache_folder_warns_once_and_runs(tmp_path, monkeypatch, capsys,
                                                   small_fdtd2d):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("EMJAX_CACHE_DIR", str(blocker / "cache"))
    doc = small_fdtd2d(steps=4).save(tmp_path / "s.toml")
    rc, _, err, _ = _run([str(doc), "-o", str(tmp_path / "r.h5")], capsys)
    assert rc == 0, err
    warned = [ln for ln in err.splitlines() if "compilation cache folder" in ln]
    assert len(warned) == 1 and warned[0].startswith("emjax run: warning: "), err
    assert str(blocker / "cache") in warned[0]
    assert em.Results.load(tmp_path / "r.h5").metadata["compile_cache"] == "off"


def test_enable_compilation_cache_from_python(tmp_path):
    assert em.enable_compilation_cache(tmp_path / "c") == tmp_path / "c"
    assert jax.config.jax_compilation_cache_dir == str(tmp_path / "c")
    assert jax.config.jax_persistent_cache_min_compile_time_secs == 0
    # the default lies in the user cache, never in a run's output folder
    assert default_cache_dir().parts[-2:] == ("emjax", "jax")


