"""Experiment: what a DGATD run's kernel choice costs end to end (issue 24): compile time
against stepping time of the XLA and Pallas kernels, each in a fresh process with both
caches off, so that ``kernels="auto"`` can choose by the run's length.

    OUT=folder python benchmarks/dga_kernel_choice.py TARGET[:STEPS] ... [-- xla pallas auto]

TARGET: a built-in scenario name (``cylinder-cavity``), a DoF count of the seed's ring
mesh (``2.7e6``) or a mesh file (``.vtu``, with the cylinder's source and probe);
STEPS overrides the scenario's length. Writes one JSON line per (target, kernels) to
``$OUT/dga-kernel-choice.jsonl``: set-up, compile and stepping seconds from the run's
metadata, steps, DoFs, the node buckets' widths, the kernels ``auto`` resolved to and
every program XLA compiled with its time (``jax_log_compiles``).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path


def scenario(target: str):
    from emjax.bench.dga import rings_for
    from emjax.scenarios import load_builtin

    name, _, steps = target.partition(":")
    if not name.replace(".", "").replace("e", "").isdigit() and not name.endswith(".vtu"):
        sim = load_builtin(name)
    else:
        base = load_builtin("cylinder-cavity")
        if name.endswith(".vtu"):
            import emjax as em

            sim = base.model_copy(update={"mesh": em.MeshFile(path=os.path.abspath(name))})
        else:
            r, _ = rings_for(int(float(name)))
            sim = base.model_copy(update={"mesh": base.mesh.model_copy(
                update={"edge_length": 1.25 / r})})
    return sim.model_copy(update={"steps": int(steps)}) if steps else sim


def child(target: str, kernels: str) -> None:
    import jax
    from dga_setup_cache import _Compiles  # this folder's: run as a script

    from emjax.dga.solver import DGASolver

    log = _Compiles()
    logging.getLogger("jax").addHandler(log)
    jax.config.update("jax_log_compiles", True)
    sim = scenario(target).model_copy(update={"kernels": kernels})
    t0 = time.perf_counter()
    solver = DGASolver(sim)
    meta = solver.run(progress=False).metadata
    widths = [int(b.width) for b in solver.setup.ops.buckets]
    print(json.dumps({"target": target, "asked": kernels, "kernels": meta.get("kernels"),
                      "total_s": time.perf_counter() - t0, "dofs": meta["dofs"],
                      "steps": meta["steps"], "widths": widths,
                      **{k: meta.get(k) for k in ("setup_time_s", "compile_time_s",
                                                  "stepping_time_s", "wall_time_s")},
                      "setup_stages": meta.get("setup_stages"), "compiles": log.lines}))


def main(argv: list[str]) -> None:
    if argv and argv[0] == "child":
        return child(argv[1], argv[2])
    targets, kinds = argv, ["xla", "pallas", "auto"]
    if "--" in argv:
        k = argv.index("--")
        targets, kinds = argv[:k], argv[k + 1:]
    out = Path(os.environ.get("OUT", ".")) / "dga-kernel-choice.jsonl"
    env = dict(os.environ, EMJAX_CACHE_DIR="off")
    for target in targets:
        for kernels in kinds:
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, __file__, "child", target, kernels], env=env,
                               capture_output=True, text=True)
            line = (p.stdout.strip().splitlines() or [""])[-1]
            if p.returncode or not line.startswith("{"):
                line = json.dumps({"target": target, "asked": kernels, "rc": p.returncode,
                                   "stderr": p.stderr[-2000:]})
            rec = json.loads(line) | {"process_s": time.perf_counter() - t0}
            print(json.dumps(rec), flush=True)
            with out.open("a") as fh:
                fh.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
