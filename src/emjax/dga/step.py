"""The fractioned DGATD leapfrog, seed 004 eqs. (5)-(8): pure JAX kernels.

    f^{n+1/2} = f^{n-1/2} - dt (M^mu_t)^{-1} C_t u^n                 for every tet t
    u^{n+1}   = u^n + dt (M^eps_v)^{-1} C~_v f^{n+1/2} - (source)    for every node v

State: ``u`` flat (nu,) half-edge circulations of e (V), ``f`` (nt, 4) half-dual-edge
circulations of h (A); the order of u is the layout's (:mod:`emjax.dga.layout`,
described by a static ``spec``), the arrays the kernels read are built by
:func:`emjax.dga.arrays.kernel_arrays`. Two formulations:

* ``dense`` (the seed's custom kernels). Faraday: per tet gather the 12 half-edge
  values, form the 6 edge circulations, apply the +-1 curl on the fly and the packed
  symmetric ``s_t (M^mu_t)^{-1}`` (10 numbers). Ampere: per edge the circulation of h
  around its dual face (G), gathered from f through the edge tables
  (:mod:`emjax.dga.edges`), then per node the packed ``(M^eps_v)^{-1}`` (cyclic
  diagonals) times the signed edge sums of its w half edges. Every product is written
  as explicit elementwise terms (no reduction over a middle axis), so XLA emits loop
  fusions. Lossy dual volumes use Crank-Nicolson in sigma: ``u = P u + Q G`` with P
  full. With ``spec.kernels == "pallas"`` :func:`faraday` and :func:`ampere` hand over
  to the Triton kernels of :mod:`emjax.dga.pallas` (same arithmetic, one thread per
  tet, edge or node).
* ``sparse`` (the seed's "SpMV"): two global BCOO matrices, ``f -= F u``, ``u += G f``.

Bytes per half-step (float32 = 4 B, int32 indices; nt tets, ne edges, nu padded half
edges, about 2.46 nt on the ring mesh; :func:`emjax.dga.arrays.half_step_bytes`). The
roofline count is *unique bytes*: every array a kernel touches, read or written once
at its size. A gathered array counts once (u in Faraday, G in Ampere): with a local
numbering its gathers hit L1/L2, and counting them per access, as the first version
did, credits cache hits as DRAM traffic (that count is still reported as "nominal"):

* Faraday: matrices 40 nt + indices hs/he 48 nt + u 4 nu + f read and written 32 nt:
  130 B per tet (first version: 186 unique, 224 nominal).
* Ampere: f 16 nt + edge-table codes 4 (sum of tets per edge = 6 nt, plus padding) +
  G written and read 8 ne + node indices 4 nu + matrices 4 sum_v w_v (w_v + 1) / 2 +
  u read and written 8 nu; 150 B per tet on the ring mesh (first version: 220 unique,
  260 nominal). XLA also writes the gathered signed edge sums x (nu) before the node
  product (a gather shared by the rolled terms), 8 nu B more, not counted.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from .complex import C_REF
from .layout import U_TILE
from .local import SYM4

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
"""The edge sum term of local edge le is s_t (f[KP[le]] - f[KM[le]]); entries 6, 7
(padding) give f[0] - f[0] = 0."""
_SYM4_ROW = {}
for _r, (_k, _m) in enumerate(SYM4):
    _SYM4_ROW[_k, _m] = _SYM4_ROW[_m, _k] = _r


_GATHER1 = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
                                      start_index_map=(0,))


def _take(x, idx):
    """``x[idx]`` for int32 indices known to lie in [0, len(x)): one bare gather, no
    negative-index fix-up and no clamping."""
    return lax.gather(x, idx[..., None], _GATHER1, slice_sizes=(1,),
                      mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


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
    """f^{n+1/2} (nt, 4) from f^{n-1/2} and u^n (dense kernels of ``spec``); the
    matrices are pre-scaled by dt."""
    if spec.pallas:
        from . import pallas

        return pallas.faraday(u, f, K["hs"], K["he"], K["Ms"])
    e6 = [_take(u, K["hs"][j]) - _take(u, K["he"][j]) for j in range(6)]
    c = [sum(s * e6[le] for le, s in terms) for terms in _FACE_TERMS]
    Ms = K["Ms"]
    inc = [sum(Ms[_SYM4_ROW[k, m]] * c[m] for m in range(4)) for k in range(4)]
    # f minus the stacked increments, not the stack of per-row differences: f is then
    # read only by one elementwise op of its own shape, so XLA writes the result over
    # the donated f instead of copying all of f after the kernel in every step.
    return f - jnp.stack(inc, axis=1)


def edge_sums(f, K):
    """G (1 + ne,): G[0] = 0, then the circulation of h around the dual face of each
    edge (A), edges in the order of K["gpos"], from the bucketed tables K["ebk"]
    (:mod:`emjax.dga.edges`; XLA kernels)."""
    parts = [jnp.zeros((1,), f.dtype)]
    ff = f.ravel()
    kp, km = jnp.asarray(_KP, jnp.int32), jnp.asarray(_KM, jnp.int32)

    def contribution(code):
        t, le = code >> 4, code & 7
        p, m = 4 * t + _take(kp, le), 4 * t + _take(km, le)
        v = _take(ff, p) - _take(ff, m)
        return jnp.where((code & 8) != 0, -v, v)

    for tab in K["ebk"]:
        parts.append(sum(contribution(tab[p]) for p in range(tab.shape[0])))
    return jnp.concatenate(parts)


def ampere(u, f, K, spec, current=None):
    """u^{n+1} from u^n and f^{n+1/2} (dense kernels of ``spec``).
    ``current`` (nsrc,) A on the edges at G positions K["src_g"]."""
    if spec.pallas:
        from . import pallas

        G = pallas.sliced_edge_sums(f, K["esl"])
    else:
        G = edge_sums(f, K)
    if current is not None:
        G = G.at[K["src_g"]].add(-current)
    if spec.pallas:
        return pallas.node_products(u, G, K["nodes"], spec.buckets)
    out = []
    for (off, w, nv), B in zip(spec.buckets, K["buckets"], strict=True):
        uflat = u[off:off + w * nv]
        ub = uflat.reshape(nv, w)
        x = _signed_take(G, B["gidx"])
        D = B["D"]  # (nd, nv, w): diagonals contiguous
        diags = [D[d] for d in range(D.shape[0])]
        du = diags[0] * x
        for d, Dd in enumerate(diags[1:], start=1):
            du = du + Dd * _roll(x, -d, 1) + _roll(Dd * x, d, 1)
        if "Dh" in B:
            Dh = B["Dh"]
            du = du + lax.concatenate([Dh, Dh], 1) * _roll(x, -(w // 2), 1)
        if "P" in B:
            P = B["P"]
            ub = sum(P[:, :, j] * ub[:, j:j + 1] for j in range(w))
        # increments: u is added once, elementwise, below, so that XLA may write the
        # result over u (the carried state) instead of into a new array copied back
        out.append(du.ravel() if "P" not in B else (ub + du).ravel() - uflat)
    cat = jnp.concatenate(out) if len(out) > 1 else out[0]
    return u + cat


def _signed_take(G, g):
    """sign(g) G[|g|]: the signed edge sum of each half edge (+ at edges[:, 0])."""
    v = _take(G, jnp.abs(g))
    return jnp.where(g < 0, -v, v)


def f_rows(f, spec):
    """f as (4, nt) rows."""
    return f.T


def u_blocks(u, spec):
    """u as slot-major (w, nv) blocks per bucket whatever the layout's order."""
    out = []
    for off, w, nv in spec.buckets:
        b = u[off:off + w * nv]
        if spec.u_order == "tile":  # full tiles (n, w, U_TILE), then the last (w, rest)
            n, T = nv // U_TILE, U_TILE
            full = b[:n * T * w].reshape(n, w, T).transpose(1, 0, 2).reshape(w, n * T)
            out.append(jnp.concatenate([full, b[n * T * w:].reshape(w, nv - n * T)], 1))
        else:
            out.append(b.reshape(nv, w).T)
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


