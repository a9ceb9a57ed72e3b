"""Where a PEC surface cuts the Yee grid (host side, NumPy): the geometry of
:mod:`emjax.fdtd.conformal3d`.

Which points lie in PEC (structures painted in order, as rasterization paints them),
the crossings of the surface with E edges (bisection), a table of the edges' free
fractions, and the free area of an H face cut by the surface: the polygon of its free
edge parts joined by chords plus each chord's parabolic bulge.
"""

from __future__ import annotations

import numpy as np

from ..model import PEC
from ..model.geometry import Voxels
from .conformal2d import CONFORMAL_BISECTIONS, CONFORMAL_SUBSAMPLES
from .conformal2d import _perimeter_area as perimeter_area

CYCLIC = ((1, 2), (2, 0), (0, 1))
"""(b, c) of a face normal to axis a: (curl E)_a = d_b E_c - d_c E_b."""


def owner(sim, x, y, z) -> np.ndarray:
    """Index of the structure that paints each point (later ones win), -1: background.
    A Voxels structure owns the points whose label it maps to a medium."""
    x, y, z = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (x, y, z)))
    out = np.full(x.shape, -1, dtype=np.int32)
    for k, st in enumerate(sim.structures):
        g = st.geometry
        if isinstance(g, Voxels):
            lab = g.sample(x, y, z)
            hit = np.isin(lab, [int(k) for k in g.media])
        else:  # only the points within its bounds are asked
            lo, hi = (np.asarray(v, np.float64) for v in g.bounds())
            box = ((x >= lo[0]) & (x <= hi[0]) & (y >= lo[1]) & (y <= hi[1])
                   & (z >= lo[2]) & (z <= hi[2]))
            hit = np.zeros(x.shape, bool)
            if box.any():
                hit[box] = np.asarray(g.inside(x[box], y[box], z[box]), bool)
        out = np.where(hit, k, out)
    return out


def medium_of(sim, owner, x, y, z):
    """The medium of one point whose owner is ``owner``."""
    if owner < 0:
        return sim.background
    g = sim.structures[owner].geometry
    if isinstance(g, Voxels):
        lab = int(g.sample(np.array([x]), np.array([y]), np.array([z]))[0])
        return {int(k): m for k, m in g.media.items()}[lab]
    return sim.structures[owner].medium


def pec_at(sim, x, y, z) -> np.ndarray:
    """Whether points lie in PEC (painted in order; the background is never PEC)."""
    x, y, z = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (x, y, z)))
    own = owner(sim, x, y, z)
    pec = np.zeros(own.shape, bool)
    for k, st in enumerate(sim.structures):
        g = st.geometry
        if isinstance(g, Voxels):
            sel = own == k
            if sel.any():
                lab = g.sample(x[sel], y[sel], z[sel])
                pec[sel] = np.isin(lab, [int(lb) for lb, m in g.media.items()
                                         if isinstance(m, PEC)])
        elif isinstance(st.medium, PEC):
            pec |= own == k
    return pec


def edge_crossings(sim, grid, ijk: np.ndarray, a: int):
    """PEC state at the K + 1 points t = m / K of each edge (from node ``ijk`` (n, 3)
    along axis ``a``), the boundary crossing t in each sub-interval whose ends differ
    (bisection; NaN elsewhere) and the free fraction: (pec (n, K+1), tc (n, K), (n,)).
    Points are ``lower + (node + t e_a) d``, the node map's formula, so that an edge's
    end and the node there are the same floating-point point."""
    K = CONFORMAL_SUBSAMPLES
    t = np.arange(K + 1) / K
    lower, d = np.asarray(grid.lower), np.asarray(grid.spacing)
    unit = np.eye(3)[a]

    def at(tt, rows):
        p = lower + (ijk[rows][:, None, :] + tt[..., None] * unit) * d
        return pec_at(sim, p[..., 0], p[..., 1], p[..., 2])

    rows = np.arange(len(ijk))
    pec = at(t[None, :], rows)
    mixed = pec[:, :-1] != pec[:, 1:]
    tc = np.full(mixed.shape, np.nan)
    e, m = np.nonzero(mixed)
    if e.size:
        a, b = m / K, (m + 1) / K
        pa = pec[e, m]
        for _ in range(CONFORMAL_BISECTIONS):
            mid = 0.5 * (a + b)
            same = at(mid[:, None], e)[:, 0] == pa
            a, b = np.where(same, mid, a), np.where(same, b, mid)
        tc[e, m] = 0.5 * (a + b)
    lo, hi = t[:-1][None, :], t[1:][None, :]
    part = np.where(~pec[:, :-1] & ~pec[:, 1:], 1.0 / K, 0.0)
    part = np.where(mixed & ~pec[:, :-1], tc - lo, part)
    part = np.where(mixed & pec[:, :-1], hi - tc, part)
    return pec, tc, part.sum(axis=1)


