"""Where a CPU FDTD chunk's time goes (issue 24): per-fusion thread time from JAX's profiler.

    python benchmarks/cpu_fusions.py 3d 128 20 auto      # FDTD3D n^3, 10-cell CPML
    python benchmarks/cpu_fusions.py 2d 2048 50          # FDTD2D TMz n^2, CPML

Prints the rate of each of ``repeats`` chunks (a run's speed can change from one chunk
to the next on a CPU: BENCHMARKS.md) and the fusions' thread time per step, largest
first (both worker threads summed). Results: BENCHMARKS.md.
"""

from __future__ import annotations

import collections
import glob
import sys
import tempfile
import time
import warnings

import jax
from jax.profiler import ProfileData

from emjax.bench.fdtd2d import square_scenario
from emjax.bench.fdtd3d import cube_scenario
from emjax.fdtd.solver import FDTDSolver
from emjax.fdtd.solver2d import FDTD2DSolver


def main() -> None:
    dim, n, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    strategy = sys.argv[4] if len(sys.argv) > 4 else "auto"
    repeats = 6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dim == "3d":
            solver = FDTDSolver(cube_scenario(n, steps=steps * (repeats + 2),
                                              strategy=strategy), chunk=steps)
        else:
            solver = FDTD2DSolver(square_scenario(n, "cpml", steps=steps * (repeats + 2)),
                                  chunk=steps)
    cells = n**3 if dim == "3d" else n * n
    state, _, _ = solver.advance(solver.init_state(), 0, steps)
    jax.block_until_ready(state)
    rates = []
    for r in range(repeats):
        t = time.perf_counter()
        state, _, _ = solver.advance(state, (r + 1) * steps, steps)
        jax.block_until_ready(state)
        rates.append(round(cells * steps / (time.perf_counter() - t) / 1e6))
    print(f"{solver.setup.layout.strategy}: Mcells/s per chunk {rates}")
    with tempfile.TemporaryDirectory() as d:
        with jax.profiler.trace(d):
            state, _, _ = solver.advance(state, repeats * steps, steps)
            jax.block_until_ready(state)
        data = ProfileData.from_file(glob.glob(f"{d}/**/*.xplane.pb", recursive=True)[0])
    total: dict = collections.defaultdict(float)
    for plane in data.planes:
        for line in plane.lines:
            if "XLAEigen" not in line.name:  # the worker threads
                continue
            for ev in line.events:
                if "Thunk" not in ev.name:
                    total[ev.name] += ev.duration_ns / 1e3
    for name, us in sorted(total.items(), key=lambda kv: -kv[1])[:25]:
        print(f"{us / steps:9.1f} us/step  {name}")


if __name__ == "__main__":
    main()
