"""Total-field/scattered-field (TF/SF) plane-wave injection for the 3D Yee grid.

The TF/SF box is the set of E nodes with integer indices ``lo <= (i, j, k) <= hi``
(along each axis): E samples on or inside its faces hold the total field, all other
samples the scattered field. Where a curl couples a sample of one region to a
sample of the other, the stored neighbour is replaced by the field of the first
one's region by adding or subtracting the incident field there (Taflove and Hagness
2005, sec. 5.6; Umashankar and Taflove 1982). On the face normal to axis ``a``
only two couplings exist for each tangential pair (E_e, H_h), h the third axis:

* E update: E_e on the face plane (TF) reads H_h half a cell outside (SF);
* H update: H_h half a cell outside (SF) reads E_e on the face plane (TF);

and both corrections are ``-/+ s * inc / d_a`` added to the curl on the low/high
face, s the sign of that derivative in the curl (``cpml.CURL_TERMS``). Every
correction is a patch of one plane; after the fused bulk update the field gets
``+= sign * b * patch`` on that patch alone, in place (``update3d._add_patches``,
a dynamic-update-slice of a buffer nothing else reads), so a step does no
whole-domain work for the source, or they are folded zero-padded into the fused
expression, as the CPML slabs are: 2.5x slower on a CPU, 2.7x faster on an H100
(``update3d.Layout.tfsf_fold``, chosen per backend by the lowering).

The incident field comes from a dispersion-matched 1D grid along k_hat
(:mod:`emjax.fdtd.auxgrid`), sampled by linear interpolation at the projection of
every correction point; E_inc = e_hat e_aux and H_inc = h_hat h_aux.

Host side: :func:`build`. Traced side: :func:`corrections`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import auxgrid
from .cpml import CURL_TERMS, tangential

_OFFSETS_E = ((0.5, 0, 0), (0, 0.5, 0), (0, 0, 0.5))
_OFFSETS_H = ((0, 0.5, 0.5), (0.5, 0, 0.5), (0.5, 0.5, 0))


@dataclass(frozen=True)
class Term:
    """One correction patch (static): added to the curl of ``field`` component ``comp``
    over array entries ``start`` .. ``start + shape``; ``source`` is "h" (E update,
    from the 1D grid's h) or "e" (H update, from its e)."""

    field: str
    comp: int
    start: tuple[int, int, int]
    shape: tuple[int, int, int]
    source: str


@dataclass(frozen=True, eq=False)
class TFSF:
    """A TF/SF box ready to run: its 1D grid, static terms and per-term arrays.

    aux: the 1D grid; terms: tuple of :class:`Term`; arrays: per term
    {"idx": int32, "w": weights, "f": factor} (NumPy); origin: the point (m) where
    the 1D coordinate s = k_hat . (r - origin) is zero, the box corner the wave
    reaches first; lo, hi: the box's E-node index corners.
    """

    aux: auxgrid.AuxGrid
    terms: tuple[Term, ...]
    arrays: tuple[dict, ...]
    origin: np.ndarray
    k_hat: np.ndarray
    lo: tuple[int, int, int]
    hi: tuple[int, int, int]

    def s_of(self, points) -> np.ndarray:
        """1D coordinate (m) of points (..., 3)."""
        return auxgrid.project(points, self.k_hat, self.origin)


def build(shape, spacing, lower, lo, hi, k_hat, e_hat, h_hat, dt: float, f_ref: float,
          *, eps_r: float = 1.0, mu_r: float = 1.0, dtype=np.float32) -> TFSF:
    """The TF/SF corrections of a box with E-node corners ``lo``, ``hi`` (indices).

    shape: the physical field array shape (``YeeGrid.nodes``, without z padding);
    spacing, lower: (dx, dy, dz) and the grid's lower
    corner in m; k_hat, e_hat, h_hat: unit propagation, E and H directions; dt: time
    step in s; f_ref: the dispersion-match frequency in Hz; eps_r, mu_r: the medium
    on the box surface. Requires 1 <= lo and hi <= shape - 2 on every axis.
    """
    d = np.asarray(spacing, dtype=np.float64)
    low = np.asarray(lower, dtype=np.float64)
    k_hat, e_hat, h_hat = (np.asarray(v, dtype=np.float64) for v in (k_hat, e_hat, h_hat))
    for a in range(3):
        if not (1 <= lo[a] < hi[a] <= shape[a] - 2):
            raise ValueError(f"TF/SF box indices {lo}..{hi} along {'xyz'[a]} must satisfy "
                             f"1 <= lo < hi <= {shape[a] - 2}")
    corners = np.array([[low[a] + (hi[a] if (c >> a) & 1 else lo[a]) * d[a] for a in range(3)]
                        for c in range(8)])
    origin = corners[np.argmin(corners @ k_hat)]
    raw = []  # (term, positions (..., 3), factor)
    for ax in range(3):
        for side, a_f in (("low", lo[ax]), ("high", hi[ax])):
            sgn = -1.0 if side == "low" else 1.0
            for e in tangential(ax):
                h = 3 - ax - e
                start = [0, 0, 0]
                size = [0, 0, 0]
                start[ax], size[ax] = a_f, 1
                start[e], size[e] = lo[e], hi[e] - lo[e]
                start[h], size[h] = lo[h], hi[h] - lo[h] + 1
                # E_e positions of the patch (H_h shares them except along ax).
                axes_pos = []
                for b in range(3):
                    idx = start[b] + np.arange(size[b])
                    axes_pos.append(low[b] + (idx + _OFFSETS_E[e][b]) * d[b])
                h_pos = list(axes_pos)
                h_pos[ax] = axes_pos[ax] + (-0.5 if side == "low" else 0.5) * d[ax]
                # E update of E_e from H_h's incident field.
                s_e = next(t[0] for t in CURL_TERMS[e] if t[2] == ax)
                if h_hat[h] != 0:
                    raw.append((Term("E", e, tuple(start), tuple(size), "h"),
                                _mesh(h_pos), sgn * s_e / d[ax] * h_hat[h]))
                # H update of H_h (one plane further out on the low side) from E_e's.
                s_h = next(t[0] for t in CURL_TERMS[h] if t[2] == ax)
                if e_hat[e] != 0:
                    hstart = list(start)
                    hstart[ax] = a_f - 1 if side == "low" else a_f
                    raw.append((Term("H", h, tuple(hstart), tuple(size), "e"),
                                _mesh(axes_pos), sgn * s_h / d[ax] * e_hat[e]))
    s_all = [auxgrid.project(p, k_hat, origin) for _, p, _ in raw]
    s_min = min(float(s.min()) for s in s_all)
    s_max = max(float(s.max()) for s in s_all)
    aux = auxgrid.make_aux_grid(k_hat, d, dt, f_ref, s_min, s_max, eps_r=eps_r, mu_r=mu_r)
    terms, arrays = [], []
    for (term, _, factor), s in zip(raw, s_all, strict=True):
        idx, w = aux.interpolation(s, term.source)
        terms.append(term)
        arrays.append({"idx": idx.astype(np.int32), "w": w.astype(dtype),
                       "f": np.asarray(factor, dtype)})
    return TFSF(aux=aux, terms=tuple(terms), arrays=tuple(arrays), origin=origin,
                k_hat=k_hat, lo=tuple(lo), hi=tuple(hi))


def _mesh(axes_pos) -> np.ndarray:
    X, Y, Z = np.meshgrid(*axes_pos, indexing="ij")
    return np.stack([X, Y, Z], axis=-1)


def corrections(terms, arrays, aux_state, field: str):
    """Per component, the list of (start, patch) curl corrections of the ``field``
    ("E" or "H") update, from the 1D grid's state at the right time (e^n for the H
    update, h^{n+1/2} for the E update)."""
    out: tuple[list, list, list] = ([], [], [])
    for t, a in zip(terms, arrays, strict=True):
        if t.field != field:
            continue
        vals = auxgrid.sample(aux_state[t.source], a["idx"], a["w"])
        out[t.comp].append((t.start, a["f"] * vals))
    return out


__all__ = ["TFSF", "Term", "build", "corrections"]
