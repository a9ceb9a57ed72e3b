"""A short scaling run for a machine held briefly: strong scaling of one n^3 grid over
1..k devices and weak scaling at k devices, n^3 per device (``emjax bench scale``
without its memory check and largest-run search). Prints JSON records.

Usage: python benchmarks/scale_short.py [n]
"""

from __future__ import annotations

import json
import sys

import jax

from emjax.bench.parallel import time_sharded


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 768
    k = jax.device_count()
    recs = []
    t1 = time_sharded((n, n, n), 1, 50)["s_per_step"]
    for dev, shape in ((1, (n, n, n)), (k, (n, n, n)), (k, (k * n, n, n))):
        t = t1 if dev == 1 else time_sharded(shape, dev, 50)["s_per_step"]
        cells = shape[0] * shape[1] * shape[2]
        eff = t1 / (dev * t) if shape[0] == n else t1 / t
        recs.append({"devices": dev, "shape": shape, "gcells": cells / t / 1e9,
                     "efficiency": eff, "device": jax.devices()[0].device_kind})
        print(recs[-1], flush=True)
    print(json.dumps(recs))


if __name__ == "__main__":
    main()
