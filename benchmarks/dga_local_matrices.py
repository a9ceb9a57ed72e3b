"""DGATD set-up with the local matrices formed on JAX's device against NumPy (issue 24).

Runs ``emjax bench seed004-setup`` (the cylinder at 20.2M DoFs: set-up from nothing,
then from the set-up cache) twice in one process, once per path of
``emjax.dga.mass._on_device``; the order is an argument, because the first run in a
process also pays JAX's start-up and compilations (both orders are in BENCHMARKS.md).

Usage: OUT=folder python benchmarks/dga_local_matrices.py [device-first|numpy-first]
Writes ``$OUT/seed004-setup.json``; prints each stage.
"""

from __future__ import annotations

import json
import os
import sys

import emjax.dga.mass as mass
from emjax.bench.dga import seed004_setup


def main(order: str = "device-first") -> None:
    runs = [("device local matrices", True), ("NumPy local matrices", False)]
    if order == "numpy-first":
        runs.reverse()
    out = {}
    for label, dev in runs:
        mass._on_device = (lambda d: (lambda: d))(dev)
        out[label] = seed004_setup(dofs=(20.2e6,))
        print(label, flush=True)
        for r in out[label]:
            print("  ", r.get("metric"), r.get("value"), flush=True)
        with open(os.path.join(os.environ.get("OUT", "."), "seed004-setup.json"), "w") as f:
            json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    main(*sys.argv[1:2])
