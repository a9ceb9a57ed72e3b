"""The shared run driver (emjax.driver): one compile per chunk shape, precision per run.

- Retrace guard: a run traces its chunk function once per distinct chunk length of
  its chunk plan (FDTD3D, FDTD2D and DGATD), also across a checkpoint and a resume.
- Importing emjax and its solvers changes no JAX configuration; a float32 FDTD3D run
  in a fresh interpreter leaves ``jax_enable_x64`` off and gives bit for bit the probe
  series of the same run with it on.
- The chunk plan ends chunks on checkpoint steps and covers the run exactly.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from emjax.driver.loop import chunk_plan, one_program
from emjax.driver.monitors import tail_in_program


def _count_traces(monkeypatch, module: str) -> list[int]:
    """Patch ``module._chunk`` to count how often it is traced (jit calls the Python
    function only when it traces)."""
    import importlib

    mod = importlib.import_module(module)
    traces: list[int] = []
    real = mod._chunk

    def counted(*args, **kwargs):
        traces.append(kwargs["length"])
        return real(*args, **kwargs)

    monkeypatch.setattr(mod, "_chunk", counted)
    return traces


@pytest.mark.parametrize(("small", "module", "solver"), [
    ("small_fdtd3d", "emjax.fdtd.solver", "emjax.fdtd.solver:FDTDSolver"),
    ("small_fdtd2d", "emjax.fdtd.solver", "emjax.fdtd.solver2d:FDTD2DSolver"),
    ("small_dgatd", "emjax.dga.solver", "emjax.dga.solver:DGASolver"),
])
def test_one_trace_per_chunk_length(request, monkeypatch, tmp_path, small, module, solver):
    import importlib

    make = request.getfixturevalue(small)
    mod_name, cls_name = solver.split(":")
    cls = getattr(importlib.import_module(mod_name), cls_name)
    traces = _count_traces(monkeypatch, module)
    sim = make(50)
    s = cls(sim, chunk=12)
    plan = chunk_plan(0, 50, 12, 20)  # 10, 10 | 10, 10 | 10 steps
    s.run(progress=False, checkpoint_every=20, checkpoint_path=tmp_path / "c.h5")
    assert plan == [(10, 10)] * 5 and traces == [10], (traces, plan)
    # 53 steps (prime) with checkpoints every 20: 12, 8 | 12, 8 | 12, 1 through one program
    # (on a CPU, ``tail_in_program``; an accelerator runs every chunk of so short a run as
    # the while loop, ``one_program``, else compiles programs for the short chunks)
    plan = chunk_plan(0, 53, 12, 20)
    assert {n for n, _ in plan} == {12} and [a for _, a in plan] == [12, 8, 12, 8, 12, 1]
    s53 = cls(make(53), chunk=12)
    masked = s53.run(progress=False, checkpoint_every=20, checkpoint_path=tmp_path / "d.h5")
    expected = [10, 12] if tail_in_program() or one_program(plan, 53) else [10, 12, 8, 1]
    assert traces == expected, traces
    # the same solver objects run again without tracing anything
    s.run(progress=False)
    s53.run(progress=False)
    assert traces == expected, traces
    # the chunks that stop early give the records of one whole chunk, bit for bit
    whole = cls(make(53), chunk=53).run(progress=False)
    rows = []
    for name in whole.names:
        for comp, x in whole[name].data.items():
            assert np.array_equal(x, masked[name].data[comp]), (name, comp)
            rows.append(np.shape(x)[0] if np.ndim(x) else 0)
    assert max(rows) >= 53  # a series of every step was compared


@pytest.mark.parametrize(("small", "module", "solver"), [
    ("small_fdtd3d", "emjax.fdtd.solver", "emjax.fdtd.solver:FDTDSolver"),
    ("small_dgatd", "emjax.dga.solver", "emjax.dga.solver:DGASolver"),
])
def test_a_gpu_run_with_a_short_chunk_compiles_one_program(request, monkeypatch, small,
                                                           module, solver):
    """Where programs run all their steps (a GPU's scans, emulated here by
    ``tail_policy(False)``), a run whose plan ends in a short chunk runs every chunk as
    the while loop, one program, while its trip tests cost less than a second
    compilation; past that it compiles the short chunk's own program. Both give the
    records of the default run bit for bit."""
    import importlib

    from emjax.driver import loop
    from emjax.driver.monitors import tail_policy

    make = request.getfixturevalue(small)
    mod_name, cls_name = solver.split(":")
    cls = getattr(importlib.import_module(mod_name), cls_name)
    ref = cls(make(53), chunk=12).run(progress=False)  # 12, 12, 12, 12, 5
    traces = _count_traces(monkeypatch, module)
    with tail_policy(False):
        assert loop.one_program(chunk_plan(0, 53, 12, None), 53)
        one = cls(make(53), chunk=12).run(progress=False)
        assert traces == [12], traces
        monkeypatch.setattr(loop, "TAIL_COMPILE_S", 53 * loop.WHILE_STEP_S / 2)
        assert not loop.one_program(chunk_plan(0, 53, 12, None), 53)
        two = cls(make(53), chunk=12).run(progress=False)
        assert traces == [12, 12, 5], traces
    for res in (one, two):
        for name in ref.names:
            for comp, x in ref[name].data.items():
                assert np.array_equal(x, res[name].data[comp]), (name, comp)


def test_chunk_plan_ends_on_checkpoints():
    for start, steps, chunk, every in [(0, 100, 16, None), (0, 100, 16, 30), (40, 97, 7, 25),
                                       (0, 5, 100, None)]:
        plan = chunk_plan(start, steps, chunk, every)
        ends = np.cumsum([start, *(a for _, a in plan)])[1:]
        assert ends[-1] == steps and all(1 <= a <= n for n, a in plan)
        assert len({n for n, _ in plan}) == 1  # one program
        if every:
            for k in range(every, steps, every):
                if k > start:
                    assert k in ends, (k, ends)


def test_float32_run_leaves_x64_off_with_the_same_bits(tmp_path, small_fdtd3d):
    """Importing every solver flips nothing; a float32 run keeps x64 off, and its probe
    series equals the in-process run's (x64 on here) bit for bit."""
    script = textwrap.dedent(f"""
        import jax, numpy as np
        import emjax, emjax.fdtd.solver, emjax.fdfd.solver, emjax.dga.solver, emjax.cli
        assert not jax.config.jax_enable_x64, "an import switched x64 on"
        sys_path = {str(tmp_path)!r}
        import sys; sys.path.insert(0, {str(Path(__file__).parents[1])!r})
        from conftest import fdtd3d
        res = fdtd3d(40).run(progress=False)
        assert not jax.config.jax_enable_x64, "a float32 run switched x64 on"
        np.save(sys_path + "/p.npy", res["p"].data["Ez"])
    """)
    # no JAX settings inherited but the platform (the bits compared are the backend's)
    env = {"JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu"), "PATH": "/usr/bin:/bin"}
    if "PYTHONPATH" in os.environ:  # emjax run from a source tree, not installed
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    fresh = np.load(tmp_path / "p.npy")
    here = small_fdtd3d(40).run(progress=False)["p"].data["Ez"]
    assert fresh.dtype == here.dtype == np.float32
    assert np.array_equal(fresh, here)
    assert np.abs(here).max() > 0


