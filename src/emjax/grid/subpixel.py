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

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..model.geometry import Box, Voxels
from ..model.media import PEC, Medium
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


def inverse_offdiagonal(fill, n_a, n_b, eps_s, eps_b):
    """Entry (a, b), a != b, of the smoothed inverse permittivity:
    (<1/eps> - 1/<eps>) n_a n_b (relative)."""
    jump = fill / eps_s + (1 - fill) / eps_b - 1 / (fill * eps_s + (1 - fill) * eps_b)
    return jump * n_a * n_b


def tensor_eps(fill, n_a, n_b, same: bool, eps_s, eps_b):
    """Entry (a, b) of the smoothed permittivity tensor itself (FDFD's E form):
    delta_ab <eps> + (1 / <1/eps> - <eps>) n_a n_b (real or complex)."""
    mean = fill * eps_s + (1 - fill) * eps_b
    perp = 1.0 / (fill / eps_s + (1 - fill) / eps_b)
    return (mean if same else 0.0) + (perp - mean) * n_a * n_b


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
    lossless = [s for s in structures if isinstance(s.medium, Medium)
                and s.medium.sigma == 0 and s.medium.eps_r != background.eps_r]
    sm = smooth(grid, background, lossless, media, index, planar=True, samples=samples)
    for (a, b), parts in sm.entries.items():
        c = COMPONENTS[a]
        if c in out and b < 2 and parts:
            idx = np.concatenate([x for x, _ in parts])
            k = np.concatenate([v for _, v in parts])
            # axis-aligned surfaces and whole cells: none, exactly (not rounding's 1e-16)
            out[c][tuple(idx.T)] = np.where(np.abs(k) > 1e-12, k, 0.0)
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


@dataclass(frozen=True)
class Couplings:
    """Off-diagonal entries of the smoothed inverse permittivity between neighbouring
    E samples of two components a < b: ``p`` (P, 3) indices of E_a samples, ``q`` (P, 3)
    of E_b samples (one of the four E_b nearest each E_a), ``w`` (P,) the symmetric
    weight K_pq = (kappa_ab(p) + kappa_ab(q)) / 8, kappa = eps~^-1 relative (so E_a
    gains eps0^-1 sum_q K_pq D_b(q)); a symmetric K keeps the update's energy form (the
    D-to-E map of Werner and Cary, J. Comput. Phys. 226, 1085 (2007)). ``w_t``: the
    weight of the transposed term (E_b(q) from D_a(p)); None: ``w`` (symmetric)."""

    a: int
    b: int
    p: np.ndarray
    q: np.ndarray
    w: np.ndarray
    w_t: np.ndarray | None = None


@dataclass(frozen=True)
class Smoothing:
    """The smoothed media table and indices, and the off-diagonal couplings."""

    media: list
    index: dict
    couplings: tuple[Couplings, ...]
    residual: tuple = ()  # per component (comp, idx (P, 3), exact - tabled kappa_cc)
    entries: dict = field(default_factory=dict)  # (a, b) -> [(idx (P, 3), kappa_ab)]


