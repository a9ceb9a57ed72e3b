"""Dey-Mittra conformal PEC faces of a 3D run (host side, NumPy; the 3D lowering's).

Which H faces a PEC surface cuts, the free length of each of their E edges and their
free area, and the sparse correction that :func:`emjax.fdtd.update3d.conformal_h`
applies after the regular H update: ``H = da H_old - db / A_eff * (circulation of E
over the free edge lengths)`` (Dey and Mittra, IEEE MGWL 7, 273, 1997; the 3D form of
Yu and Mittra, IEEE MGWL 10, 2000). E edges entirely in PEC stay zero; edges with a
free part are updated in their free medium. See :func:`conformal_faces`.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import EmjaxWarning
from ..model import PEC
from ..model.geometry import Voxels
from .conformal2d import CONFORMAL_BISECTIONS, CONFORMAL_MARGIN, CONFORMAL_SUBSAMPLES
from .conformal2d import _perimeter_area as perimeter_area

CYCLIC = ((1, 2), (2, 0), (0, 1))
"""(b, c) of a face normal to axis a: (curl E)_a = d_b E_c - d_c E_b."""


def _owner(sim, x, y, z) -> np.ndarray:
    """Index of the structure that paints each point (later ones win), -1: background.
    A Voxels structure owns the points whose label it maps to a medium."""
    x, y, z = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (x, y, z)))
    out = np.full(x.shape, -1, dtype=np.int32)
    for k, st in enumerate(sim.structures):
        g = st.geometry
        if isinstance(g, Voxels):
            lab = g.sample(x, y, z)
            hit = np.isin(lab, [int(k) for k in g.media])
        else:
            hit = np.asarray(g.inside(x, y, z), bool)
        out = np.where(hit, k, out)
    return out


def _medium_of(sim, owner, x, y, z):
    """The medium of one point whose owner is ``owner``."""
    if owner < 0:
        return sim.background
    g = sim.structures[owner].geometry
    if isinstance(g, Voxels):
        lab = int(g.sample(np.array([x]), np.array([y]), np.array([z]))[0])
        return {int(k): m for k, m in g.media.items()}[lab]
    return sim.structures[owner].medium


def _pec_at(sim, x, y, z) -> np.ndarray:
    """Whether points lie in PEC (painted in order; the background is never PEC)."""
    x, y, z = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (x, y, z)))
    own = _owner(sim, x, y, z)
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


def _has_pec(sim) -> bool:
    """Whether a structure holds PEC; warns that a Voxels one stays staircased."""
    vox = [isinstance(st.geometry, Voxels) and any(
        isinstance(m, PEC) for m in st.geometry.media.values()) for st in sim.structures]
    if any(vox):
        warnings.warn("conformal_pec: a Voxels structure has no analytic surface; its PEC "
                      "follows its voxel faces (staircased at its voxel size)", EmjaxWarning,
                      stacklevel=4)
    return any(vox) or any(isinstance(st.medium, PEC) for st in sim.structures)


def _edge_crossings(sim, grid, ijk: np.ndarray, a: int):
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
        return _pec_at(sim, p[..., 0], p[..., 1], p[..., 2])

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


def _candidate_cells(sim, grid, index, media, slabs) -> np.ndarray:
    """Cells (nodes i..i+1 per axis) the PEC surface may cut: those whose corner nodes
    and edge midpoints do not all agree, dilated by one cell; never a cell on the
    outer walls or within a cell of a CPML slab (those stay staircased)."""
    n = grid.nodes
    lo = np.asarray(grid.lower)
    d = np.asarray(grid.spacing)
    xs = [lo[a] + np.arange(n[a]) * d[a] for a in range(3)]
    X, Y, Z = np.meshgrid(*xs, indexing="ij")
    node = _pec_at(sim, X, Y, Z)
    pec_media = np.array([isinstance(m, PEC) for m in media])
    cells = tuple(v - 1 for v in n)
    lo_any = np.zeros(cells, bool)
    hi_all = np.ones(cells, bool)

    def fold(v):
        nonlocal lo_any, hi_all
        lo_any |= v
        hi_all &= v

    for di in (0, 1):
        for dj in (0, 1):
            for dk in (0, 1):
                fold(node[di:di + cells[0], dj:dj + cells[1], dk:dk + cells[2]])
    for a in range(3):
        e = pec_media[index["E" + "xyz"[a]]][:n[0], :n[1], :n[2]]
        b, c = CYCLIC[a]
        for sb in (0, 1):
            for sc in (0, 1):
                off = [0, 0, 0]
                off[b], off[c] = sb, sc
                fold(e[off[0]:off[0] + cells[0], off[1]:off[1] + cells[1],
                       off[2]:off[2] + cells[2]])
    mixed = lo_any & ~hi_all
    grown = mixed.copy()  # dilate by one cell along each axis
    for a in range(3):
        g = np.moveaxis(grown, a, 0)
        g[1:] |= np.moveaxis(mixed, a, 0)[:-1]
        g[:-1] |= np.moveaxis(mixed, a, 0)[1:]
    keep = np.zeros(cells, bool)
    keep[1:-1, 1:-1, 1:-1] = True
    for s in slabs:
        sl = [slice(None)] * 3
        sl[s.axis] = slice(max(s.start - 1, 0), s.start + s.length + 1)
        keep[tuple(sl)] = False
    return grown & keep


def conformal_faces(sim, plan, media: list, index: dict, dt: float, dtype):
    """Dey-Mittra cut faces of a 3D run, or None when no PEC surface cuts a face.

    Geometry: every E edge of a candidate cell (:func:`_candidate_cells`) has its
    crossings with the PEC surface located by bisection (16 sub-intervals, 40 steps);
    its free length follows. A face's free area is that of the polygon of its free
    edge parts joined by chords (:func:`emjax.fdtd.conformal2d._perimeter_area`, the
    2D code's), so that lengths and area describe one piecewise-flat surface; a face
    the surface does not cross takes its sub-sampled free area (a PEC island).

    Stability at the regular time step: with u_e = (l_e / d_e) E_e the conformal curl is
    (A_0 / A_eff) curl_h u, and the leapfrog is stable when, for every E,
    ``(c dt)^2 sum_f (A_0 / A_eff,f) (curl_h u)_f^2 <= 4 sum_e (d_e / l_e) u_e^2``.
    Bounding ``|curl_h u|^2 <= u^T (-Lap_h) u`` (curl^T curl + grad grad^T = -Lap on
    the Yee lattice) and ``-Lap_h`` by a weighted Gershgorin (Schur) sum with weights
    l_e / d_e gives each edge e the slack ``s_e = 4 d_e / (l_e (c dt)^2) - r_e`` (r_e:
    its weighted row sum, 4 sum 1/d^2 on a regular edge, which at courant 1 leaves no
    slack); by Cauchy-Schwarz over its edges, a cut face of
    ``delta_f = A_0 / A_eff - 1 <= 1 / sum_e (n_e / (d_c^2 s_e))`` (n_e: cut faces on
    edge e, d_c: the spacing across which the face differences e) keeps the sum within
    every edge's slack. So a cut face enters with ``A_eff = max(A_free, A_0 / (1 +
    delta_f / CONFORMAL_MARGIN))``: a sufficient condition, exact for uncut faces at the
    Courant limit, proven for a homogeneous medium at the surface. Its price: at
    courant 0.99 the regular edges have little slack and many cut faces are enlarged;
    at courant 0.7 a face cut parallel to a side keeps any free area above about 0.2.

    Returns ``(terms, edges, faces)``: terms {H comp: (index tuple, da, {E comp: (index
    tuple, coef)})} for :func:`emjax.fdtd.update3d.conformal_h`, each E component's two
    edges per face stacked; edges {E comp: (index tuple, free fraction)} of the partial
    edges; faces {H comp: (index tuple, A_eff / A_0)} (the energy's weights).
    """
    if not _has_pec(sim):
        return None
    grid = plan.grid
    n = grid.nodes
    cells = _candidate_cells(sim, grid, index, media, plan.slabs)
    if not cells.any():
        return None
    # Edges (axis a, node (i, j, k)) and faces (normal a, origin node) of the cells.
    frac, rows, data = [], [], []
    for a in range(3):
        m = np.zeros(n, bool)
        b, c = CYCLIC[a]
        for sb in (0, 1):
            for sc in (0, 1):
                off = [0, 0, 0]
                off[b], off[c] = sb, sc
                m[off[0]:off[0] + cells.shape[0], off[1]:off[1] + cells.shape[1],
                  off[2]:off[2] + cells.shape[2]] |= cells
        # Edges on the rim of the candidate region (a cell beside them is not a
        # candidate, whose faces update regularly) keep their staircase state: every
        # face then sees each edge at the one length its E update weighs it with.
        cp = np.zeros(tuple(v + 1 for v in n), bool)
        cp[1:n[0], 1:n[1], 1:n[2]] = cells
        inner = np.ones(n, bool)
        for sb in (0, 1):
            for sc in (0, 1):
                o = [1, 1, 1]
                o[b], o[c] = 1 - sb, 1 - sc
                inner &= cp[o[0]:o[0] + n[0], o[1]:o[1] + n[1], o[2]:o[2] + n[2]]
        ijk = np.argwhere(m)
        pec_media = np.array([isinstance(mm, PEC) for mm in media])
        full = (~pec_media[index["E" + "xyz"[a]]][:n[0], :n[1], :n[2]]).astype(np.float64)
        pec, tc, f = _edge_crossings(sim, grid, ijk, a)
        f = np.where(f < 1e-9, 0.0, np.where(f > 1 - 1e-9, 1.0, f))
        rim = ~inner[tuple(ijk.T)]
        f[rim] = full[tuple(ijk[rim].T)]
        pec[rim] = (f[rim] == 0)[:, None]
        tc[rim] = np.nan
        full[tuple(ijk.T)] = f
        row = np.full(n, -1, np.int64)
        row[tuple(ijk.T)] = np.arange(len(ijk))
        frac.append(full)
        rows.append(row)
        data.append((pec, tc, ijk))
    return _faces(sim, grid, cells, frac, rows, data, media, index, dt, dtype)


def _faces(sim, grid, cells, frac, rows, data, media, index, dt, dtype):
    """Free areas of the cells' faces, the cut ones' effective areas and update terms
    (see :func:`conformal_faces`)."""
    n, d = grid.nodes, np.asarray(grid.spacing)
    lower = np.asarray(grid.lower)
    faces = []
    for a in range(3):
        b, c = CYCLIC[a]
        m = np.zeros(n, bool)
        for s in (0, 1):
            off = [0, 0, 0]
            off[a] = s
            m[off[0]:off[0] + cells.shape[0], off[1]:off[1] + cells.shape[1],
              off[2]:off[2] + cells.shape[2]] |= cells
        f = np.argwhere(m)
        eb, ec = np.eye(3, dtype=int)[b], np.eye(3, dtype=int)[c]
        # sides counter-clockwise in (b, c): bottom (E_b at f), right (E_c at f + e_b),
        # top (E_b at f + e_c, reversed), left (E_c at f, reversed)
        sides = [(b, f), (c, f + eb), (b, f + ec), (c, f)]
        r = [rows[ax][tuple(p.T)] for ax, p in sides]
        pec = [data[ax][0][ri] for (ax, _), ri in zip(sides, r, strict=True)]
        tcs = [data[ax][1][ri] for (ax, _), ri in zip(sides, r, strict=True)]
        lens = [frac[ax][tuple(p.T)] for ax, p in sides]
        node = lower + f * d
        corner = np.stack([node[:, [b, c]], (node + eb * d)[:, [b, c]], (node + ec * d)[:, [b, c]],
                           node[:, [b, c]]])
        along = np.array([[d[b], 0.0], [0.0, d[c]], [d[b], 0.0], [0.0, d[c]]])
        area = _free_area(sim, a, f, pec, tcs, corner, along, lower, d)
        fr = np.stack([area, *lens])
        cut = np.any((fr > 0) & (fr < 1), axis=0) & np.any(fr > 0, axis=0)
        faces.append((a, f[cut], area[cut], [ln[cut] for ln in lens],
                      [(ax, p[cut]) for ax, p in sides]))
    _reset_free_edges(sim, grid, faces, frac, rows, data, media, index)
    return _terms(faces, frac, media, index, dt, dtype, d)


def _free_area(sim, a, f, pec, tcs, corner, along, lower, d) -> np.ndarray:
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
        area[crossed] += _bulge(sim, a, f[crossed], [p[crossed] for p in pec],
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
        area[island] = 1.0 - _pec_at(sim, pts[..., 0], pts[..., 1], pts[..., 2]).mean(axis=(1, 2))
    return np.where(area < 1e-9, 0.0, np.where(area > 1 - 1e-9, 1.0, area))


def _bulge(sim, a, f, pec, tcs, corner, along, lower, d) -> np.ndarray:
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
        return _pec_at(sim, x[:, 0], x[:, 1], x[:, 2])

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


def _reset_free_edges(sim, grid, faces, frac, rows, data, media: list, index: dict) -> None:
    """Edges of cut faces with a free part carry E: where rasterization put PEC on them
    (their midpoint lies in PEC), give them the medium at their first free sub-sample
    (added to ``media`` if new); ``index`` is changed in place."""
    K = CONFORMAL_SUBSAMPLES
    lower, d = np.asarray(grid.lower), np.asarray(grid.spacing)
    pec_media = np.array([isinstance(m, PEC) for m in media])
    for a in range(3):
        name = "E" + "xyz"[a]
        pts = [p for _, _, _, _, sides in faces for ax, p in sides if ax == a]
        if not pts:
            continue
        ijk = np.unique(np.concatenate(pts), axis=0)
        r = rows[a][tuple(ijk.T)]
        pec = data[a][0][r]
        bad = pec_media[index[name][tuple(ijk.T)]] & (frac[a][tuple(ijk.T)] > 0)
        for e in np.nonzero(bad)[0]:
            t = np.argmin(pec[e]) / K  # the first free sample (one exists: frac > 0)
            x = lower + ijk[e] * d
            x[a] += t * d[a]
            own = int(_owner(sim, *(np.array([v]) for v in x))[0])
            med = _medium_of(sim, own, *x)
            if isinstance(med, PEC):  # the sample lies on the surface itself
                med = sim.background
            k = next((i for i, m in enumerate(media) if m == med), None)
            if k is None:
                media.append(med)
                k = len(media) - 1
            index[name][tuple(ijk[e])] = k


def _terms(faces, frac, media, index, dt: float, dtype, d):
    """Effective areas of the cut faces (the stability bound of :func:`conformal_faces`)
    and their update terms, partial edges and area ratios."""
    from .setup import _e_coefficients, _h_coefficients

    cb = np.array([_e_coefficients(m, dt)[1] for m in media])
    db_max = max(_h_coefficients(m, dt)[1] for m in media)
    n_on = [np.zeros(f.shape, np.int32) for f in frac]  # cut faces on each edge
    for _, _, _, lens, sides in faces:
        for (ax, p), ln in zip(sides, lens, strict=True):
            np.add.at(n_on[ax], tuple(p[ln > 0].T), 1)
    # Weighted row sums r_e of -Lap_h (weights p = l / d) and the slack s_e (1/m^2).
    slack = []
    inv2 = 1.0 / d**2
    for a in range(3):
        p = frac[a]
        nb = np.zeros_like(p)
        for g in range(3):
            q = np.moveaxis(p, g, 0)
            s = np.zeros_like(q)
            s[1:] += q[:-1] * inv2[g]
            s[:-1] += q[1:] * inv2[g]
            nb += np.moveaxis(s, 0, g)
        with np.errstate(divide="ignore", invalid="ignore"):
            gamma = cb[index["E" + "xyz"[a]][:p.shape[0], :p.shape[1], :p.shape[2]]] * db_max
            s_e = 4.0 / (p * gamma) - 2.0 * inv2.sum() - nb / p
        slack.append(s_e)
    terms, edges, ratios = {}, {}, {}
    for a, f, area, lens, sides in faces:
        b, c = CYCLIC[a]
        across = (d[c], d[b], d[c], d[b])  # the spacing each side's edge is differenced over
        total = np.zeros(len(f))
        stuck = np.zeros(len(f), bool)
        for (ax, p), ln, dd in zip(sides, lens, across, strict=True):
            on = ln > 0
            s_e = slack[ax][tuple(p.T)]
            stuck |= on & ~(s_e > 0)
            with np.errstate(divide="ignore", invalid="ignore"):
                total += np.where(on, n_on[ax][tuple(p.T)] / (dd**2 * s_e), 0.0)
        with np.errstate(divide="ignore"):
            delta = np.where(stuck | (total <= 0), 0.0, 1.0 / total) / CONFORMAL_MARGIN
        a_eff = np.maximum(area, 1.0 / (1.0 + delta))
        h = "H" + "xyz"[a]
        hc = np.array([_h_coefficients(media[k], dt)[:2] for k in index[h][tuple(f.T)]])
        da, db = hc[:, 0], hc[:, 1]
        # H_a -= db / A_eff (l_c E_c(f+e_b) - l_c E_c(f) - l_b E_b(f+e_c) + l_b E_b(f)):
        # per side (bottom, right, top, left) the factor of db l / A_eff below
        coef = {}
        for (ax, p), ln, sg in zip(sides, lens, (-1.0 / d[c], -1.0 / d[b], 1.0 / d[c],
                                                 1.0 / d[b]), strict=True):
            coef.setdefault(ax, []).append((p, db * ln * sg / a_eff))
        idx = lambda p: tuple(np.ascontiguousarray(p.T).astype(np.int32))  # noqa: E731
        terms[a] = (idx(f), da.astype(dtype), {
            ax: (idx(np.concatenate([p for p, _ in v])),
                 np.concatenate([w for _, w in v]).astype(dtype)) for ax, v in coef.items()})
        ratios[a] = (idx(f), a_eff)
        for (ax, p), ln in zip(sides, lens, strict=True):
            part = (ln > 0) & (ln < 1)
            edges.setdefault(ax, []).append((p[part], ln[part]))
    edges = {ax: _unique_edges(v) for ax, v in edges.items()}
    return terms, edges, ratios


def _unique_edges(parts):
    """(index tuple, fraction) of the distinct edges in [(ijk (n, 3), fraction (n,))]."""
    ijk = np.concatenate([p for p, _ in parts])
    fr = np.concatenate([f for _, f in parts])
    ijk, first = np.unique(ijk, axis=0, return_index=True)
    return tuple(np.ascontiguousarray(ijk.T).astype(np.int32)), fr[first]


def energy_weights(weights: dict, conformal, shape) -> dict:
    """The energy monitor's weights with the conformal faces' metric: E on a partial
    edge weighs its free fraction, H on a cut face its effective area ratio, so that
    the monitor reports the invariant of the conformal leapfrog (a passive run never
    increases it)."""
    _, edges, ratios = conformal
    out = {}
    for field, scale in (("E", edges), ("H", ratios)):
        ws = []
        for comp, w in enumerate(weights[field]):
            w = np.array(np.broadcast_to(w, shape))
            if comp in scale:
                idx, r = scale[comp]
                w[idx] = w[idx] * r
            ws.append(w)
        out[field] = tuple(ws)
    return out