def sym4_form(M, a, b):
    """Per column, a^T M b for the symmetric 4x4 matrices M packed (10, n) in ``SYM4``
    order and a, b (4, n): the diagonal terms once, each i < j term as M_ij (a_i b_j +
    a_j b_i)."""
    out = 0.0
    for r, (k, m) in enumerate(SYM4):
        out = out + M[r] * (a[k] * b[k] if k == m else a[k] * b[m] + a[m] * b[k])
    return out


def cyclic_form(M, a, b, xp=jnp):
    """Per node, a^T M b for the symmetric w x w matrices M packed (w (w + 1) / 2, nv)
    as :func:`emjax.dga.arrays.energy_arrays` packs M^eps (cyclic diagonals, then the
    half diagonal of even w) and a, b (w, nv) slot-major; ``xp``: jax.numpy (kernels)
    or NumPy (the host's Rayleigh quotient)."""
    w = a.shape[0]
    nd = (w - 1) // 2 + 1
    roll = _roll if xp is jnp else np.roll
    out = xp.sum(M[:w] * a * b, axis=0)
    for d in range(1, nd):  # D[d, i] = M[i, (i + d) mod w]
        out = out + xp.sum(M[d * w:(d + 1) * w] * (a * roll(b, -d, 0) + roll(a, -d, 0) * b),
                           axis=0)
    if w % 2 == 0:  # Dh[i] = M[i, i + w / 2], i < w / 2
        h = w // 2
        out = out + xp.sum(M[nd * w:] * (a[:h] * b[h:] + a[h:] * b[:h]), axis=0)
    return out


