"""Scaling of sharded 3D FDTD over the devices of one host (issue #7).

``scale``: float32 FDTD with a 10-cell CPML on every face, a dipole, no monitors,
fields split along x (:mod:`emjax.parallel`).

* strong scaling: one n^3 grid (n = 1024 on a GPU, 48 on a CPU) on 1, 2, 4, ...
  devices; efficiency ``T1 / (k Tk)``;
* weak scaling: (k n) x n x n on k devices, n^3 per device; efficiency ``T1 / Tk``;
* the largest grid (k m) x m x m that the per-device memory estimate fits on all k
  devices (90% of the free memory of the fullest one), with its speed;
* memory: the per-device estimate against the peak each device really used, measured
  in a fresh process per device count (``python -m emjax.bench.parallel memory``;
  where devices keep no statistics, the CPU, XLA's memory analysis of the compiled
  chunk instead), and against that analysis. Run first, and best with
  ``XLA_PYTHON_CLIENT_PREALLOCATE=false`` so that this process's pool leaves the
  devices to the child.

Every count of devices up to what JAX sees (1, 2, 4, 8) is run: on a 2-GPU host,
strong scaling 1 -> 2, weak scaling at 2, the largest run on 2.

Timings exclude compilation: a warm-up chunk, then the median of ``repeats`` chunks
ended by ``block_until_ready``. Cells/s counts every cell of the grid.
"""

from __future__ import annotations

import json
import subprocess
import sys

import jax
import psutil

from ..parallel import child_environment
from ..records import Measurement
from .common import on_gpu, time_chunks

THICKNESS = 10
HOST_BYTES_PER_CELL = 56
"""Peak host memory of ``fdtd.setup.prepare`` per cell of this (vacuum) scenario,
measured at 128^3 (54 B): the largest run must also fit the host while it is set up."""


def scenario(shape: tuple[int, int, int], steps: int):
    """The benchmark scenario: ``shape`` cells of 1 mm, CPML, one dipole, no monitors."""
    from ..model import CPML, FDTD3D, Domain, GaussianPulse, PointDipole

    return FDTD3D(
        name=f"scale{'x'.join(map(str, shape))}", domain=Domain(shape=shape, spacing=1e-3),
        boundary=CPML(thickness=THICKNESS), steps=steps,
        sources=[PointDipole(position=(0.0, 0.0, 0.0), polarization="z",
                             waveform=GaussianPulse(f0=10e9, fwidth=5e9))],
    )


def time_sharded(shape, devices: int, steps: int, repeats: int = 3) -> dict:
    """Median seconds per step and compile seconds of ``shape`` on ``devices`` devices."""
    from ..fdtd.solver import FDTDSolver

    # One device: the unsharded solver users get by default, the baseline of efficiency.
    solver = FDTDSolver(scenario(shape, steps * (repeats + 1)), chunk=steps,
                        devices=devices if devices > 1 else None)
    s_per_step, compile_s, _ = time_chunks(solver, steps, repeats)
    return {"s_per_step": s_per_step, "compile_s": compile_s}


def _counts(limit: int) -> list[int]:
    return [k for k in (1, 2, 4, 8) if k <= limit]


def largest_fitting(k: int, base: int) -> tuple[int, int, int]:
    """The largest (k m) x m x m grid, m a multiple of 64 (8 on a CPU), whose per-device
    estimate fits in 90% of the free memory of every one of k devices and whose host-side
    set-up (``HOST_BYTES_PER_CELL``) fits in 80% of the free host memory."""
    from ..driver.memory import available_bytes
    from ..fdtd.memory import estimate_per_device

    free, _ = available_bytes()
    devs = jax.devices()[:k]
    for d in devs:
        stats = d.memory_stats() if hasattr(d, "memory_stats") else None
        if stats and "bytes_limit" in stats:
            free = min(free, int(stats["bytes_limit"] - stats.get("bytes_in_use", 0)))
    if devs[0].platform == "cpu":
        free //= k
    host = psutil.virtual_memory().available
    step = 64 if on_gpu() else 8
    m, best = 4 * step, None  # at least 32 cells: room for the CPML
    while m <= (16 if on_gpu() else 2) * base:  # a CPU has no business with 10^10 cells
        shape = (k * m, m, m)
        if estimate_per_device(scenario(shape, 10), k, "x")["total"] > 0.9 * free:
            break
        if k * m**3 * HOST_BYTES_PER_CELL > 0.8 * host:  # the set-up runs on the host
            break
        best, m = shape, m + step
    return best or (4 * k * step, 4 * step, 4 * step)


