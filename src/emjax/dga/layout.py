"""Memory layouts of the DGATD state and operators: the selectable kernel variants.

The operators of :mod:`emjax.dga.mass` are built once in a canonical order ("rows" f of
shape (4, nt), "slot" u: per degree bucket a (w, nv) slot-major block). A *variant*
fixes how the kernels of :mod:`emjax.dga.step` see them:

* ``f_order``: ``"rows"`` f (4, nt), or ``"tets"`` f (nt, 4): the four half-dual-edge
  circulations of a tet side by side, so the threads updating one tet read and write
  one 16-byte word group and the gathers they share hit the same cache lines.
* ``u_order``: ``"slot"`` (w, nv) per bucket, or ``"node"`` (nv, w): the half edges of a
  dual volume side by side, so the threads of one node share its gathers in L1; or
  ``"tile"`` (Pallas only): nodes in tiles of ``U_TILE`` (one warp), slot-major within a
  tile (:func:`tile_position`), so that the Pallas node kernel's thread per node reads
  and writes each slot of a warp's nodes as one 128-byte line, while a node's half
  edges stay within w lines of each other for Faraday's gathers.
* matrices: ``"full"``, the 4x6 ``A_t = (M^mu_t)^{-1} s_t C_REF`` per tet and the dense
  w x w ``(M^eps_v)^{-1}`` per node; or ``"sym"``, the symmetric inverses packed: 10
  numbers per tet (the +-1 curl applied on the fly) and ``w (w + 1) / 2`` per node,
  stored by cyclic diagonal ``D_d[i] = M[i, (i + d) mod w]`` so that every product is
  elementwise with static rolls (no gather of matrix entries).
* edge sums (the Ampere curl, circulation of h around each edge's dual face): one
  padded table of width P = most tets per edge (``"rows-slot"``, the first version), or
  edges bucketed by their tet count (no padding; G is stored in bucket order and the
  node tables index it with the half edge's sign in the index's sign).
* ``compact`` (node order only): the Faraday gathers' 12 int32 positions per tet
  (48 B) become the 4 nodes' block starts (int32) and the 12 slots within them (uint8),
  28 B per tet; positions are ``start + slot`` computed in the kernel.
* ``direct``: the Ampere edge sums gather f itself instead of a per-tet array t6 of
  the six edge contributions (which costs a pass writing 24 B per tet): each table
  entry codes ``16 t + 8 [s_t < 0] + local edge`` and the kernel forms
  ``+-(f[t, kp] - f[t, km])`` (two gathers, no orientation array).

* ``shared`` (node order, packed matrices): each distinct packed matrix is stored once,
  in a table, and every tet / node holds the int32 start of its row (``Ms_tab`` +
  ``Ms_pos``, per bucket ``Dtab`` + ``Dpos``); the kernels gather the entries (one
  single-use gather per term, so XLA keeps them in the loop fusion). Matrices equal to
  2^-40 of the largest entry are merged (:func:`share_rows`); a node's matrix is stored
  with its half edges ordered by edge direction (:func:`_geometric_slots`; u keeps the
  canonical order, packed ranks per node give the slots' places in the table) so that
  translated copies of a cell match entry by entry. The matrices are most of the
  traffic (40 of 130 B per tet in Faraday, ~110 of 150 in Ampere): on a mesh of
  repeated cells (the seed's extruded cylinder: every layer of tets is the same, node
  matrices repeat in every interior layer) the tables are a few MB and stay in L2. It
  gains nothing on an unstructured mesh, where it costs the positions on top.

* ``lean``: two fixes to what XLA writes out when Faraday and Ampere are one jit (the
  solver's step), seen in the compiled HLO: the uint8 slots of ``compact`` are converted
  where each is used (one convert of the (12, nt) table is written out in int32, 48 B
  per tet), and the ``direct`` edge sums gather f by (tet, face) instead of from a
  flattened f (a second consumer of the Faraday result, which split its fusion).

* Removed after measuring slower (H100, 2026-11-23; BENCHMARKS.md): ``gterm`` (the
  node product gathering x once per term at the rolled slot, from a doubled index
  table, or ``groll`` a rolled one), ``inplace`` (each bucket's u written by a
  dynamic-update-slice): Ampere 0.50-1.21 ms against 0.36.
* ``dmajor`` (packed, node order): the cyclic diagonals stored (nd, nv, w) instead of
  (nv, nd, w), so that the threads applying one diagonal read it contiguously across
  nodes rather than in w-long pieces nd w apart.
* ``pallas`` (the layout of ``tets-node-sym-dam``): the half-steps as Pallas (Triton)
  kernels, :mod:`emjax.dga.pallas`, one thread per tet, edge or node, each element's
  gathers done once and nothing written out between them; GPU only in practice.
  Node arrays stay node-major: stored slot-major ((w, nv) rows, read contiguously by the
  node kernel's thread per node) they made the w = 14 node kernel 183 instead of 156 us
  (H100, 20.2M DoFs, 2026-11-25): some 120 concurrent row streams per block where
  node-major reads 10, and were removed.
  ``sliced_edges`` (suffix ``-pe``): the edge sums in one launch over a sliced table
  (sliced ELLPACK, :func:`edge_slices`): edges in windows of ``EDGE_WINDOW`` in edge
  order, sorted within a window by their number of tets, cut into slices of
  ``EDGE_SLICE`` edges (one program each) stored slot-major and padded only to the
  slice's own widest edge. f is then read once, in the mesh's order, where one launch per
  bucket of equal tets per edge swept all of f once per bucket (f is 16 B per tet, about
  the L2's size at 20M DoFs); and a mesh whose tets per edge vary widely (gmsh: 1 to 11,
  mean 4.7) pays little padding, where one table as wide as the widest edge would read
  2.3 times the codes.
* ``uadd``: the new u is ``u + concatenate(du per bucket)``: u itself is read only by
  an elementwise add of its own shape, so XLA may write the result over u (in a loop,
  where u is the carried state) instead of into a new array copied back into the loop's
  buffer afterwards (XLA:CPU copies u after the concatenate of the default, 8 B per
  half edge). Lossy buckets add ``P ub - ub + du``, which reads u through a slice again.

``"rows-slot"`` keeps the first version's kernels verbatim (reference for the others).

Default ``"tets-node-sym-dam"``: packed matrices stored diagonal-major, no t6 pass, and
u + concatenate(du) (H100, 20.2M DoFs, 2026-11-23): Ampere 0.335 ms against 0.369 for
``-da`` in the same run (0.360 earlier; 0.411 for ``-d``, whose copy of u after the
concatenate ``-da`` removed), Faraday 0.255 ms, step 0.575 ms. The gathered node
products (``-g``, ``-ga``, ``-gu``, ``-gra``) measured slower, 0.50 to 1.21 ms for
Ampere, and were removed.
f held as four (nt,) rows (Faraday one multi-output fusion) and a per-slot row product
in slot order measured slower in the full step (0.634, 0.596, 0.665 against 0.563 ms)
and were removed. ``"tets-node-sym-dam-p"``: the same arrays through the Pallas kernels,
step 0.427 against 0.560 ms in one run (Faraday 0.173, Ampere 0.276 ms). With u in warp
tiles and the edge sums in one launch (``"tets-tile-sym-dam-pe"``, 2026-11-25) Ampere
0.228-0.239 ms, step 0.38-0.39 ms; it is the fastest at 0.87M, 2.7M and 20.2M DoFs and
what ``variant="auto"`` (:func:`auto_variant`) runs on a GPU.

Variants give the same results to rounding (tests/test_dga.py compares them);
:func:`Layout.u_canonical` / :func:`Layout.f_canonical` map states to the canonical order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SetupError
from .complex import C_REF
from .mass import Operators, choose_buckets, lossy_factors

VARIANTS: dict[str, dict] = {
    "tets-node-sym": {"f_order": "tets", "u_order": "node", "sym": True},
    "tets-node-sym-c": {"f_order": "tets", "u_order": "node", "sym": True, "compact": True},
    "tets-node-sym-d": {"f_order": "tets", "u_order": "node", "sym": True, "direct": True},
    "tets-node-sym-da": {"f_order": "tets", "u_order": "node", "sym": True, "direct": True,
                         "uadd": True},
    "tets-node-sym-dam": {"f_order": "tets", "u_order": "node", "sym": True, "direct": True,
                          "uadd": True, "dmajor": True},
    "tets-node-sym-dam-p": {"f_order": "tets", "u_order": "node", "sym": True,
                            "direct": True, "uadd": True, "dmajor": True, "pallas": True},
    "tets-node-sym-dam-pe": {"f_order": "tets", "u_order": "node", "sym": True,
                             "direct": True, "uadd": True, "dmajor": True, "pallas": True,
                             "sliced_edges": True},
    "tets-tile-sym-dam-pe": {"f_order": "tets", "u_order": "tile", "sym": True,
                             "direct": True, "uadd": True, "dmajor": True, "pallas": True,
                             "sliced_edges": True},
    "tets-node-sym-cd": {"f_order": "tets", "u_order": "node", "sym": True, "compact": True,
                         "direct": True},
    "tets-node-sym-cdl": {"f_order": "tets", "u_order": "node", "sym": True, "compact": True,
                          "direct": True, "lean": True},
    "tets-node-sym-ds": {"f_order": "tets", "u_order": "node", "sym": True, "direct": True,
                         "shared": True, "lean": True},
    "tets-node-sym-cds": {"f_order": "tets", "u_order": "node", "sym": True, "compact": True,
                          "direct": True, "shared": True, "lean": True},
    "tets-node-full": {"f_order": "tets", "u_order": "node", "sym": False},
    "rows-node-sym": {"f_order": "rows", "u_order": "node", "sym": True},
    "rows-slot-sym": {"f_order": "rows", "u_order": "slot", "sym": True},
    "rows-slot": {"f_order": "rows", "u_order": "slot", "sym": False, "legacy": True},
}
"""Kernel variants by name; see the module docstring."""

DEFAULT_VARIANT = "tets-node-sym-dam"
"""The fastest XLA layout: the reference of the Pallas kernels, and ``auto`` on a CPU."""
GPU_VARIANT = "tets-tile-sym-dam-pe"
"""Pallas kernels, u in warp tiles, edge sums in one launch over the sliced table:
``auto`` on a GPU. H100, 2026-11-25, full step against the XLA default and the first
version (``rows-slot``): 0.0276 / 0.0442 / 0.0394 ms at 0.87M DoFs, 0.0691 / 0.0825 /
0.0938 at 2.7M, 0.386 / 0.566 / 1.678 at 20.2M (:mod:`emjax.dga.pallas`,
BENCHMARKS.md)."""


def auto_variant(gpu: bool = False) -> str:
    """The layout ``variant="auto"`` runs, on a GPU or not: the Pallas kernels on a GPU
    at every mesh size measured (0.87M to 20.2M DoFs; the first version, once faster
    below 3M DoFs where the state fits in L2, is now slower there too), the XLA default
    elsewhere, where Pallas runs only in its interpreter."""
    return GPU_VARIANT if gpu else DEFAULT_VARIANT


U_TILE = 32
"""Nodes per tile of the ``tile`` u order: a warp's 32 threads read one slot of their
nodes as one 128-byte line."""


def tile_position(v, i, w: int, nv: int, tile: int = U_TILE):
    """Position within a bucket (w half edges per node, nv nodes) of half edge i of node
    v in the ``tile`` u order: nodes in tiles of ``tile``, slot-major inside a tile, the
    last tile holding the remaining ``nv mod tile`` nodes. NumPy or JAX integer arrays."""
    full = nv // tile * tile
    nb = tile - (v >= full) * (tile - (nv - full))  # nodes in v's tile
    return (v // tile) * (tile * w) + i * nb + v % tile


EDGE_SLICE = 256
"""Edges per slice of the ``sliced_edges`` table, one Pallas program each."""
EDGE_WINDOW = 8192
"""Edges sorted by their tets per edge within windows of this many consecutive edges:
a slice's edges then have nearly equal counts, and its gathers of f stay among a
window's few thousand tets."""


