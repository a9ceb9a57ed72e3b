"""Off-diagonal sub-pixel smoothing terms of the E update, as a sparse correction.

:mod:`emjax.grid.subpixel` smooths eps at a cut surface into a tensor; its diagonal
goes into the media table like any medium, its off-diagonal part K (a symmetric
coupling between each cut E_a sample and its four nearest E_b samples) is applied
here, after the bulk E update, on the cut samples only:

    E_a(p) += dt / eps0 * sum_q K_pq (curl H)_b(q),

the D-to-E map E = eps0^-1 K D in increments (dD = dt curl H); the diagonal's
difference from its quantised table entry is added the same way. The curls are
evaluated once at each involved sample from H^{n+1/2} (four gathers), the pair sums
by segment sums, one scatter per component over sorted unique sites, so the cost
scales with the surface. Samples within a CPML slab or on a wall plane are left out
(the curl here has no psi terms); structures belong inside the CPML's inner faces.
Loss at a cut sample scales its diagonal only (the off-diagonal term assumes the
lossless update there: first-order in sigma dt / eps, small at FDTD time steps).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from ..constants import eps0
from .cpml import CURL_TERMS


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class OffDiagonal:
    """Device arrays of the correction: ``sites[c]`` sorted unique flat indices of
    component c where the curl is needed (int32); ``pairs``: per coupled (a, b), the
    positions of p in ``sites[a]`` and of q in ``sites[b]`` (int32) and the weights
    dt K_pq / eps0 and dt K_qp / eps0 (field dtype); ``diagonal[c]``: at ``sites[c]``,
    dt / eps0 times the exact minus the tabled diagonal kappa (the table holds it
    quantised to a few dozen media)."""

    sites: tuple
    pairs: tuple
    diagonal: tuple = ()
    ab: tuple = field(default=(), metadata={"static": True})
    strides: tuple = field(default=(), metadata={"static": True})
    inv_d: tuple = field(default=(), metadata={"static": True})


def lower(couplings, residual, shape, inv_d, interior, dt: float, dtype
          ) -> OffDiagonal | None:
    """The correction from :class:`emjax.grid.subpixel.Couplings` and the diagonal
    residuals ((comp, idx (P, 3), kappa exact - tabled)) on a grid of stored ``shape``;
    ``interior``: per axis, the [lo, hi) index range where the plain curl holds (outside
    the CPML slabs and the wall planes). None when nothing couples."""
    lo, hi = np.array([r[0] for r in interior]), np.array([r[1] for r in interior])
    strides = (shape[1] * shape[2], shape[2], 1)
    st = np.array(strides)
    diag: list[list] = [[], [], []]
    for comp, idx, dk in residual:
        ok = ((idx >= lo) & (idx < hi)).all(1) & (dk != 0)
        diag[comp].append((idx[ok] @ st, dk[ok]))
    kept = []
    for c in couplings:
        ok = ((c.p >= lo) & (c.p < hi) & (c.q >= lo) & (c.q < hi)).all(1)
        if ok.any():
            w_t = c.w if c.w_t is None else c.w_t
            kept.append((c.a, c.b, c.p[ok] @ np.array(strides), c.q[ok] @ np.array(strides),
                         (c.w[ok], w_t[ok])))
    if not kept and not any(f.size for d in diag for f, _ in d):
        return None
    sites, dw = [], []
    for comp in range(3):
        flat = [p for a, _, p, _, _ in kept if a == comp] + [q for _, b, _, q, _ in kept
                                                            if b == comp]
        flat += [f for f, _ in diag[comp]]
        sites.append(np.unique(np.concatenate(flat)) if flat else np.zeros(0, np.int64))
        w = np.zeros(sites[-1].size)
        for f, dk in diag[comp]:
            np.add.at(w, np.searchsorted(sites[-1], f), dk)
        dw.append(jnp.asarray(w * dt / eps0, dtype))
    pairs, ab = [], []
    for a, b, p, q, w in kept:
        pairs.append((jnp.asarray(np.searchsorted(sites[a], p), jnp.int32),
                      jnp.asarray(np.searchsorted(sites[b], q), jnp.int32),
                      jnp.asarray(w[0] * dt / eps0, dtype), jnp.asarray(w[1] * dt / eps0, dtype)))
        ab.append((a, b))
    return OffDiagonal(sites=tuple(jnp.asarray(s, jnp.int32) for s in sites),
                       pairs=tuple(pairs), diagonal=tuple(dw), ab=tuple(ab), strides=strides,
                       inv_d=tuple(float(v) for v in inv_d))


def _curl(H, comp: int, flat, od: OffDiagonal):
    """(curl H)_comp at the flat indices (backward differences, as the E update)."""
    out = 0
    for s_, src, ax in CURL_TERMS[comp]:
        h = H[src].reshape(-1)
        out = out + s_ * od.inv_d[ax] * (h[flat] - h[flat - od.strides[ax]])
    return out


def apply(E, H, od: OffDiagonal):
    """E (3 arrays) after the bulk update, plus the off-diagonal terms from H^{n+1/2}."""
    curls = [_curl(H, c, od.sites[c], od) if od.sites[c].size else None for c in range(3)]
    delta = [od.diagonal[c] * curls[c] if curls[c] is not None else None for c in range(3)]
    for (a, b), (ip, iq, w_ab, w_ba) in zip(od.ab, od.pairs, strict=True):
        for tgt, src_pos, tgt_pos, src, w in ((a, iq, ip, b, w_ab), (b, ip, iq, a, w_ba)):
            d = jax.ops.segment_sum(w * curls[src][src_pos], tgt_pos,
                                    num_segments=od.sites[tgt].size)
            delta[tgt] = d if delta[tgt] is None else delta[tgt] + d
    out = list(E)
    for c in range(3):
        if delta[c] is not None:
            out[c] = out[c].reshape(-1).at[od.sites[c]].add(
                delta[c].astype(out[c].dtype), indices_are_sorted=True,
                unique_indices=True).reshape(E[c].shape)
    return tuple(out)


__all__ = ["OffDiagonal", "apply", "lower"]
