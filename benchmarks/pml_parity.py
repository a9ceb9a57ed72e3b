"""Why do 5- and 15-cell CPMLs run slower than 10 and 20 (seed001-pml-thickness, H100)?

Times the combined CPML step on vacuum cubes, separating the slab thickness from the
grid's dimensions: the same n with t = 4..8, and n = 330/332 with t = 5 and 10.
Prints one JSON list of {"n", "thickness", "gcells"}.

Usage: python benchmarks/pml_parity.py
"""

from __future__ import annotations

import json
import math

from emjax.bench.fdtd3d import cube_scenario, time_scenario


def main() -> None:
    out = []
    cases = [(256, t) for t in (4, 5, 6, 7, 8, 10)] + [(n, t) for n in (330, 332) for t in (5, 10)]
    for n, t in cases:
        steps = 50
        r = time_scenario(cube_scenario(n, thickness=t, steps=steps, monitors=False), steps)
        out.append({"n": n, "thickness": t, "gcells": math.prod((n, n, n)) / r["s_per_step"] / 1e9})
        print(out[-1], flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
