"""Signed distances, outward normals and exact plane-cut fill fractions of cells.

Sub-pixel smoothing (:mod:`emjax.grid.subpixel`) and conformal boundaries need, at
each Yee sample near a surface, the fraction of its cell-sized box that a structure
fills and the surface normal there. Counting sub-samples gives both to first order
in the sub-sample spacing, which shows as noise in a convergence study; here an
analytic shape gives its signed distance phi (m, negative inside) and unit outward
normal n at the sample, and the fill fraction is that of the box cut by the tangent
plane, integrated exactly (:func:`plane_fraction`): its error is the curvature's,
O(d^2 / R) per cell, second order over a surface. Boxes are exact (the overlap of
two axis-aligned boxes). Shapes without a distance function return ``None`` and the
caller falls back to sub-sampling.
"""

from __future__ import annotations

import numpy as np

from ..model.geometry import Box, Cylinder, Ellipsoid, Sphere
from ..model.scenario2d import Circle, Polygon

_TINY = 1e-300


def level(geom, x, y, z) -> tuple[np.ndarray, np.ndarray] | None:
    """(phi, n) at points (x, y, z) in m (broadcast arrays): phi the signed distance in
    m (negative inside; exact for a sphere, a cylinder's side and caps, a circle and a
    polygon (z ignored; n in the plane), first order in phi for an ellipsoid, which is
    enough within a cell of the surface), n the unit outward normal (shape (..., 3));
    ``None`` for a shape without one (boxes and rectangles, which :func:`box_fraction`
    handles exactly, CAD meshes and voxels)."""
    x, y, z = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (x, y, z)))
    if isinstance(geom, Circle):
        r = np.stack([x - geom.center[0], y - geom.center[1], np.zeros_like(x)], -1)
        rho = np.linalg.norm(r, axis=-1)
        return rho - geom.radius, r / np.maximum(rho, _TINY)[..., None]
    if isinstance(geom, Polygon):
        return _polygon_level(np.asarray(geom.vertices, np.float64), x, y, geom)
    if isinstance(geom, Sphere):
        r = np.stack([x - geom.center[0], y - geom.center[1], z - geom.center[2]], -1)
        rho = np.linalg.norm(r, axis=-1)
        return rho - geom.radius, r / np.maximum(rho, _TINY)[..., None]
    if isinstance(geom, Ellipsoid):
        a = np.array(geom.semi_axes)
        r = np.stack([x - geom.center[0], y - geom.center[1], z - geom.center[2]], -1)
        q = np.sqrt(((r / a) ** 2).sum(-1))
        g = r / a**2 / np.maximum(q, _TINY)[..., None]  # grad q
        gn = np.maximum(np.linalg.norm(g, axis=-1), _TINY)
        return (q - 1.0) / gn, g / gn[..., None]
    if isinstance(geom, Cylinder):
        ax = geom.unit_axis()
        r = np.stack([x - geom.center[0], y - geom.center[1], z - geom.center[2]], -1)
        along = r @ ax
        radial = r - along[..., None] * ax
        rho = np.linalg.norm(radial, axis=-1)
        n_side = radial / np.maximum(rho, _TINY)[..., None]
        n_cap = np.sign(along)[..., None] * ax
        p_side, p_cap = rho - geom.radius, np.abs(along) - geom.length / 2
        side = p_side >= p_cap
        phi = np.where((p_side > 0) & (p_cap > 0), np.hypot(p_side, p_cap),
                       np.maximum(p_side, p_cap))
        return phi, np.where(side[..., None], n_side, n_cap)
    return None


