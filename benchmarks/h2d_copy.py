"""Host-to-device copies of set-up-sized NumPy arrays (issue 24: the 20.2M-DoF DGATD
set-up spent 1.8-2.8 s handing arrays to the device, ``_array_shard_arg`` and
``batched_device_put`` in its profile).

    python benchmarks/h2d_copy.py 64 512 2048 > $OUT/h2d.jsonl

For float64 arrays of each size in MB, prints GB/s (best of 3, each on a freshly
written host array, as a set-up hands over arrays it has just formed): ``device_put``,
a NumPy argument of a jitted function, and ``device_put`` to a ``pinned_host`` memory
kind then to the device, with the pinned copy alone.
"""

from __future__ import annotations

import json
import sys
import time

import jax
import numpy as np


def _best(make, fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        x = make()
        t = time.perf_counter()
        jax.block_until_ready(fn(x))
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    jax.config.update("jax_enable_x64", True)
    dev = jax.devices()[0]
    touch = jax.jit(lambda a: a[:1])
    for mb in (int(a) for a in sys.argv[1:] or ["64"]):
        n = mb * 2**20 // 8

        def make(n=n):
            return np.full(n, 1.5)

        gb = n * 8 / 1e9
        out = {"device": str(dev), "MB": mb}
        out["device_put"] = gb / _best(make, lambda x: jax.device_put(x, dev))
        out["jit argument"] = gb / _best(make, touch)
        try:
            pinned = jax.sharding.SingleDeviceSharding(dev, memory_kind="pinned_host")
            on_dev = jax.sharding.SingleDeviceSharding(dev, memory_kind="device")
            out["pinned copy"] = gb / _best(make, lambda x, p=pinned: jax.device_put(x, p))
            out["pinned then device"] = gb / _best(
                make, lambda x, p=pinned, d=on_dev: jax.device_put(jax.device_put(x, p), d))
        except Exception as e:  # a backend without host memory kinds
            out["pinned"] = f"{type(e).__name__}: {e}"[:300]
        out["host memcpy"] = gb / _best(make, lambda x: x.copy())
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v
                          for k, v in out.items()}), flush=True)


if __name__ == "__main__":
    main()
