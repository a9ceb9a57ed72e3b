"""Where point sources and probes sit on a DGATD mesh.

:func:`locate` finds the tetrahedron holding each probe point (barycentric coordinates
>= -INSIDE_TOL) and refuses points outside the mesh; :func:`snap_edge` puts a
``MeshEdgeSource`` on the interior edge nearest its position and best aligned with its
direction, and refuses a position outside the mesh the same way (a point within half
an edge's length of an edge passes: on a curved wall the facets cut inside the surface).
"""

from __future__ import annotations

import numpy as np

from ..errors import SetupError
from .complex import Complex

INSIDE_TOL = 1e-9
"""A point is in a tetrahedron when its barycentric coordinates are all >= -INSIDE_TOL."""


def snap_edge(cx: Complex, pec: np.ndarray, position, direction,
              what: str = "source") -> tuple[int, float]:
    """(edge, sign): the interior edge near ``position`` best aligned with ``direction``.

    ``position`` must lie in the mesh, as a probe must (:func:`locate`), or within half
    an edge's length of an edge (a point on a curved wall just off the facets); else a
    SetupError names ``what``, the position and the mesh's bounding box."""
    source_inside(cx, position, what)
    p = np.asarray(position, float)

    def distances(sel: np.ndarray) -> np.ndarray:  # midpoint distances, inf on PEC edges
        x = cx.nodes[cx.edges[sel]]
        return np.where(pec[sel], np.inf, np.linalg.norm(x.mean(axis=1) - p, axis=1))

    # The edges within 1.5 times the nearest midpoint distance: found among the edges
    # of nodes near p, exactly (their nodes lie within 1.5 d + half an edge's reach).
    reach = cx.edge_reach * (1 + 1e-12)
    sel = np.nonzero(_near_nodes(cx, p, reach)[cx.edges].any(axis=1))[0]
    d = distances(sel)
    if not np.isfinite(d).any():
        sel = np.arange(cx.num_edges)
    else:
        sel = np.nonzero(_near_nodes(cx, p, 1.5 * d.min() + 1e-12 + reach)[cx.edges]
                         .any(axis=1))[0]
    d = distances(sel)
    near = sel[d <= 1.5 * d.min() + 1e-12]
    x = cx.nodes[cx.edges[near]]
    vec = x[:, 1] - x[:, 0]
    u = np.asarray(direction, float) / np.linalg.norm(direction)
    cos = vec @ u / np.linalg.norm(vec, axis=1)
    k = int(np.argmax(np.abs(cos)))
    return int(near[k]), float(np.sign(cos[k]) or 1.0)


def source_inside(cx: Complex, position, what: str = "source") -> None:
    """Refuse a source ``position`` (m) neither in the mesh nor within half an edge's
    length of one of its edges (SetupError naming ``what`` and the bounding box)."""
    p = np.asarray(position, float)
    _, bary = _best_tets(cx, p[None])
    if bary.min() >= -INSIDE_TOL:
        return
    x = cx.nodes[cx.edges]
    vec = x[:, 1] - x[:, 0]
    s = np.clip(np.einsum("ij,ij->i", p - x[:, 0], vec) / np.einsum("ij,ij->i", vec, vec),
                0.0, 1.0)
    gap = np.linalg.norm(x[:, 0] + s[:, None] * vec - p, axis=1)  # to each edge segment
    k = int(np.argmin(gap))
    if gap[k] > 0.5 * np.linalg.norm(vec[k]):
        raise _outside(cx, p, what, "or within half an edge of it")


def check_inside(cx: Complex, sim) -> None:
    """Refuse a DGATD scenario's sources and probe points outside the mesh, before the
    costly part of the set-up (``prepare`` calls it once the complex is built)."""
    for k, src in enumerate(sim.sources):
        source_inside(cx, src.position, f"sources[{k}] at")
    for probe in sim.probes:
        locate(cx, probe.positions, f"probes '{probe.name}': point")


