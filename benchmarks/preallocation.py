"""Experiment (issue 24): XLA's GPU memory preallocation against the first device use
and the kernels' speed. Run it twice, with and without preallocation:

    python benchmarks/preallocation.py > $OUT/prealloc-default.json
    XLA_PYTHON_CLIENT_PREALLOCATE=false python benchmarks/preallocation.py > $OUT/prealloc-off.json

Prints one JSON object: the setting, the seconds of the first 416 MB copy to the device
(which pays the allocator's start), the copy bandwidth, `emjax bench seed001-cube` at
512^3 (``combined`` CPML) and `seed004-cylinder` at 20M DoFs (its kernels' times), as the
bench functions report them.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np


def main() -> None:
    import jax

    host = np.ones(104 << 20, np.float32)
    t0 = time.perf_counter()
    jax.device_put(host).block_until_ready()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    jax.device_put(host).block_until_ready()
    second = time.perf_counter() - t0

    from emjax.bench.dga import seed004_cylinder
    from emjax.bench.fdtd3d import seed001_cube

    sizes = [int(s) for s in sys.argv[1:]] or [512]
    cube = [r.__dict__ if hasattr(r, "__dict__") else r
            for r in seed001_cube(sizes=tuple(sizes), strategies=("combined",))]
    dga = seed004_cylinder(dofs=(20e6,))
    print(json.dumps({"XLA_PYTHON_CLIENT_PREALLOCATE":
                      os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE", "(default)"),
                      "first_copy_s": first, "second_copy_s": second,
                      "seed001-cube": cube, "seed004-cylinder": dga}, default=str))


if __name__ == "__main__":
    main()
