"""Experiment (issue 24, item 1): where the DGATD set-up's compile time goes.

For a mesh (a file, or ``ring:DOFS``) this times, each from a cold in-memory cache:
``mass._local_on_device`` as lowered and compiled, the same formulas with the tiny
contractions written as products and sums (no dot or LU custom calls), and the
stability stage's ``_power_iteration`` for the Pallas and the XLA layouts, float64 and
float32, lowering and XLA compilation apart, then one run of each compiled iteration.
Run it twice, once with ``XLA_FLAGS=--xla_gpu_autotune_level=0``, to see the share of
autotuning. Prints one JSON line per item.

    python benchmarks/dga_setup_compiles.py MESH [MESH ...]
"""

from __future__ import annotations

import json
import sys
import time
from types import SimpleNamespace

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
from emjax.dga.stability import _power_iteration  # noqa: E402


def complex_of(name: str):
    if name.startswith("ring:"):
        from emjax.bench.dga import rings_for

        r, _ = rings_for(int(float(name[5:])))
        return build(structured.cylinder(1.0, 0.5, edge_length=1.25 / r))
    return build(read(name).renumbered())


def inv4(M):
    """Inverse of a stack (..., 4, 4) by 2 x 2 minors (the adjugate), elementwise."""
    m = [[M[..., i, j] for j in range(4)] for i in range(4)]
    s0 = m[0][0] * m[1][1] - m[1][0] * m[0][1]
    s1 = m[0][0] * m[1][2] - m[1][0] * m[0][2]
    s2 = m[0][0] * m[1][3] - m[1][0] * m[0][3]
    s3 = m[0][1] * m[1][2] - m[1][1] * m[0][2]
    s4 = m[0][1] * m[1][3] - m[1][1] * m[0][3]
    s5 = m[0][2] * m[1][3] - m[1][2] * m[0][3]
    c5 = m[2][2] * m[3][3] - m[3][2] * m[2][3]
    c4 = m[2][1] * m[3][3] - m[3][1] * m[2][3]
    c3 = m[2][1] * m[3][2] - m[3][1] * m[2][2]
    c2 = m[2][0] * m[3][3] - m[3][0] * m[2][3]
    c1 = m[2][0] * m[3][2] - m[3][0] * m[2][2]
    c0 = m[2][0] * m[3][1] - m[3][0] * m[2][1]
    det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0
    a = [[m[1][1] * c5 - m[1][2] * c4 + m[1][3] * c3,
          -m[0][1] * c5 + m[0][2] * c4 - m[0][3] * c3,
          m[3][1] * s5 - m[3][2] * s4 + m[3][3] * s3,
          -m[2][1] * s5 + m[2][2] * s4 - m[2][3] * s3],
         [-m[1][0] * c5 + m[1][2] * c2 - m[1][3] * c1,
          m[0][0] * c5 - m[0][2] * c2 + m[0][3] * c1,
          -m[3][0] * s5 + m[3][2] * s2 - m[3][3] * s1,
          m[2][0] * s5 - m[2][2] * s2 + m[2][3] * s1],
         [m[1][0] * c4 - m[1][1] * c2 + m[1][3] * c0,
          -m[0][0] * c4 + m[0][1] * c2 - m[0][3] * c0,
          m[3][0] * s4 - m[3][1] * s2 + m[3][3] * s0,
          -m[2][0] * s4 + m[2][1] * s2 - m[2][3] * s0],
         [-m[1][0] * c3 + m[1][1] * c1 - m[1][2] * c0,
          m[0][0] * c3 - m[0][1] * c1 + m[0][2] * c0,
          -m[3][0] * s3 + m[3][1] * s1 - m[3][2] * s0,
          m[2][0] * s3 - m[2][1] * s1 + m[2][2] * s0]]
    return jnp.stack([jnp.stack(r, -1) for r in a], -2) / det[..., None, None]


def local_explicit(nodes, tets, volumes, orientation, eps_t, mu_t, ratio):
    """``mass._local_math`` with every contraction a product and a sum."""
    from emjax.dga.complex import C_REF, hexahedra

    cx = SimpleNamespace(nodes=nodes, tets=tets, volumes=volumes, orientation=orientation)
    a, at = hexahedra(cx, xp=jnp)
    q = volumes[:, None, None, None] / 4.0

    def gram(x):
        return (x[..., :, :, None] * x[..., :, None, :]).sum(-3)

    Me_r = eps_t[:, None, None, None] * q * mass.inv3(gram(a), jnp)
    Mmu_r = mu_t[:, None, None, None] * q * mass.inv3(gram(at), jnp)
    Mmu = mass.tet_mu_matrix(Mmu_r, jnp)
    rhs = orientation[:, None, None] * jnp.asarray(C_REF)[None]
    A = (inv4(Mmu)[..., :, :, None] * rhs[..., None, :, :]).sum(-2)
    return Me_r, None, Mmu, A


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
        r = timed_compile(local_explicit, *args)
        out = r["compiled"](*args)
        ref = mass._local_on_device(*args)
        err = max(float(jnp.max(jnp.abs(x - y)) / jnp.max(jnp.abs(y)))
                  for x, y in zip(out, ref, strict=True) if y is not None)
        print(json.dumps({"mesh": name, "item": "local explicit", "max_rel_diff": err,
                          **{k: v for k, v in r.items() if k != "compiled"}}), flush=True)
        ops = mass.assemble(cx, eps, mu)
        for kernels in ("pallas", "xla"):
            lay = make_layout(ops, kernels)
            base = kernel_base(ops, lay)
            v0 = lay.u_from_canonical(np.random.default_rng(0).standard_normal(ops.nu))
            for dtype in (np.float64, np.float32):
                K1 = jax.device_put(kernel_arrays(ops, lay, 1.0 if dtype == np.float64
                                                  else 1e-10, dtype, lossless=True,
                                                  base=base))
                E = jax.device_put(energy_arrays(ops, dtype))
                v = jnp.asarray(v0 * lay.free(ops), dtype)
                r = timed_compile(_power_iteration.__wrapped__, v, K1, E, lay.spec, 300,
                                  static_argnums=(3, 4))
                t0 = time.perf_counter()
                rho = float(r["compiled"](v, K1, E))
                run = time.perf_counter() - t0
                print(json.dumps({"mesh": name, "item": f"power_iteration {kernels}",
                                  "dtype": np.dtype(dtype).name, "rho": rho,
                                  "run_s": round(run, 3),
                                  **{k: v for k, v in r.items() if k != "compiled"}}),
                      flush=True)
                del K1, E


if __name__ == "__main__":
    main()