def _near_nodes(cx: Complex, p: np.ndarray, reach: float) -> np.ndarray:
    """(nn,) bool: nodes within ``reach`` (m) of ``p`` along every axis."""
    return np.all(np.abs(cx.nodes - p) <= reach, axis=1)


def _best_tets(cx: Complex, points) -> tuple[np.ndarray, np.ndarray]:
    """(tet, barycentric coordinates (4,)) for each point: the tet whose smallest
    coordinate is largest, so the point lies in it when that is >= -INSIDE_TOL.

    Only the tets whose bounding box holds the point are solved for (the others have a
    negative smallest coordinate, so they cannot win over a tet holding the point);
    such a tet has every node within the longest edge's extent of the point along each
    axis (``Complex.edge_reach``), so the boxes are formed only for the tets of those
    nodes (a few dozen, not every tet). A point in no box (outside, or within the
    tolerance of the surface) is matched against every tet."""
    reach = cx.edge_reach * (1 + 1e-12)
    tets, coords = [], []
    for p in np.atleast_2d(np.asarray(points, float)):
        near = np.nonzero(_near_nodes(cx, p, reach)[cx.tets].all(axis=1))[0]
        x = cx.nodes[cx.tets[near]]
        inside = np.all((x.min(axis=1) <= p) & (p <= x.max(axis=1)), axis=1)
        t, b = _best_of(x[inside], np.nonzero(inside)[0], p)
        t = near[t] if t >= 0 else t
        if b.min() < 0:  # held by no tet: the nearest among all of them
            t, b = _best_of(cx.nodes[cx.tets], np.arange(cx.num_tets), p)
        tets.append(t)
        coords.append(b)
    return np.array(tets, np.int64), np.array(coords).reshape(-1, 4)


def _best_of(x: np.ndarray, cand: np.ndarray, p) -> tuple[int, np.ndarray]:
    """(tet, barycentric coordinates) of the candidate tets ``cand`` (ascending; ``x``
    their node coordinates, (len(cand), 4, 3)) whose smallest barycentric coordinate of
    ``p`` is largest; (-1, -inf) when none."""
    if cand.size == 0:
        return -1, np.full(4, -np.inf)
    T = np.stack([x[:, 1] - x[:, 0], x[:, 2] - x[:, 0], x[:, 3] - x[:, 0]], axis=2)
    lam = np.einsum("tij,tj->ti", np.linalg.inv(T), p - x[:, 0])
    bary = np.concatenate([1 - lam.sum(axis=1, keepdims=True), lam], axis=1)
    k = int(np.argmax(bary.min(axis=1)))
    return int(cand[k]), bary[k]


def _outside(cx: Complex, p, what: str, allowed: str = "") -> SetupError:
    """The refusal of point ``p`` (m) outside the mesh, with the mesh's bounding box."""
    lo, hi = cx.nodes.min(axis=0), cx.nodes.max(axis=0)
    return SetupError(f"{what} {_xyz(p)} m lies outside the mesh (bounding box {_xyz(lo)} .. "
                      f"{_xyz(hi)} m); move it inside the mesh{' ' + allowed if allowed else ''}")


def _xyz(v) -> str:
    return "(" + ", ".join(f"{float(c):.6g}" for c in v) + ")"


def locate(cx: Complex, points, what: str = "point") -> tuple[np.ndarray, np.ndarray]:
    """(tet, local node of the Omega_r holding the point) for each point; a point
    outside the mesh is refused (SetupError naming ``what``)."""
    tets, bary = _best_tets(cx, points)
    for p, b in zip(np.atleast_2d(points), bary, strict=True):
        if b.min() < -INSIDE_TOL:
            raise _outside(cx, p, what)
    return tets, np.argmax(bary, axis=1)


__all__ = ["INSIDE_TOL", "check_inside", "locate", "snap_edge", "source_inside"]
