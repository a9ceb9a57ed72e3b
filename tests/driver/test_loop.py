"""The shared run driver (emjax.driver): one compile per chunk shape, precision per run.

- Retrace guard: a run traces its chunk function once per distinct chunk length of
  its chunk plan (FDTD3D, FDTD2D and DGATD), also across a checkpoint and a resume.
- Importing emjax and its solvers changes no JAX configuration; a float32 FDTD3D run
  in a fresh interpreter leaves ``jax_enable_x64`` off and gives bit for bit the probe
  series of the same run with it on.
- The chunk plan ends chunks on checkpoint steps and covers the run exactly.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import emjax as em
from emjax.driver.loop import chunk_plan


def _fdtd3d(steps: int = 50) -> em.FDTD3D:
    return em.FDTD3D(
        name="drv", domain=em.Domain(shape=(10, 9, 8), spacing=1e-3),
        boundary=em.CPML(thickness=2), steps=steps,
        sources=[em.PointDipole(position=(0.2e-3, -0.3e-3, 0.1e-3), polarization="z",
                                waveform=em.GaussianPulse(f0=60e9, fwidth=30e9))],
        monitors=[em.Probe(name="p", positions=[(1e-3, 1e-3, -1e-3)], components=["Ez"]),
                  em.FieldSnapshot(name="s", center=(0, 0, 0), size=(2e-3, 2e-3, 0),
                                   interval=6, components=["Ez"]),
                  em.EnergyMonitor(name="w", interval=4)])


def _fdtd2d(steps: int = 50) -> em.FDTD2D:
    return em.FDTD2D(
        name="drv2", polarization="TMz", domain=em.Domain2D(size=(0.3, 0.3), spacing=0.015),
        sources=[em.LineSource(position=(0, 0),
                               waveform=em.GaussianPulse(f0=1e9, fwidth=0.5e9))],
        monitors=[em.Probe(name="p", positions=[(0.05, 0.05, 0)], components=["Ez"])],
        boundary=em.SplitPML(thickness=4), steps=steps)


def _dgatd(steps: int = 50) -> em.DGATD:
    return em.DGATD(
        name="drvd", mesh=em.BoxMesh(size=(0.3, 0.2, 0.2), edge_length=0.1), steps=steps,
        sources=[em.MeshEdgeSource(position=(0.15, 0.1, 0.1), direction=(0, 0, 1),
                                   waveform=em.GaussianPulse(f0=5e8, fwidth=3e8))],
        probes=[em.Probe(name="p", positions=[(0.1, 0.1, 0.1)], components=["Ez"])])


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


@pytest.mark.parametrize(("make", "module", "solver"), [
    (_fdtd3d, "emjax.fdtd.solver", "emjax.fdtd.solver:FDTDSolver"),
    (_fdtd2d, "emjax.fdtd.solver", "emjax.fdtd.solver2d:FDTD2DSolver"),
    (_dgatd, "emjax.dga.solver", "emjax.dga.solver:DGASolver"),
])
def test_one_trace_per_chunk_length(monkeypatch, tmp_path, make, module, solver):
    import importlib

    mod_name, cls_name = solver.split(":")
    cls = getattr(importlib.import_module(mod_name), cls_name)
    traces = _count_traces(monkeypatch, module)
    sim = make(50)
    s = cls(sim, chunk=12)
    plan = chunk_plan(0, 50, 12, 20)
    s.run(progress=False, checkpoint_every=20, checkpoint_path=tmp_path / "c.h5")
    assert sorted(traces) == sorted(set(plan)), (traces, plan)
    # the same solver object runs again without tracing anything
    s.run(progress=False)
    assert sorted(traces) == sorted(set(plan)), traces


def test_chunk_plan_ends_on_checkpoints():
    for start, steps, chunk, every in [(0, 100, 16, None), (0, 100, 16, 30), (40, 97, 7, 25),
                                       (0, 5, 100, None)]:
        plan = chunk_plan(start, steps, chunk, every)
        ends = np.cumsum([start, *plan])[1:]
        assert ends[-1] == steps and all(x >= 1 for x in plan)
        if every:
            for k in range(every, steps, every):
                if k > start:
                    assert k in ends, (k, ends)


def test_float32_run_leaves_x64_off_with_the_same_bits(tmp_path):
    """Importing every solver flips nothing; a float32 run keeps x64 off, and its probe
    series equals the in-process run's (x64 on here) bit for bit."""
    script = textwrap.dedent(f"""
        import jax, numpy as np
        import emjax, emjax.fdtd.solver, emjax.fdfd.solver, emjax.dga.solver, emjax.cli
        assert not jax.config.jax_enable_x64, "an import switched x64 on"
        sys_path = {str(tmp_path)!r}
        import sys; sys.path.insert(0, {str(__file__.rsplit('/', 1)[0])!r})
        from test_loop import _fdtd3d
        res = _fdtd3d(40).run(progress=False)
        assert not jax.config.jax_enable_x64, "a float32 run switched x64 on"
        np.save(sys_path + "/p.npy", res["p"].data["Ez"])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"}, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    fresh = np.load(tmp_path / "p.npy")
    here = _fdtd3d(40).run(progress=False)["p"].data["Ez"]
    assert fresh.dtype == here.dtype == np.float32
    assert np.array_equal(fresh, here)
    assert np.abs(here).max() > 0
