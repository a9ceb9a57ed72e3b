"""Dey-Mittra conformal PEC faces of a 3D run (host side, NumPy; the 3D lowering's;
the geometry is :mod:`emjax.fdtd.cutgeometry`).

Which H faces a PEC surface cuts, the free length of each of their E edges and their
free area, and the sparse correction that :mod:`emjax.fdtd.conformal_implicit`
applies after the regular H update: ``H = da H_old - db / A_eff * (circulation of E
over the free edge lengths)``, locally implicit (S. Dey and R. Mittra, "A locally conformal FDTD
algorithm for modeling three-dimensional perfectly conducting objects", IEEE
Microwave and Guided Wave Letters 7(9), 273-275, 1997). E edges entirely in PEC stay
zero; edges with a free part are updated in their free medium. See :func:`conformal_faces`.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import EmjaxWarning
from ..model import PEC
from ..model.geometry import Voxels
from .conformal2d import CONFORMAL_SUBSAMPLES
from .cutgeometry import CYCLIC, EdgeTable, edge_crossings, free_area, medium_of, owner, pec_at

AREA_FLOOR = 1e-3
"""Smallest effective area ratio of a cut face: below it the face's H would only carry
rounding (its circulation is over edges of length ~sqrt(A)), and float32 would lose
the digits that cancel in its implicit correction."""


def _has_pec(sim) -> bool:
    """Whether a structure holds PEC; warns that a Voxels one stays staircased."""
    vox = [isinstance(st.geometry, Voxels) and any(
        isinstance(m, PEC) for m in st.geometry.media.values()) for st in sim.structures]
    if any(vox):
        warnings.warn("conformal_pec: a Voxels structure has no analytic surface; its PEC "
                      "follows its voxel faces (staircased at its voxel size)", EmjaxWarning,
                      stacklevel=4)
    return any(vox) or any(isinstance(st.medium, PEC) for st in sim.structures)


def _candidate_cells(sim, grid, index, media, slabs) -> np.ndarray:
    """Cells (nodes i..i+1 per axis) the PEC surface may cut: those whose corner nodes
    and edge midpoints do not all agree, dilated by one cell; never a cell on the
    outer walls or within a cell of a CPML slab (those stay staircased)."""
    n = grid.nodes
    lo = np.asarray(grid.lower)
    d = np.asarray(grid.spacing)
    node = np.zeros(n, bool)
    for i0 in range(0, n[0], 16):  # x slabs of 16 planes: bounded memory, as rasterize
        xs = [lo[a] + np.arange(i0 if a == 0 else 0, min(i0 + 16, n[0]) if a == 0 else n[a])
              * d[a] for a in range(3)]
        node[i0:i0 + 16] = pec_at(sim, *np.meshgrid(*xs, indexing="ij"))
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

    Geometry (:mod:`emjax.fdtd.cutgeometry`): every E edge of a candidate cell
    (:func:`_candidate_cells`) has its crossings with the PEC surface located by
    bisection (16 sub-intervals, 40 steps); its free length follows. A face's free area
    is that of the polygon of its free edge parts joined by chords (the 2D code's
    ``conformal2d._perimeter_area``) plus each chord's parabolic bulge towards the
    surface (:func:`emjax.fdtd.cutgeometry.bulge`): without the bulge the chords' area
    deficit shifted the sphere cavity's resonances up by about 1e-3 at 10 cells per
    radius (TM_101: -2.6e-4 without, -1.39e-3 with, courant 0.4), cancelling most of
    the Yee dispersion of TM_101 and spoiling its observed order (1.5 over 10-30); a
    face the surface does not cross takes its sub-sampled free area (a PEC island).

    Stability at the regular time step: every cut face keeps its free area (floored at
    ``AREA_FLOOR``) and is advanced locally implicitly, its circulation taken at the
    Newmark average of E (:mod:`emjax.fdtd.conformal_implicit`): stable wherever the
    uncut grid is, second order in space and time (the sphere cavity's TM_101 and
    TE_101 at courant 0.99: orders 2.4 and 2.2 over 10-30 cells per radius).

    Returns ``(system, edges, faces)``: system the implicit cut faces'
    ``{"arrays", "static", "A"}`` (:func:`emjax.fdtd.conformal_implicit.implicit_system`);
    edges {E comp: (index tuple, free fraction)} of the partial edges; faces {H comp:
    (index tuple, A_eff / A_0)} (the energy's weights).
    """
    if not _has_pec(sim):
        return None
    grid = plan.grid
    n = grid.nodes
    cells = _candidate_cells(sim, grid, index, media, plan.slabs)
    if not cells.any():
        return None
    # Edges (axis a, node (i, j, k)) and faces (normal a, origin node) of the cells.
    tables, data = [], []
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
        del m
        pec_media = np.array([isinstance(mm, PEC) for mm in media])
        stair = ~pec_media[index["E" + "xyz"[a]]][:n[0], :n[1], :n[2]]
        pec, tc, f = edge_crossings(sim, grid, ijk, a)
        f = np.where(f < 1e-9, 0.0, np.where(f > 1 - 1e-9, 1.0, f))
        rim = ~inner[tuple(ijk.T)]
        f[rim] = stair[tuple(ijk[rim].T)]
        pec[rim] = (f[rim] == 0)[:, None]
        tc[rim] = np.nan
        tables.append(EdgeTable(n, ijk, f, stair))
        data.append((pec, tc))
    return _faces(sim, grid, cells, tables, data, media, index, dt, dtype)


