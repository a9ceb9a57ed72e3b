"""``emjax bench seed004-cylinder`` at chosen sizes and kernels, JSON records on stdout.

The bench case times 0.85M, 2.6M and 20M DoFs on a GPU (40k and 150k elsewhere); at
20M DoFs its NumPy set-up takes minutes, so under a 10-minute device limit run one size
at a time (this replaces the former EMJAX_DGA_BENCH_DOFS / _VARIANTS switches).

Usage: python benchmarks/dga_cylinder.py [DOFS ...] [--kernels xla,pallas]
       (default: the bench's sizes; kernels: xla, and pallas on a GPU)
"""

from __future__ import annotations

import json
import subprocess
import sys

from emjax.bench.dga import seed004_cylinder


def main(args: list[str]) -> None:
    kernels = None
    if "--kernels" in args:
        i = args.index("--kernels")
        kernels = tuple(args[i + 1].split(","))
        del args[i:i + 2]
    dofs = tuple(float(a) for a in args) or None
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    recs = seed004_cylinder(dofs=dofs, kernels=kernels)
    for r in recs:
        r["commit"] = commit
    json.dump(recs, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