class EdgeTable:
    """Free fractions of the E edges along one axis: the sub-sampled (candidate) edges
    in a table keyed by their flat index (memory grows with the surface, not the
    grid), the staircase state (midpoint free: 1, else 0) elsewhere, 0 off the grid."""

    def __init__(self, n, ijk: np.ndarray, frac: np.ndarray, stair: np.ndarray):
        self.n, self.stair = n, stair
        self.key = np.ravel_multi_index(tuple(ijk.T), n)  # ascending: argwhere's order
        self.values = frac

    def row(self, p: np.ndarray) -> np.ndarray:
        """Table row of each edge p (m, 3), -1 where it is not in the table."""
        inside = np.all((p >= 0) & (p < np.asarray(self.n)), axis=1)
        k = np.ravel_multi_index(tuple(np.where(inside[:, None], p, 0).T), self.n)
        pos = np.minimum(np.searchsorted(self.key, k), len(self.key) - 1)
        return np.where(inside & (self.key[pos] == k), pos, -1)

    def frac(self, p: np.ndarray) -> np.ndarray:
        """Free fraction of each edge p (m, 3)."""
        inside = np.all((p >= 0) & (p < np.asarray(self.n)), axis=1)
        q = np.where(inside[:, None], p, 0)
        r = self.row(p)
        out = np.where(r >= 0, self.values[np.maximum(r, 0)],
                       self.stair[tuple(q.T)].astype(np.float64))
        return np.where(inside, out, 0.0)


def free_area(sim, a, f, pec, tcs, corner, along, lower, d) -> np.ndarray:
    """Free fraction of each face: its perimeter polygon's where the surface crosses
    its edges, else 1, 0 (all sides PEC) or sub-sampled (a PEC island)."""
    b, c = CYCLIC[a]
    crossed = np.zeros(len(f), bool)
    for t in tcs:
        crossed |= ~np.all(np.isnan(t), axis=1)
    area = np.ones(len(f))
    if crossed.any():
        area[crossed] = perimeter_area([p[crossed] for p in pec], [t[crossed] for t in tcs],
                                       corner[:, crossed], along, (False, False, True, True),
                                       (d[b], d[c])) / (d[b] * d[c])
        area[crossed] += bulge(sim, a, f[crossed], [p[crossed] for p in pec],
                                [t[crossed] for t in tcs], corner[:, crossed], along,
                                lower, d) / (d[b] * d[c])
        area = np.clip(area, 0.0, 1.0)
    rest = ~crossed
    all_pec = np.ones(len(f), bool)
    for p in pec:
        all_pec &= np.all(p, axis=1)
    area[rest & all_pec] = 0.0
    island = np.nonzero(rest & ~all_pec)[0]
    if island.size:
        K = CONFORMAL_SUBSAMPLES
        u = (np.arange(K) + 0.5) / K
        pts = lower + f[island][:, None, None, :] * d
        pts = pts + u[None, :, None, None] * (np.eye(3)[b] * d[b]) \
            + u[None, None, :, None] * (np.eye(3)[c] * d[c])
        area[island] = 1.0 - pec_at(sim, pts[..., 0], pts[..., 1], pts[..., 2]).mean(axis=(1, 2))
    return np.where(area < 1e-9, 0.0, np.where(area > 1 - 1e-9, 1.0, area))


