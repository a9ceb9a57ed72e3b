"""Exact inside tests for CAD geometry: closed triangle meshes and extruded polygons.

A point lies in a closed, consistently oriented triangle mesh when the surface winds
around it a non-zero number of times (for one closed surface the same as the even-odd
rule; for overlapping closed parts, their union). The winding number is counted along
rays parallel to z: a ray through (x, y) crosses the triangles whose xy projection
holds (x, y), each with the sign of its projected orientation (+1 where the outward
normal points up, an exit), and the winding at height z is the sum over the crossings
above z. On a grid the sample points are a tensor product of 1D axes, so one ray per
(x, y) pair serves every z of the column: the cost is O(rays x triangles hit) plus the
output, instead of one ray per point.

Robustness. Which triangles a ray crosses is decided by exact 2D orientation
predicates: a floating-point determinant with Shewchuk's static error bound, redone in
exact rational arithmetic (:class:`fractions.Fraction`) when the bound cannot vouch
for its sign. A ray exactly through an edge or a vertex of the projection is moved by
a symbolic perturbation (x + sx eps, y + sy eps^2), eps -> 0+: the two triangles of a
shared edge then always agree, so the count is the exact one of the perturbed ray.
The point set is closed like the primitives' (``x <= hi``): a point is inside when it
lies in a closed inside interval of its ray for any of eight perturbations (signs sx,
sy; x or y first), or on a crossing: points on faces, edges and vertices are inside.
Crossing heights are evaluated at the ray's own (x, y) in floating point (relative
rounding ~1e-16), exactly for faces normal to z.

Extruded polygons (GDS layers) use the same predicates in 2D: a horizontal ray to +x,
each polygon oriented counter-clockwise, non-zero winding (overlapping polygons form
their union), closed likewise; z between the two heights, both included.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

_ERR = 1e-15  # relative error bound of the orientation determinant (Shewchuk: 3.3e-16)
_PAIRS = 500_000  # candidate (ray, triangle) pairs evaluated at once
VARIANTS = tuple((sx, sy, first) for first in "xy" for sx in (1, -1) for sy in (1, -1))
"""The symbolic perturbations (sx, sy, first): (x + sx eps, y + sy eps^2) with x first,
(x + sx eps^2, y + sy eps) with y first; eps -> 0+."""


def orient2d(ax, ay, bx, by, px, py) -> tuple[np.ndarray, np.ndarray]:
    """(determinant, exact sign) of (b - a) x (p - a) for 1D float64 arrays: the
    determinant in floating point, its sign exact (int8: +1 where p is left of a->b)."""
    lhs, rhs = (bx - ax) * (py - ay), (by - ay) * (px - ax)
    det = lhs - rhs
    bound = _ERR * (np.abs(lhs) + np.abs(rhs))
    sign = np.sign(det).astype(np.int8)
    for k in np.nonzero((np.abs(det) <= bound) & (bound > 0))[0]:  # rare: exact redo
        f = [Fraction(float(v[k])) for v in (ax, ay, bx, by, px, py)]
        d = (f[2] - f[0]) * (f[5] - f[1]) - (f[3] - f[1]) * (f[4] - f[0])
        sign[k] = (d > 0) - (d < 0)
    return det, sign


def _perturbed(sign, dx, dy, sx: int, sy: int, first: str) -> np.ndarray:
    """The sign of an orientation for the perturbed point where it is exactly zero:
    (b - a) x (dx', dy') = dx dy' - dy dx', led by the first-order term."""
    if first == "x":  # -dy sx eps + dx sy eps^2
        tie = np.where(dy != 0, -sx * np.sign(dy), sy * np.sign(dx))
    else:  # dx sy eps - dy sx eps^2
        tie = np.where(dx != 0, sy * np.sign(dx), -sx * np.sign(dy))
    return np.where(sign == 0, tie.astype(np.int8), sign)


# ----------------------------------------------------------------- meshes
@dataclass(frozen=True)
class Surface:
    """A closed triangle surface prepared for ray casting (m): vertices ``a, b, c``
    (T, 3) of the triangles not vertical (non-zero projected area), their projected
    orientation ``sign`` (+1 counter-clockwise seen from +z) and xy bounds ``lo, hi``."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    sign: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def of(cls, triangles: np.ndarray) -> Surface:
        t = np.asarray(triangles, np.float64)
        _, s = orient2d(t[:, 0, 0], t[:, 0, 1], t[:, 1, 0], t[:, 1, 1], t[:, 2, 0], t[:, 2, 1])
        t = t[s != 0]  # vertical triangles: a z ray never crosses them transversally
        return cls(a=t[:, 0], b=t[:, 1], c=t[:, 2], sign=s[s != 0],
                   lo=t[:, :, :2].min(axis=1), hi=t[:, :, :2].max(axis=1))


