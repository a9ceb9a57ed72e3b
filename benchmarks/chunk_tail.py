"""A chunk's steps as a while loop of ``active`` trips against ``lax.scan`` (issue 24).

The driver runs every chunk of a run through one compiled program whose step count is
data (``driver.monitors.scan_with_frames(active=...)``, a ``lax.while_loop``), so that the
last, shorter chunk compiles nothing. This times full chunks both ways, on whatever
backend runs it: FDTD3D (seed 001's cube, 10-cell CPML, probe, DFT), FDTD2D TMz (CPML)
at a large and a small size (where a step's fixed costs show):

    python benchmarks/chunk_tail.py 256 2048,256 100 > $OUT/chunk_tail.json

One JSON record per case and loop form: seconds per step (median of 3 chunks after a
compiling one), compile seconds. Results: BENCHMARKS.md.
"""

from __future__ import annotations

import json
import sys
import warnings

import jax

import emjax.fdtd.solver as fdtd_solver
from emjax.bench.common import time_chunks
from emjax.bench.fdtd2d import square_scenario
from emjax.bench.fdtd3d import cube_scenario
from emjax.driver import monitors
from emjax.fdtd.solver import FDTDSolver
from emjax.fdtd.solver2d import FDTD2DSolver

REAL = monitors.scan_with_frames


def _scan_only(body, state, xs, length, buffers, active=None, per_step=None):
    return REAL(body, state, xs, length, buffers, None)


def case(name: str, make, cells: int, steps: int) -> list[dict]:
    out = []
    for form in ("while", "scan"):
        fdtd_solver.scan_with_frames = REAL if form == "while" else _scan_only
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            solver = make()
        s_per_step, compile_s, _ = time_chunks(solver, steps)
        out.append({"case": name, "form": form, "us_per_step": round(s_per_step * 1e6, 2),
                    "gcells": round(cells / s_per_step / 1e9, 3),
                    "compile_s": round(compile_s, 2)})
        print(json.dumps(out[-1]), flush=True)
    fdtd_solver.scan_with_frames = REAL
    return out


def main() -> None:
    n3 = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [32]
    n2 = [int(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else [128]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    print(json.dumps({"device": str(jax.devices()[0])}), flush=True)
    for n in n3:
        case(f"fdtd3d cube {n}^3 CPML", lambda n=n: FDTDSolver(
            cube_scenario(n, steps=4 * steps), chunk=steps), n**3, steps)
    for n in n2:
        case(f"fdtd2d TMz {n}^2 CPML", lambda n=n: FDTD2DSolver(
            square_scenario(n, "cpml", steps=4 * steps), chunk=steps), n * n, steps)


if __name__ == "__main__":
    main()
