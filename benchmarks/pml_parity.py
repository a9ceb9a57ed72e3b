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
from emjax.fdtd import cpml


def main() -> None:
    out = []
    cases = [(256, t, (1, 1, 1)) for t in (4, 5, 6, 7, 8, 10)]
    cases += [(n, t, (1, 1, 1)) for n in (330, 332) for t in (5, 10)]
    cases += [(256, t, al) for t in (5, 7) for al in ((2, 2, 2), (1, 1, 2), (1, 1, 4), (4, 4, 4))]
    for n, t, align in cases:
        steps = 50
        cpml.SLAB_ALIGN = align  # read when the slabs are built
        r = time_scenario(cube_scenario(n, thickness=t, steps=steps, monitors=False), steps)
        out.append({"n": n, "thickness": t, "align": align,
                    "gcells": math.prod((n, n, n)) / r["s_per_step"] / 1e9})
        print(out[-1], flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
