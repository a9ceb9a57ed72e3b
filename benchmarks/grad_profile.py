"""Experiment: where the FDTD gradient's time goes (issue 22: <= 4x the forward run).

Splits value-and-gradient into the forward pass that stores the residuals (jax.vjp)
and the reverse sweep (the vjp function), for the ``grad-fdtd`` bench scenario, with
variants (CPML strategy; the update's reverse mode by autodiff or written out,
``emjax.fdtd.transpose3d``: ``Layout.transpose``); writes the compiled HLO of each part
and a count of its kernels (fusions) to ``--hlo DIR``.

    python benchmarks/grad_profile.py 256 200 --hlo $OUT/hlo > $OUT/grad_profile.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp

from emjax.bench.gradients import _timed as timed  # median of 3 after a warm-up
from emjax.fdtd import gradient as fg
from emjax.scenarios.design import FDTD_REGION, fdtd_design


def kernels(text: str) -> dict:
    """Counts in compiled HLO text: fusions, custom calls, copies, while loops."""
    return {k: len(re.findall(p, text)) for k, p in (
        ("fusion", r"= \S+ fusion\("), ("custom-call", r"custom-call\("),
        ("copy", r"= \S+ copy\("), ("while", r"= \S+ while\("))}


def case(cells: int, steps: int, strategy: str, flux: bool, hlo: Path | None,
         transpose: bool = True) -> dict:
    sim = fdtd_design(cells, 10 if cells >= 64 else 6, steps, "dipole", "float32")
    if not flux:
        sim = sim.model_copy(update={"monitors": [m for m in sim.monitors
                                                  if m.type != "FluxMonitor"]})
        assert not any(m.type == "FluxMonitor" for m in sim.monitors)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = fg.FDTDGradient(sim, checkpoints=0, cpml_strategy=strategy)
    g.solver.setup = dataclasses.replace(g.solver.setup, layout=dataclasses.replace(
        g.solver.setup.layout, transpose=transpose))
    g.region(*FDTD_REGION, (6, 6, 3), eps_r=(1.0, 3.0), sigma=(0.0, 0.2))

    def objective(rho, args):
        return 1e20 * fg.point_intensity(g, g.run(rho, args), "dft", (1, 1, 0))

    rho = jnp.full(g.design.shape, 0.5, jnp.float32)
    fwd = jax.jit(objective)
    both = jax.jit(jax.value_and_grad(objective))
    vjp_fwd = jax.jit(lambda r, a: jax.vjp(lambda x: objective(x, a), r))
    _, pullback = vjp_fwd(rho, g.args)
    bwd = jax.jit(lambda p: p(jnp.ones((), jnp.float32)))
    rec = {"cells": cells, "steps": steps, "strategy": g.setup.layout.strategy, "flux": flux,
           "transpose": g.setup.layout.transpose,
           "forward_s": timed(fwd, rho, g.args), "value_and_grad_s": timed(both, rho, g.args),
           "vjp_forward_s": timed(vjp_fwd, rho, g.args), "vjp_backward_s": timed(bwd, pullback)}
    rec["ratio"] = rec["value_and_grad_s"] / rec["forward_s"]
    rec["backward_over_forward"] = rec["vjp_backward_s"] / rec["forward_s"]
    for name, fn, args in (("forward", fwd, (rho, g.args)), ("vjp_forward", vjp_fwd, (rho, g.args)),
                           ("backward", bwd, (pullback,))):
        text = fn.lower(*args).compile().as_text()
        rec[f"{name}_kernels"] = kernels(text)
        if hlo is not None:
            hlo.mkdir(parents=True, exist_ok=True)
            tag = f"{cells}-{strategy}-{'hand' if transpose else 'auto'}-{name}"
            (hlo / f"{tag}.txt").write_text(text)
    print(json.dumps(rec), file=sys.stderr, flush=True)
    return rec


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cells", type=int)
    ap.add_argument("steps", type=int)
    ap.add_argument("--hlo", type=Path)
    a = ap.parse_args()
    recs = [case(a.cells, a.steps, s, True, a.hlo, t)
            for s in ("combined", "per_face") for t in (True, False)]
    print(json.dumps({"device": str(jax.devices()[0]), "cases": recs}, indent=1))


if __name__ == "__main__":
    main()