def _polygon_level(p: np.ndarray, x, y, geom) -> tuple[np.ndarray, np.ndarray]:
    """Exact signed distance to the polygon's edges (sign from ``geom.inside``) and the
    normal from the nearest boundary point (the edge normal on an edge, radial about a
    vertex: corners are not smooth, so the plane cut there is only first order, on
    O(1) cells per corner)."""
    best = np.full(x.shape, np.inf)
    vec = np.zeros((*x.shape, 2))
    for a, b in zip(p, np.roll(p, -1, axis=0), strict=True):
        e = b - a
        t = np.clip(((x - a[0]) * e[0] + (y - a[1]) * e[1]) / float(e @ e), 0.0, 1.0)
        dx, dy = x - (a[0] + t * e[0]), y - (a[1] + t * e[1])
        dist = np.hypot(dx, dy)
        closer = dist < best
        best = np.where(closer, dist, best)
        vec = np.where(closer[..., None], np.stack([dx, dy], -1), vec)
    sign = np.where(geom.inside(x, y, None), -1.0, 1.0)
    n = np.zeros((*x.shape, 3))
    n[..., :2] = sign[..., None] * vec / np.maximum(best, _TINY)[..., None]
    return sign * best, n


def _F(x: np.ndarray) -> np.ndarray:
    """Antiderivative of clip(x, 0, 1) vanishing for x <= 0."""
    return np.where(x <= 0, 0.0, np.where(x >= 1, x - 0.5, 0.5 * x * x))


def _G(x: np.ndarray) -> np.ndarray:
    """Antiderivative of :func:`_F` vanishing for x <= 0."""
    return np.where(x <= 0, 0.0, np.where(x >= 1, 0.5 * x * x - 0.5 * x + 1.0 / 6.0,
                                          x * x * x / 6.0))


_SMALL = 1e-4  # below this slope ratio the next lower-dimensional formula is used


def plane_fraction(m: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Volume fraction of the unit box [-1/2, 1/2]^k where m . u <= t.

    m: (P, k) with k = 2 or 3 (the normal scaled by the cell's edge lengths, in m);
    t: (P,) in m. Exact: one dimension integrated in closed form per remaining one
    (antiderivatives of the clipped linear profile); a slope ratio under 1e-4 drops its
    dimension (error 1e-8), which also keeps the divisions well conditioned."""
    s = -np.sort(-np.abs(m), axis=-1)  # descending |m|
    a = s[:, 0]
    ok = a > 0
    a = np.where(ok, a, 1.0)
    A = t / a + 0.5
    b = s[:, 1] / a
    c = s[:, 2] / a if s.shape[1] > 2 else np.zeros_like(b)
    v0 = np.clip(A, 0.0, 1.0)
    bb = np.where(b > _SMALL, b, 1.0)
    v1 = (_F(A + bb / 2) - _F(A - bb / 2)) / bb
    cc = np.where(c > _SMALL, c, 1.0)
    v2 = (_G(A + bb / 2 + cc / 2) - _G(A + bb / 2 - cc / 2) - _G(A - bb / 2 + cc / 2)
          + _G(A - bb / 2 - cc / 2)) / (bb * cc)
    v = np.where(c > _SMALL, v2, np.where(b > _SMALL, v1, v0))
    v = np.where(ok, v, (t >= 0).astype(np.float64))
    return np.clip(v, 0.0, 1.0)


def box_fraction(geom: Box, centre: np.ndarray, d: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Exact fill fraction of the boxes ``centre +- d / 2`` ((P, k) in m) by an
    axis-aligned Box, and a unit normal: from the overlap's centroid outwards, which is
    the face normal where one face cuts the box (any direction serves at the measure-
    zero edges and corners). Returns (f (P,), n (P, k))."""
    k = centre.shape[1]
    lo, hi = (v[:k] for v in geom.bounds())
    a0 = np.maximum(centre - d / 2, lo)
    a1 = np.minimum(centre + d / 2, hi)
    part = np.clip(a1 - a0, 0.0, None) / d
    f = part.prod(axis=-1)
    off = np.where(part > 0, (a0 + a1) / 2 - centre, 0.0) / d
    off = np.where(part < 1, off, 0.0)  # an axis the box spans tells nothing
    nn = np.linalg.norm(off, axis=-1)
    n = -off / np.maximum(nn, _TINY)[:, None]
    n = np.where((nn > 0)[:, None], n, 1.0 / np.sqrt(k))
    return f, n


__all__ = ["box_fraction", "level", "plane_fraction"]
