"""DGATD previews: the tetrahedral mesh cut by the plane, as a wireframe of the
triangles and quadrilaterals where the plane crosses its tetrahedra, filled by region
medium (:func:`emjax.preview.preview` calls :func:`draw_mesh`)."""

from __future__ import annotations

import numpy as np

from . import Plane, _Canvas, _monitors, _plane, _point_source


def draw_mesh(sim, given, ax) -> _Canvas:
    """The DGATD mesh cut by the plane (its regions by medium), sources and probes."""
    from ..dga.generate import build_mesh
    from ..dga.mesh import mean_edge

    mesh = build_mesh(sim.mesh)
    lower, upper = mesh.nodes.min(axis=0), mesh.nodes.max(axis=0)
    plane = _plane(given, lower, upper, 0.5 * mean_edge(mesh.nodes, mesh.tets))
    c = _Canvas(ax, plane, lower, upper)
    polygons, tags = cut_polygons(mesh.nodes, mesh.tets, mesh.regions, plane)
    media = {r.tag: (i, r.medium) for i, r in enumerate(sim.regions)}
    for tag in np.unique(tags):
        i, medium = media.get(int(tag), (None, sim.background))
        gid = "background" if i is None else f"structure:{i}"
        _tet_polygons(c, [q for q, t in zip(polygons, tags, strict=True) if t == tag],
                      c.medium_color(medium), gid)
    for i, s in enumerate(sim.sources):
        _point_source(c, i, s)
    _monitors(c, sim.probes, None, None)
    return c


def _tet_polygons(c: _Canvas, polygons, color, gid: str) -> None:
    from matplotlib.collections import PolyCollection

    c.ax.add_collection(PolyCollection(polygons, facecolors=color, edgecolors="0.25",
                                       linewidths=0.3, gid=gid, zorder=1))


_TET_EDGES = np.array([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)])


def cut_polygons(nodes: np.ndarray, tets: np.ndarray, regions: np.ndarray, p: Plane
                 ) -> tuple[list[np.ndarray], np.ndarray]:
    """The triangles and quadrilaterals where the plane cuts the tetrahedra, as (k, 2)
    in-plane vertex arrays (k = 3 or 4, m) in order around each polygon, and each one's
    region tag. A node on the plane counts as below it (above it when the plane is the
    mesh's top), so a plane through a layer of nodes or a boundary face draws it once."""
    dist = nodes[:, p.axis] - p.value
    above = dist > 0 if (dist > 0).any() else dist >= 0
    crossing = above[tets].any(axis=1) & ~above[tets].all(axis=1)
    t = tets[crossing]
    i0, i1 = t[:, _TET_EDGES[:, 0]], t[:, _TET_EDGES[:, 1]]  # (nc, 6)
    cut = above[i0] != above[i1]
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(cut, dist[i0] / (dist[i0] - dist[i1]), np.nan)
    uw = nodes[:, [p.u, p.w]]
    pts = uw[i0] + s[..., None] * (uw[i1] - uw[i0])  # (nc, 6, 2), NaN off the cut edges
    centre = np.nanmean(pts, axis=1, keepdims=True)
    angle = np.arctan2(pts[..., 1] - centre[..., 1], pts[..., 0] - centre[..., 0])
    order = np.argsort(np.where(cut, angle, np.inf), axis=1)
    pts = np.take_along_axis(pts, order[..., None], axis=1)
    counts = cut.sum(axis=1)
    return [q[:k] for q, k in zip(pts, counts, strict=True)], regions[crossing]


__all__ = ["cut_polygons", "draw_mesh"]
