"""The arrays the DGATD kernels read, packed in a layout's order (NumPy, at set-up).

From the canonical operators (:mod:`emjax.dga.mass`), a :class:`~emjax.dga.layout.Layout`
and its edge tables (:mod:`emjax.dga.edges`), :func:`kernel_arrays` builds, scaled by dt
(float arrays in the run's dtype, indices int32):

* Faraday: ``hs``, ``he`` (6, nt) the positions in u of each local edge's two half
  edges; ``Ms`` (10, nt) the symmetric ``s_t (M^mu_t)^{-1}`` packed in ``SYM4`` order
  (the +-1 curl ``C_REF`` is applied in the kernel);
* Ampere: the edge tables (``ebk`` or ``esl``) and, for the XLA kernels, per node
  bucket (``buckets``), ``gidx`` (nv, w)
  the signed position in G of each half edge's edge sum, ``D`` (nd, nv, w) the cyclic
  diagonals of the symmetric ``(M^eps_v)^{-1}`` (d = 0 .. (w - 1) // 2), ``Dh`` (nv,
  w / 2) for even w the half diagonal, and for lossy buckets ``P`` (nv, w, w) of the
  Crank-Nicolson update ``u <- P u + Q x`` (Q then in D); for the Pallas kernels the
  same matrices of all buckets in warp tiles (``nodes``, :func:`node_tiles`,
  :mod:`emjax.dga.tiles`);
* ``gpos`` (ne,) each edge's position in G (for current sources).

Also: the energy monitor's mass matrices, packed, in the canonical orders
(:func:`energy_arrays`: ``Mmu`` (10, nt) in ``SYM4`` order, ``Meps`` per bucket
(w (w + 1) / 2, nv) cyclic diagonals, the packings of ``Ms`` and ``D``/``Dh``), the
global sparse matrices of the seed's "SpMV" formulation in the layout's orders
(:func:`sparse_arrays`, :func:`source_columns`), and the bytes a half-step moves
(:func:`half_step_bytes`, for the benchmark's roofline fractions).
"""

from __future__ import annotations

import jax
import numpy as np

from . import tiles
from .edges import edge_tables, table_codes, xla_table_shapes
from .layout import Layout
from .local import SYM4, pack_cyclic, pack_sym4, split_cyclic
from .mass import Bucket, Operators, lossy_factors