def _pairs(a: int, b: int, kap_a, kap_b, shape_b) -> Couplings:
    """Couplings of E_a and E_b from kappa_ab at cut samples of each: ((idx (P, 3),
    kappa (P,)) per component). E_a at m + e_a/2 has its E_b neighbours at m + da e_a
    + db e_b with da in {0, 1}, db in {-1, 0}."""
    ps, cs, ws = [], [], []
    deltas = []
    for da in (0, 1):
        for db in (-1, 0):
            delta = np.zeros(3, np.int64)
            delta[a], delta[b] = da, db
            code = len(deltas)
            deltas.append(delta)
            for idx, k, p in ((kap_a[0], kap_a[1], kap_a[0]), (kap_b[0], kap_b[1],
                                                               kap_b[0] - delta)):
                ps.append(p)
                cs.append(np.full(len(idx), code, np.int64))
                ws.append(k / 8)
    p, c, w = np.concatenate(ps), np.concatenate(cs), np.concatenate(ws)
    deltas = np.array(deltas)
    q = p + deltas[c]
    hi = np.asarray(shape_b)
    ok = (p >= 0).all(1) & (q >= 0).all(1) & (q < hi).all(1) & (p < hi).all(1)
    p, c, w = p[ok], c[ok], w[ok]
    # one int64 key per (p, neighbour): a 1D unique (rows' lexsort was most of the time)
    dims = np.asarray(shape_b) + 1
    key = np.ravel_multi_index(p.T, dims) * 4 + c
    key, inv = np.unique(key, return_inverse=True)
    inv = inv.ravel()
    if np.iscomplexobj(w):
        w = (np.bincount(inv, weights=w.real, minlength=key.size)
             + 1j * np.bincount(inv, weights=w.imag, minlength=key.size))
    else:
        w = np.bincount(inv, weights=w, minlength=key.size)
    keep = w != 0
    pk = np.stack(np.unravel_index(key[keep] // 4, dims), 1)
    qk = pk + deltas[key[keep] % 4]
    return Couplings(a, b, pk, qk, w[keep])


def smooth(grid: YeeGrid, background, structures, media: list, index: dict, *,
           planar: bool = False, samples: int = 6, levels: int = 64) -> Smoothing:
    """Smoothed media at cut E samples (inputs not modified), their off-diagonal
    couplings and the residual of the quantised diagonal.

    The diagonal entry is quantised as an equivalent arithmetic fill g (eps = eps_b + g
    (eps_s - eps_b)) to ``levels`` steps; sigma takes the same g. The off-diagonal
    kappa_ab = (<1/eps> - 1/<eps>) n_a n_b is kept exact (it carries the first-order
    part of a field crossing the surface obliquely: without it a dielectric sphere's
    RCS error stays first order)."""
    media = list(media)
    index = {c: a.copy() for c, a in index.items()}
    cache: dict[tuple, int] = {}
    eps_b = background.eps_r
    comps = [c for c in COMPONENTS[:3] if c in index]
    kappa: dict[tuple[int, int], list] = {}
    residual: list = []
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
            ci = COMPONENTS.index(comp)
            n2 = cut.normal[own, ci] ** 2
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
            at = tuple(a[own] for a in cut.index)
            index[comp][at] = ids
            # the table's quantised diagonal, made exact by the sparse correction
            eps_q = eps_b + q / levels * (m.eps_r - eps_b)
            residual.append((ci, np.stack(at, 1), 1.0 / eps_eff - 1.0 / eps_q))
            for cb in range(3):
                if cb != ci and COMPONENTS[cb] in index:
                    kappa.setdefault((ci, cb), []).append((np.stack(at, 1), inverse_offdiagonal(
                        fc, cut.normal[own, ci], cut.normal[own, cb], m.eps_r, eps_b)))
    shapes = {COMPONENTS.index(c): (*index[c].shape, 1)[:3] for c in comps}
    sm = Smoothing(media, index, couple(kappa, shapes), tuple(residual), kappa)
    # A sample in PEC is held at zero: a coupling through it feeds the update energy
    # that its reset discards (a smoothed dielectric touching PEC grew 1e18 times in
    # 40,000 steps with them).
    conductor = np.array([isinstance(m, PEC) for m in media])
    return without(sm, {COMPONENTS.index(c): conductor[index[c]] for c in comps})


def without(sm: Smoothing, masks: list[np.ndarray]) -> Smoothing:
    """``sm`` without the couplings (both directions, so K stays symmetric) and diagonal
    residuals at the E samples that ``masks[c]`` (a bool array per component c) marks."""
    def off(c: int, idx: np.ndarray) -> np.ndarray:
        m = masks[c]
        return ~m.reshape((*m.shape, 1, 1)[:idx.shape[1]])[tuple(idx.T)]

    couplings = []
    for c in sm.couplings:
        keep = off(c.a, c.p) & off(c.b, c.q)
        couplings.append(Couplings(c.a, c.b, c.p[keep], c.q[keep], c.w[keep],
                                   None if c.w_t is None else c.w_t[keep]))
    residual = tuple((comp, idx[off(comp, idx)], dk[off(comp, idx)])
                     for comp, idx, dk in sm.residual)
    return dataclasses.replace(sm, couplings=tuple(couplings), residual=residual)


def largest_inverse_eps(sm: Smoothing, enough: float = 0.0) -> float:
    """Largest eigenvalue of the smoothed D-to-E map K (relative, 1/eps_r units) on the
    samples the smoothing touches: the FDTD leapfrog with K is stable while it stays
    below 1 / (courant^2 eps_min) (eps_min: the least eps_r the time step assumed).
    K is symmetric; its off-diagonal part can lift the largest eigenvalue slightly above
    the largest 1/eps of the media (a few 1e-3 measured), so the lowering checks it.
    Returns an upper estimate: Gershgorin's row bound where it is <= ``enough`` (low
    contrast), else Lanczos (seconds on large surfaces)."""
    import scipy.sparse as sps
    import scipy.sparse.linalg as spla

    inv_tab = np.array([1.0 / m.eps_r if isinstance(m, Medium) else 0.0 for m in sm.media])
    sites = {}
    for c, idx, _ in sm.residual:
        sites.setdefault(c, []).append(idx)
    for cp in sm.couplings:
        sites.setdefault(cp.a, []).append(cp.p)
        sites.setdefault(cp.b, []).append(cp.q)
    if not sites:
        return 0.0  # nothing smoothed: the media's own bound holds
    offset, keys, start = {}, {}, 0
    for c, parts in sorted(sites.items()):
        u = np.unique(np.concatenate(parts), axis=0)
        keys[c], offset[c] = u, start
        start += len(u)

    def pos(c, idx):
        u = keys[c]
        flat = np.ravel_multi_index(u.T, np.max(u, 0) + 2)
        order = np.argsort(flat)
        look = np.ravel_multi_index(idx.T, np.max(u, 0) + 2)
        return offset[c] + order[np.searchsorted(flat[order], look)]

    diag = np.concatenate([inv_tab[sm.index[COMPONENTS[c]][tuple(keys[c].T)]]
                           for c in sorted(keys)])
    for c, idx, dk in sm.residual:
        np.add.at(diag, pos(c, idx), dk)
    rows, cols, vals = [np.arange(start)], [np.arange(start)], [diag]
    for cp in sm.couplings:
        p, q = pos(cp.a, cp.p), pos(cp.b, cp.q)
        rows += [p, q]
        cols += [q, p]
        vals += [cp.w, cp.w]
    K = sps.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                       shape=(start, start))
    if start < 2000:
        return float(np.linalg.eigvalsh(K.toarray()).max())
    gersh = float((abs(K).sum(axis=1).A1).max())
    if gersh <= enough:
        return gersh
    # Lanczos to 1e-3 and that much added: an upper estimate in a second, where 1e-6
    # took 9 s at 128^3 (the top of the spectrum clusters at the background's 1/eps)
    lam = float(spla.eigsh(K, k=1, which="LA", tol=1e-3, return_eigenvectors=False)[0])
    return lam * (1 + 1e-3)


def couple(entries: dict, shapes: dict) -> tuple[Couplings, ...]:
    """Symmetric :class:`Couplings` from off-diagonal tensor entries at cut samples:
    ``entries[(a, b)]`` a list of (idx (P, 3) of E_a samples, value (P,)) of entry
    (a, b) (real or complex; the (b, a) entries at E_b samples likewise); ``shapes``:
    component -> array shape."""
    out = []
    for a in range(3):
        for b in range(a + 1, 3):
            if (a, b) not in entries and (b, a) not in entries:
                continue

            def joined(key):
                parts = entries.get(key, [])
                if not parts:
                    return np.zeros((0, 3), np.int64), np.zeros(0)
                return (np.concatenate([x for x, _ in parts]),
                        np.concatenate([k for _, k in parts]))
            out.append(_pairs(a, b, joined((a, b)), joined((b, a)), shapes[b]))
    return tuple(out)


def average(grid: YeeGrid, background, structures, media: list, index: dict, *,
            planar: bool = False, samples: int = 6, levels: int = 64
            ) -> tuple[list, dict]:
    """(media, index) of :func:`smooth` (the diagonal part only)."""
    sm = smooth(grid, background, structures, media, index, planar=planar, samples=samples,
                levels=levels)
    return sm.media, sm.index


__all__ = [
    "Couplings",
    "Cut",
    "Smoothing",
    "average",
    "couple",
    "cut_samples",
    "inverse_eps",
    "inverse_offdiagonal",
    "largest_inverse_eps",
    "off_diagonal",
    "smooth",
    "tensor_eps",
    "without",
]
