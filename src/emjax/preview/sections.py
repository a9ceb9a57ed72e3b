"""Exact cross-sections of the geometry primitives with a preview plane (patches for
boxes, spheres, cylinders, ellipsoids; sampled outlines for the rest), shared by the
scenario previews and the field figures' structure outlines (:mod:`emjax.plot`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..errors import SetupError

if TYPE_CHECKING:
    from . import Plane


def _bounds3(g) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = g.bounds()
    return np.asarray(lo, float), np.asarray(hi, float)


def section(g, p: Plane, lo: np.ndarray, hi: np.ndarray):
    """The cross-section of geometry ``g`` by plane ``p`` as a matplotlib patch in
    in-plane coordinates (m), or None where the plane misses it. ``lo``, ``hi``: its
    bounds clipped to the domain (a box of infinite size spans the domain)."""
    from matplotlib import patches

    a, u, w, v = p.axis, p.u, p.w, p.value
    if not lo[a] <= v <= hi[a]:
        return None
    kind = g.type
    if kind in ("Box", "Rectangle"):
        return patches.Rectangle((lo[u], lo[w]), hi[u] - lo[u], hi[w] - lo[w])
    if kind == "Polygon":
        return patches.Polygon(np.asarray(g.vertices, float), closed=True)
    c = np.array([*g.center, 0.0][:3], float)
    if kind in ("Sphere", "Circle"):
        r2 = g.radius**2 - (v - c[a]) ** 2 if kind == "Sphere" else g.radius**2
        return patches.Circle((c[u], c[w]), math.sqrt(r2)) if r2 >= 0 else None
    if kind == "Ellipsoid":
        s = np.array(g.semi_axes)
        t = 1.0 - ((v - c[a]) / s[a]) ** 2
        return patches.Ellipse((c[u], c[w]), 2 * s[u] * math.sqrt(t), 2 * s[w] * math.sqrt(t)
                               ) if t >= 0 else None
    if kind == "Cylinder":
        return _cylinder(g, p, lo, hi)
    raise SetupError(f"no cross-section for a {kind} geometry")  # pragma: no cover


def _cylinder(g, p: Plane, lo, hi):
    """An axis-aligned cylinder's section: a disc (axis along the normal) or a rectangle
    (axis in the plane); a tilted one: the polygon of its sampled outline."""
    from matplotlib import patches

    a, u, w = p.axis, p.u, p.w
    k_hat = g.unit_axis()
    k = int(np.argmax(np.abs(k_hat)))
    c = np.array(g.center, float)
    if abs(k_hat[k]) > 1 - 1e-12:
        if k == a:
            return patches.Circle((c[u], c[w]), g.radius)
        half = math.sqrt(max(g.radius**2 - (p.value - c[a]) ** 2, 0.0))
        extent = {k: g.length / 2, (u if k == w else w): half}
        return patches.Rectangle((c[u] - extent[u], c[w] - extent[w]),
                                 2 * extent[u], 2 * extent[w])
    return _sampled_outline(g, p, lo, hi)


def _sampled_outline(g, p: Plane, lo, hi, n: int = 200):
    """A polygon around the points of ``g`` on the plane, sampled n x n over its bounds
    (the convex hull: a plane cuts a cylinder in a convex region)."""
    from matplotlib import patches
    from scipy.spatial import ConvexHull, QhullError

    su, sw = np.linspace(lo[p.u], hi[p.u], n), np.linspace(lo[p.w], hi[p.w], n)
    uu, ww = np.meshgrid(su, sw, indexing="ij")
    xyz = [None, None, None]
    xyz[p.axis], xyz[p.u], xyz[p.w] = np.full_like(uu, p.value), uu, ww
    inside = g.inside(*xyz)
    pts = np.stack([uu[inside], ww[inside]], axis=1)
    try:
        hull = ConvexHull(pts)
    except (QhullError, ValueError):  # fewer than three points, or all on a line
        return None
    return patches.Polygon(pts[hull.vertices], closed=True)
