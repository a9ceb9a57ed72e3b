"""Experiment (issue 24, item 1): where the DGATD set-up's compile time goes.

For a mesh (a file, or ``ring:DOFS``) this times, each from a cold in-memory cache:
``mass._local_on_device`` as lowered and compiled (and its largest difference from
NumPy's formulas), and the
stability stage's ``_power_iteration`` for the Pallas and the XLA layouts, float64 and
float32 (scaled), lowering and XLA compilation apart, then one run of each compiled
iteration with its host Rayleigh quotient (the set-up takes XLA's, float64).
Run it twice, once with ``XLA_FLAGS=--xla_gpu_autotune_level=0``, to see the share of
autotuning. Prints one JSON line per item.

    python benchmarks/dga_setup_compiles.py MESH [MESH ...]
"""

from __future__ import annotations

import json
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from emjax.constants import eps0, mu0  # noqa: E402
from emjax.dga import mass, structured  # noqa: E402
from emjax.dga.arrays import energy_arrays, kernel_arrays, kernel_base  # noqa: E402
from emjax.dga.complex import build  # noqa: E402
from emjax.dga.layout import make_layout  # noqa: E402
from emjax.dga.mesh import read  # noqa: E402
from emjax.dga.stability import _power_iteration, _rayleigh  # noqa: E402


def complex_of(name: str):
    if name.startswith("ring:"):
        from emjax.bench.dga import rings_for

        r, _ = rings_for(int(float(name[5:])))
        return build(structured.cylinder(1.0, 0.5, edge_length=1.25 / r))
    return build(read(name).renumbered())


def timed_compile(fn, *args, **kw) -> dict:
    t0 = time.perf_counter()
    low = jax.jit(fn, **kw).lower(*args)
    t1 = time.perf_counter()
    comp = low.compile()
    t2 = time.perf_counter()
    return {"lower_s": round(t1 - t0, 3), "compile_s": round(t2 - t1, 3), "compiled": comp}


def main() -> None:
    for name in sys.argv[1:]:
        cx = complex_of(name)
        nt = cx.num_tets
        eps, mu = np.full(nt, eps0), np.full(nt, mu0)
        args = (cx.nodes, cx.tets, cx.volumes, cx.orientation, eps, mu, None)
        r = timed_compile(mass._local_on_device.__wrapped__, *args)
        print(json.dumps({"mesh": name, "item": "local_on_device", "dofs": int(cx.num_dofs),
                          **{k: v for k, v in r.items() if k != "compiled"}}), flush=True)
        out = mass._local_on_device(*args)
        ref = mass._local_math(cx, eps, mu, None, np)
        err = max(float(np.max(np.abs(np.asarray(x) - y)) / np.max(np.abs(y)))
                  for x, y in zip(out, ref, strict=True) if y is not None)
        print(json.dumps({"mesh": name, "item": "local vs NumPy", "max_rel_diff": err}),
              flush=True)
        ops = mass.assemble(cx, eps, mu)
        for kernels in ("pallas", "xla"):
            lay = make_layout(ops, kernels)
            base = kernel_base(ops, lay)
            v0 = lay.u_from_canonical(np.random.default_rng(0).standard_normal(ops.nu))
            for dtype in (np.float64, np.float32):
                K1 = jax.device_put(kernel_arrays(ops, lay, 1.0 if dtype == np.float64
                                                  else 1e-10, dtype, lossless=True,
                                                  base=base))
                v = jnp.asarray(v0 * lay.free(ops), dtype)
                r = timed_compile(_power_iteration.__wrapped__, v, K1, lay.spec, 300,
                                  static_argnums=(2, 3))
                t0 = time.perf_counter()
                vn, f = r["compiled"](v, K1)
                num, den = _rayleigh(jnp.asarray(vn, np.float64), jnp.asarray(f, np.float64),
                                     energy_arrays(ops, np.float64), lay.spec)
                rho = float(num) / float(den)
                run = time.perf_counter() - t0
                print(json.dumps({"mesh": name, "item": f"power_iteration {kernels}",
                                  "dtype": np.dtype(dtype).name, "rho": rho,
                                  "run_s": round(run, 3),
                                  **{k: v for k, v in r.items() if k != "compiled"}}),
                      flush=True)
                del K1


if __name__ == "__main__":
    main()