def _pack_cyclic(M: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Symmetric (w, w, nv) -> (D (nd, w, nv), Dh (h, nv) or None): ``D[d, i] =
    M[i, (i + d) mod w]`` for d = 0 .. (w - 1) // 2, and for even w ``Dh[i] = M[i, i + w/2]``
    (i < w/2), exactly w (w + 1) / 2 numbers per node (:func:`emjax.dga.local.pack_cyclic`
    split)."""
    return split_cyclic(pack_cyclic(M), M.shape[0])


def _node_major(x: np.ndarray, dtype) -> np.ndarray:
    """(..., nv) -> (nv, ...) in ``dtype`` (one copy)."""
    return np.ascontiguousarray(np.moveaxis(x, -1, 0), dtype=dtype)


def _gidx(b: Bucket, gpos: np.ndarray, ne: int) -> np.ndarray:
    """(w, nv) the signed position in G of each slot's edge sum (0: padding)."""
    return np.where(b.edge < ne, np.append(gpos, 0)[np.minimum(b.edge, ne)], 0) \
        * b.sign.astype(np.int64)


def _node_matrices(b: Bucket, gpos: np.ndarray, ne: int, dt: float, lossless: bool):
    """A bucket's ``gidx`` (w, nv), its cyclic ``D`` (nd, w, nv) and ``Dh`` (w / 2, nv) or
    None (the symmetric inverse times dt, or lossy Q), and the lossy ``P`` (w, w, nv) or
    None."""
    gidx = _gidx(b, gpos, ne)
    if b.Msig is not None and not lossless:
        Pm, Q = lossy_factors(b, dt)
        Minv = Q * b.sign[None]  # unsigned: the sign travels in gidx
        D, Dh = _pack_cyclic(0.5 * (Minv + np.swapaxes(Minv, 0, 1)))
        return gidx, D, Dh, Pm
    D, Dh = split_cyclic(b.Minv_p, b.width)
    return gidx, D * dt, None if Dh is None else Dh * dt, None


def node_arrays(b: Bucket, gpos: np.ndarray, ne: int, dt: float, dtype,
                lossless: bool = False) -> dict:
    """One node bucket's ``gidx``, ``D``, ``Dh`` and ``P`` for the XLA kernels (see the
    module docstring)."""
    gidx, D, Dh, Pm = _node_matrices(b, gpos, ne, dt, lossless)
    B = {"gidx": gidx.T.astype(np.int32),
         "D": np.ascontiguousarray(np.moveaxis(D, 2, 1), dtype=dtype)}  # (nd, nv, w)
    if Dh is not None:
        B["Dh"] = _node_major(Dh, dtype)
    if Pm is not None:
        B["P"] = _node_major(Pm, dtype)
    return B


def operator_arrays(ops: Operators, lay: Layout, base: dict | None = None,
                    shapes: bool = False) -> tuple:
    """(K1, E) of the stability analysis (the operator K at dt = 1, lossless, float64):
    K1 :func:`kernel_arrays`' of the XLA layout ``lay`` but for each node bucket its
    packed inverse ``Minv_p`` (w (w + 1) / 2, nv) in place of ``D``/``Dh``
    (:func:`xla_node_matrices` forms them in the program), and E the packed mass
    matrices of :func:`energy_arrays` (its Rayleigh quotient). The matrices are the
    operators' own: device arrays until :func:`emjax.dga.mass.on_host` where the set-up
    formed them there; the index arrays are NumPy. ``shapes``: the same
    tree of ``jax.ShapeDtypeStruct`` without forming anything, nor waiting for the edge
    tables (to compile ahead)."""
    i32, ne = np.int32, ops.cx.num_edges

    def arr(shape, dtype, make):
        return jax.ShapeDtypeStruct(shape, dtype) if shapes else make()

    if shapes:  # the edge tables' shapes without the tables (their thread may run on)
        gpos = np.empty(ne, np.int64)
        base = {"gpos": gpos, "tables": {"ebk": [jax.ShapeDtypeStruct(sh, i32) for sh in
                                                 xla_table_shapes(ops.cx.tets_per_edge)]}}
    base = base or kernel_base(ops, lay)
    gpos = base["gpos"]

    def host_f64(x):  # the device's arrays as they are; the host's as float64
        return arr(x.shape, np.float64,
                   lambda: x if isinstance(x, jax.Array) else np.asarray(x, np.float64))

    K = {"hs": arr(lay.hs.shape, i32, lambda: lay.hs.astype(i32)),
         "he": arr(lay.he.shape, i32, lambda: lay.he.astype(i32)),
         "Ms": host_f64(ops.Ms1), "gpos": arr(gpos.shape, i32, lambda: gpos.astype(i32)),
         "buckets": [{"gidx": arr((b.count, b.width), i32,
                                  lambda b=b: _gidx(b, gpos, ne).T.astype(i32)),
                      "Minv_p": host_f64(b.Minv_p)} for b in ops.buckets]}
    K.update(jax.tree.map(lambda t: arr(t.shape, t.dtype, lambda: t), base["tables"]))
    return K, {"Mmu": host_f64(ops.Mmu10), "Meps": [host_f64(b.Meps_p) for b in ops.buckets]}


def xla_node_matrices(K1: dict, spec) -> dict:
    """:func:`operator_arrays`' K1 with each bucket's packed ``Minv_p`` made the XLA
    kernels' ``D`` (nd, nv, w) and ``Dh`` (nv, w / 2) (JAX, in the program that reads
    them); :func:`kernel_arrays`' own as they are."""
    if not any("Minv_p" in B for B in K1.get("buckets", ())):
        return K1
    buckets = []
    for B, (_, w, _) in zip(K1["buckets"], spec.buckets, strict=True):
        D, Dh = split_cyclic(B["Minv_p"], w)
        out = {"gidx": B["gidx"], "D": D.transpose(0, 2, 1)}
        if Dh is not None:
            out["Dh"] = Dh.T
        buckets.append(out)
    return {**K1, "buckets": buckets}


def node_tiles(ops: Operators, lay: Layout, dt: float, dtype, lossless: bool,
               base: dict) -> dict:
    """The Pallas node kernel's ``tab``, ``gidx``, ``M`` and ``P`` (lossy), every bucket
    in warp tiles (:mod:`emjax.dga.tiles`); ``base``: :func:`kernel_base`. A lossless
    bucket's packed inverse is scaled by dt row by row as it is tiled."""
    gpos, ne = base["gpos"], ops.cx.num_edges
    parts = []
    for b in ops.buckets:
        if b.Msig is not None and not lossless:
            gidx, D, Dh, Pm = _node_matrices(b, gpos, ne, dt, lossless)
            part = {"gidx": gidx, "M": tiles.symmetric_rows(D, Dh), "P": tiles.full_rows(Pm)}
        else:
            part = {"gidx": _gidx(b, gpos, ne), "scale": dt,
                    "M": tiles.symmetric_rows(*split_cyclic(b.Minv_p, b.width))}
        parts.append(part)
    lossy = any("P" in p for p in parts)
    out = tiles.pack(parts, lossy, dtype)
    out["tab"] = tiles.tile_table(lay.spec.buckets, lossy)
    return out


def kernel_base(ops: Operators, lay: Layout) -> dict:
    """What :func:`kernel_arrays` forms the same way for every dt and dtype beyond the
    operators' own matrices: the layout's edge tables and ``gpos``. The set-up forms it
    once for the power iteration's arrays and the run's."""
    gpos, tables = edge_tables(ops, lay.spec)
    return {"gpos": gpos, "tables": tables}


def kernel_arrays(ops: Operators, lay: Layout, dt: float, dtype, lossless: bool = False,
                  base: dict | None = None) -> dict:
    """Arrays of the layout's dense kernels, scaled by dt (module docstring).

    ``lossless=True`` drops conductivity (the operator K of the stability analysis);
    ``base``: :func:`kernel_base` of these operators and layout (formed here when None).
    """
    base = base or kernel_base(ops, lay)
    K: dict = {"hs": lay.hs.astype(np.int32), "he": lay.he.astype(np.int32),
               "Ms": (ops.Ms1 * dt).astype(dtype)}
    K.update(base["tables"])
    gpos, ne = base["gpos"], ops.cx.num_edges
    if lay.spec.pallas:
        K["nodes"] = node_tiles(ops, lay, dt, dtype, lossless, base)
    else:
        K["buckets"] = [node_arrays(b, gpos, ne, dt, dtype, lossless) for b in ops.buckets]
    K["gpos"] = gpos.astype(np.int32)  # for sources: G position of each edge
    return K


def energy_arrays(ops: Operators, dtype) -> dict:
    """The energy monitor's symmetric mass matrices packed, canonical orders, in
    ``dtype``: ``Mmu`` (10, nt) the upper triangle of each M^mu_t in ``SYM4`` order;
    ``Meps`` per bucket (w (w + 1) / 2, nv): row ``d w + i`` holds ``M^eps_v[i, (i + d)
    mod w]`` (d = 0 .. (w - 1) // 2) and for even w the last w / 2 rows ``M^eps_v[i, i +
    w / 2]`` (the node inverses' cyclic packing, ``D`` then ``Dh``). :func:`emjax.dga.step.
    energy` reads them (:func:`emjax.dga.local.pack_cyclic`, the operators' own
    packing); 10 / 16 and (w + 1) / 2w of the full matrices' bytes."""
    return {"Mmu": ops.Mmu10.astype(dtype, copy=False),
            "Meps": [b.Meps_p.astype(dtype, copy=False) for b in ops.buckets]}


def sparse_arrays(ops: Operators, lay: Layout, dt: float, dtype) -> dict:
    """The global BCOO matrices of the "SpMV" formulation, in the layout's orders."""
    from jax.experimental import sparse as jsparse

    from .mass import sparse_matrices

    F, G, Pm, _ = sparse_matrices(ops, dt)
    fperm = lay.f_pos.ravel()  # canonical row k nt + t -> layout position

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
    import scipy.sparse as sp
    from jax.experimental import sparse as jsparse

    from .mass import sparse_matrices

    _, _, _, Q = sparse_matrices(ops, dt)
    Q = Q[:, edges].tocoo()
    Q = sp.coo_matrix((Q.data.astype(dtype), (lay.u_perm[Q.row], Q.col)), shape=Q.shape)
    return jsparse.BCOO.from_scipy_sparse(Q.tocsr())


def half_step_bytes(ops: Operators, lay: Layout, itemsize: int = 4) -> dict[str, int]:
    """Bytes per half-step of a layout, two counts (see :mod:`emjax.dga.step`):

    ``faraday`` / ``ampere``: unique bytes, every array the kernel touches read or
    written once at its size (index tables, matrices, fields; a gathered array counted
    once, as its gathers hit cache when the numbering is local);
    ``faraday_nominal`` / ``ampere_nominal``: the first version's count, each gathered
    value counted per access.
    """
    cx = ops.cx
    nt, ne, nu = cx.num_tets, cx.num_edges, ops.nu
    isz = itemsize
    far = 10 * isz * nt + 48 * nt + nu * isz + 8 * isz * nt  # Ms, hs/he, u, f r/w
    far_nom = far - nu * isz + 12 * isz * nt
    packed = sum(b.width * (b.width + 1) // 2 * b.count for b in ops.buckets)
    lossy = sum(b.width * b.width * b.count for b in ops.buckets if b.Msig is not None)
    pairs = table_codes(cx.tets_per_edge, lay.spec)
    amp = 4 * isz * nt + 4 * pairs + 2 * isz * ne + 4 * nu + (packed + lossy) * isz \
        + 2 * nu * isz  # node indices: one per half edge
    # nominal: gathered edge-sum terms per (edge, tet) slot and G per node slot
    amp_nom = amp + pairs * isz + nu * isz
    return {"faraday": int(far), "ampere": int(amp), "faraday_nominal": int(far_nom),
            "ampere_nominal": int(amp_nom)}


__all__ = [
    "SYM4",
    "energy_arrays",
    "half_step_bytes",
    "kernel_arrays",
    "kernel_base",
    "node_arrays",
    "node_tiles",
    "operator_arrays",
    "pack_sym4",
    "source_columns",
    "sparse_arrays",
    "xla_node_matrices",
]
