"""Benchmarks of the CPU path (issue #24, item 6): what a laptop without a GPU gets.

Each case times a whole ``run`` of a scenario, as a user runs it, and reports the run's
own throughput (``cells_per_s``/``dofs_per_s`` of its metadata: steps after the
compiling chunk) beside the machine's copy bandwidth measured with NumPy
(:func:`numpy_copy_bandwidth`, bytes read plus written), and the bound that bandwidth
puts on a two-pass FDTD update:

- ``cpu-fdtd3d``: FDTD3D, 128^3 vacuum cells (``n``), 600 steps, 10-cell CPML, a
  dipole, a probe and a DFT plane (:func:`emjax.bench.fdtd3d.cube_scenario`), float32; the two-pass
  limit at 73 B per cell (72 B of E and H plus the 1-byte material index).
- ``cpu-fdtd2d``: FDTD2D TMz, 2048^2 cells, 10-cell CPML (the default boundary; the
  split-field PML runs at a tenth of its speed on a CPU), 1000 steps; limit at 36 B
  per cell.
- ``cpu-fdfd``: FDFD3D, seed 000's sphere at 48^3 with the default preconditioned COCG
  to 1e-6: set-up, compile and solve times and the iterations.
- ``cpu-dgatd``: the built-in ``cylinder-cavity`` (DGATD, 15k tets), 40 ns.

The sizes are parameters (``n``), so that a test or a slow laptop runs them small. The
number of threads is XLA's choice (all cores; :func:`emjax.driver.environment`); the
options measured on a 2-core VM are in BENCHMARKS.md.
"""

from __future__ import annotations

import os
import statistics
import time
import warnings
from collections.abc import Callable

import numpy as np

from ..records import Measurement

FDTD3D_BYTES = 73  # B per cell per step: E and H read and written twice, 1 B of index
FDTD2D_BYTES = 36  # TMz: 20 B in the H pass, 16 B in the E pass


def numpy_copy_bandwidth(nbytes: int = 256 << 20, repeats: int = 7) -> float:
    """Host memory copy bandwidth in B/s, bytes read plus written, of ``np.copyto``
    between two ``nbytes`` float32 arrays (best of ``repeats``, after one warm-up)."""
    a = np.ones(nbytes // 4, np.float32)
    b = np.empty_like(a)
    np.copyto(b, a)  # fault the pages in
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        np.copyto(b, a)
        times.append(time.perf_counter() - t)
    return 2 * a.nbytes / min(times)


def _threads() -> str:
    return f"{os.cpu_count()} cores"


def _quiet_run(sim, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sim.run(progress=False, **kw)


def _fdtd(case: str, sim, cells: int, bytes_per_cell: int, chunk: int | None = None
          ) -> list[Measurement]:
    bw = numpy_copy_bandwidth()
    res = _quiet_run(sim, chunk=chunk) if chunk else _quiet_run(sim)
    m = res.metadata
    rate = m["cells_per_s"]
    limit = bw / bytes_per_cell
    size = f"{'x'.join(map(str, m.get('cells') or sim.domain.shape))} ({_threads()})"
    return [Measurement(case, size, "NumPy copy bandwidth (read + write)", bw / 1e9, "GB/s"),
            Measurement(case, size, "all cells (the run's cells_per_s)", rate / 1e6,
                        "Mcells/s"),
            Measurement(case, size, f"two-pass limit at {bytes_per_cell} B/cell", limit / 1e6,
                        "Mcells/s"),
            Measurement(case, size, "fraction of the two-pass limit", rate / limit, ""),
            Measurement(case, size, "compile", m.get("compile_time_s"), "s"),
            Measurement(case, size, "steps", m.get("steps"), "")]


def cpu_fdtd3d(n: int = 128, steps: int = 600, chunk: int | None = None,
               strategy: str = "auto", dtype: str = "float32") -> list[Measurement]:
    """FDTD3D on the CPU: n^3 cells, 10-cell CPML, a probe and a DFT plane."""
    from .fdtd3d import cube_scenario

    sim = cube_scenario(n, thickness=10, strategy=strategy, steps=steps)
    if dtype != "float32":
        sim = sim.model_copy(update={"dtype": dtype})
    return _fdtd("cpu-fdtd3d", sim, n**3, FDTD3D_BYTES, chunk)


def cpu_fdtd2d(n: int = 2048, steps: int = 1000, boundary: str = "cpml") -> list[Measurement]:
    """FDTD2D TMz on the CPU: n^2 cells, a 10-cell CPML (FDTD2D's default; "split":
    Berenger's split field, "pec"), one line source."""
    from .fdtd2d import square_scenario

    return _fdtd("cpu-fdtd2d", square_scenario(n, boundary, steps=steps), n * n,
                 FDTD2D_BYTES)


def cpu_fdfd(n: int = 48) -> list[Measurement]:
    """FDFD3D on the CPU: seed 000's sphere at n^3, default solver to 1e-6."""
    from ..scenarios.sphere import SIZE, sphere_scenario

    sim = sphere_scenario(SIZE / n, tol=1e-6, thickness=10 if n >= 64 else max(4, n // 6))
    m = _quiet_run(sim).metadata
    size = f"{n}^3 ({_threads()})"
    return [Measurement("cpu-fdfd", size, metric, value, unit) for metric, value, unit in (
        ("set-up", m["setup_time_s"], "s"), ("compile", m["compile_time_s"], "s"),
        ("solve", m["solve_time_s"], "s"), ("iterations", m["iterations"], ""),
        ("time per iteration", m["solve_time_s"] / max(m["iterations"], 1) * 1e3, "ms"))]


def cpu_dgatd(duration: float = 40e-9) -> list[Measurement]:
    """DGATD on the CPU: the built-in cylinder-cavity for ``duration`` s."""
    from ..scenarios import load_builtin

    base = load_builtin("cylinder-cavity")
    sim = type(base).model_validate({**base.model_dump(), "duration": duration})
    m = _quiet_run(sim).metadata
    size = f"cylinder-cavity ({_threads()})"
    return [Measurement("cpu-dgatd", size, metric, value, unit) for metric, value, unit in (
        ("DoF updates per second", m.get("dofs_per_s", float("nan")) / 1e6, "MDoF/s"),
        ("compile", m.get("compile_time_s"), "s"), ("steps", m.get("steps"), ""))]


def median_rate(fn: Callable[[], list[Measurement]], metric: str, repeats: int = 3) -> float:
    """The median ``metric`` over ``repeats`` calls of a case (option studies)."""
    vals = [next(r.value for r in fn() if r.metric.startswith(metric)) for _ in range(repeats)]
    return statistics.median(vals)


CASES: dict[str, Callable[..., list[Measurement]]] = {
    "cpu-fdtd3d": cpu_fdtd3d, "cpu-fdtd2d": cpu_fdtd2d, "cpu-fdfd": cpu_fdfd,
    "cpu-dgatd": cpu_dgatd,
}