def edge_slices(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sliced edge table of ``counts`` (tets per edge): (the edges in table order,
    (ne,); the codes per edge of each slice of ``EDGE_SLICE``, (ns,), its widest edge's
    count). Order: by window of ``EDGE_WINDOW`` edges, then by decreasing count."""
    ne = counts.size
    order = np.lexsort((-counts, np.arange(ne) // EDGE_WINDOW))
    ns = -(-ne // EDGE_SLICE)
    c = np.zeros(ns * EDGE_SLICE, np.int64)
    c[:ne] = counts[order]
    return order, c.reshape(ns, EDGE_SLICE).max(axis=1)


SYM4 = ((0, 0), (1, 1), (2, 2), (3, 3), (0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
"""Packed order of the 10 entries of a symmetric 4x4 matrix (rows of K["Ms"])."""


@dataclass(frozen=True)
class Spec:
    """Static (hashable) description of a variant's arrays, closed over by jitted code."""

    variant: str
    f_order: str
    u_order: str
    sym: bool
    legacy: bool
    nt: int
    buckets: tuple[tuple[int, int, int], ...]  # (offset, width, count) per node bucket
    lossy: tuple[bool, ...]  # per node bucket
    compact: bool = False
    direct: bool = False
    shared: bool = False
    lean: bool = False
    uadd: bool = False
    dmajor: bool = False
    pallas: bool = False
    sliced_edges: bool = False

    @property
    def f_shape(self) -> tuple[int, int]:
        """Shape of f."""
        return (self.nt, 4) if self.f_order == "tets" else (4, self.nt)

    def f_zeros(self, dtype):
        """A zero f in this variant's form."""
        import jax.numpy as jnp

        return jnp.zeros(self.f_shape, dtype)

    @property
    def nu(self) -> int:
        return sum(w * n for _, w, n in self.buckets)


@dataclass(frozen=True, eq=False)
class Layout:
    """Index maps of a variant (NumPy, int64).

    Attributes:
        spec: the static :class:`Spec`.
        u_perm: (nu,) variant position of each canonical (slot-order) u position.
        f_pos: (4, nt) flat position in the variant's f of f[k, t].
        he_pos: (ne, 2) variant position of each half edge.
        hs, he: (6, nt) variant positions of the side-0 / side-1 halves of each local edge.
    """

    spec: Spec
    u_perm: np.ndarray
    f_pos: np.ndarray
    he_pos: np.ndarray
    hs: np.ndarray
    he: np.ndarray

    def u_canonical(self, u):
        """u in the canonical slot order (NumPy or JAX)."""
        return u[self.u_perm]

    def u_from_canonical(self, uc):
        out = np.zeros_like(np.asarray(uc))
        out[self.u_perm] = np.asarray(uc)
        return out

    def f_canonical(self, f):
        """f as (4, nt) rows (NumPy or JAX)."""
        return f if self.spec.f_order == "rows" else f.T

    def f_from_canonical(self, fc):
        """f in the variant's form from (4, nt) rows (NumPy)."""
        fc = np.asarray(fc)
        return fc if self.spec.f_order == "rows" else np.ascontiguousarray(fc.T)

    def free(self, ops: Operators) -> np.ndarray:
        """(nu,) bool mask of the unknowns (not padding, not on a PEC edge)."""
        out = np.zeros(ops.nu, bool)
        out[self.u_perm[canonical_free(ops)]] = True
        return out


def canonical_free(ops: Operators) -> np.ndarray:
    free = np.zeros(ops.nu, bool)
    for b in ops.buckets:
        pos = b.offset + np.arange(b.width)[:, None] * b.count + np.arange(b.count)[None, :]
        free[pos[b.free]] = True
    return free


def make_layout(ops: Operators, variant: str = DEFAULT_VARIANT) -> Layout:
    if variant not in VARIANTS:
        raise SetupError(f"kernel variant '{variant}' is unknown; choose one of "
                         f"{sorted(VARIANTS)}")
    v = VARIANTS[variant]
    if v.get("shared") and not (v["sym"] and v["u_order"] == "node"):
        raise SetupError(f"kernel variant '{variant}': shared matrices need packed ones "
                         "matrices in node order")
    if v.get("dmajor") and (not v["sym"] or v.get("shared")
                            or v["u_order"] not in ("node", "tile")):
        raise SetupError(f"kernel variant '{variant}': diagonal-major matrices need packed "
                         "matrices stored per node, in node order")
    if v.get("pallas") and not (v["sym"] and v.get("dmajor") and v.get("direct")
                                and v["f_order"] == "tets"
                                and v["u_order"] in ("node", "tile")):
        raise SetupError(f"kernel variant '{variant}': the Pallas kernels take the layout "
                         "of 'tets-node-sym-dam'")
    if v.get("sliced_edges") and not v.get("pallas"):
        raise SetupError(f"kernel variant '{variant}': the sliced edge table is read by the "
                         "Pallas edge kernel only")
    if v["u_order"] == "tile" and not v.get("pallas"):
        raise SetupError(f"kernel variant '{variant}': the tile u order is read by the "
                         "Pallas node kernel only")
    nt = ops.cx.num_tets
    u_perm = np.empty(ops.nu, np.int64)
    for b in ops.buckets:
        w, nv = b.width, b.count
        s, p = np.meshgrid(np.arange(w), np.arange(nv), indexing="ij")
        canon = b.offset + s * nv + p
        pos = {"slot": s * nv + p, "node": p * w + s}.get(v["u_order"])
        u_perm[canon] = b.offset + (tile_position(p, s, w, nv) if pos is None else pos)
    t, k = np.meshgrid(np.arange(nt), np.arange(4), indexing="xy")  # (4, nt)
    f_pos = 4 * t + k if v["f_order"] == "tets" else k * nt + t
    spec = Spec(variant=variant, f_order=v["f_order"], u_order=v["u_order"], sym=v["sym"],
                legacy=v.get("legacy", False), nt=nt, compact=v.get("compact", False),
                direct=v.get("direct", False), shared=v.get("shared", False),
                lean=v.get("lean", False), uadd=v.get("uadd", False), dmajor=v.get("dmajor", False),
                pallas=v.get("pallas", False),
                sliced_edges=v.get("sliced_edges", False),
                buckets=tuple((b.offset, b.width, b.count) for b in ops.buckets),
                lossy=tuple(b.Msig is not None for b in ops.buckets))
    return Layout(spec=spec, u_perm=u_perm, f_pos=f_pos, he_pos=u_perm[ops.he_pos],
                  hs=u_perm[ops.hs], he=u_perm[ops.he])


def _geometric_slots(ops: Operators, b) -> np.ndarray:
    """(w, nv) new slot of each half edge of a bucket's nodes (shared variants).

    The canonical slots follow the global edge numbers, which differ between cells
    repeated by translation (the layers of an extruded mesh), so equal matrices would
    appear permuted. Ordering each node's half edges by the direction of the edge
    (padding last) makes them equal entry by entry, and :func:`share_rows` can merge
    them.
    """
    cx, ne = ops.cx, ops.cx.num_edges
    real = b.edge < ne
    e = np.minimum(b.edge, ne - 1)
    a, c = cx.edges[e, 0], cx.edges[e, 1]
    other = np.where(a == b.nodes[None, :], c, a)
    d = cx.nodes[other] - cx.nodes[b.nodes][None, :, :]  # (w, nv, 3)
    q = np.round(d / (np.abs(d).max() or 1.0) * 2.0**20).astype(np.int64)
    q[~real] = 0
    order = np.lexsort((q[..., 0], q[..., 1], q[..., 2], ~real), axis=0)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(b.width)[:, None], axis=0)
    return rank


