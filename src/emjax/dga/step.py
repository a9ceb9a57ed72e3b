"""The fractioned DGATD leapfrog, seed 004 eqs. (5)-(8): pure JAX kernels.

    f^{n+1/2} = f^{n-1/2} - dt (M^mu_t)^{-1} C_t u^n                 for every tet t
    u^{n+1}   = u^n + dt (M^eps_v)^{-1} C~_v f^{n+1/2} - (source)    for every node v

State: ``u`` flat (nu,) half-edge circulations of e (V), ``f`` (4, nt) or (nt, 4):
half-dual-edge circulations of h (A); the memory layout is the kernel variant's
(:mod:`emjax.dga.layout`, described by a static ``spec``). Two formulations:

* ``dense`` (the seed's custom kernels). Faraday: per tet gather the 12 half-edge
  values, form the 6 edge circulations, then either apply the stored 4x6 matrix
  ``A_t = (M^mu_t)^{-1} s_t C_REF`` or (``sym``) the +-1 curl on the fly and the packed
  symmetric ``s_t (M^mu_t)^{-1}`` (10 numbers). Ampere: per tet the 6 edge
  contributions ``s_t C_REF^T f_t`` (t6, no matrix read), summed per edge by gathering
  from edge-bucketed index tables (G), then per node the dense ``(M^eps_v)^{-1}``
  (full w x w, or packed by cyclic diagonals) times the signed edge sums of its w half
  edges. Every product is written as explicit elementwise terms (no reduction over a
  middle axis), so XLA emits loop fusions. Lossy dual volumes use Crank-Nicolson in
  sigma: ``u = P u + Q G`` with P full. Options: ``compact`` Faraday indices (node
  block start + uint8 slot, 28 instead of 48 B per tet) and ``direct`` edge sums
  (gather f, no t6 pass).
* ``sparse`` (the seed's "SpMV"): two global BCOO matrices, ``f -= F u``, ``u += G f``.
* Pallas (variants ``-p``): the dense arithmetic as Triton kernels, one thread per tet,
  edge or node (:mod:`emjax.dga.pallas`); :func:`faraday` and :func:`ampere` hand over
  to them.

Bytes per half-step (float32 = 4 B, int32 indices; nt tets, ne edges, nu padded half
edges, about 2.46 nt on the ring mesh; :func:`emjax.dga.layout.half_step_bytes`). The
roofline count is *unique bytes*: every array a kernel touches, read or written once
at its size. A gathered array counts once (u in Faraday, G in Ampere): with a local
numbering its gathers hit L1/L2, and counting them per access, as the first version
did, credits cache hits as DRAM traffic (that count is still reported as "nominal"):

* Faraday: matrices 40 nt (sym) or 96 nt (full) + indices hs/he 48 nt (compact 28 nt)
  + u 4 nu + f read and written 32 nt. Sym: 130 B per tet, compact 110 (first
  version: 186 unique, 224 nominal).
* Ampere: f 16 nt + orientation 4 nt + edge-table indices 4 (sum of tets per edge =
  6 nt; the first version padded every edge to P = most tets per edge) + G written and
  read 8 ne + node indices 4 nu + matrices 4 sum_v w_v (w_v + 1) / 2 (sym) or
  4 sum_v w_v^2 + u read and written 8 nu; sym 154 B per tet on the ring mesh (first
  version: 220 unique, 260 nominal). The intermediate t6 (6 nt) is not counted: the
  ``direct`` option does without it; otherwise XLA writes it (48 B per tet more, read
  back through the gathers). XLA also writes the gathered signed edge sums x (nu) before
  the node product (a gather shared by the rolled terms), 8 nu B more, not counted.
* ``shared`` variants: the matrix terms above become the distinct matrices' tables
  (counted once) plus 4 B per tet (Faraday) or per node (Ampere) of row positions and,
  in Ampere, the nodes' packed slot ranks (8 B per node of width <= 16).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from .complex import C_REF
from .layout import SYM4, U_TILE, rank_packing
from .mesh import LOCAL_EDGES

_T6_TERMS = [[(k, float(C_REF[k, le])) for k in range(4) if C_REF[k, le] != 0] for le in range(6)]
"""For each local edge, the (face, +-1) pairs of C_REF's column."""
_FACE_TERMS = [[(le, float(C_REF[k, le])) for le in range(6) if C_REF[k, le] != 0]
               for k in range(4)]
