"""Experiment: the DGATD set-up of ``seed004-setup`` from nothing (profiled) and from
the set-up cache, in this process and in a fresh one, as a user's second run is
(issue 24: <= 10 s from nothing, <= 2 s from the cache at 20.2M DoFs).

    OUT=folder python benchmarks/dga_setup_cache.py 20.2e6

Writes ``$OUT/dga-setup-cache.json``: the stages of each set-up, the wall time of
``DGASolver(sim)`` (set-up, kernel and monitor arrays, device transfer), the bytes
handed to the device per group of arrays (``K`` kernels, ``E`` energy monitor, probes,
snapshots), the top of a cProfile of the set-up from nothing, by own time, and each
program XLA compiled during it with its compile time (``jax_log_compiles``).

``DGA_INVERSE_FROM=N`` sets :data:`emjax.dga.mass.DEVICE_INVERSE_FROM` (0: every node
bucket's inverse on the device, as before 279869b). A mesh file (``.vtu``) in place of
the DoF count times the set-up of that mesh with the cylinder's source and probe.
"""

from __future__ import annotations

import cProfile
import io
import json
import logging
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def scenario(target: str):
    from emjax.bench.dga import rings_for
    from emjax.scenarios import load_builtin

    base = load_builtin("cylinder-cavity")
    if target.endswith(".vtu"):
        import emjax as em

        return base.model_copy(update={"mesh": em.MeshFile(path=os.path.abspath(target))})
    r, _ = rings_for(int(float(target)))
    return base.model_copy(update={"mesh": base.mesh.model_copy(
        update={"edge_length": 1.25 / r})})


class _Compiles(logging.Handler):
    """Collects JAX's "Finished XLA compilation of NAME in T sec" lines."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if "compilation of" in msg or "Compiling" in msg:
            self.lines.append(msg[:300])


def timed(sim, folder: str, profile: bool = False) -> dict:
    import jax

    from emjax.dga.solver import DGASolver
    from emjax.driver.compile_cache import setup_cache

    prof = cProfile.Profile() if profile else None
    log = _Compiles()
    logging.getLogger("jax").addHandler(log)
    jax.config.update("jax_log_compiles", True)
    with setup_cache(folder):
        t0 = time.perf_counter()
        if prof:
            prof.enable()
        solver = DGASolver(sim)
        if prof:
            prof.disable()
        wall = time.perf_counter() - t0
    jax.config.update("jax_log_compiles", False)
    logging.getLogger("jax").removeHandler(log)
    s = solver.setup
    rec = {"cache": s.cache, "wall_s": wall, "dofs": int(s.cx.num_dofs), "rho": s.rho,
           "dt": s.dt, "kernels": s.layout.spec.kernels,
           "stages": {k: round(v, 4) for k, v in s.stages.items()},
           "device_bytes": {k: int(sum(x.nbytes for x in jax.tree_util.tree_leaves(v)))
                            for k, v in solver.consts.items()},
           "compiles": [ln for ln in log.lines if "Finished" in ln]}
    if prof:
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
        rec["profile"] = buf.getvalue()[-6000:]
    return rec


def _on_demand_pool() -> None:
    """What a solver's set-up does before JAX's backend starts (older trees: nothing)."""
    try:
        from emjax.driver.backend import on_demand_pool
    except ImportError:
        return
    on_demand_pool()


def main() -> None:
    _on_demand_pool()  # the backend starts below, before the set-up
    if sys.argv[1] == "hit":  # the fresh process
        t0 = time.perf_counter()
        import jax

        jax.devices()
        start = time.perf_counter() - t0
        rec = timed(scenario(sys.argv[2]), sys.argv[3])
        rec["jax_start_s"] = start
        print(json.dumps(rec))
        return
    import jax

    from emjax.dga import mass

    if "DGA_INVERSE_FROM" in os.environ:
        mass.DEVICE_INVERSE_FROM = int(os.environ["DGA_INVERSE_FROM"])
    target = sys.argv[1]
    out = {"device": str(jax.devices()[0]), "target": target, "runs": [],
           "device_inverse_from": mass.DEVICE_INVERSE_FROM}
    name = os.environ.get("NAME", "dga-setup-cache")
    path = os.path.join(os.environ.get("OUT", "."), f"{name}.json")
    sim = scenario(target)
    with tempfile.TemporaryDirectory() as tmp:
        for label, profile in (("from nothing (profiled)", True), ("from the cache", False)):
            rec = timed(sim, tmp, profile)
            rec["label"] = label
            out["runs"].append(rec)
            print(label, rec["wall_s"], rec["stages"], flush=True)
            Path(path).write_text(json.dumps(out, indent=1))
        for k in range(2):
            proc = subprocess.run([sys.executable, __file__, "hit", target, tmp],
                                  capture_output=True, text=True)
            rec = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 \
                else {"error": proc.stderr[-3000:]}
            rec["label"] = f"from the cache, fresh process {k + 1}"
            out["runs"].append(rec)
            print(rec["label"], rec.get("wall_s"), rec.get("stages"), flush=True)
            Path(path).write_text(json.dumps(out, indent=1))
        du = subprocess.run(["du", "-sh", tmp], capture_output=True, text=True).stdout
        out["cache_size"] = du.split()[0] if du else ""
    Path(path).write_text(json.dumps(out, indent=1))
    print(out["runs"][0].get("profile", ""))


if __name__ == "__main__":
    main()
