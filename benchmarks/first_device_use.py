"""Experiment: what JAX's first use of a GPU costs in a process (issue 24: the DGATD
set-up from nothing). Times the first and second 416 MB host-to-device copy, program
run, pinned copy back (``emjax.driver.host.to_host``) and a 2.8 GB one (the size of
the 20.2M-DoF set-up's node matrices).

    python benchmarks/first_device_use.py > $OUT/first.json
    XLA_PYTHON_CLIENT_PREALLOCATE=false python benchmarks/first_device_use.py >> $OUT/first.json
"""

from __future__ import annotations

import json
import os
import time

import jax
import numpy as np

from emjax.driver.host import to_host


def clock(out: dict, name: str, fn):
    t = time.perf_counter()
    r = jax.block_until_ready(fn())
    out[name] = round(time.perf_counter() - t, 3)
    return r


def main() -> None:
    jax.config.update("jax_enable_x64", True)
    out: dict = {"preallocate": os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE")}
    clock(out, "devices", jax.devices)
    x = np.random.default_rng(0).standard_normal(52_000_000)  # 416 MB
    d = clock(out, "h2d_first_416MB", lambda: jax.device_put(x))
    clock(out, "h2d_second", lambda: jax.device_put(x))
    f = jax.jit(lambda a: a * 2.0)
    y = clock(out, "first_program", lambda: f(d))
    clock(out, "second_program", lambda: f(d))
    clock(out, "to_host_first", lambda: to_host(y))
    clock(out, "to_host_second", lambda: to_host(f(y)))
    clock(out, "np_asarray", lambda: np.asarray(f(y)))
    big = jax.block_until_ready(jax.device_put(np.ones(350_000_000)))  # 2.8 GB
    clock(out, "to_host_2.8GB_first", lambda: to_host(big))
    clock(out, "to_host_2.8GB_second", lambda: to_host(big + 1.0))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