"""For each face, the (local edge, +-1) pairs of C_REF's row."""
_KP = np.zeros(8, np.int32)
_KM = np.zeros(8, np.int32)
for _le, _terms in enumerate(_T6_TERMS):
    (_ka, _ca), (_kb, _cb) = _terms
    assert _ca == -_cb  # each edge lies on two faces, with opposite signs
    _KP[_le], _KM[_le] = (_ka, _kb) if _ca > 0 else (_kb, _ka)
"""t6[le] = s_t (f[KP[le]] - f[KM[le]]); entries 6, 7 (padding) give f[0] - f[0] = 0."""
_LOCAL_EDGES = [(int(a), int(b)) for a, b in LOCAL_EDGES]
_SYM4_ROW = {}
for _r, (_k, _m) in enumerate(SYM4):
    _SYM4_ROW[_k, _m] = _SYM4_ROW[_m, _k] = _r


def _take_v1(x, idx):
    """``x[idx]`` as the first version wrote it (jnp adds idx < 0 ? idx + n : idx)."""
    return x.at[idx].get(mode="promise_in_bounds", indices_are_sorted=False,
                         unique_indices=False)


_GATHER1 = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
                                      start_index_map=(0,))


def _take(x, idx):
    """``x[idx]`` for int32 indices known to lie in [0, len(x)): one bare gather, no
    negative-index fix-up and no clamping."""
    return lax.gather(x, idx[..., None], _GATHER1, slice_sizes=(1,),
                      mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


_GATHER2 = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1),
                                      start_index_map=(0, 1))