def bulge(sim, a, f, pec, tcs, corner, along, lower, d) -> np.ndarray:
    """Signed area (m^2) between each chord of the perimeter polygon and the curved
    surface: the parabola through the chord's ends and the surface point found (by
    bisection) on the chord's perpendicular bisector, 2/3 chord x sagitta. The chords
    alone leave an area error of about L^3 / (12 rho) per face (L: chord, rho: radius
    of curvature), which sums over a closed surface to a second-order frequency shift
    of the sign of the curvature; with the bulge it falls to fourth order."""
    b, c = CYCLIC[a]
    K = CONFORMAL_SUBSAMPLES
    pts, ok, out_ = [], [], []
    for s, rev in zip(range(4), (False, False, True, True), strict=True):
        for m in (range(K - 1, -1, -1) if rev else range(K)):
            t = tcs[s][:, m]
            pts.append(corner[s] + np.nan_to_num(t)[:, None] * along[s][None, :])
            ok.append(~np.isnan(t))
            out_.append(~(pec[s][:, m + 1] if rev else pec[s][:, m]))  # free before it
    P, ok, leaving = np.stack(pts, 1), np.stack(ok, 1), np.stack(out_, 1)
    n, V = ok.shape
    # next valid crossing after each vertex, cyclically
    idx = np.where(ok, np.arange(V)[None, :], 10 * V)
    twice = np.concatenate([idx, np.where(ok, np.arange(V)[None, :] + V, 10 * V)], axis=1)
    nxt = np.minimum.accumulate(twice[:, ::-1], axis=1)[:, ::-1]
    i, v = np.nonzero(ok & leaving)
    w = nxt[i, v + 1] % V
    Pp, Q = P[i, v], P[i, w]
    t = Q - Pp
    chord = np.hypot(t[:, 0], t[:, 1])
    keep = chord > 1e-12 * (d[b] + d[c])
    i, Pp, t, chord = i[keep], Pp[keep], t[keep], chord[keep]
    nr = np.stack([t[:, 1], -t[:, 0]], 1) / chord[:, None]  # right of the chord: PEC side
    M = Pp + 0.5 * t
    lo2 = corner[0][i]
    hi2 = lo2 + np.array([d[b], d[c]])
    with np.errstate(divide="ignore", invalid="ignore"):  # room within the face along nr
        room = np.where(nr > 0, (hi2 - M) / nr, np.where(nr < 0, (lo2 - M) / nr, np.inf))
        back = np.where(nr > 0, (M - lo2) / nr, np.where(nr < 0, (M - hi2) / nr, np.inf))
    smax = np.minimum(0.5 * chord, room.min(axis=1))
    smin = np.minimum(0.5 * chord, back.min(axis=1))

    def at(s_):
        q = M + s_[:, None] * nr
        x = np.broadcast_to(lower + f[i] * d, (len(i), 3)).copy()
        x[:, b], x[:, c] = q[:, 0], q[:, 1]
        return pec_at(sim, x[:, 0], x[:, 1], x[:, 2])

    mid_pec = at(np.zeros(len(i)))
    end = np.where(mid_pec, -smin, smax)  # look left for free, right for PEC
    differs = at(end) != mid_pec
    lo_s, hi_s = np.zeros(len(i)), end
    for _ in range(CONFORMAL_BISECTIONS // 2):
        mid = 0.5 * (lo_s + hi_s)
        same = at(mid) == mid_pec
        lo_s, hi_s = np.where(same, mid, lo_s), np.where(same, hi_s, mid)
    sag = np.where(differs, 0.5 * (lo_s + hi_s), 0.0)
    out = np.zeros(n)
    np.add.at(out, i, 2.0 / 3.0 * chord * sag)
    return out


__all__ = ["CYCLIC", "EdgeTable", "bulge", "edge_crossings", "free_area", "medium_of", "owner",
           "pec_at"]
