"""Experiment (issue 24, item 3): the DGATD Ampere half-step as one Pallas launch, the
edge sums fused into the node kernel, against ``pallas.sliced_edge_sums`` +
``pallas.node_products`` (two launches and G written and read back).

Each node thread forms the signed edge sum of each of its half edges itself, from the
sliced edge table (``K["esl"]``: the codes of the edge at G position 1 + p lie at
``start[p // 256] + r 256 + p % 256``, r below the slice's width), so every edge sum is
formed twice (once per end node) and G never leaves the chip. On the 2.46M-DoF gmsh
cylinder (H100, 2026-11-28) the two launches took about 0.025 ms (edge sums) and 0.045
ms (nodes) of a 0.055 ms Ampere half-step, against 0.033 ms at 0.6 of copy; whether the
doubled code reads and f gathers (from L2) cost less than G's round trip and a launch
is what this measures. Sources are left out (timing only). Checked against
``step.ampere`` on a small mesh (Pallas' interpreter on a CPU).

Usage: python benchmarks/dga_fused_ampere.py MESH [MESH ...]   (a mesh file or ring:DOFS)
"""

from __future__ import annotations

import functools
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

from emjax.bench.common import copy_bandwidth, on_gpu
from emjax.bench.dga import _median_loop
from emjax.constants import eps0, mu0
from emjax.dga import pallas, structured
from emjax.dga import step as kern
from emjax.dga.arrays import half_step_bytes, kernel_arrays
from emjax.dga.complex import build
from emjax.dga.edges import EDGE_SLICE
from emjax.dga.layout import U_TILE, make_layout
from emjax.dga.mass import assemble
from emjax.dga.tiles import groups, tile_widths


def _fused_kernel(tab_ref, f_ref, codes_ref, start_ref, width_ref, g_ref, M_ref, u_ref,
                  o_ref, *, W: int, E: int, t0: int, ntiles: int, tiles: int):
    k = jnp.arange(tiles * U_TILE, dtype=jnp.int32)
    tile, lane = t0 + pl.program_id(0) * tiles + k // U_TILE, k % U_TILE
    live = tile < t0 + ntiles
    tile = jnp.where(live, tile, t0)
    ubase, nb, w, gbase, mbase = (plt.load(tab_ref.at[r, tile]) for r in range(5))
    m = live & (lane < nb)
    slot = [m & (i < w) for i in range(W)]
    x, uu, pos = [], [], []
    for i in range(W):
        g = plt.load(g_ref.at[gbase + i * U_TILE + lane], mask=slot[i], other=0)
        on = slot[i] & (g != 0)
        p = jnp.where(on, jnp.abs(g) - 1, 0)
        s = p // EDGE_SLICE
        base = plt.load(start_ref.at[s], mask=on, other=0) + p % EDGE_SLICE
        width = plt.load(width_ref.at[s], mask=on, other=0)
        acc = jnp.zeros(k.shape, f_ref.dtype)
        for r in range(E):  # E: the table's widest slice (static)
            code = plt.load(codes_ref.at[base + r * EDGE_SLICE], mask=on & (r < width),
                            other=7)
            acc = acc + pallas._code_value(f_ref, code)
        x.append(jnp.where(g < 0, -acc, acc))
        pos.append(jnp.where(slot[i], ubase + i * nb + lane, u_ref.shape[0]))
        uu.append(plt.load(u_ref.at[pos[i]], mask=slot[i], other=0.0))
    acc = pallas.symmetric_product(M_ref, mbase, lane, slot, x)
    for i in range(W):
        plt.store(o_ref.at[pos[i]], acc[i] + uu[i], mask=slot[i])


def fused_ampere(u, f, K, spec, E: int):
    """Lossless Ampere half-step in one launch per node group (no sources)."""
    N, esl = K["nodes"], K["esl"]
    tiles, warps = pallas.TUNING["nodes"]
    for t0, n, W in groups(tile_widths(spec.buckets), pallas.NODE_SLACK):
        kernel = functools.partial(_fused_kernel, W=W, E=E, t0=t0, ntiles=n, tiles=tiles)
        u = pallas._call(kernel, jax.ShapeDtypeStruct(u.shape, u.dtype), -(-n // tiles),
                         warps, {7: 0}, N["tab"], f.reshape(-1), esl["codes"],
                         esl["start"], esl["width"], N["gidx"], N["M"], u)
    return u


def _loop(c, K, *, n: int, fn):
    """n Ampere half-steps, each feeding one entry of f (so that none is hoisted)."""
    def body(i, c):
        u, f = c
        u2 = fn(u, f, K)
        return u2, f.reshape(-1).at[0].set(u2[0]).reshape(f.shape)

    return lax.fori_loop(0, n, body, c)


def measure(arg: str, bw: float) -> None:
    """Check and time both forms on one mesh (a file or ``ring:DOFS``)."""
    from emjax.bench.dga import rings_for
    from emjax.dga.mesh import read

    if arg.startswith("ring:"):
        rings, layers = rings_for(int(float(arg[5:])))
        mesh = structured.cylinder(1.0, 0.5, rings=rings, layers=layers)
    else:
        mesh = read(arg).renumbered()
    cx = build(mesh)
    ops = assemble(cx, np.full(cx.num_tets, eps0), np.full(cx.num_tets, mu0))
    lay = make_layout(ops, "pallas")
    spec = lay.spec
    K = kernel_arrays(ops, lay, 1e-12, np.float32)
    E = int(K["esl"]["width"].max())
    K = jax.device_put({k: v for k, v in K.items() if k != "gpos"})
    rng = np.random.default_rng(0)
    u = jnp.asarray(rng.standard_normal(ops.nu).astype(np.float32))
    f = jnp.asarray(rng.standard_normal(spec.f_shape).astype(np.float32))
    ref = kern.ampere(u, f, K, spec)
    got = fused_ampere(u, f, K, spec, E)
    err = float(jnp.abs(got - ref).max() / jnp.abs(ref).max())
    nb = half_step_bytes(ops, lay)["ampere"]
    n = 100 if on_gpu() else 2
    forms = {"two launches": functools.partial(kern.ampere, spec=spec),
             "fused": functools.partial(fused_ampere, spec=spec, E=E)}
    times = {}
    for name, fn in forms.items():
        run = jax.jit(functools.partial(_loop, n=n, fn=fn))
        times[name] = _median_loop(run, ((u, f), K), n, 7 if on_gpu() else 1)
    print(f"{arg}: {cx.num_dofs} DoFs, widest edge slice {E}, fused against two launches "
          f"max |diff| / max {err:.1e}; " + ", ".join(
              f"{k} {t * 1e3:.4f} ms ({nb / t / bw:.3f} of copy)" for k, t in times.items()),
          flush=True)


def main(args: list[str]) -> None:
    bw = copy_bandwidth(1 << 30 if on_gpu() else 1 << 26)
    for arg in args:
        measure(arg, bw)


if __name__ == "__main__":
    main(sys.argv[1:])