def _box_pairs(lo, hi, xs, ys):
    """(ix, iy, triangle) for every grid ray (xs[ix], ys[iy]) inside each triangle's
    xy bounds, in chunks of about ``_PAIRS`` (xs, ys ascending)."""
    ix0, ix1 = np.searchsorted(xs, lo[:, 0], "left"), np.searchsorted(xs, hi[:, 0], "right")
    iy0, iy1 = np.searchsorted(ys, lo[:, 1], "left"), np.searchsorted(ys, hi[:, 1], "right")
    nyr = np.maximum(iy1 - iy0, 0)
    count = np.maximum(ix1 - ix0, 0) * nyr
    ends = np.cumsum(count)
    t0 = 0
    while t0 < len(count):
        t1 = max(int(np.searchsorted(ends, (ends[t0 - 1] if t0 else 0) + _PAIRS, "right")),
                 t0 + 1)
        tri = np.repeat(np.arange(t0, t1), count[t0:t1])
        local = np.arange(tri.size) - np.repeat(ends[t0:t1] - count[t0:t1], count[t0:t1])
        yield ix0[tri] + local // nyr[tri], iy0[tri] + local % nyr[tri], tri
        t0 = t1


def _strip_pairs(lo, hi, px, py):
    """(ray, triangle) for scattered rays (px, py) inside each triangle's xy bounds."""
    order = np.argsort(py, kind="stable")
    ys = py[order]
    i0, i1 = np.searchsorted(ys, lo[:, 1], "left"), np.searchsorted(ys, hi[:, 1], "right")
    count = np.maximum(i1 - i0, 0)
    tri = np.repeat(np.arange(len(count)), count)
    local = np.arange(tri.size) - np.repeat(np.cumsum(count) - count, count)
    ray = order[i0[tri] + local]
    keep = (px[ray] >= lo[tri, 0]) & (px[ray] <= hi[tri, 0])
    return ray[keep], tri[keep]


def _crossings(s: Surface, px, py, ray, tri):
    """Per perturbation variant, the crossings (ray, z, sign) of rays (px, py)[ray]
    with triangles ``tri`` (candidate pairs)."""
    x, y = px[ray], py[ray]
    a, b, c = s.a[tri], s.b[tri], s.c[tri]
    edges = ((a, b), (b, c), (c, a))
    dets, signs = zip(*(orient2d(u[:, 0], u[:, 1], v[:, 0], v[:, 1], x, y) for u, v in edges),
                      strict=True)
    area = dets[0] + dets[1] + dets[2]  # twice the projected area (float)
    # Barycentric height: exact (z of the face) where the three z agree.
    with np.errstate(divide="ignore", invalid="ignore"):
        z = a[:, 2] + (dets[2] * (b[:, 2] - a[:, 2]) + dets[0] * (c[:, 2] - a[:, 2])) / area
    # A nearly vertical triangle's tiny area loses digits (or all of them, area 0 in
    # floating point): keep z within its extent.
    zs = np.stack([a[:, 2], b[:, 2], c[:, 2]])
    z = np.clip(np.where(np.isfinite(z), z, a[:, 2]), zs.min(axis=0), zs.max(axis=0))
    want = s.sign[tri]
    tie = np.zeros(ray.size, bool)
    for sg in signs:
        tie |= sg == 0
    tie_ray = np.zeros(px.size, bool)
    tie_ray[ray[tie]] = True
    out = []
    for v, (sx, sy, first) in enumerate(VARIANTS):
        sel = np.ones(ray.size, bool) if v == 0 else tie_ray[ray]
        if v and not tie.any():
            break
        hit = sel.copy()
        for (u, w), sg in zip(edges, signs, strict=True):
            d = w - u
            hit &= _perturbed(sg, d[:, 0], d[:, 1], sx, sy, first) == want
        out.append((ray[hit], z[hit], want[hit]))
    return out


def _column_fill(crossings, n_rays: int, zs) -> np.ndarray:
    """(n_rays, nz) bool: inside at heights ``zs`` (ascending) of each ray, closed: a
    non-zero winding just above or just below the height, or a crossing at it (the
    point is on the surface, even where an entry and an exit coincide)."""
    nz = len(zs)
    inside = np.zeros((n_rays, nz), bool)
    size = n_rays * (nz + 1)

    def ramp(start, stop, w):  # w added to heights [start, stop) of each ray
        d = np.bincount(ray * (nz + 1) + start, weights=w, minlength=size)
        d -= np.bincount(ray * (nz + 1) + stop, weights=w, minlength=size)
        return np.cumsum(d.reshape(n_rays, nz + 1), axis=1)[:, :nz] != 0

    for ray, z, sg in crossings:
        if ray.size == 0:
            continue
        below, upto = np.searchsorted(zs, z, "left"), np.searchsorted(zs, z, "right")
        zero = np.zeros(ray.size, np.int64)
        inside |= ramp(zero, below, sg) | ramp(zero, upto, sg)  # crossings > z; >= z
        inside |= ramp(below, upto, np.ones(ray.size))  # a crossing at z
    return inside


