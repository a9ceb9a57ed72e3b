"""Pallas (Triton) kernels of the DGATD leapfrog: one thread block per run of tets,
edges or nodes, each element's gathers done once.

The ``kernels="pallas"`` layout (:mod:`emjax.dga.layout`): the same results to rounding
(the node products sum their terms in another order) as the XLA kernels of
:mod:`emjax.dga.step`, which remain the reference, on the same f (nt, 4) and packed
matrices, with u in warp tiles (:func:`emjax.dga.layout.tile_position`) and the edge
sums from one sliced table (:func:`emjax.dga.edges.edge_slices`). Why they exist: on
an H100 XLA splits each half-step into several kernels. In Faraday it writes the six
edge circulations of every tet out and reads them back (each has several consumers,
and XLA does not fuse a gather into more than one); in Ampere it writes the gathered
signed edge sums x of the widest node bucket out and runs the edge sums as one kernel
per bucket of edges. Measured (20.2M DoFs, 2026-11-23): XLA Faraday 0.244 ms, 0.58 of
the copy bandwidth, Ampere 0.33 ms, 0.49 (``benchmarks/dga_forms.py``, ncu in
BENCHMARKS.md); these kernels 0.167 and 0.239 ms (2026-11-25). Here:

* :func:`faraday`: a program per ``block`` tets gathers the 12 half-edge values of each
  once, forms the 4 increments and updates f in place (aliased);
* :func:`sliced_edge_sums`: one launch, a program per slice of the sliced table looping
  over the slice's own width, two gathers of f per (edge, tet) code;
* :func:`node_products`: a program per ``TUNING["nodes"][0]`` node tiles of
  :mod:`emjax.dga.tiles` (a warp per tile of 32 nodes of one width, a thread per node)
  gathers each node's w signed edge sums once and updates its w entries of u in place
  (lossy meshes: ``u <- P u + Q x`` with P full), all widths in one launch.

A launch per node bucket (until 2026-11-28) filled the GPU on the seed's ring mesh (two
widths) but not on gmsh meshes (14 widths, 14 launches of 350 to 11,000 nodes): one
launch over warp tiles of every width, slots past a tile's width masked, took the
Ampere half-step from 0.131 to 0.055 ms on a 2.46M-DoF gmsh cylinder and from 0.2325
to 0.2065 ms on the ring mesh at 20.2M DoFs (H100, ``benchmarks/dga_node_tiles.py``).
Before that, all buckets in one launch with each program picking its bucket under
``pl.when`` ran Ampere in 1.05 ms instead of 0.28 at 20.2M DoFs (2026-11-23). A launch
per bucket of edges (edges bucketed by their tets, as the XLA kernels read them) and
node-major u measured slower and were removed (BENCHMARKS.md, 2026-11-25).

Off the GPU they run in Pallas' interpreter (slow; for tests on small meshes).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

from .edges import EDGE_SLICE
from .layout import U_TILE
from .step import _FACE_TERMS, _KM, _KP, _SYM4_ROW
from .tiles import full_index, groups, sym_index, tile_widths

TUNING = {"faraday": (256, 8), "edges": (256, 8), "nodes": (4, 4)}
"""(elements per program, warps per program) of each kernel: one element per thread.
H100, 20.2M DoFs (``benchmarks/dga_pallas_sweep.py``): Faraday 0.173 ms at (256, 8)
against 0.297 at (512, 4), whose four elements per thread hold too many registers for
enough warps in flight; evict-first hints on the streamed loads doubled Ampere. The node
kernel's entry is (node tiles per program, warps): a warp per tile of ``U_TILE`` nodes.
The sliced edge kernel's programs hold ``edges.EDGE_SLICE`` edges: only its warp count
is taken from here."""

NODE_SLACK = 3.0
""":func:`emjax.dga.tiles.groups`' slack: a node launch may issue this much more than its
tiles' matrix entries (narrow tiles in a wide launch) before the tiles are split. One
launch over all tiles was the fastest on every mesh measured (H100, 2026-11-28,
``benchmarks/dga_node_tiles.py``; Ampere ms, one launch / launches at slack 0.5): gmsh
cylinder, 2.46M DoFs, widths 7-22 (one launch issues 2.46 times the entries), 0.0554 /
0.0696; the seed's ring mesh at 20.2M DoFs (1.04 times), 0.2065 / 0.2145. The slack
bounds the unrolled width of a launch on a mesh with a few nodes of very high degree."""


def _interpret() -> bool:
    return jax.default_backend() != "gpu"


def _call(kernel, out_shape, grid: int, warps: int, aliases: dict[int, int], *args):
    return pl.pallas_call(kernel, out_shape=out_shape, grid=(grid,),
                          input_output_aliases=aliases, interpret=_interpret(),
                          compiler_params=plt.CompilerParams(num_warps=warps, num_stages=1),
                          )(*args)


def _rows(block: int, n: int):
    i = pl.program_id(0) * block + jnp.arange(block, dtype=jnp.int32)
    return i, i < n


def _faraday_kernel(u_ref, hs_ref, he_ref, ms_ref, f_ref, o_ref, *, nt: int, block: int):
    t, m = _rows(block, nt)
    e6 = []
    for j in range(6):
        a = plt.load(hs_ref.at[j, t], mask=m, other=0)
        b = plt.load(he_ref.at[j, t], mask=m, other=0)
        e6.append(u_ref[a] - u_ref[b])  # masked rows gather u[0]: in bounds, not stored
    c = [sum(s * e6[le] for le, s in terms) for terms in _FACE_TERMS]
    M = {}
    for k in range(4):
        inc = None
        for mm in range(4):
            r = _SYM4_ROW[k, mm]
            if r not in M:
                M[r] = plt.load(ms_ref.at[r, t], mask=m, other=0.0)
            inc = M[r] * c[mm] if inc is None else inc + M[r] * c[mm]
        fk = plt.load(f_ref.at[t, k], mask=m, other=0.0)
        plt.store(o_ref.at[t, k], fk - inc, mask=m)


def faraday(u, f, hs, he, Ms):
    """f (nt, 4) minus the dt-scaled ``s_t (M^mu_t)^{-1} C_t u`` of every tet, in place.
    ``hs``/``he`` (6, nt) int32 positions in u of each local edge's two half edges,
    ``Ms`` (10, nt) the packed symmetric matrices (rows in ``arrays.SYM4`` order)."""
    nt = f.shape[0]
    block, warps = TUNING["faraday"]
    kern = functools.partial(_faraday_kernel, nt=nt, block=block)
    return _call(kern, jax.ShapeDtypeStruct(f.shape, f.dtype), -(-nt // block), warps,
                 {4: 0}, u, hs, he, Ms, f)


def _pick8(i, table):
    """``table[i]`` for a static table of 8 ints and an int32 array i in 0..7."""
    out = jnp.full(i.shape, int(table[7]), jnp.int32)
    for q in range(7):
        out = jnp.where(i == q, int(table[q]), out)
    return out


def _code_value(f_ref, code):
    """The signed contribution ``+-(f[t, kp] - f[t, km])`` of one edge-table code ``16 t +
    8 [s_t < 0] + local edge`` (7, the padding, gives 0)."""
    t, le = code >> 4, code & 7
    v = f_ref[4 * t + _pick8(le, _KP)] - f_ref[4 * t + _pick8(le, _KM)]
    return jnp.where((code & 8) != 0, -v, v)


def _sliced_edge_kernel(f_ref, codes_ref, start_ref, width_ref, o_ref):
    s = pl.program_id(0)
    lane = jnp.arange(EDGE_SLICE, dtype=jnp.int32)
    base = start_ref[s] + lane

    def body(p, acc):
        return acc + _code_value(f_ref, codes_ref[base + p * EDGE_SLICE])

    acc = lax.fori_loop(0, width_ref[s], body, jnp.zeros((EDGE_SLICE,), o_ref.dtype))
    o_ref[1 + s * EDGE_SLICE + lane] = acc

    @pl.when(s == 0)
    def _():
        o_ref[0] = jnp.zeros((), o_ref.dtype)


def sliced_edge_sums(f, esl):
    """G (1 + ns EDGE_SLICE,): G[0] = 0, then the signed circulation of h around each
    edge's dual face, edges in table order, from the sliced table ``K["esl"]``
    (:func:`emjax.dga.edges.edge_tables`; codes ``16 t + 8 [s_t < 0] + local edge``, 7
    for padding): a program per slice loops over its own width; the last slice's unused
    lanes give zeros past the edges."""
    ns = esl["start"].shape[0]
    shape = jax.ShapeDtypeStruct((1 + ns * EDGE_SLICE,), f.dtype)
    return _call(_sliced_edge_kernel, shape, ns, TUNING["edges"][1], {}, f.reshape(-1),
                 esl["codes"], esl["start"], esl["width"])


def _node_kernel(tab_ref, G_ref, g_ref, M_ref, *rest, W: int, t0: int, ntiles: int,
                 tiles: int, lossy: bool):
    """A program per ``tiles`` node tiles (:mod:`emjax.dga.tiles`), a warp per tile, a
    thread per node; unrolled to width W, slots past the tile's width masked."""
    P_ref = rest[0] if lossy else None
    u_ref, o_ref = rest[-2], rest[-1]
    T = tiles * U_TILE
    k = jnp.arange(T, dtype=jnp.int32)
    tile, lane = t0 + pl.program_id(0) * tiles + k // U_TILE, k % U_TILE
    live = tile < t0 + ntiles
    tile = jnp.where(live, tile, t0)
    ubase, nb, w, gbase, mbase, pbase = (plt.load(tab_ref.at[r, tile]) for r in range(6))
    m = live & (lane < nb)
    slot = [m & (i < w) for i in range(W)]
    x, uu, pos = [], [], []
    for i in range(W):
        g = plt.load(g_ref.at[gbase + i * U_TILE + lane], mask=slot[i], other=0)
        gv = G_ref[jnp.abs(g)]  # masked slots gather G[0] = 0
        x.append(jnp.where(g < 0, -gv, gv))
        # a masked lane's position lies past u: Pallas' interpreter stores masked lanes
        # (their old values) unless out of bounds, and dead lanes would alias live ones
        pos.append(jnp.where(slot[i], ubase + i * nb + lane, u_ref.shape[0]))
        uu.append(plt.load(u_ref.at[pos[i]], mask=slot[i], other=0.0))
    acc = symmetric_product(M_ref, mbase, lane, slot, x)
    for i in range(W):
        if lossy:
            for j in range(W):
                p = plt.load(P_ref.at[pbase + full_index(i, j) * U_TILE + lane],
                             mask=slot[max(i, j)], other=0.0)
                acc[i] = acc[i] + p * uu[j]
        else:
            acc[i] = acc[i] + uu[i]
        plt.store(o_ref.at[pos[i]], acc[i], mask=slot[i])


