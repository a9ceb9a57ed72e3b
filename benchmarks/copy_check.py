"""Copy bandwidth two ways, on the device: one call per pass (the method of the records
before 2026-11-23c) and passes inside one jitted loop (:func:`emjax.bench.common.copy_bandwidth`,
the way every kernel is timed). Prints B/s read plus written at 1 and 2 GiB.

Usage: python benchmarks/copy_check.py
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp

from emjax.bench.common import copy_bandwidth


def per_call(nbytes: int, repeats: int = 20) -> float:
    n = nbytes // 4
    x = jax.random.normal(jax.random.PRNGKey(0), (n,), jnp.float32)
    f = jax.jit(lambda a: a * 1.0000001, donate_argnums=0)
    for _ in range(3):
        x = f(x).block_until_ready()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        x = f(x).block_until_ready()
        times.append(time.perf_counter() - t)
    return 2 * n * 4 / statistics.median(times)


if __name__ == "__main__":
    for nb in (1 << 30, 2 << 30):
        a, b = per_call(nb), copy_bandwidth(nb)
        print(f"{nb >> 30} GiB on {jax.devices()[0].device_kind}: one call per pass "
              f"{a / 1e12:.3f} TB/s, passes in one jitted loop {b / 1e12:.3f} TB/s "
              f"(ratio {b / a:.3f})", flush=True)
