"""Experiment (issue 23, item 2): the kernels of seed 001's cube step (10-cell CPML,
dipole, probe, DFT plane) with fields stored in float32 and in 16 bits, from JAX's
profiler: each GPU kernel's launches and time per step, largest first, as one JSON
document (where the CPML costs 16-bit storage more than float32).

    python benchmarks/storage16_kernels.py 512 20 none bfloat16 > kernels.json
"""

from __future__ import annotations

import json
import sys
import tempfile
import warnings

import jax
import numpy as np
from grad_kernels import _kernel_times  # this folder's: the trace's GPU kernel table

from emjax.bench.fdtd3d import cube_scenario
from emjax.fdtd.solver import FDTDSolver


def main() -> None:
    n, steps = int(sys.argv[1]), int(sys.argv[2])
    out = {}
    for name in sys.argv[3:] or ["none", "bfloat16"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            solver = FDTDSolver(cube_scenario(n, steps=steps,
                                              storage_dtype=None if name == "none" else name),
                                chunk=steps)
        state = solver.init_state()
        state, *_ = solver.advance(state, 0, steps)  # compile
        jax.block_until_ready(state)
        with tempfile.TemporaryDirectory() as tmp:
            with jax.profiler.trace(tmp):
                state, *_ = solver.advance(state, steps, steps)
                jax.block_until_ready(state)
            rows = _kernel_times(tmp)
        for r in rows:
            r["us_per_step"] = round(r["us"] / steps, 2)
        out[name] = [r for r in rows if r["us_per_step"] >= 1.0]
        print(name, "sum of kernels per step (us):",
              round(float(np.sum([r["us_per_step"] for r in out[name]
                                  if r["line"] != "XLA Modules" and "Ops" not in r["line"]])), 1),
              file=sys.stderr)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
