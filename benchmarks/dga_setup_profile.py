"""Experiment: where the DGATD set-up's power-iteration and local-matrix stages spend
their time (issue 24), on the ``seed004-setup`` cylinder at a given DoF count.

    python benchmarks/dga_setup_profile.py 20.2e6 > out.json
"""

from __future__ import annotations

import cProfile
import io
import json
import pstats
import sys
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

from emjax.bench.dga import rings_for  # noqa: E402
from emjax.dga.arrays import energy_arrays, kernel_arrays  # noqa: E402
from emjax.dga.complex import build  # noqa: E402
from emjax.dga.generate import build_mesh  # noqa: E402
from emjax.dga.layout import make_layout  # noqa: E402
from emjax.dga.mass import assemble  # noqa: E402
from emjax.dga.solver import materials  # noqa: E402
from emjax.dga.stability import spectral_radius  # noqa: E402
from emjax.scenarios import load_builtin  # noqa: E402


def clock(rec: dict, name: str, fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    jax.block_until_ready(out) if isinstance(out, jax.Array | dict) else None
    rec[name] = time.perf_counter() - t0
    print(f"{name}: {rec[name]:.3f} s", file=sys.stderr, flush=True)
    return out


def main() -> None:
    target = int(float(sys.argv[1]))
    r, _ = rings_for(target)
    base = load_builtin("cylinder-cavity")
    sim = base.model_copy(update={"mesh": base.mesh.model_copy(update={"edge_length": 1.25 / r})})
    rec: dict = {"device": str(jax.devices()[0]), "target_dofs": target}
    mesh = clock(rec, "mesh generation", build_mesh, sim.mesh)
    mesh = clock(rec, "renumbering", mesh.renumbered)
    cx = clock(rec, "complex", build, mesh)
    eps, mu, sig = clock(rec, "materials", materials, sim, mesh)
    prof = cProfile.Profile()
    prof.enable()
    ops = clock(rec, "assemble", assemble, cx, eps, mu, sig)
    prof.disable()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(12)
    rec["assemble_profile"] = s.getvalue()[-3000:]
    lay = clock(rec, "layout", make_layout, ops, "xla")  # the power iteration's
    K1 = clock(rec, "kernel arrays f64", kernel_arrays, ops, lay, 1.0, np.float64, lossless=True)
    clock(rec, "device_put", jax.device_put, K1)
    clock(rec, "energy arrays", energy_arrays, ops, np.float64)
    for iters in (2, 2, 30, 300):
        clock(rec, f"spectral_radius {iters} it", spectral_radius, ops, lay, iters=iters)
    rec["dofs"] = int(cx.num_dofs)
    print(json.dumps(rec, indent=1))


if __name__ == "__main__":
    main()
