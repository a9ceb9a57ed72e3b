"""CPML slab terms per axis, folded into the fused update or added in place (issue 24/23).

``update3d.Layout.fold`` says per axis whether the slab terms are zero-padded into the
fused update or added over their slab after it; the lowering's "auto" picks all folded
on accelerators and z only on a CPU (``setup.cpml_fold``). This times every one of the
eight choices on seed 001's cube (10-cell CPML, dipole, probe, DFT plane), float32 and
16-bit storage, on whatever backend runs it:

    python benchmarks/cpml_fold.py 512,256 100 float32,bfloat16 > $OUT/cpml_fold.json

Prints one JSON record per case (all cells, Gcells/s, median of 3 chunks after one
compiling chunk) and the copy bandwidth. Results: BENCHMARKS.md.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
import warnings

import jax

from emjax.bench.common import copy_bandwidth, on_gpu, time_chunks
from emjax.bench.fdtd3d import cube_scenario
from emjax.fdtd.solver import FDTDSolver


def case(n: int, steps: int, fold: tuple[bool, bool, bool], storage: str | None) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = FDTDSolver(cube_scenario(n, steps=4 * steps, storage_dtype=storage),
                            chunk=steps)
    solver.setup = dataclasses.replace(solver.setup, layout=dataclasses.replace(
        solver.setup.layout, fold=fold, starts_as_data=on_gpu()))
    s_per_step, compile_s, _ = time_chunks(solver, steps)
    return {"n": n, "storage": storage or "float32", "fold": "".join("F" if f else "-"
                                                                    for f in fold),
            "gcells": round(n**3 / s_per_step / 1e9, 3), "compile_s": round(compile_s, 2)}


def main() -> None:
    sizes = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [128]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    storages = sys.argv[3].split(",") if len(sys.argv) > 3 else ["float32"]
    print(json.dumps({"device": str(jax.devices()[0]),
                      "copy_bandwidth_tb_s": round(copy_bandwidth() / 1e12, 3)}), flush=True)
    for n, storage in itertools.product(sizes, storages):
        for fold in itertools.product((True, False), repeat=3):
            rec = case(n, steps, fold, None if storage == "float32" else storage)
            print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
