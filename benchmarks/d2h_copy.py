"""Device-to-host copies of result-sized arrays: ``np.asarray`` against a copy to pinned
host memory first (issue 24: the FDFD sweep moved its 1.7 GB of fields at 1.2 GB/s).

    python benchmarks/d2h_copy.py 96 > $OUT/d2h.json

Prints GB/s (bytes of the array over the copy's wall time, best of 5) for a complex128
(3, n, n, n) array: ``np.asarray``, ``jax.device_get``, ``device_put`` to a
``pinned_host`` memory kind then ``np.asarray``, and the pinned copy alone.
"""

from __future__ import annotations

import json
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np


def _best(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    jax.config.update("jax_enable_x64", True)
    x = (jnp.ones((3, n, n, n), jnp.complex128) * (1 + 2j)).block_until_ready()
    dev = x.devices().pop()
    gb = x.nbytes / 1e9
    out = {"device": str(dev), "bytes": x.nbytes}
    out["np.asarray"] = gb / _best(lambda: np.asarray(x + 0))
    out["jax.device_get"] = gb / _best(lambda: jax.device_get(x + 0))
    try:
        pinned = jax.sharding.SingleDeviceSharding(dev, memory_kind="pinned_host")
        out["pinned copy"] = gb / _best(
            lambda: jax.device_put(x, pinned).block_until_ready())
        out["pinned then np.asarray"] = gb / _best(
            lambda: np.asarray(jax.device_put(x, pinned)))
    except Exception as e:  # a backend without host memory kinds
        out["pinned"] = f"{type(e).__name__}: {e}"[:300]
    x_host = np.asarray(x)
    out["host memcpy"] = gb / _best(lambda: x_host.copy())
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}))


if __name__ == "__main__":
    main()
