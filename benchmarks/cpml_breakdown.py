"""Where does a CPML step spend its time? Variants at one size, plus the kernel count.

Usage: python benchmarks/cpml_breakdown.py OUT_DIR [n]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jax

from emjax.bench import copy_bandwidth, cube_scenario, time_scenario
from emjax.fdtd.solver import FDTDSolver


def main() -> None:
    out = Path(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    steps = 100
    bw = copy_bandwidth()
    print(f"copy bandwidth {bw / 1e9:.0f} GB/s", flush=True)
    variants = {
        "bare": dict(thickness=0, monitors=False),
        "pec+monitors": dict(thickness=0, monitors=True),
        "cpml combined": dict(monitors=False),
        "cpml combined+monitors": dict(monitors=True),
        "cpml per_face": dict(monitors=False, strategy="per_face"),
        "cpml combined, 5 cells": dict(monitors=False, thickness=5),
        "cpml combined, 20 cells": dict(monitors=False, thickness=20),
    }
    for name, kw in variants.items():
        sim = cube_scenario(n, steps=steps, **kw)
        r = time_scenario(sim, steps)
        cps = n**3 / r["s_per_step"]
        solver = FDTDSolver(sim, chunk=steps)
        state = solver.init_state()
        txt = solver._compile(steps).lower(
            *solver.chunk_args(state, 0, steps)).compile().as_text()
        kernels = len(re.findall(r"^\s*\S+ = \S+ fusion\(", txt, flags=re.M))
        (out / f"hlo_{name.replace(' ', '_').replace(',', '')}.txt").write_text(txt)
        print(f"{name:28s} {cps / 1e9:7.2f} Gcells/s  {r['s_per_step'] * 1e3:7.3f} ms/step  "
              f"{cps * 72 / bw:5.2f} of copy bw  fusions={kernels}", flush=True)
        del state, solver
        jax.clear_caches()


if __name__ == "__main__":
    main()
