"""Where a built-in scenario's time goes before its first step (issue 24, item 1).

In a fresh process per scenario: importing emjax, the JAX backend's start
(``jax.devices()``), the lowering (the solver's construction), placing the constants and
the initial state, tracing and lowering the chunk, XLA's compilation, the first chunk:

    python benchmarks/setup_stages.py mri-coil car-rcs cylinder-cavity > $OUT/stages.jsonl

One JSON line per scenario (seconds). Results: BENCHMARKS.md.
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import json, sys, time, warnings
t0 = time.perf_counter(); out = {}
import emjax
from emjax.scenarios import load_builtin
out["import_s"] = time.perf_counter() - t0; t = time.perf_counter()
import jax
jax.devices(); out["backend_s"] = time.perf_counter() - t; t = time.perf_counter()
warnings.simplefilter("ignore")
sim = load_builtin(sys.argv[1]); out["load_s"] = time.perf_counter() - t
t = time.perf_counter()
kind = type(sim).__name__
if kind == "DGATD":
    from emjax.dga.solver import DGASolver as S
elif kind == "FDTD2D":
    from emjax.fdtd.solver2d import FDTD2DSolver as S
else:
    from emjax.fdtd.solver import FDTDSolver as S
solver = S(sim); out["lowering_s"] = time.perf_counter() - t; t = time.perf_counter()
state = solver.init_state()
jax.block_until_ready(state); out["init_state_s"] = time.perf_counter() - t
length = solver.chunk
if hasattr(solver, "chunk_args"):
    t = time.perf_counter()
    args = solver.chunk_args(state, 0, length)
    jax.block_until_ready(args[1]); out["constants_s"] = time.perf_counter() - t
    t = time.perf_counter()
    lowered = solver._compile(length, True).lower(*args)
    out["trace_lower_s"] = time.perf_counter() - t; t = time.perf_counter()
    lowered.compile(); out["xla_compile_s"] = time.perf_counter() - t
t = time.perf_counter()
res = solver.advance(state, 0, length, measure=True)
jax.block_until_ready(res); out["first_chunk_s"] = time.perf_counter() - t
out.update(scenario=sys.argv[1], solver=kind, chunk=length, device=str(jax.devices()[0]),
           total_s=time.perf_counter() - t0)
print(json.dumps(out))
"""


def main() -> None:
    for name in sys.argv[1:]:
        proc = subprocess.run([sys.executable, "-c", CHILD, name], capture_output=True,
                              text=True)
        line = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else json.dumps(
            {"scenario": name, "error": proc.stderr[-800:]})
        print(line, flush=True)


if __name__ == "__main__":
    main()