def test_compile_time_leaves_out_the_compiling_chunks_steps():
    """A compiling chunk's time is its compilation plus its steps; the steps are charged
    at the rate of the chunks that did not compile (the run's stepping time holds them)."""
    from emjax.driver.loop import _Clock

    clock = _Clock()
    clock.add(3.0, 10, compiling=True)
    assert clock.compile_s == 3.0  # nothing to tell the steps' share yet
    clock.add(0.5, 10, compiling=False)
    clock.add(0.5, 10, compiling=False)
    assert clock.rate() == pytest.approx(20.0)
    assert clock.compile_s == pytest.approx(2.5)
    clock.add(0.2, 10, compiling=True)  # a second program: both compilations
    assert clock.compile_s == pytest.approx(3.2 - 20 / 20.0)
    quick = _Clock()  # a compiling chunk faster than the others' rate: never below zero
    quick.add(0.1, 10, compiling=True)
    quick.add(0.5, 10, compiling=False)
    assert quick.compile_s == 0.0


def test_a_short_chunk_reads_no_input_past_its_steps(small_fdtd3d):
    """The steps a short chunk does not run take the inputs of its last step (a
    waveform sampled past the run's end may overflow float32), the others their own."""
    from emjax.driver.loop import input_steps
    from emjax.fdtd.solver import FDTDSolver

    assert input_steps(48, 12, 5).tolist() == [48, 49, 50, 51, 52] + [52] * 7
    assert input_steps(48, 12).tolist() == list(range(48, 60))
    s = FDTDSolver(small_fdtd3d(53), chunk=12)
    whole, short = s._chunk_inputs(40, 12), s._chunk_inputs(48, 12, active=5)
    for c, wv in short["src"].items():
        np.testing.assert_array_equal(wv[:5], s._chunk_inputs(48, 5)["src"][c])
        assert (wv[5:] == wv[4]).all() and wv.shape == whole["src"][c].shape