def energy(u, f_old, f_new, E, spec):
    """W^n = (u^n M^eps u^n + f^{n-1/2} M^mu f^{n+1/2}) / 2 in J; E: the packed mass
    matrices of :func:`emjax.dga.arrays.energy_arrays` ("Mmu" (10, nt), "Meps" per
    bucket (w (w + 1) / 2, nv)) in the canonical orders."""
    total = 0.5 * jnp.sum(sym4_form(E["Mmu"], f_rows(f_old, spec), f_rows(f_new, spec)))
    for ub, Me in zip(u_blocks(u, spec), E["Meps"], strict=True):
        total = total + 0.5 * jnp.sum(cyclic_form(Me, ub, ub))
    return total


def probe(u, f, P):
    """(e (npts, 3) V/m, h (npts, 3) A/m) from the uniform fields of the probes' Omega_r."""
    e = jnp.einsum("pij,pj->pi", P["We"], u[P["ue"]])
    h = jnp.einsum("pij,pj->pi", P["Wh"], f.ravel()[P["fh"]])
    return e, h


def divergence(u, f, D, spec):
    """Net outward electric flux of each interior dual volume (C) and net outward
    magnetic flux of each tet (Wb): the column sums of the mass matrices times the
    unknowns, both zero in exact arithmetic without sources. D: the packed "Mmu" and
    "Meps" of :func:`energy` and "interior": per bucket (nv,) bool."""
    d_out = []
    for ub, Me, m in zip(u_blocks(u, spec), D["Meps"], D["interior"], strict=True):
        d_out.append(cyclic_form(Me, jnp.ones_like(ub), ub)[m])
    fr = f_rows(f, spec)
    return jnp.concatenate(d_out), sym4_form(D["Mmu"], jnp.ones_like(fr), fr)


def np_dtype(name: str):
    return np.float32 if name == "float32" else np.float64
