"""Anisotropic sub-pixel smoothing of permittivity where a surface cuts a Yee cell.

Staircasing moves a curved surface by up to half a cell, a first-order error that
makes, for example, a sphere's RCS wander with resolution instead of converging.
Here each E sample whose dual cell (the cell-sized box centred on it) is cut by a
structure's surface gets an effective permittivity from the fill fraction f of that
box and the surface normal n (Farjadpour et al., Opt. Lett. 31, 2972 (2006); Oskooi et
al., Opt. Lett. 34, 2778 (2009)), the diagonal of the smoothed inverse tensor:

    1 / eps_eff,c = n_c^2 <1/eps> + (1 - n_c^2) / <eps>,
    <eps> = f eps_s + (1 - f) eps_b,  <1/eps> = f / eps_s + (1 - f) / eps_b,

for component c: the field normal to the surface sees the series (harmonic) mix, the
tangential field the parallel (arithmetic) one, which makes the first-order
perturbation of the interface vanish. f and n are exact for analytic shapes up to the
surface's curvature within the cell (:mod:`emjax.grid.levelset`: signed distance,
normal, exact plane-cut fraction), exact for boxes, and from ``samples^3`` sub-samples
for CAD meshes. In a 2D run (``planar``) the dual cell is the square in the plane.

One implementation serves every solver: :func:`cut_samples` finds the cut samples of
one component and structure, :func:`inverse_eps` mixes two media (complex for FDFD);
:func:`off_diagonal` gives the in-plane off-diagonal entry that the 2D TEz update adds
(:mod:`emjax.fdtd.offdiag2d`; without it TEz converges at first order);
:func:`average` builds the FDTD's quantised media table (``levels`` steps of the
equivalent arithmetic fill between the two media, so that the CIS table stays small).
Averaging is against the background only, and only where the sample holds the
background or the structure's own medium (later structures keep their cells);
conductivity mixes like eps. PEC and Voxels structures stay staircased.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.geometry import Box, Voxels
from ..model.media import Medium
from ..model.scenario2d import Rectangle
from .cad import inside_grid, is_cad
from .levelset import box_fraction, level, plane_fraction
from .yee import COMPONENTS, YeeGrid

_SLAB = 8  # x-planes evaluated at once


@dataclass(frozen=True)
class Cut:
    """Samples of one component near one structure's surface: ``index`` (global
    indices into the component's array, a tuple of three int arrays), ``fill`` (P,)
    in [0, 1] and ``normal`` (P, 3) unit vectors (z = 0 in a planar run)."""

    index: tuple[np.ndarray, np.ndarray, np.ndarray]
    fill: np.ndarray
    normal: np.ndarray


def inverse_eps(fill, n_c2, eps_s, eps_b):
    """The c-th diagonal entry of the smoothed inverse permittivity (real or complex)."""
    mean = fill * eps_s + (1 - fill) * eps_b
    inv = fill / eps_s + (1 - fill) / eps_b
    return n_c2 * inv + (1 - n_c2) / mean


def cut_samples(grid: YeeGrid, comp: str, geom, *, planar: bool = False,
                samples: int = 6) -> Cut:
    """The samples of ``comp`` whose dual cell may be cut by ``geom``'s surface.

    Analytic shapes return every sample within half a cell diagonal of the surface
    (fill 0 or 1 included, so the caller overrides the staircase consistently); boxes
    and sub-sampled shapes only those strictly cut."""
    dims = 2 if planar else 3
    d = np.asarray(grid.spacing, np.float64)
    dv = d[:dims]
    coords = grid.coords(comp)
    lo_b, hi_b = geom.bounds()
    empty = Cut((np.zeros(0, np.int64),) * 3, np.zeros(0), np.zeros((0, 3)))
    if planar and not lo_b[2] <= coords[2][0] <= hi_b[2]:
        return empty  # a 3D shape the plane z = 0 misses
    boxy = isinstance(geom, Box | Rectangle)
    sel = []
    for a in range(3):
        x = coords[a]
        if a >= dims:
            sel.append(np.arange(x.size))
            continue
        sel.append(np.nonzero((x >= lo_b[a] - d[a]) & (x <= hi_b[a] + d[a]))[0])
    if any(k.size == 0 for k in sel):
        return empty
    (i0, j0, k0), (i1, j1, k1) = ([int(k[0]) for k in sel], [int(k[-1]) + 1 for k in sel])
    reach = 0.5 * float(np.linalg.norm(dv))
    Y = coords[1][j0:j1][None, :, None]
    Z = coords[2][k0:k1][None, None, :]
    out_i, out_f, out_n = [], [], []
    for a0 in range(i0, i1, _SLAB):  # bounded memory on large grids
        a1 = min(a0 + _SLAB, i1)
        X = coords[0][a0:a1][:, None, None]
        X, Yb, Zb = np.broadcast_arrays(X, Y, Z)
        lv = None if boxy else level(geom, X, Yb, Zb)
        if lv is not None:
            phi, n = lv
            if planar:
                n = n.copy()
                n[..., 2] = 0.0
                nn = np.linalg.norm(n, axis=-1)
                keep = (np.abs(phi) <= reach) & (nn > 1e-12)
                n = n / np.maximum(nn, 1e-300)[..., None]
            else:
                keep = np.abs(phi) <= reach
            if not keep.any():
                continue
            nk = n[keep]
            f = plane_fraction(nk[:, :dims] * dv, -phi[keep])
        else:
            centre = np.stack([X, Yb, Zb], -1)
            if boxy:
                f_all, n_all = box_fraction(geom, centre.reshape(-1, 3)[:, :dims], dv)
            else:
                f_all, n_all = _sampled(geom, X[:, 0, 0], Yb[0, :, 0], Zb[0, 0, :], d,
                                        samples, dims)
            f_all = f_all.reshape(X.shape)
            keep = (f_all > 0) & (f_all < 1)
            if not keep.any():
                continue
            f = f_all[keep]
            nk = np.zeros((f.size, 3))
            nk[:, :dims] = n_all.reshape(*X.shape, dims)[keep]
        ii = np.nonzero(keep)
        out_i.append((ii[0] + a0, ii[1] + j0, ii[2] + k0))
        out_f.append(f)
        out_n.append(nk)
    if not out_f:
        return empty
    idx = tuple(np.concatenate([o[a] for o in out_i]) for a in range(3))
    return Cut(idx, np.concatenate(out_f), np.concatenate(out_n))


def _sampled(geom, xs, ys, zs, d, samples: int, dims: int):
    """Fill fraction and centroid normal from ``samples^dims`` sub-samples per sample
    (shapes without a distance function: CAD meshes, extrusions)."""
    u = (np.arange(samples) + 0.5) / samples - 0.5
    grids = [u if a < dims else np.zeros(1) for a in range(3)]
    off = np.stack(np.meshgrid(*grids, indexing="ij"), -1).reshape(-1, 3)  # in cells
    S = off.shape[0]
    shape = (xs.size, ys.size, zs.size, S)
    if is_cad(geom):  # the sub-samples form one finer tensor grid
        fine = inside_grid(geom, *((ax[:, None] + g * d[a]).ravel()
                                   for a, (ax, g) in enumerate(zip((xs, ys, zs), grids,
                                                                   strict=True))))
        sx, sy, sz = (g.size for g in grids)
        fine = fine.reshape(xs.size, sx, ys.size, sy, zs.size, sz).transpose(0, 2, 4, 1, 3, 5)
        inside = fine.reshape(shape)
    else:
        inside = np.broadcast_to(geom.inside(
            xs[:, None, None, None] + off[:, 0] * d[0], ys[None, :, None, None] + off[:, 1] * d[1],
            zs[None, None, :, None] + off[:, 2] * d[2]), shape)
    w = inside.reshape(-1, S).astype(np.float64)
    f = w.mean(-1)
    c_in = w @ off / np.maximum(w.sum(-1, keepdims=True), 1e-300)
    c_out = (1 - w) @ off / np.maximum((1 - w).sum(-1, keepdims=True), 1e-300)
    n = (c_out - c_in)[:, :dims]
    n = n / np.maximum(np.linalg.norm(n, axis=-1, keepdims=True), 1e-300)
    return f, n


def off_diagonal(grid: YeeGrid, background, structures, media: list, index: dict, *,
                 samples: int = 6) -> dict[str, np.ndarray]:
    """{"Ex": K, "Ey": K}: the in-plane off-diagonal entry of the smoothed inverse
    permittivity, ``K = n_x n_y (<1/eps> - 1/<eps>)`` (relative), on the planar grid's Ex
    and Ey samples (arrays shaped like ``index``'s, zero away from surfaces).

    The diagonal smoothing of :func:`average` drops this term, which is first order in
    the fill's deviation where a surface is tilted to the grid: without it the TEz
    fields converge at first order only. Lossless media only (a lossy structure or
    background keeps the diagonal form); the samples :func:`average` would skip (PEC,
    Voxels, another structure's cells) get none. ``media``, ``index``: the staircased
    rasterization's (as :func:`average` takes them)."""
    out = {c: np.zeros(index[c].shape) for c in ("Ex", "Ey") if c in index}
    if background.sigma != 0:
        return out
    for s in structures:
        m = s.medium
        if (isinstance(s.geometry, Voxels) or not isinstance(m, Medium) or m.sigma != 0
                or m.eps_r == background.eps_r):
            continue
        mid = next(i for i, x in enumerate(media) if x == m)
        for comp in out:
            cut = cut_samples(grid, comp, s.geometry, planar=True, samples=samples)
            if cut.fill.size == 0:
                continue
            here = index[comp][cut.index]
            own = (here == 0) | (here == mid)
            f, n = cut.fill[own], cut.normal[own]
            mean = f * m.eps_r + (1 - f) * background.eps_r
            inv = f / m.eps_r + (1 - f) / background.eps_r
            k = n[:, 0] * n[:, 1] * (inv - 1 / mean)
            # axis-aligned surfaces and whole cells: none, exactly (not rounding's 1e-16)
            out[comp][tuple(a[own] for a in cut.index)] = np.where(np.abs(k) > 1e-12, k, 0.0)
    return out


def _medium_id(media: list, m, background, q: int, levels: int, mid: int) -> int:
    if q == 0:
        return 0
    if q == levels:
        return mid
    t = q / levels
    media.append(Medium(
        eps_r=background.eps_r + t * (m.eps_r - background.eps_r),
        sigma=background.sigma + t * (m.sigma - background.sigma),
        mu_r=m.mu_r, sigma_m=m.sigma_m, name=f"{m.name or 'medium'} averaged {q}/{levels}"))
    return len(media) - 1


def average(grid: YeeGrid, background, structures, media: list, index: dict, *,
            planar: bool = False, samples: int = 6, levels: int = 64
            ) -> tuple[list, dict]:
    """(media, index) with smoothed media at cut E samples; inputs are not modified.

    The smoothed eps is quantised as an equivalent arithmetic fill g (eps = eps_b + g
    (eps_s - eps_b)) to ``levels`` steps; sigma takes the same g."""
    media = list(media)
    index = {c: a.copy() for c, a in index.items()}
    cache: dict[tuple, int] = {}
    eps_b = background.eps_r
    comps = [c for c in COMPONENTS[:3] if c in index]
    for s in structures:
        m = s.medium
        if isinstance(s.geometry, Voxels) or not isinstance(m, Medium):
            continue
        mid = next(i for i, x in enumerate(media) if x == m)
        for comp in comps:
            cut = cut_samples(grid, comp, s.geometry, planar=planar, samples=samples)
            if cut.fill.size == 0:
                continue
            here = index[comp][cut.index]
            own = (here == 0) | (here == mid)
            if not own.any():
                continue
            fc = cut.fill[own]
            n2 = cut.normal[own, COMPONENTS.index(comp)] ** 2
            eps_eff = 1.0 / inverse_eps(fc, n2, m.eps_r, eps_b)
            g = (eps_eff - eps_b) / (m.eps_r - eps_b) if m.eps_r != eps_b else fc
            q = np.clip(np.rint(g * levels), 0, levels).astype(np.int64)
            ids = np.empty(q.shape, np.int64)
            for qv in np.unique(q):
                key = (mid, int(qv))
                if key not in cache:
                    cache[key] = _medium_id(media, m, background, int(qv), levels, mid)
                ids[q == qv] = cache[key]
            if len(media) > 256 and index[comp].dtype == np.uint8:
                for c in index:
                    index[c] = index[c].astype(np.uint16)
            index[comp][tuple(a[own] for a in cut.index)] = ids
    return media, index


__all__ = ["Cut", "average", "cut_samples", "inverse_eps", "off_diagonal"]