def _shared_node_table(Minv: np.ndarray, rank: np.ndarray) -> dict:
    """Shared packed (M^eps_v)^{-1} of a bucket: Minv (w, w, nv) in the canonical slots,
    rank (w, nv) the geometric slot of each. Each matrix is reordered to geometric slots
    and its upper triangle packed row by row (``pos(a, b) = a (2 w - a + 1) / 2 + b - a``
    for a <= b); distinct rows go in "Dtab", the start of each node's row in "Dpos" and
    the geometric slots of each node's half edges in "rkw" (nwords, nv) int32, packed
    ``bits = ceil(log2 w)`` bits each, ``32 // bits`` per word (:func:`rank_packing`):
    per node words, not per half edge, because the kernel needs the rank of slot
    (i + d) mod w at thread i, and a per-node word broadcast along the slots fuses where
    a rolled per-slot array would be written out by XLA as a copy per roll."""
    w, _, nv = Minv.shape
    v = np.arange(nv)
    M = np.empty_like(Minv)
    M[rank[:, None, :], rank[None, :, :], v] = Minv
    a, b = np.triu_indices(w)
    tab, idx = share_rows(np.ascontiguousarray(M[a, b].T))
    bits, per = rank_packing(w)
    nw = -(-w // per)
    words = np.zeros((nw, nv), np.uint64)
    for j in range(w):
        words[j // per] |= rank[j].astype(np.uint64) << np.uint64((j % per) * bits)
    return {"Dtab": tab.ravel(), "Dpos": tab.shape[1] * idx,
            "rkw": words.astype(np.uint32).view(np.int32)}


def rank_packing(w: int) -> tuple[int, int]:
    """(bits per slot rank, ranks per int32 word) for nodes of width w."""
    bits = max(1, (w - 1).bit_length())
    return bits, 32 // bits


# ------------------------------------------------------------------ kernel arrays
def _pack_cyclic(M: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Symmetric (w, w, nv) -> (D (nd, w, nv), Dh (h, nv) or None): ``D[d, i] =
    M[i, (i + d) mod w]`` for d = 0 .. (w - 1) // 2, and for even w ``Dh[i] = M[i, i + w/2]``
    (i < w/2), exactly w (w + 1) / 2 numbers per node."""
    w = M.shape[0]
    nd = (w - 1) // 2 + 1
    i = np.arange(w)
    D = np.stack([M[i, (i + d) % w] for d in range(nd)])
    Dh = M[np.arange(w // 2), np.arange(w // 2) + w // 2] if w % 2 == 0 else None
    return D, Dh


def _node_major(x: np.ndarray) -> np.ndarray:
    """(..., nv) -> (nv, ...)."""
    return np.ascontiguousarray(np.moveaxis(x, -1, 0))


def kernel_arrays(ops: Operators, lay: Layout, dt: float, dtype, lossless: bool = False) -> dict:
    """Arrays of the variant's dense kernels, scaled by dt (int32 indices).

    ``lossless=True`` drops conductivity (the operator K of the stability analysis).
    """
    if lay.spec.legacy:
        return _legacy_arrays(ops, dt, dtype, lossless)
    spec, cx = lay.spec, ops.cx
    nt, ne = cx.num_tets, cx.num_edges
    node = spec.u_order in ("node", "tile")  # node arrays node-major
    K: dict = {"orient": cx.orientation.astype(dtype)}
    if spec.compact:
        K.update(_compact_indices(ops, lay))
    else:
        K.update(hs=lay.hs.astype(np.int32), he=lay.he.astype(np.int32))
    if spec.sym:
        Minv = np.linalg.inv(np.moveaxis(ops.Mmu, 2, 0))  # (nt, 4, 4), symmetric
        Minv = 0.5 * (Minv + np.swapaxes(Minv, 1, 2))
        s = cx.orientation[:, None] * dt
        Ms = np.stack([Minv[:, k, m] for k, m in SYM4]) * s.T  # (10, nt)
        if spec.shared:
            tab, idx = share_rows(Ms.T)
            # the row start 10 r stored (not r): a multiply shared by the 16 gathers would
            # be written out by XLA as an array of its own
            K["Ms_tab"], K["Ms_pos"] = tab.ravel().astype(dtype), 10 * idx
        else:
            K["Ms"] = Ms.astype(dtype)
    else:
        K["A"] = (ops.A * dt).astype(dtype)
    # edge sums: edges bucketed by tets per edge, t6 flat positions of (edge, tet) pairs
    t6pos = (6 * np.arange(nt)[:, None] + np.arange(6)[None, :] if spec.f_order == "tets"
             else np.arange(6)[None, :] * nt + np.arange(nt)[:, None])  # (nt, 6)
    if spec.direct:
        if 16 * nt >= 2**31:
            raise SetupError(f"{nt} tets are too many for the 'direct' edge-sum codes "
                             "(16 nt < 2^31); use a variant without 'direct'")
        neg = (cx.orientation < 0).astype(np.int64)
        t6pos = 16 * np.arange(nt)[:, None] + 8 * neg[:, None] + np.arange(6)[None, :]
        pad = 7  # local edge 7: f[0, 0] - f[0, 0] = 0
    else:
        pad = 6 * nt  # the zero appended to t6
    edge_of = cx.tet_edges.ravel()
    order = np.argsort(edge_of, kind="stable")
    counts = cx.tets_per_edge
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.arange(order.size) - first[edge_of[order]]
    gpos = np.empty(ne, np.int64)
    ebk, start = [], 1  # G[0] = 0: the padding of the node tables
    if spec.sliced_edges:  # G in slice order; code of rank r of the edge at G position
        eorder, widths = edge_slices(counts)  # 1 + p: starts[p // C] + r C + p mod C
        C = EDGE_SLICE
        gpos[eorder] = 1 + np.arange(ne)
        starts = np.concatenate([[0], np.cumsum(widths * C)[:-1]])
        codes = np.full(int(widths.sum()) * C, pad, np.int64)
        p = gpos[edge_of[order]] - 1
        codes[starts[p // C] + rank * C + p % C] = t6pos.ravel()[order]
        K["esl"] = {"codes": codes.astype(np.int32), "start": starts.astype(np.int32),
                    "width": widths.astype(np.int32)}
    width = None if spec.sliced_edges else choose_buckets(counts)
    for c in ([] if width is None else np.unique(width)):
        edges = np.nonzero(width == c)[0]
        gpos[edges] = start + np.arange(edges.size)
        start += edges.size
        tab = np.full((int(c), edges.size), pad, np.int64)
        loc = np.full(ne, -1, np.int64)
        loc[edges] = np.arange(edges.size)
        sel = loc[edge_of[order]] >= 0
        tab[rank[sel], loc[edge_of[order][sel]]] = t6pos.ravel()[order[sel]]
        ebk.append(tab.astype(np.int32))
    K["ebk"] = ebk
    nodes = []
    for b in ops.buckets:
        sign = b.sign.astype(np.int64)
        gidx = np.where(b.edge < ne, np.append(gpos, 0)[np.minimum(b.edge, ne)], 0) * sign
        if b.Msig is not None and not lossless:
            Pm, Q = lossy_factors(b, dt)
            Minv = Q * b.sign[None]  # unsigned: the sign travels in gidx
        else:
            Pm, Minv = None, b.Minv_s * b.sign[None] * dt
        Minv = 0.5 * (Minv + np.swapaxes(Minv, 0, 1))
        B = {"gidx": (gidx.T if node else gidx).astype(np.int32)}
        if spec.shared:
            if b.width > 255:
                raise SetupError(f"a node has {b.width} > 255 edges; use a variant without "
                                 "shared matrices")
            B.update(_shared_node_table(Minv, _geometric_slots(ops, b)))
            B["Dtab"] = B["Dtab"].astype(dtype)
        elif spec.sym:
            D, Dh = _pack_cyclic(Minv)
            if spec.dmajor:  # (nd, nv, w): diagonals contiguous
                B["D"] = np.ascontiguousarray(np.moveaxis(D, 2, 1)).astype(dtype)
            else:
                B["D"] = (_node_major(D) if node else D).astype(dtype)
            if Dh is not None:
                B["Dh"] = (_node_major(Dh) if node else Dh).astype(dtype)
        else:
            B["Q"] = (_node_major(Minv) if node else Minv).astype(dtype)  # [v, i, j] / [i, j, v]
        if Pm is not None:
            B["P"] = (_node_major(Pm) if node else Pm).astype(dtype)
        nodes.append(B)
    K["buckets"] = nodes
    K["gpos"] = gpos.astype(np.int32)  # for sources: G position of each edge
    return K


def share_rows(R: np.ndarray, rel: float = 2.0**-40) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of R (n, S): (table (m, S), int32 row of each of the n).

    Rows equal to ``rel`` times the largest |entry| are merged (cells repeated by
    translation, as the layers of an extruded mesh, give matrices equal up to rounding
    of their coordinates); each class is represented by one of its members, so the
    kernels see every matrix to within that tolerance (float64 rounding level).
    """
    scale = float(np.abs(R).max()) or 1.0
    key = np.round(R / (scale * rel)).astype(np.int64)
    # a 1-D sort of row hashes (np.unique(axis=0) takes ~10 s on 3M rows), checked
    mult = np.random.default_rng(0).integers(1, 2**62, key.shape[1]) | 1
    with np.errstate(over="ignore"):
        h = (key * mult).sum(axis=1)
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    if not np.array_equal(key[first[inv]], key):  # a hash collision: exact, slow path
        _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
    # rows in order of first use: neighbouring tets / nodes read neighbouring rows
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    first, inv = first[order], rank[inv]
    if first.size * R.shape[1] >= 2**31:  # the kernels index the flat table in int32
        raise SetupError(f"{first.size} distinct matrices of {R.shape[1]} numbers are too "
                         "many for int32 positions; use a variant without shared matrices")
    return R[first], inv.reshape(-1).astype(np.int32)


def _compact_indices(ops: Operators, lay: Layout) -> dict:
    """{"nb": (4, nt) int32 start of each local node's block, "sl": (12, nt) uint8 slots}:
    hs[j] = nb[a_j] + sl[j], he[j] = nb[b_j] + sl[6 + j] for local edge j = (a_j, b_j)."""
    from .mesh import LOCAL_EDGES

    if lay.spec.u_order != "node":
        raise SetupError("compact Faraday indices need u_order 'node'")
    cx = ops.cx
    start = np.empty(cx.num_nodes, np.int64)
    for b in ops.buckets:
        start[b.nodes] = b.offset + np.arange(b.count) * b.width
    if max(b.width for b in ops.buckets) > 255:
        raise SetupError("a node has more than 255 edges; use a variant without compact "
                         "indices (for example 'tets-node-sym')")
    nb = start[cx.tets].T  # (4, nt)
    sl = np.concatenate([lay.hs - nb[LOCAL_EDGES[:, 0]], lay.he - nb[LOCAL_EDGES[:, 1]]])
    assert sl.min() >= 0 and sl.max() < 256
    return {"nb": nb.astype(np.int32), "sl": sl.astype(np.uint8)}


def _legacy_arrays(ops: Operators, dt: float, dtype, lossless: bool) -> dict:
    buckets = []
    for b in ops.buckets:
        if b.Msig is not None and not lossless:
            Pm, Q = lossy_factors(b, dt)
            buckets.append({"Q": Q.astype(dtype), "P": Pm.astype(dtype),
                            "edge": b.edge.astype(np.int32)})
        else:
            buckets.append({"Q": (b.Minv_s * dt).astype(dtype), "edge": b.edge.astype(np.int32)})
    return {"A": (ops.A * dt).astype(dtype), "hs": ops.hs.astype(np.int32),
            "he": ops.he.astype(np.int32), "orient": ops.cx.orientation.astype(dtype),
            "eidx": ops.eidx.astype(np.int32), "buckets": buckets,
            "gpos": np.arange(ops.cx.num_edges, dtype=np.int32)}


def energy_arrays(ops: Operators, dtype) -> dict:
    """Canonical-order mass matrices: Mmu (4, 4, nt), Meps per bucket (w, w, nv)."""
    return {"Mmu": ops.Mmu.astype(dtype), "Meps": [b.Meps.astype(dtype) for b in ops.buckets]}


def sparse_arrays(ops: Operators, lay: Layout, dt: float, dtype) -> dict:
    """The global BCOO matrices of the "SpMV" formulation, in the variant's orders."""
    from jax.experimental import sparse as jsparse

    from .mass import sparse_matrices

    F, G, Pm, _ = sparse_matrices(ops, dt)
    fperm = lay.f_pos.ravel()  # canonical row k nt + t -> variant position

    def remap(M, rows, cols):
        M = M.tocoo()
        r = M.row if rows is None else rows[M.row]
        c = M.col if cols is None else cols[M.col]
        return jsparse.BCOO.from_scipy_sparse(
            type(M)((M.data.astype(dtype), (r, c)), shape=M.shape).tocsr())

    out = {"F": remap(F, fperm, lay.u_perm), "G": remap(G, lay.u_perm, fperm)}
    if Pm is not None:
        out["P"] = remap(Pm, lay.u_perm, lay.u_perm)
    return out


def source_columns(ops: Operators, lay: Layout, dt: float, edges: np.ndarray, dtype):
    """BCOO (nu, nsrc): the columns of the Ampere update for current sources on ``edges``."""
    from jax.experimental import sparse as jsparse

    from .mass import sparse_matrices

    _, _, _, Q = sparse_matrices(ops, dt)
    Q = Q[:, edges].tocoo()
    import scipy.sparse as sp

    Q = sp.coo_matrix((Q.data.astype(dtype), (lay.u_perm[Q.row], Q.col)), shape=Q.shape)
    return jsparse.BCOO.from_scipy_sparse(Q.tocsr())


def half_step_bytes(ops: Operators, lay: Layout, itemsize: int = 4,
                    K: dict | None = None) -> dict[str, int]:
    """Bytes per half-step of a variant, two counts (see :mod:`emjax.dga.step`):

    ``faraday`` / ``ampere``: unique bytes, every array the kernel touches read or
    written once at its size (index tables, matrices, fields; a gathered array counted
    once, as its gathers hit cache when the numbering is local);
    ``faraday_nominal`` / ``ampere_nominal``: the first version's count, each gathered
    value counted per access.

    ``shared`` variants count their matrix tables once (the distinct matrices) plus a
    4-byte row position per tet or node and the packed slot ranks; ``K`` (their
    :func:`kernel_arrays`) is built here when not given.
    """
    cx, spec = ops.cx, lay.spec
    nt, ne, nu = cx.num_tets, cx.num_edges, ops.nu
    isz = itemsize
    mat_t = (10 if spec.sym else 24) * isz * nt
    if spec.shared:
        K = K if K is not None else kernel_arrays(ops, lay, 1.0, np.float32)
        mat_t = (K["Ms_tab"].size + nt) * isz
    far = mat_t + (28 if spec.compact else 48) * nt + nu * isz + 8 * isz * nt
    far_nom = far - nu * isz + 12 * isz * nt
    full = sum(b.width * b.width * b.count for b in ops.buckets)
    packed = sum(b.width * (b.width + 1) // 2 * b.count for b in ops.buckets)
    lossy = sum(b.width * b.width * b.count for b in ops.buckets if b.Msig is not None)
    if spec.legacy:
        pairs = ops.eidx.size
        mat = full
    else:
        tpe = cx.tets_per_edge
        if spec.sliced_edges:  # codes with the slices' padding, slice starts and widths
            widths = edge_slices(tpe)[1]
            pairs = int(widths.sum()) * EDGE_SLICE + 2 * widths.size
        else:
            pairs = int(sum(int(c) * int((choose_buckets(tpe) == c).sum())
                            for c in np.unique(choose_buckets(tpe))))
        mat = packed if spec.sym else full
        if spec.shared:
            mat = sum(B["Dtab"].size + B["Dpos"].size + B["rkw"].size for B in K["buckets"])
    orient = 0 if spec.direct else isz * nt
    amp = 4 * isz * nt + orient + 4 * pairs + 2 * isz * ne + 4 * nu + (mat + lossy) * isz \
        + 2 * nu * isz  # node indices: one per half edge
    # nominal: gathered t6 values per (edge, tet) slot and G per node slot
    amp_nom = amp + pairs * isz + nu * isz
    return {"faraday": int(far), "ampere": int(amp), "faraday_nominal": int(far_nom),
            "ampere_nominal": int(amp_nom)}


__all__ = [
    "C_REF",
    "DEFAULT_VARIANT",
    "EDGE_SLICE",
    "EDGE_WINDOW",
    "GPU_VARIANT",
    "SYM4",
    "U_TILE",
    "VARIANTS",
    "Layout",
    "Spec",
    "auto_variant",
    "edge_slices",
    "energy_arrays",
    "half_step_bytes",
    "kernel_arrays",
    "make_layout",
    "rank_packing",
    "share_rows",
    "sparse_arrays",
    "tile_position",
]