def scale(n: int | None = None, steps: int | None = None, repeats: int = 3,
          memory: bool = True) -> list[Measurement]:
    """Strong and weak scaling, the largest run and the memory check (module docstring)."""
    n = n or (1024 if on_gpu() else 48)
    steps = steps or (50 if on_gpu() else 5)
    counts = _counts(jax.device_count())
    recs: list[Measurement] = []

    def rec(size: tuple[int, ...], metric: str, value: float, unit: str) -> None:
        recs.append(Measurement("scale", list(size), metric, value, unit))

    if memory:  # first, while this process holds little device memory (see memory_check)
        for kk in counts:
            recs += memory_check((n, n, n), kk)
    t1 = None
    for k in counts:  # strong scaling: one n^3 grid
        r = time_sharded((n, n, n), k, steps, repeats)
        t1 = t1 or r["s_per_step"]
        rec((n, n, n), f"strong {k} dev: cells/s", n**3 / r["s_per_step"] / 1e9, "Gcells/s")
        rec((n, n, n), f"strong {k} dev: efficiency", t1 / (k * r["s_per_step"]), "")
        rec((n, n, n), f"strong {k} dev: compile", r["compile_s"], "s")
    for k in counts[1:]:  # weak scaling: n^3 per device
        shape = (k * n, n, n)
        r = time_sharded(shape, k, steps, repeats)
        rec(shape, f"weak {k} dev: cells/s", k * n**3 / r["s_per_step"] / 1e9, "Gcells/s")
        rec(shape, f"weak {k} dev: efficiency", t1 / r["s_per_step"], "")
    k = counts[-1]
    shape = largest_fitting(k, n)
    r = time_sharded(shape, k, steps, repeats=2)
    cells = shape[0] * shape[1] * shape[2]
    rec(shape, f"largest on {k} dev: cells", cells / 1e9, "Gcells")
    rec(shape, f"largest on {k} dev: cells/s", cells / r["s_per_step"] / 1e9, "Gcells/s")
    return recs


def memory_check(shape, devices: int) -> list[Measurement]:
    """Per-device estimate against the measured peak, in a fresh process (its peak counter
    starts at zero). Measured: the largest ``peak_bytes_in_use`` over the devices, or,
    where devices report no memory statistics (CPU), the bytes of the placed arrays."""
    # The child allocates on demand (no preallocated pool), so that its peak counts only
    # what the run uses; it shares the devices with this process, which should hold
    # little: run with XLA_PYTHON_CLIENT_PREALLOCATE=false, or the parent's pool (75% of
    # each device by default) leaves the child a quarter.
    env = child_environment(XLA_PYTHON_CLIENT_PREALLOCATE="false")
    out = subprocess.run(
        [sys.executable, "-m", __name__, "memory", *map(str, shape), str(devices)],
        capture_output=True, text=True, timeout=1800, env=env)
    if out.returncode != 0:  # reported as a record: the timings still run
        tail = out.stderr.strip().splitlines()[-1:] or ["?"]
        return [Measurement("scale", list(shape), f"memory {devices} dev: error", None, "",
                            error=tail[0][-500:])]
    data = json.loads(out.stdout.strip().splitlines()[-1])
    size, head = list(shape), f"memory {devices} dev"
    return [
        Measurement("scale", size, f"{head}: estimate", data["estimate"] / 2**30, "GiB"),
        Measurement("scale", size, f"{head}: measured ({data['how']})",
                    data["measured"] / 2**30, "GiB"),
        Measurement("scale", size, f"{head}: estimate/measured",
                    data["estimate"] / data["measured"], ""),
        Measurement("scale", size, f"{head}: estimate/XLA plan",
                    data["estimate"] / data["xla"], ""),
    ]


def _measure_memory(shape, devices: int, steps: int = 4) -> dict:
    from ..fdtd.memory import estimate_per_device
    from ..fdtd.solver import FDTDSolver
    from ..parallel import per_device_bytes

    sim = scenario(shape, 2 * steps)
    solver = FDTDSolver(sim, chunk=steps, devices=devices if devices > 1 else None)
    state = solver.init_state()
    consts = solver.constants()
    placed = max(per_device_bytes([state, consts]).values())  # the arrays alone
    ma = solver._compile(steps).lower(*solver.chunk_args(state, 0, steps)) \
        .compile().memory_analysis()
    xla = (ma.argument_size_in_bytes + ma.output_size_in_bytes - ma.alias_size_in_bytes
           + ma.temp_size_in_bytes)  # per device: XLA's plan of the sharded chunk
    for k in range(2):
        state, _, _ok = solver.advance(state, k * steps, steps)
    jax.block_until_ready(state)
    est = estimate_per_device(sim, devices, "x", chunk=steps)["total"]
    peaks = []
    for d in jax.devices()[:devices]:
        stats = d.memory_stats() if hasattr(d, "memory_stats") else None
        if stats and "peak_bytes_in_use" in stats:
            peaks.append(int(stats["peak_bytes_in_use"]))
    if peaks:
        return {"estimate": est, "measured": max(peaks), "how": "peak_bytes_in_use",
                "xla": xla, "placed": placed}
    return {"estimate": est, "measured": xla, "how": "XLA memory analysis", "xla": xla,
            "placed": placed}


CASES = {"scale": scale}

if __name__ == "__main__":
    if sys.argv[1:2] == ["memory"]:
        nx, ny, nz, k = map(int, sys.argv[2:6])
        print(json.dumps(_measure_memory((nx, ny, nz), k)))