def _merged(chunks) -> list:
    """Crossings of several chunks of pairs, concatenated per perturbation variant."""
    per: dict[int, list] = {}
    for chunk in chunks:
        for v, cr in enumerate(chunk):
            per.setdefault(v, []).append(cr)
    return [tuple(np.concatenate(p) for p in zip(*lists, strict=True))
            for lists in per.values()]


def mesh_inside_grid(s: Surface, xs, ys, zs) -> np.ndarray:
    """(nx, ny, nz) bool: inside the surface at the tensor grid of ascending axes (m)."""
    xs, ys, zs = (np.asarray(v, np.float64).ravel() for v in (xs, ys, zs))
    nx, ny = len(xs), len(ys)
    px, py = np.repeat(xs, ny), np.tile(ys, nx)
    chunks = [_crossings(s, px, py, ix * ny + iy, tri)
              for ix, iy, tri in _box_pairs(s.lo, s.hi, xs, ys)]
    return _column_fill(_merged(chunks), nx * ny, zs).reshape(nx, ny, len(zs))


def _point_fill(crossings, ray_p, z_p) -> np.ndarray:
    """Inside (closed) at scattered points: ``ray_p`` their ray, ``z_p`` their height."""
    inside = np.zeros(z_p.shape, bool)
    for ray, z, sg in crossings:
        if ray.size == 0:
            continue
        # Exact ordering within each ray: heights by rank, keys ray * m + rank.
        _, rank = np.unique(np.concatenate([z, z_p]), return_inverse=True)
        m = int(rank.max()) + 2
        kc = ray.astype(np.int64) * m + rank[: z.size]
        kp = ray_p.astype(np.int64) * m + rank[z.size:]
        order = np.argsort(kc, kind="stable")
        kc = kc[order]
        total = np.concatenate([[0.0], np.cumsum(sg[order], dtype=np.float64)])
        end = total[np.searchsorted(kc, (ray_p.astype(np.int64) + 1) * m, "left")]
        above, at_or_above = (np.searchsorted(kc, kp, side) for side in ("right", "left"))
        inside |= (end - total[above] != 0) | (end - total[at_or_above] != 0)
        inside |= above > at_or_above  # a crossing at the point: on the surface
    return inside


def _rays_of(x, y):
    """Rays (ux, uy) of scattered points and each point's ray; a tensor product of the
    unique coordinates when that is not much bigger (a plane sampled on a grid)."""
    ux, ix = np.unique(x, return_inverse=True)
    uy, iy = np.unique(y, return_inverse=True)
    if ux.size * uy.size <= 4 * x.size + 1024:
        return ux, uy, ix * uy.size + iy, True
    pairs, ray = np.unique(np.stack([x, y], 1), axis=0, return_inverse=True)
    return pairs[:, 0], pairs[:, 1], ray.ravel(), False


def mesh_inside(s: Surface, x, y, z) -> np.ndarray:
    """Inside the surface at points (m) given as arrays that broadcast together."""
    X, Y, Z = (np.asarray(v, np.float64) for v in np.broadcast_arrays(x, y, z))
    shape = X.shape
    X, Y, Z = X.ravel(), Y.ravel(), Z.ravel()
    if X.size == 0:
        return np.zeros(shape, bool)
    ux, uy, ray_p, tensor = _rays_of(X, Y)
    if tensor:
        px, py = np.repeat(ux, uy.size), np.tile(uy, ux.size)
        chunks = [_crossings(s, px, py, ix * uy.size + iy, tri)
                  for ix, iy, tri in _box_pairs(s.lo, s.hi, ux, uy)]
    else:
        px, py = ux, uy
        chunks = [_crossings(s, px, py, *_strip_pairs(s.lo, s.hi, px, py))]
    return _point_fill(_merged(chunks), ray_p, Z).reshape(shape)


# --------------------------------------------------------------- polygons
@dataclass(frozen=True)
class Edges:
    """Polygon edges a -> b (m), every polygon turned counter-clockwise: (E,) arrays."""

    ax: np.ndarray
    ay: np.ndarray
    bx: np.ndarray
    by: np.ndarray

    @classmethod
    def of(cls, polygons) -> Edges:
        parts = []
        for p in polygons:
            p = np.asarray(p, np.float64)
            area = np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1])
            if area == 0 or len(p) < 3:
                continue
            p = p if area > 0 else p[::-1]
            parts.append(np.concatenate([p, np.roll(p, -1, axis=0)], axis=1))
        e = np.concatenate(parts) if parts else np.zeros((0, 4))
        return cls(*(np.ascontiguousarray(e[:, k]) for k in range(4)))


