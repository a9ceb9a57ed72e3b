"""The DGATD Ampere node kernel in warp tiles (:mod:`emjax.dga.tiles`): launches and
program sizes, on a gmsh mesh and on the seed's structured ring mesh.

For each mesh: the Faraday and Ampere half-steps and the full step of the XLA kernels
and of the Pallas kernels (``emjax.bench.dga.time_kernels``: each inside one jitted
loop), the Pallas node kernel at several ``pallas.TUNING["nodes"]`` (node tiles per
program, warps) and ``pallas.NODE_SLACK`` (``inf``: one launch over all node tiles), each
against the same run's copy bandwidth and the unique bytes of
``arrays.half_step_bytes``. Run it on another tree's ``src`` (PYTHONPATH) for a
before/after on one card: configurations that tree lacks are skipped.

Usage: python benchmarks/dga_node_tiles.py MESH [MESH ...]
    MESH: a mesh file (.vtu, ...) or ``ring:DOFS`` (the structured cylinder)
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from emjax.bench.common import copy_bandwidth, on_gpu
from emjax.bench.dga import rings_for, time_kernels
from emjax.constants import c0, eps0, mu0
from emjax.dga import pallas, structured
from emjax.dga.arrays import half_step_bytes, kernel_arrays
from emjax.dga.complex import build
from emjax.dga.layout import make_layout
from emjax.dga.mass import assemble
from emjax.dga.mesh import read

CONFIGS = [((4, 4), 3.0), ((2, 2), 3.0), ((4, 4), 0.5)]
"""(TUNING["nodes"], NODE_SLACK) timed for the Pallas layout. First run (H100,
2026-11-28, 2.46M-DoF gmsh cylinder, Ampere ms): (4, 4) slack 0.5 0.0712, inf 0.0572;
(2, 2) 0.5 0.0713, inf 0.0562; (8, 8) 0.5 0.0697; (1, 1) inf 0.0578; (4, 4) 0.25 0.1081
(seven launches); the per-bucket kernels 0.131 (2026-11-25). Second (same card and
day): gmsh (4, 4) inf 0.0554, (2, 2) inf 0.0552, (4, 4) 0.5 0.0696; ring mesh at 20.2M
DoFs 0.2065, 0.2053, 0.2145, the per-bucket kernels 0.2325. Third: the sliced edge
kernel with 1, 4 or 8 codes per lane and loop iteration, their loads issued before their
gathers: Ampere 0.0572 / 0.0574 / 0.0580 ms (gmsh), 0.2069 / 0.2065 / 0.2067 (ring), no
gain, not kept."""


def parts(ops, lay, K, n: int = 20, repeats: int = 3) -> dict:
    """ms of the Pallas edge sums alone and of the node kernel alone, each in a loop."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    from emjax.bench.dga import _median_loop

    K = jax.device_put({k: v for k, v in K.items() if k != "gpos"})
    f = jnp.ones(lay.spec.f_shape, jnp.float32)
    u = jnp.ones(ops.nu, jnp.float32)
    G0 = pallas.sliced_edge_sums(f, K["esl"])

    def edges(c, K):
        G = pallas.sliced_edge_sums(c, K["esl"])
        return c.at[0, 0].set(G[1])

    def nodes(c, K):
        return pallas.node_products(c, G0, K["nodes"], lay.spec.buckets)

    out = {}
    for name, body, c in (("edges", edges, f), ("nodes", nodes, u)):
        run = jax.jit(lambda c, K, body=body: lax.fori_loop(0, n, lambda i, c: body(c, K), c))
        out[name] = _median_loop(run, (c, K), n, repeats) * 1e3
    return out


def mesh_of(arg: str):
    if arg.startswith("ring:"):
        rings, layers = rings_for(int(float(arg[5:])))
        return structured.cylinder(1.0, 0.5, rings=rings, layers=layers), 0.3 / rings / c0
    return read(arg).renumbered(), 1e-12  # timings do not depend on dt


def main(args: list[str]) -> None:
    bw = copy_bandwidth(1 << 30 if on_gpu() else 1 << 26)
    print(f"copy {bw / 1e12:.3f} TB/s; pallas at {pallas.__file__}", flush=True)
    tiled = hasattr(pallas, "NODE_SLACK")
    out = []
    for arg in args:
        t0 = time.perf_counter()
        mesh, dt = mesh_of(arg)
        cx = build(mesh)
        ops = assemble(cx, np.full(cx.num_tets, eps0), np.full(cx.num_tets, mu0))
        widths = [(b.width, b.count) for b in ops.buckets]
        print(f"== {arg}: {cx.num_dofs} DoFs, {cx.num_tets} tets, buckets {widths}, "
              f"set-up {time.perf_counter() - t0:.1f} s", flush=True)
        for kernels, configs in (("xla", [None]), ("pallas", CONFIGS if tiled else [None])):
            lay = make_layout(ops, kernels)
            nb = half_step_bytes(ops, lay)
            t0 = time.perf_counter()
            K = kernel_arrays(ops, lay, dt, np.float32)
            t_arrays = time.perf_counter() - t0
            for cfg in configs:
                label = kernels
                if cfg is not None:
                    pallas.TUNING["nodes"], pallas.NODE_SLACK = cfg
                    label = f"{kernels} nodes {cfg[0]} slack {cfg[1]}"
                r = time_kernels(ops, lay, dt, K=K, n=100, repeats=7)
                rec = {"mesh": arg, "dofs": int(cx.num_dofs), "label": label,
                       "faraday_ms": r["faraday_s"] * 1e3, "ampere_ms": r["ampere_s"] * 1e3,
                       "step_ms": r["step_s"] * 1e3,
                       "faraday_frac": nb["faraday"] / r["faraday_s"] / bw,
                       "ampere_frac": nb["ampere"] / r["ampere_s"] / bw,
                       "arrays_s": t_arrays, "copy_tbs": bw / 1e12}
                if cfg is not None:
                    rec.update({f"{k}_ms": v for k, v in parts(ops, lay, K).items()})
                out.append(rec)
                print(f"  {label}: Faraday {rec['faraday_ms']:.4f} ms "
                      f"({rec['faraday_frac']:.3f}), Ampere {rec['ampere_ms']:.4f} ms "
                      f"({rec['ampere_frac']:.3f}), step {rec['step_ms']:.4f} ms "
                      f"[arrays {t_arrays:.1f} s] edges {rec.get('edges_ms', 0):.4f} ms, "
                      f"nodes {rec.get('nodes_ms', 0):.4f} ms", flush=True)
    print("JSON " + json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
