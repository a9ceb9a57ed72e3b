"""Far field and RCS of an FDFD solution: the scattered fields sampled on a closed
(Huygens) box and handed to :mod:`emjax.analysis.nf2ff`, the one near-to-far transform.

:func:`huygens` fixes everything that does not depend on the fields (the box between
the scatterers and the PML, its samples, normals and areas, and for every Yee component
the 8 grid values and trilinear weights each sample interpolates) as NumPy arrays;
:func:`box_far_field` applies it to fields of either array module: NumPy for the
solver's bistatic RCS (:func:`bistatic_rcs`), ``jax.numpy`` for the differentiable
RCS objective of :mod:`emjax.fdfd.adjoint` (the interpolation is a gather and a
weighted sum, so the same code traces). Time convention e^{+j omega t}.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis import nf2ff
from ..grid.yee import OFFSETS

E_COMPS, H_COMPS = ("Ex", "Ey", "Ez"), ("Hx", "Hy", "Hz")


@dataclass(frozen=True)
class Huygens:
    """A sampled Huygens box: ``points`` (P, 3) m, outward ``normals`` (P, 3), areas
    ``weights`` (P,) m^2; ``taps[comp]`` = (flat indices (8, P), weights (8, P)) of the
    trilinear interpolation of that Yee component onto the points; ``frequency`` Hz;
    ``amplitude`` the incident plane wave's complex amplitude (V/m)."""

    points: np.ndarray
    normals: np.ndarray
    weights: np.ndarray
    taps: dict
    frequency: float
    amplitude: complex


def huygens_box(sim, st) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) corners in m of the closed sampling box, midway between scatterers and PML."""
    t = st.pml
    d = np.array(st.grid.spacing)
    lower = np.array(st.grid.lower)
    upper = lower + np.array(st.grid.cells) * d
    ilo, ihi = lower + (t + 1) * d, upper - (t + 1) * d
    if sim.structures:
        slo = np.min([s.geometry.bounds()[0] for s in sim.structures], axis=0)
        shi = np.max([s.geometry.bounds()[1] for s in sim.structures], axis=0)
    else:
        slo = shi = 0.5 * (lower + upper)
    return 0.5 * (ilo + slo), 0.5 * (ihi + shi)


def _box_points(lo, hi, d):
    pts, nrm, wts = [], [], []
    for a in range(3):
        b, c = [i for i in range(3) if i != a]
        nb = max(2, int(np.ceil((hi[b] - lo[b]) / d[b])))
        nc = max(2, int(np.ceil((hi[c] - lo[c]) / d[c])))
        ub = lo[b] + (np.arange(nb) + 0.5) * (hi[b] - lo[b]) / nb
        uc = lo[c] + (np.arange(nc) + 0.5) * (hi[c] - lo[c]) / nc
        gb, gc = np.meshgrid(ub, uc, indexing="ij")
        w = (hi[b] - lo[b]) * (hi[c] - lo[c]) / (nb * nc)
        for side, val in ((-1.0, lo[a]), (1.0, hi[a])):
            p = np.empty((gb.size, 3))
            p[:, a], p[:, b], p[:, c] = val, gb.ravel(), gc.ravel()
            n = np.zeros((gb.size, 3))
            n[:, a] = side
            pts.append(p)
            nrm.append(n)
            wts.append(np.full(gb.size, w))
    return np.concatenate(pts), np.concatenate(nrm), np.concatenate(wts)


def _taps(grid, comp: str, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices and weights (8, P) of trilinear interpolation of component ``comp``
    (shape ``grid.shape``) at ``pts``; coordinates clamped to the grid (scipy's
    ``map_coordinates(order=1, mode="nearest")``)."""
    shape = tuple(grid.shape)
    lo_i, frac = [], []
    for a in range(3):
        u = (pts[:, a] - grid.lower[a]) / grid.spacing[a] - OFFSETS[comp][a]
        u = np.clip(u, 0, shape[a] - 1)
        i0 = np.minimum(np.floor(u).astype(np.int64), max(shape[a] - 2, 0))
        lo_i.append(i0)
        frac.append(u - i0)
    idx, wts = [], []
    for corner in range(8):
        bits = [(corner >> a) & 1 for a in range(3)]
        ii = [np.minimum(lo_i[a] + bits[a], shape[a] - 1) for a in range(3)]
        idx.append(np.ravel_multi_index(ii, shape))
        wts.append(np.prod([frac[a] if bits[a] else 1 - frac[a] for a in range(3)], axis=0))
    return np.stack(idx), np.stack(wts)


def huygens(sim, st, lo=None, hi=None) -> Huygens:
    """The sampled box of corners ``lo``, ``hi`` (m; default :func:`huygens_box`), which
    must enclose every scatterer (a design region included) and stay outside the PML."""
    dlo, dhi = huygens_box(sim, st)
    lo = dlo if lo is None else np.asarray(lo, np.float64)
    hi = dhi if hi is None else np.asarray(hi, np.float64)
    pts, nrm, wts = _box_points(lo, hi, st.grid.spacing)
    taps = {c: _taps(st.grid, c, pts) for c in E_COMPS + H_COMPS}
    return Huygens(points=pts, normals=nrm, weights=wts, taps=taps,
                   frequency=float(sim.frequency), amplitude=complex(sim.incident.amplitude))


def sample(box: Huygens, comp: str, arr, xp=np):
    """Component ``comp`` (an array of the grid's shape, NumPy or JAX) at the box's points."""
    idx, w = box.taps[comp]
    return xp.sum(w * arr.reshape(-1)[idx], axis=0)


def box_far_field(box: Huygens, e, h, theta, phi, xp=np):
    """(E_theta, E_phi) times r e^{jkr} (V) of the scattered fields ``e``, ``h`` (3, nx,
    ny, nz) through :func:`emjax.analysis.nf2ff.far_field`; ``xp`` their array module."""
    E = xp.stack([sample(box, c, e[a], xp) for a, c in enumerate(E_COMPS)], 1)
    H = xp.stack([sample(box, c, h[a], xp) for a, c in enumerate(H_COMPS)], 1)
    return nf2ff.far_field(box.points, box.normals, box.weights, E, H, box.frequency,
                           theta, phi, xp=xp)


def far_field(sim, st, e, h, theta, phi):
    """(E_theta, E_phi) times r e^{jkr} of the scattered fields (NumPy) on the default box."""
    return box_far_field(huygens(sim, st), np.asarray(e), np.asarray(h), theta, phi)


def bistatic_rcs(sim, st, e, h, n_angles: int = 181):
    """(theta deg, E-plane RCS m², H-plane RCS m²) over 0..180 degrees.

    The planes are those of the incident wave: E-plane spanned by k_hat and e_hat, H-plane
    by k_hat and h_hat; theta is the angle from the forward direction k_hat.
    """
    inc = sim.incident
    box = huygens(sim, st)
    e, h = np.asarray(e), np.asarray(h)
    th = np.linspace(0.0, np.pi, n_angles)
    out = []
    for u in (inc.e_hat, inc.h_hat):
        dirs = np.cos(th)[:, None] * inc.k_hat + np.sin(th)[:, None] * u
        obs_t = np.arccos(np.clip(dirs[:, 2], -1, 1))
        obs_p = np.arctan2(dirs[:, 1], dirs[:, 0])
        et, ep = box_far_field(box, e, h, obs_t, obs_p)
        out.append(nf2ff.rcs(et, ep, inc.amplitude))
    return np.degrees(th), out[0], out[1]


__all__ = ["Huygens", "bistatic_rcs", "box_far_field", "far_field", "huygens", "huygens_box",
           "sample"]
