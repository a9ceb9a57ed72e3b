"""What every benchmark shares: the device's copy bandwidth and chunk timing; the device's
name and whether it is a GPU come from :mod:`emjax.records` (re-exported here)."""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp
from jax import lax

from ..records import device_name, on_gpu


def copy_bandwidth(nbytes: int = 2 << 30, repeats: int = 5, loop: int = 20) -> float:
    """Device-to-device copy bandwidth in B/s, counting bytes read plus written.

    Timed as the kernels are: ``loop`` passes inside one jitted loop, so that the
    per-call dispatch and synchronisation (about 0.25 ms on the H100 machine) are not
    charged to the copy. Timing one call per pass, as before 2026-11-23, read 2.1-2.6
    instead of about 3 TB/s there and so overstated every fraction of copy bandwidth.
    """
    n = nbytes // 4
    x = jax.random.normal(jax.random.PRNGKey(0), (n,), jnp.float32)

    def body(i, a):
        # the barrier keeps XLA from fusing (or unrolling and fusing) passes together
        return lax.optimization_barrier(a * 1.0000001)

    # donated, so that every pass reads and writes one buffer: a pure stream
    f = jax.jit(lambda a: lax.fori_loop(0, loop, body, a), donate_argnums=0)
    x = f(x).block_until_ready()  # compile; clocks ramp up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        x = f(x).block_until_ready()
        times.append(time.perf_counter() - t)
    return 2 * n * 4 * loop / statistics.median(times)


def time_chunks(solver, steps: int, repeats: int = 3) -> tuple[float, float, object]:
    """(median seconds per step, seconds of the first chunk (compilation), final state)
    of a time-domain solver's jitted chunk of ``steps``; raises FloatingPointError if
    the fields stop being finite (a benchmark of a blown-up run measures nothing)."""
    state = solver.init_state()
    t = time.perf_counter()
    state, _, ok = solver.advance(state, 0, steps)
    jax.block_until_ready(state)
    compile_s = time.perf_counter() - t
    times = []
    for r in range(repeats):
        t = time.perf_counter()
        state, _, ok = solver.advance(state, (r + 1) * steps, steps)
        jax.block_until_ready(state)
        times.append(time.perf_counter() - t)
    if not bool(ok):
        raise FloatingPointError(f"{solver.sim.name}: fields not finite during the benchmark")
    return statistics.median(times) / steps, compile_s, state


__all__ = ["copy_bandwidth", "device_name", "on_gpu", "time_chunks"]


STORAGES = (None, "bfloat16", "float16")
"""Field storage of the 16-bit benchmarks: the dtype's own (None), then 16 bits."""


def storage_records(case: str, size: int, label: str, storage_dtype: str | None,
                    timing: dict, cells: int, bandwidth: float) -> list:
    """Speed (all cells) and fraction of the copy bandwidth of one timed run
    (``timing``: s_per_step and bytes_per_cell) of ``cells`` cells, named ``label,
    dtype``: the records of the storage benchmarks (FDTD3D and FDTD2D)."""
    from ..records import Measurement

    cps = cells / timing["s_per_step"]
    name = f"{label}, {storage_dtype or 'float32'}"
    return [Measurement(case, size, f"{name}: all cells", cps / 1e9, "Gcells/s"),
            Measurement(case, size, f"{name}: fraction of copy bandwidth",
                        cps * timing["bytes_per_cell"] / bandwidth, "")]

