"""Memory estimate against measured peak device memory, one fresh process per case.

Usage: python benchmarks/memory_check.py            (all cases, a table)
       python benchmarks/memory_check.py CASE N     (one case, prints one JSON line)
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

CASES = {
    "vacuum-cpml+monitors": dict(),
    "sphere-cis": dict(sphere=True),
    "sphere-cas": dict(sphere=True, storage="arrays"),
    "bare-pec": dict(thickness=0, monitors=False),
}


def one(case: str, n: int) -> None:
    import jax

    from emjax.bench import cube_scenario
    from emjax.fdtd.solver import FDTDSolver

    sim = cube_scenario(n, steps=100, **CASES[case])
    est = sim.estimate()
    solver = FDTDSolver(sim, chunk=50)
    state = solver.init_state()
    state, _, _ = solver.advance(state, 0, 50)
    state, _, _ = solver.advance(state, 50, 50)
    jax.block_until_ready(state)
    stats = jax.devices()[0].memory_stats() or {}
    print(json.dumps({"case": case, "n": n, "estimate": est["total"],
                      "peak": stats.get("peak_bytes_in_use", -1)}))


def main() -> None:
    if len(sys.argv) == 3:
        one(sys.argv[1], int(sys.argv[2]))
        return
    for n in (256, 512):
        for case in CASES:
            r = subprocess.run([sys.executable, __file__, case, str(n)], capture_output=True,
                               text=True)
            line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-500:]
            try:
                d = json.loads(line)
                print(f"{case:22s} {n:5d}  estimate {d['estimate'] / 2**30:8.3f} GiB  "
                      f"peak {d['peak'] / 2**30:8.3f} GiB  ratio {d['estimate'] / d['peak']:.3f}",
                      flush=True)
            except (json.JSONDecodeError, KeyError):
                print(case, n, "failed:", line, flush=True)
    from emjax.bench import cube_scenario
    from emjax.errors import ResourceError
    from emjax.fdtd.solver import FDTDSolver

    t = time.perf_counter()
    try:
        FDTDSolver(cube_scenario(2048, steps=100))
        print("2048^3 was not refused")
    except ResourceError as e:
        print(f"2048^3 refused in {time.perf_counter() - t:.3f} s: {e}")


if __name__ == "__main__":
    main()
