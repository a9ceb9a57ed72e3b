"""What every benchmark shares: the device's name, its copy bandwidth, CPU or GPU."""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp


def device_name() -> str:
    """``platform:kind`` of JAX's first device, as the records carry it."""
    d = jax.devices()[0]
    return f"{d.platform}:{getattr(d, 'device_kind', '')}"


def copy_bandwidth(nbytes: int = 2 << 30, repeats: int = 20) -> float:
    """Device-to-device copy bandwidth in B/s, counting bytes read plus written."""
    n = nbytes // 4
    x = jax.random.normal(jax.random.PRNGKey(0), (n,), jnp.float32)
    # Donated, so the output reuses the input buffer: a pure read-and-write stream.
    f = jax.jit(lambda a: a * 1.0000001, donate_argnums=0)
    for _ in range(3):  # clocks ramp up over the first calls
        x = f(x).block_until_ready()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        x = f(x).block_until_ready()
        times.append(time.perf_counter() - t)
    return 2 * n * 4 / statistics.median(times)


def on_gpu() -> bool:
    """True when JAX's default backend is an accelerator (sizes are cut on the CPU)."""
    return jax.default_backend() not in ("cpu",)
