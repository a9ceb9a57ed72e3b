"""Optimised HLO of seed 001's cube chunk (CPML, dipole, probe, DFT plane) with fields
stored in float32 and in 16 bits: the whole-grid fusions of the step and their outputs,
to see where 16-bit storage leaves float32 arrays in memory (issue #23, item 2).

Usage: python benchmarks/storage16_hlo.py N OUT_DIR [storage ...]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from emjax.bench.fdtd3d import cube_scenario
from emjax.fdtd.solver import FDTDSolver


def fusions(n: int, storage_dtype: str | None) -> tuple[str, list[str]]:
    """(optimised HLO text, the lines of fusions whose output is a whole grid array)."""
    solver = FDTDSolver(cube_scenario(n, steps=10, storage_dtype=storage_dtype), chunk=10)
    fn = solver._compile(10)
    txt = fn.lower(*solver.chunk_args(solver.init_state(), 0, 10)).compile().as_text()
    shape = ",".join(map(str, solver.setup.grid.shape))
    pat = re.compile(r"^\s*%(\S+) = (.*?) fusion\(")
    out = []
    for line in txt.splitlines():  # outputs (a tuple for multi-output fusions)
        m = pat.match(line)
        if m and f"[{shape}]" in m.group(2):
            kinds = re.findall(r"(\w+)\[" + shape + r"\]", m.group(2))
            out.append(f"{m.group(1)} -> {' '.join(kinds)}")
    return txt, out


def main() -> None:
    n, out = int(sys.argv[1]), Path(sys.argv[2])
    for name in sys.argv[3:] or ["none", "bfloat16", "float16"]:
        txt, lines = fusions(n, None if name == "none" else name)
        (out / f"hlo-{name}-{n}.txt").write_text(txt)
        print(f"{name}: {len(lines)} whole-grid fusions: " + ", ".join(lines), flush=True)


if __name__ == "__main__":
    main()