def _faces(sim, grid, cells, tables, data, media, index, dt, dtype):
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
        r = [tables[ax].row(p) for ax, p in sides]  # every side is a candidate edge
        pec = [data[ax][0][ri] for (ax, _), ri in zip(sides, r, strict=True)]
        tcs = [data[ax][1][ri] for (ax, _), ri in zip(sides, r, strict=True)]
        lens = [tables[ax].values[ri] for (ax, _), ri in zip(sides, r, strict=True)]
        node = lower + f * d
        corner = np.stack([node[:, [b, c]], (node + eb * d)[:, [b, c]], (node + ec * d)[:, [b, c]],
                           node[:, [b, c]]])
        along = np.array([[d[b], 0.0], [0.0, d[c]], [d[b], 0.0], [0.0, d[c]]])
        area = free_area(sim, a, f, pec, tcs, corner, along, lower, d)
        fr = np.stack([area, *lens])
        cut = np.any((fr > 0) & (fr < 1), axis=0) & np.any(fr > 0, axis=0)
        faces.append((a, f[cut], area[cut], [ln[cut] for ln in lens],
                      [(ax, p[cut]) for ax, p in sides]))
    _reset_free_edges(sim, grid, faces, tables, data, media, index)
    return _terms(faces, tables, media, index, dt, dtype, d)


def _reset_free_edges(sim, grid, faces, tables, data, media: list, index: dict) -> None:
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
        r = tables[a].row(ijk)
        pec = data[a][0][r]
        bad = pec_media[index[name][tuple(ijk.T)]] & (tables[a].values[r] > 0)
        for e in np.nonzero(bad)[0]:
            t = np.argmin(pec[e]) / K  # the first free sample (one exists: frac > 0)
            x = lower + ijk[e] * d
            x[a] += t * d[a]
            own = int(owner(sim, *(np.array([v]) for v in x))[0])
            med = medium_of(sim, own, *x)
            if isinstance(med, PEC):  # the sample lies on the surface itself
                med = sim.background
            k = next((i for i, m in enumerate(media) if m == med), None)
            if k is None:
                media.append(med)
                k = len(media) - 1
            index[name][tuple(ijk[e])] = k


def _terms(faces, tables, media, index, dt: float, dtype, d):
    """The cut faces' locally implicit system (:func:`emjax.fdtd.conformal_implicit.
    implicit_system`), their partial edges and area ratios."""
    from .conformal_implicit import implicit_system
    from .setup import _e_coefficients, _h_coefficients

    cb = np.array([_e_coefficients(m, dt)[1] for m in media])
    edges, ratios, groups = {}, {}, []
    for a, f, area, lens, sides in faces:
        if not len(f):
            continue
        b, c = CYCLIC[a]
        # a face of (almost) no free area would only add rounding: its H barely moves
        a_eff = np.maximum(area, AREA_FLOOR)
        hc = np.array([_h_coefficients(media[k], dt)[:2] for k in index["H" + "xyz"[a]][
            tuple(f.T)]])
        da, db = hc[:, 0], hc[:, 1]
        # H_a -= db / A_eff (l_c E_c(f+e_b) - l_c E_c(f) - l_b E_b(f+e_c) + l_b E_b(f)):
        # per side (bottom, right, top, left) the sign over the spacing
        sgs = (-1.0 / d[c], -1.0 / d[b], 1.0 / d[c], 1.0 / d[b])
        idx = tuple(np.ascontiguousarray(f.T).astype(np.int32))
        groups.append({"comp": a, "index": idx, "sides": sides, "sg": sgs, "da": da,
                       "w": a_eff / db, "cval": np.stack(
                           [db * ln * sg / a_eff for ln, sg in zip(lens, sgs, strict=True)],
                           axis=1)})
        ratios[a] = (idx, a_eff)
        for (ax, p), ln in zip(sides, lens, strict=True):
            part = (ln > 0) & (ln < 1)
            edges.setdefault(ax, []).append((p[part], ln[part]))
    edges = {ax: _unique_edges(v) for ax, v in edges.items()}
    if not groups:
        return None
    system = implicit_system(groups, lambda ax, p: cb[index["E" + "xyz"[ax]][tuple(p.T)]],
                             dtype)
    return system, edges, ratios


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


__all__ = ["conformal_faces", "energy_weights"]
