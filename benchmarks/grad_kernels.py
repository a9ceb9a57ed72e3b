"""Experiment (issue 22): the FDTD gradient's kernels one by one, from JAX's profiler.

Runs the ``grad-fdtd`` bench scenario's forward objective and its value and gradient
(256^3 by default, a few steps; ``which``: forward, grad or both), each once to compile
and once under ``jax.profiler.trace``, and prints one JSON document: per run, each
GPU kernel's name, launches and total time (from the trace's device plane), largest
first. (Nsight Compute crashed in JAX's process on the H200 machine, 2026-11-27.)

    python benchmarks/grad_kernels.py 256 3 both > kernels.json
"""

from __future__ import annotations

import collections
import glob
import json
import sys
import tempfile
import warnings

import jax
import jax.numpy as jnp

from emjax.fdtd import gradient as fg
from emjax.scenarios.design import FDTD_REGION, fdtd_design


def _kernel_times(trace_dir: str) -> list[dict]:
    """(line, name, launches, total us) of each event on the first GPU's plane of the
    trace (its lines: streams of kernels, XLA modules and ops)."""
    from jax.profiler import ProfileData

    path = glob.glob(f"{trace_dir}/**/*.xplane.pb", recursive=True)[0]
    data = ProfileData.from_file(path)
    total: dict = collections.defaultdict(lambda: [0, 0.0])
    for plane in data.planes:
        if not plane.name.startswith("/device:GPU:0"):
            continue
        for line in plane.lines:
            for ev in line.events:
                t = total[line.name, ev.name]
                t[0] += 1
                t[1] += ev.duration_ns / 1e3
    rows = [{"line": ln, "kernel": k, "launches": n, "us": round(us, 1)}
            for (ln, k), (n, us) in total.items()]
    return sorted(rows, key=lambda r: -r["us"])[:150]


def main() -> None:
    cells = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    which = sys.argv[3] if len(sys.argv) > 3 else "both"
    sim = fdtd_design(cells, 10 if cells >= 64 else 6, steps, "dipole", "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = fg.FDTDGradient(sim, checkpoints=0)
    g.region(*FDTD_REGION, (6, 6, 3), eps_r=(1.0, 3.0), sigma=(0.0, 0.2))

    def objective(rho, args):
        return 1e20 * fg.point_intensity(g, g.run(rho, args), "dft", (1, 1, 0))

    rho = jnp.full(g.design.shape, 0.5, jnp.float32)
    out: dict = {"device": str(jax.devices()[0]), "cells": cells, "steps": steps}
    for name, fn in (("forward", jax.jit(objective)),
                     ("grad", jax.jit(jax.value_and_grad(objective)))):
        if which not in ("both", name):
            continue
        jax.block_until_ready(fn(rho, g.args))
        with tempfile.TemporaryDirectory() as d:
            with jax.profiler.trace(d):
                jax.block_until_ready(fn(rho, g.args))
            out[name] = _kernel_times(d)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