def _take2(x, i, j):
    """``x[i, j]`` for int32 index arrays known to lie in bounds (one bare gather)."""
    return lax.gather(x, jnp.stack([i, j], axis=-1), _GATHER2, slice_sizes=(1, 1),
                      mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def _frows(f, spec):
    if spec.f_order == "rows":
        return [f[k] for k in range(4)]
    return [f[:, k] for k in range(4)]


def _fstack(rows, spec):
    """The four rows in the variant's form of f."""
    return jnp.stack(rows, axis=0 if spec.f_order == "rows" else 1)


def _roll(x, shift: int, axis: int):
    """``jnp.roll`` by a static shift as two static slices (fuses as index arithmetic)."""
    n = x.shape[axis]
    shift %= n
    if shift == 0:
        return x
    a = lax.slice_in_dim(x, n - shift, n, axis=axis)
    b = lax.slice_in_dim(x, 0, n - shift, axis=axis)
    return lax.concatenate([a, b], axis)


def faraday(u, f, K, spec):
    """f^{n+1/2} from f^{n-1/2} and u^n (dense kernels of ``spec``'s variant); the
    matrices are pre-scaled by dt."""
    if spec.legacy:
        return _faraday_legacy(u, f, K)
    if spec.pallas:
        from . import pallas

        return pallas.faraday(u, f, K["hs"], K["he"], K["Ms"])
    if spec.compact and spec.lean:
        # each uint8 slot converted where it is used: one convert of the (12, nt) table
        # would be written out in int32 (48 B per tet) when the step is one jit
        nb, sl = K["nb"], K["sl"]

        def pos(n, j):
            return nb[n] + sl[j].astype(jnp.int32)

        e6 = [_take(u, pos(a, j)) - _take(u, pos(b, 6 + j))
              for j, (a, b) in enumerate(_LOCAL_EDGES)]
    elif spec.compact:
        nb, sl = K["nb"], K["sl"].astype(jnp.int32)
        e6 = [_take(u, nb[a] + sl[j]) - _take(u, nb[b] + sl[6 + j])
              for j, (a, b) in enumerate(_LOCAL_EDGES)]
    else:
        e6 = [_take(u, K["hs"][j]) - _take(u, K["he"][j]) for j in range(6)]
    if spec.sym:
        c = [sum(s * e6[le] for le, s in terms) for terms in _FACE_TERMS]
        if spec.shared:
            # one single-use gather per term (see _packed_product_shared)
            base, tab = K["Ms_pos"], K["Ms_tab"]

            def M_km(k, m):
                return _take(tab, base + _SYM4_ROW[k, m])
        else:
            def M_km(k, m):
                return K["Ms"][_SYM4_ROW[k, m]]
        inc = [sum(M_km(k, m) * c[m] for m in range(4)) for k in range(4)]
    else:
        A = K["A"]
        inc = [sum(A[k, j] * e6[j] for j in range(6)) for k in range(4)]
    # f minus the stacked increments, not the stack of per-row differences: f is then
    # read only by one elementwise op of its own shape, so XLA writes the result over
    # the donated f instead of copying all of f after the kernel in every step.
    return f - _fstack(inc, spec)


def edge_sums(f, K, spec):
    """G (1 + ne,): G[0] = 0, then the circulation of h around the dual face of each
    edge (A), edges in the order of K["gpos"]."""
    if spec.legacy:
        return _edge_sums_legacy(f, K)
    parts = [jnp.zeros((1,), f.dtype)]
    if spec.direct:
        ff = f.ravel()
        kp, km = jnp.asarray(_KP, jnp.int32), jnp.asarray(_KM, jnp.int32)

        def contribution(code):
            t, le = code >> 4, code & 7
            if spec.lean and spec.f_order == "tets":
                # 2-D gathers of f: no flattened copy of f, which in the full step is a
                # second consumer of the Faraday result besides the state itself
                v = _take2(f, t, _take(kp, le)) - _take2(f, t, _take(km, le))
            else:
                if spec.f_order == "rows":
                    p, m = _take(kp, le) * spec.nt + t, _take(km, le) * spec.nt + t
                else:
                    p, m = 4 * t + _take(kp, le), 4 * t + _take(km, le)
                v = _take(ff, p) - _take(ff, m)
            return jnp.where((code & 8) != 0, -v, v)

        for tab in K["ebk"]:
            parts.append(sum(contribution(tab[p]) for p in range(tab.shape[0])))
        return jnp.concatenate(parts)
    o = K["orient"]
    fk = _frows(f, spec)
    t6 = [o * sum(c * fk[k] for k, c in terms) for terms in _T6_TERMS]
    t6 = jnp.stack(t6, axis=1 if spec.f_order == "tets" else 0).ravel()
    t6 = jnp.concatenate([t6, jnp.zeros((1,), f.dtype)])
    for tab in K["ebk"]:
        parts.append(sum(_take(t6, tab[p]) for p in range(tab.shape[0])))
    return jnp.concatenate(parts)


def ampere(u, f, K, spec, current=None):
    """u^{n+1} from u^n and f^{n+1/2} (dense kernels of ``spec``'s variant).
    ``current`` (nsrc,) A on the edges at G positions K["src_g"]."""
    if spec.legacy:
        return _ampere_legacy(u, f, K, spec.buckets, current)
    if spec.pallas:
        from . import pallas

        G = (pallas.sliced_edge_sums(f, K["esl"]) if spec.sliced_edges
             else pallas.edge_sums(f, K["ebk"]))
    else:
        G = edge_sums(f, K, spec)
    if current is not None:
        G = G.at[K["src_g"]].add(-current)
    if spec.pallas:
        return pallas.node_products(u, G, [off for off, _, _ in spec.buckets], K["buckets"],
                                    tile=spec.u_order == "tile")
    node = spec.u_order == "node"
    ax = 1 if node else 0
    out = []
    for (off, w, nv), B in zip(spec.buckets, K["buckets"], strict=True):
        shape = (nv, w) if node else (w, nv)
        uflat = u[off:off + w * nv]
        ub = uflat.reshape(shape)
        g = B["gidx"]
        if spec.shared:  # node order (make_layout checks)
            du = _packed_product_shared(_signed_take(G, g), B, w)
        elif spec.sym:
            x = _signed_take(G, g)
            D = B["D"]
            if spec.dmajor or not node:
                diags = [D[d] for d in range(D.shape[0])]
            else:
                diags = [D[:, d, :] for d in range(D.shape[1])]
            du = diags[0] * x
            for d, Dd in enumerate(diags[1:], start=1):
                du = du + Dd * _roll(x, -d, ax) + _roll(Dd * x, d, ax)
            if "Dh" in B:
                Dh = B["Dh"]
                du = du + lax.concatenate([Dh, Dh], ax) * _roll(x, -(w // 2), ax)
        else:
            x = _signed_take(G, g)
            Q = B["Q"]
            du = (sum(Q[:, :, j] * x[:, j:j + 1] for j in range(w)) if node
                  else sum(Q[:, j, :] * x[j:j + 1, :] for j in range(w)))
        if "P" in B:
            P = B["P"]
            ub = (sum(P[:, :, j] * ub[:, j:j + 1] for j in range(w)) if node
                  else sum(P[:, j, :] * ub[j:j + 1, :] for j in range(w)))
        if spec.uadd:  # increments; u is added once, elementwise, below
            out.append(du.ravel() if "P" not in B else (ub + du).ravel() - uflat)
        else:
            out.append((ub + du).ravel())
    cat = jnp.concatenate(out) if len(out) > 1 else out[0]
    return u + cat if spec.uadd else cat


def _signed_take(G, g):
    """sign(g) G[|g|]: the signed edge sum of each half edge (+ at edges[:, 0])."""
    v = _take(G, jnp.abs(g))
    return jnp.where(g < 0, -v, v)


def _packed_product_shared(x, B, w: int):
    """(M^eps_v)^{-1} x with the packed matrices shared (``shared`` variants).

    B["Dtab"] holds the distinct matrices, upper triangles packed row by row in the
    geometric slot order (:func:`emjax.dga.layout._shared_node_table`), B["Dpos"] (nv,)
    the start of each node's row, B["rkw"] (nwords, nv) the node's slot ranks packed in
    int32 words. Term d of ``du[v, i] = sum_d M[r_i, r_(i+d)] x[(i + d) mod w]`` gathers
    its entry at an index computed elementwise from the broadcast words and iotas, one
    single-use gather per term, so XLA keeps them in the loop fusion of the product (a
    rolled index array would be written out); the table is small (L2-resident) on a
    mesh of repeated cells.
    """
    tab, words = B["Dtab"], B["rkw"]
    nv = B["Dpos"].shape[0]
    bits, per = rank_packing(w)
    base = lax.broadcast_in_dim(B["Dpos"], (nv, w), (0,))
    wb = [lax.broadcast_in_dim(words[k], (nv, w), (0,)) for k in range(words.shape[0])]

    def per_slot(a):  # a static (w,) NumPy vector as an (nv, w) constant
        return lax.broadcast_in_dim(jnp.asarray(a), (nv, w), (1,))

    def rank(d):  # geometric slot of half edge (i + d) mod w
        j = (np.arange(w, dtype=np.int32) + d) % w  # static: folded by XLA
        word = wb[0]
        for kk in range(1, len(wb)):
            word = jnp.where(per_slot(j // per == kk), wb[kk], word)
        return (lax.shift_right_logical(word, per_slot((j % per) * bits))
                & ((1 << bits) - 1))

    ri = rank(0)
    du = None
    for d in range(w):
        rj = ri if d == 0 else rank(d)
        a, b = jnp.minimum(ri, rj), jnp.maximum(ri, rj)
        m = _take(tab, base + (a * (2 * w + 1 - a)) // 2 + (b - a))
        t = m * _roll(x, -d, 1)
        du = t if du is None else du + t
    return du


def _faraday_legacy(u, f, K):
    """First version (variant "rows-slot"): K["A"] (4, 6, nt), one reduction."""
    e6 = _take_v1(u, K["hs"]) - _take_v1(u, K["he"])  # (6, nt) full-edge circulations
    return f - jnp.sum(K["A"] * e6[None, :, :], axis=1)


def _edge_sums_legacy(f, K):
    """G (ne,) by one table padded to P = most tets per edge."""
    fo = f * K["orient"][None, :]
    t6 = jnp.stack([sum(c * fo[k] for k, c in terms) for terms in _T6_TERMS])  # (6, nt)
    t6 = jnp.concatenate([t6.ravel(), jnp.zeros((1,), f.dtype)])
    return jnp.sum(_take_v1(t6, K["eidx"]), axis=0)


def _ampere_legacy(u, f, K, layout, current=None):
    G = _edge_sums_legacy(f, K)
    if current is not None:
        G = G.at[K["src_g"]].add(-current)
    G = jnp.concatenate([G, jnp.zeros((1,), G.dtype)])
    out = []
    for (off, w, nv), B in zip(layout, K["buckets"], strict=True):
        ub = u[off:off + w * nv].reshape(w, nv)
        x = _take_v1(G, B["edge"])  # (w, nv)
        du = jnp.sum(B["Q"] * x[None, :, :], axis=1)
        if "P" in B:
            ub = jnp.sum(B["P"] * ub[None, :, :], axis=1)
        out.append((ub + du).ravel())
    return jnp.concatenate(out) if len(out) > 1 else out[0]


def f_rows(f, spec):
    """f as (4, nt) rows whatever the variant's order."""
    return f if spec.f_order == "rows" else f.T


def u_blocks(u, spec):
    """u as slot-major (w, nv) blocks per bucket whatever the variant's order."""
    out = []
    for off, w, nv in spec.buckets:
        b = u[off:off + w * nv]
        if spec.u_order == "tile":  # full tiles (n, w, U_TILE), then the last (w, rest)
            n, T = nv // U_TILE, U_TILE
            full = b[:n * T * w].reshape(n, w, T).transpose(1, 0, 2).reshape(w, n * T)
            out.append(jnp.concatenate([full, b[n * T * w:].reshape(w, nv - n * T)], 1))
        else:
            out.append(b.reshape(w, nv) if spec.u_order == "slot" else b.reshape(nv, w).T)
    return out


def faraday_sparse(u, f, S):
    """Same as :func:`faraday` with the global BCOO matrix S["F"] (4 nt, nu)."""
    return f - (S["F"] @ u).reshape(f.shape)


def ampere_sparse(u, f, S, current=None):
    """Same as :func:`ampere` with S["G"] (nu, 4 nt), S["P"] (nu, nu) when lossy and
    S["Qsrc"] (nu, nsrc) the source columns."""
    un = (S["P"] @ u if "P" in S else u) + S["G"] @ f.ravel()
    if current is not None:
        un = un - S["Qsrc"] @ current
    return un


def soft(u, K, volts):
    """Add ``volts`` (nsrc,) to the circulation of each soft-source edge, half per half."""
    half = 0.5 * volts
    return u.at[K["soft_pos"][0]].add(half).at[K["soft_pos"][1]].add(-half)


def energy(u, f_old, f_new, E, spec):
    """W^n = (u^n M^eps u^n + f^{n-1/2} M^mu f^{n+1/2}) / 2 in J; E: {"Mmu" (4, 4, nt),
    "Meps": [(w, w, nv) per bucket]} in the canonical orders."""
    fo, fn = f_rows(f_old, spec), f_rows(f_new, spec)
    total = 0.5 * jnp.sum(fo * jnp.sum(E["Mmu"] * fn[None], axis=1))
    for ub, Me in zip(u_blocks(u, spec), E["Meps"], strict=True):
        total = total + 0.5 * jnp.sum(ub * jnp.sum(Me * ub[None], axis=1))
    return total


def probe(u, f, P):
    """(e (npts, 3) V/m, h (npts, 3) A/m) from the uniform fields of the probes' Omega_r."""
    e = jnp.einsum("pij,pj->pi", P["We"], u[P["ue"]])
    h = jnp.einsum("pij,pj->pi", P["Wh"], f.ravel()[P["fh"]])
    return e, h


def divergence(u, f, D, spec):
    """Net outward electric flux of each interior dual volume (C) and net outward
    magnetic flux of each tet (Wb); both zero in exact arithmetic without sources.
    D: {"Mmu", "Meps"} as for :func:`energy` and "interior": per bucket (nv,) bool."""
    d_out = []
    for ub, Me, m in zip(u_blocks(u, spec), D["Meps"], D["interior"], strict=True):
        d_out.append(jnp.sum(jnp.sum(Me * ub[None], axis=1), axis=0)[m])
    fr = f_rows(f, spec)
    b = jnp.sum(jnp.sum(D["Mmu"] * fr[None], axis=1), axis=0)
    return jnp.concatenate(d_out), b


def np_dtype(name: str):
    return np.float32 if name == "float32" else np.float64