def polygons_inside(e: Edges, x, y) -> np.ndarray:
    """Inside the union of the polygons (non-zero winding, closed) at points (m):
    1D arrays x, y of equal length."""
    x, y = np.asarray(x, np.float64).ravel(), np.asarray(y, np.float64).ravel()
    order = np.argsort(y, kind="stable")
    ys = y[order]
    lo, hi = np.minimum(e.ay, e.by), np.maximum(e.ay, e.by)
    i0, i1 = np.searchsorted(ys, lo, "left"), np.searchsorted(ys, hi, "right")
    count = np.maximum(i1 - i0, 0)
    edge = np.repeat(np.arange(len(count)), count)
    pt = order[i0[edge] + np.arange(edge.size) - np.repeat(np.cumsum(count) - count, count)]
    ax, ay, bx, by = e.ax[edge], e.ay[edge], e.bx[edge], e.by[edge]
    px, py = x[pt], y[pt]
    _, sign = orient2d(ax, ay, bx, by, px, py)
    tie = (sign == 0) | (py == ay) | (py == by)
    tie_pt = np.zeros(x.size, bool)
    tie_pt[pt[tie]] = True
    inside = np.zeros(x.size, bool)
    up = np.sign(by - ay).astype(np.int8)
    for v, (sx, sy, first) in enumerate(VARIANTS):
        if v and not tie.any():
            break
        # y + sy eps (or eps^2): a vertex at the ray's height lies above it for sy < 0.
        above_a = (ay > py) | ((ay == py) & (sy < 0))
        above_b = (by > py) | ((by == py) & (sy < 0))
        s = _perturbed(sign, bx - ax, by - ay, sx, sy, first)
        # An upward edge crosses the +x ray right of p when p is left of it.
        hit = (above_a != above_b) & (s == up) & ((v == 0) | tie_pt[pt])
        w = np.bincount(pt[hit], weights=up[hit], minlength=x.size)
        inside |= w != 0
    return inside


# ---------------------------------------------------------------- dispatch
_PREPARED: dict = {}  # geometry key -> Surface or Edges (a few recent ones)


def _prepared(geom):
    key = geom.cache_key()
    if key not in _PREPARED:
        if len(_PREPARED) >= 8:
            _PREPARED.pop(next(iter(_PREPARED)))
        _PREPARED[key] = (Surface.of(geom.triangles()) if geom.type == "Mesh"
                          else Edges.of(geom.polygons()))
    return _PREPARED[key]


def is_cad(geom) -> bool:
    """Whether ``geom`` is a CAD geometry (:class:`~emjax.model.cad.Mesh`,
    :class:`~emjax.model.cad.GdsExtrusion`), whose tests live here."""
    return getattr(geom, "type", None) in ("Mesh", "GdsExtrusion")


def inside(geom, x, y, z) -> np.ndarray:
    """Membership of points (arrays in m that broadcast together) in any geometry: the
    CAD ones here, the primitives through their own ``inside``."""
    if not is_cad(geom):
        return geom.inside(x, y, z)
    if geom.type == "Mesh":
        return mesh_inside(_prepared(geom), x, y, z)
    X, Y, Z = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (x, y, z)))
    flat = np.zeros(X.shape, bool)
    z0, z1 = geom.z0, geom.z1
    slab = (z0 <= Z) & (z1 >= Z)
    if slab.any():
        ux, uy, ray, tensor = _rays_of(X[slab], Y[slab])
        px, py = (np.repeat(ux, uy.size), np.tile(uy, ux.size)) if tensor else (ux, uy)
        flat[slab] = polygons_inside(_prepared(geom), px, py)[ray]
    return flat


def inside_grid(geom, xs, ys, zs) -> np.ndarray:
    """(nx, ny, nz) bool: membership at the tensor grid of the ascending axes (m)."""
    xs, ys, zs = (np.asarray(v, np.float64).ravel() for v in (xs, ys, zs))
    if not is_cad(geom):
        return np.broadcast_to(geom.inside(xs[:, None, None], ys[None, :, None],
                                           zs[None, None, :]), (len(xs), len(ys), len(zs)))
    if geom.type == "Mesh":
        return mesh_inside_grid(_prepared(geom), xs, ys, zs)
    flat = polygons_inside(_prepared(geom), np.repeat(xs, len(ys)), np.tile(ys, len(xs)))
    slab = (zs >= geom.z0) & (zs <= geom.z1)
    return flat.reshape(len(xs), len(ys), 1) & slab[None, None, :]


__all__ = ["VARIANTS", "Edges", "Surface", "inside", "inside_grid", "is_cad", "mesh_inside",
           "mesh_inside_grid", "orient2d", "polygons_inside"]
