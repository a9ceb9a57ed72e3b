"""The off-diagonal part of the smoothed inverse permittivity in a TEz run, as sparse
stencils.

:func:`emjax.grid.subpixel.average` puts the diagonal of the smoothed tensor
``eps^-1 = P <1/eps> + (1 - P) <eps>^-1`` (P = n n^T) into the media table; its
in-plane off-diagonal entry ``K = n_x n_y (<1/eps> - <eps>^-1)``
(:func:`emjax.grid.subpixel.off_diagonal`) couples Ex to the curl that drives Ey and
back. The curl of the other component is averaged from its four nearest samples, with
the weight of each Ex-Ey pair the mean of K at the two, ``(K_x + K_y) / 8``: the
coupling matrix is then symmetric, so the update keeps the leapfrog's energy invariant
(positive definite since |K| is far below the diagonal's 1/eps), and the Courant
limit of the background stands. Yee indices: Ex[i, j] at (i + 1/2, j), Ey[i, j] at
(i, j + 1/2), Hz[i, j] at (i + 1/2, j + 1/2); the E curls are Ex: (Hz[i, j] -
Hz[i, j-1]) / dy, Ey: -(Hz[i, j] - Hz[i-1, j]) / dx.
"""

from __future__ import annotations

import numpy as np

from ..constants import eps0

# Ex[i, j]'s Ey neighbours are Ey[i + a, j + b]
_PAIRS = ((0, -1), (0, 0), (1, -1), (1, 0))


def _sites(K: np.ndarray, other: np.ndarray, sign: int) -> np.ndarray:
    """(P, 2) samples with K != 0 or a neighbour (of the other component) with it."""
    mark = K != 0
    for a, b in _PAIRS:
        p, q = np.nonzero(other)
        i, j = p - sign * a, q - sign * b
        ok = (i >= 0) & (i < K.shape[0]) & (j >= 0) & (j < K.shape[1])
        mark[i[ok], j[ok]] = True
    return np.argwhere(mark)


def stencils(K: dict, d, dt: float, dtype, fixed: dict | None = None) -> dict | None:
    """{E position (0: Ex, 1: Ey): (index tuple, Hz index tuple, coef)}: each listed E
    sample gets ``sum_k coef_k Hz[q_k]`` added after its update, the 8 terms of each
    sample stacked as (8, P) and flattened; None where K is zero everywhere.
    ``fixed``: {"Ex", "Ey"} bool arrays of samples no pair may touch (in PEC, held at
    zero, or on a conformal cut cell's edge, whose E weighs its free length): a pair
    through one fed the update energy that the sample's reset or metric discards."""
    Kx, Ky = K["Ex"], K["Ey"]
    free = {c: np.ones(Kx.shape, bool) if fixed is None else ~fixed[c] for c in ("Ex", "Ey")}
    if not (Kx.any() or Ky.any()):
        return None
    n = Kx.shape
    c = dt / eps0 / 8

    def at(A, i, j):
        ok = (i >= 0) & (i < n[0]) & (j >= 0) & (j < n[1])
        return np.where(ok, A[np.clip(i, 0, n[0] - 1), np.clip(j, 0, n[1] - 1)], 0.0), ok

    out = {}
    for pos, (own, other, sign, f_own, f_other) in enumerate((
            (Kx, Ky, +1, free["Ex"], free["Ey"]), (Ky, Kx, -1, free["Ey"], free["Ex"]))):
        s = _sites(own, other, sign)
        i, j = s[:, 0], s[:, 1]
        rows, cols, coef = [], [], []
        for a, b in _PAIRS:
            p, q = i + sign * a, j + sign * b  # the neighbour of the other component
            k_nb, ok = at(other, p, q)
            ok = ok & f_own[i, j] & at(f_other, p, q)[0].astype(bool)
            w = c * (own[i, j] + k_nb) * ok
            if pos == 0:  # Ey's curl at (p, q): -(Hz[p, q] - Hz[p-1, q]) / dx
                refs = (((p, q), -w / d[0]), ((p - 1, q), w / d[0]))
            else:  # Ex's curl at (p, q): (Hz[p, q] - Hz[p, q-1]) / dy
                refs = (((p, q), w / d[1]), ((p, q - 1), -w / d[1]))
            for (u, v), cw in refs:
                _, ok2 = at(other, u, v)
                rows.append(np.clip(u, 0, n[0] - 1))
                cols.append(np.clip(v, 0, n[1] - 1))
                coef.append(np.where(ok2, cw, 0.0))
        out[pos] = ((i.astype(np.int32), j.astype(np.int32)),
                    (np.concatenate(rows).astype(np.int32), np.concatenate(cols).astype(np.int32)),
                    np.concatenate(coef).astype(dtype))
    return out


__all__ = ["stencils"]
