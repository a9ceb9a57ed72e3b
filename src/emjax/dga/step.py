"""The fractioned DGATD leapfrog, seed 004 eqs. (5)-(8): pure JAX kernels.

    f^{n+1/2} = f^{n-1/2} - dt (M^mu_t)^{-1} C_t u^n                 for every tet t
    u^{n+1}   = u^n + dt (M^eps_v)^{-1} C~_v f^{n+1/2} - (source)    for every node v

State: ``u`` flat (nu,) half-edge circulations of e (V), ``f`` (4, nt) half-dual-edge
circulations of h (A); layout in :mod:`emjax.dga.mass`. Two formulations, same state:

* ``dense`` (the seed's custom kernels): Faraday gathers the 12 half-edge values of a
  tet, forms its 6 edge circulations and applies the tet's 4x6 matrix; Ampere forms
  per tet the 6 edge contributions ``s_t C_REF^T f_t`` (+-1 pattern, no matrix read),
  sums them per edge by a padded gather (P = most tets per edge), and applies per node
  the dense (w x w) ``dt (M^eps_v)^{-1} diag(sign)`` to its w edge sums, node-minor
  blocks of equal padded width ``w``. Every product is a multiply-and-sum over a
  leading axis with the batch axis minor: adjacent threads read adjacent words.
* ``sparse`` (the seed's "SpMV"): two global BCOO matrices, ``f -= F u``, ``u += G f``.

Bytes moved per step (float32 = 4 B, int32 indices; nt tets, ne edges, nu = sum_b w_b
nv_b padded half edges; counted as each array is read or written once by its kernel,
gathers counted at their nominal size):

* Faraday: A 96 nt + indices hs/he 48 nt + gathered u 48 nt + f read and written 32 nt
  = 224 B per tet.
* Ampere: f 16 nt + orientation 4 nt + edge-sum indices 4 P ne + gathered contributions
  4 P ne + G written and read 8 ne + node gathers (index + value) 8 nu + matrices
  4 w nu + u read and written 8 nu.

:func:`half_step_bytes` computes these from the actual arrays.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .complex import C_REF

_T6_TERMS = [[(k, float(C_REF[k, le])) for k in range(4) if C_REF[k, le] != 0] for le in range(6)]
"""For each local edge, the (face, +-1) pairs of C_REF's column."""


def _take(x, idx):
    """``x[idx]`` for indices known to be in range (no clamping in the gather)."""
    return x.at[idx].get(mode="promise_in_bounds", indices_are_sorted=False,
                         unique_indices=False)


def faraday(u, f, K):
    """f^{n+1/2} from f^{n-1/2} and u^n (dense). K["A"] (4, 6, nt) is pre-scaled by dt."""
    e6 = _take(u, K["hs"]) - _take(u, K["he"])  # (6, nt) full-edge circulations
    return f - jnp.sum(K["A"] * e6[None, :, :], axis=1)


def edge_sums(f, K):
    """G (ne,): circulation of h around the dual face of each edge (A)."""
    fo = f * K["orient"][None, :]
    t6 = jnp.stack([sum(c * fo[k] for k, c in terms) for terms in _T6_TERMS])  # (6, nt)
    t6 = jnp.concatenate([t6.ravel(), jnp.zeros((1,), f.dtype)])
    return jnp.sum(_take(t6, K["eidx"]), axis=0)


def ampere(u, f, K, layout, current=None):
    """u^{n+1} from u^n and f^{n+1/2} (dense). ``current`` (nsrc,) A on K["src_edge"]."""
    G = edge_sums(f, K)
    if current is not None:
        G = G.at[K["src_edge"]].add(-current)
    G = jnp.concatenate([G, jnp.zeros((1,), G.dtype)])
    out = []
    for (off, w, nv), B in zip(layout, K["buckets"], strict=True):
        ub = u[off:off + w * nv].reshape(w, nv)
        x = _take(G, B["edge"])  # (w, nv)
        du = jnp.sum(B["Q"] * x[None, :, :], axis=1)
        if "P" in B:
            ub = jnp.sum(B["P"] * ub[None, :, :], axis=1)
        out.append((ub + du).ravel())
    return jnp.concatenate(out) if len(out) > 1 else out[0]


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


def energy(u, f_old, f_new, E, layout):
    """W^n = (u^n M^eps u^n + f^{n-1/2} M^mu f^{n+1/2}) / 2 in J; E: {"Mmu" (4, 4, nt),
    "Meps": [(w, w, nv) per bucket]}."""
    total = 0.5 * jnp.sum(f_old * jnp.sum(E["Mmu"] * f_new[None], axis=1))
    for (off, w, nv), Me in zip(layout, E["Meps"], strict=True):
        ub = u[off:off + w * nv].reshape(w, nv)
        total = total + 0.5 * jnp.sum(ub * jnp.sum(Me * ub[None], axis=1))
    return total


def probe(u, f, P):
    """(e (npts, 3) V/m, h (npts, 3) A/m) from the uniform fields of the probes' Omega_r."""
    e = jnp.einsum("pij,pj->pi", P["We"], u[P["ue"]])
    h = jnp.einsum("pij,pj->pi", P["Wh"], f.ravel()[P["fh"]])
    return e, h


def divergence(u, f, D, layout):
    """Net outward electric flux of each interior dual volume (C) and net outward
    magnetic flux of each tet (Wb); both zero in exact arithmetic without sources.
    D: {"Mmu", "Meps"} as for :func:`energy` and "interior": per bucket (nv,) bool."""
    d_out = []
    for (off, w, nv), Me, m in zip(layout, D["Meps"], D["interior"], strict=True):
        ub = u[off:off + w * nv].reshape(w, nv)
        d_out.append(jnp.sum(jnp.sum(Me * ub[None], axis=1), axis=0)[m])
    b = jnp.sum(jnp.sum(D["Mmu"] * f[None], axis=1), axis=0)
    return jnp.concatenate(d_out), b


def half_step_bytes(ops, itemsize: int = 4) -> dict[str, int]:
    """Nominal bytes moved by the dense Faraday and Ampere kernels (see the docstring)."""
    cx = ops.cx
    nt, ne, nu = cx.num_tets, cx.num_edges, ops.nu
    P = ops.eidx.shape[0]
    far = (24 + 12 + 8) * itemsize * nt + 12 * 4 * nt
    mat = sum(b.width * b.width * b.count for b in ops.buckets)
    amp = (4 + 1) * itemsize * nt + P * ne * (4 + itemsize) + 2 * itemsize * ne \
        + nu * (4 + itemsize) + mat * itemsize + 2 * nu * itemsize
    return {"faraday": int(far), "ampere": int(amp)}


def np_dtype(name: str):
    return np.float32 if name == "float32" else np.float64