def symmetric_product(M_ref, mbase, lane, slot: list, x: list) -> list:
    """Per thread, the symmetric matrix of its node (entries at ``mbase + sym_index(i, j)
    U_TILE + lane``, slots where ``slot`` is False masked) times x (W values)."""
    W = len(x)
    acc = [None] * W
    for j in range(W):
        for i in range(j + 1):
            a = plt.load(M_ref.at[mbase + sym_index(i, j) * U_TILE + lane], mask=slot[j],
                         other=0.0)
            acc[i] = a * x[j] if acc[i] is None else acc[i] + a * x[j]
            if i != j:
                acc[j] = a * x[i] if acc[j] is None else acc[j] + a * x[i]
    return acc


def node_products(u, G, N: dict, buckets):
    """u with the w entries of every node advanced by ``(M^eps_v)^{-1} x`` (``x = sign
    G[|gidx|]``), in place; lossy meshes by ``P u + Q x``. ``N``: ``K["nodes"]``, the
    tiles of :mod:`emjax.dga.tiles` (``tab``, ``gidx``, ``M``, ``P`` when lossy);
    ``buckets``: the layout's static (offset, w, nv) per bucket, u in the warp tiles of
    :func:`emjax.dga.layout.tile_position`. One launch per :func:`emjax.dga.tiles.groups`
    entry."""
    tiles, warps = TUNING["nodes"]
    lossy = "P" in N
    for t0, n, W in groups(tile_widths(buckets), NODE_SLACK):
        args = [N["tab"], G, N["gidx"], N["M"]] + ([N["P"]] if lossy else []) + [u]
        kern = functools.partial(_node_kernel, W=W, t0=t0, ntiles=n, tiles=tiles, lossy=lossy)
        u = _call(kern, jax.ShapeDtypeStruct(u.shape, u.dtype), -(-n // tiles), warps,
                  {len(args) - 1: 0}, *args)
    return u
