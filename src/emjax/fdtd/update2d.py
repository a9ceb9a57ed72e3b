"""Pure, jittable 2D Yee updates (TMz and TEz) with CPML or split-field PML slabs.

Everything is invariant along z, so the 3D curl keeps only its x and y derivatives
(``CURL_TERMS`` of :mod:`emjax.fdtd.cpml` without the z terms):

    TMz (Ez, Hx, Hy):  Hx -= db dEz/dy,  Hy += db dEz/dx,  Ez += cb (dHy/dx - dHx/dy)
    TEz (Hz, Ex, Ey):  Hz -= db (dEy/dx - dEx/dy),  Ex += cb dHz/dy,  Ey -= cb dHz/dx

(forward differences for H, backward for E; Taflove and Hagness 2005, sec. 3.7).
A field group is a tuple of 2D arrays (nx, ny), x then y, in component order: TMz
E = (Ez,), H = (Hx, Hy); TEz E = (Ex, Ey), H = (Hz,). Sample positions are those of
:mod:`emjax.grid.yee` in x and y; low faces hold tangential E (zeroed: PEC or PML
backing), the high walls are implicit zeros beyond the arrays.

Absorbing layers live on slabs along x or y (:class:`emjax.fdtd.cpml.Slab`) and hold
their state only there:

* CPML (Roden and Gedney 2000): psi of each curl term across the slab, as in 3D.
* Split-field PML (Berenger 1994; seed 002): the z component is split into the part
  driven by the x derivative and the part driven by the y derivative
  (Ez = Ezx + Ezy). A slab along axis a stores only its own part P_a; the other part
  is the total minus it, and where slabs of x and y overlap (corners) both parts are
  stored and sum to the total. With the slab's semi-implicit coefficients (A, B) of
  medium plus PML loss and the bulk ones (a, b), the split update is the bulk update
  plus ``(A - a) P_a + (B - b) (curl term along a)``, and P_a itself advances as
  ``A P_a + B (curl term)``. The in-plane components are not split: their slab term
  is ``(A - a) F + (B - b) (curl term)``.

Both slab kinds pass through ``lax.optimization_barrier`` and then enter the one fused
field expression zero-padded (the 3D 'combined' strategy: 90% of the bare step in 3D,
where ``.at[slab].add`` cost 70%; see :mod:`emjax.fdtd.update3d`), or are added after
it over their slab in place (:attr:`Layout2D.fold`, the backend's choice made in the
lowering: folded on accelerators, in place on a CPU, where the folded TMz step at
2048^2 ran at 160-800 Mcells/s from one run to the next and in place at 750-800). Bytes per
cell of a float32 TMz step outside the slabs: the H pass reads Ez, Hx, Hy and writes
Hx, Hy (20 B), the E pass reads Ez, Hx, Hy and writes Ez (16 B), plus 1 B per uint8
material index read (none in a uniform medium): 36-39 B.

A one-pass step (the E update reading neighbouring new H recomputed from the old
fields, 24 B per cell if fused) equalled the two-pass step to rounding but ran 2.4x
slower on a CPU; it lives in ``benchmarks/fdtd2d_one_pass.py`` until a GPU measurement
says otherwise (BENCHMARKS.md).

TF/SF plane waves (:func:`tfsf_add`) and conformal PEC cells (:func:`conformal_h`)
are sparse scatter updates after the fused ones. Dispersive media add their poles'
currents to the E curl as box patches (:mod:`emjax.fdtd.dispersive`, the 3D kernel:
its boxes are 2D here, its field tuple the polarization's E group).

Static choices live in :class:`Layout2D`; coefficient arrays in pytrees.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax.numpy as jnp
from jax import lax

from . import auxgrid, dispersive
from .auxgrid import sample
from .cpml import CURL_TERMS, Slab
from .fieldstore import AS_COMPUTED
from .update3d import (
    _mask_low,
    _slab_diff,
    add_at,
    coefficient,
    diff_backward,
    diff_forward,
    inject,
)

POLARIZATIONS = {"TMz": ((2,), (0, 1)), "TEz": ((0, 1), (2,))}
"""Component numbers (0, 1, 2 = x, y, z) of the E and H groups of each polarization."""


@dataclass(frozen=True)
class Layout2D:
    """Static description of a 2D grid's update (hashable; part of the jit cache key).

    shape: (nx, ny); inv_d: (1/dx, 1/dy) in 1/m; polarization: "TMz" or "TEz";
    slabs: PML slabs (axis 0 or 1); split: keys of the slabs that are split-field
    PMLs (the others are CPML); fold: slab terms folded into the fused update
    zero-padded (True) or added after it in place (False).
    """

    shape: tuple[int, int]
    inv_d: tuple[float, float]
    polarization: str = "TMz"
    slabs: tuple[Slab, ...] = ()
    split: tuple[str, ...] = ()
    fold: bool = True
    pmc_low: tuple[bool, bool] = (False, False)  # no PMC in 2D (update3d.diff_backward
    pmc_high: tuple[bool, bool] = (False, False)  # reads these)

    @property
    def strategy(self) -> str:
        """The PML slabs' strategy's name (as 3D's): "combined" or "per_face"."""
        return "combined" if self.fold else "per_face"

    @property
    def comps(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(E components, H components) as numbers 0, 1, 2."""
        return POLARIZATIONS[self.polarization]


def curl_terms(comp: int) -> tuple[tuple[int, int, int], ...]:
    """(sign, source component, derivative axis) of the 2D curl of component ``comp``."""
    return tuple(t for t in CURL_TERMS[comp] if t[2] != 2)


def _along(v, axis: int):
    """A 1D array shaped to broadcast along ``axis`` of a 2D array."""
    return v[:, None] if axis == 0 else v[None, :]


def _pad_to_full(x, slab: Slab, n: int):
    cfg = [(0, 0, 0)] * 2
    cfg[slab.axis] = (slab.start, n - slab.start - slab.length, 0)
    return lax.pad(x, jnp.zeros((), x.dtype), cfg)


def _slab_part(F, slab: Slab):
    return lax.slice_in_dim(F, slab.start, slab.start + slab.length, axis=slab.axis)


def _pad_patch(x, start, shape):
    """A box patch placed at ``start`` in a zero array of ``shape`` (fused by XLA)."""
    cfg = [(start[a], shape[a] - start[a] - x.shape[a], 0) for a in range(2)]
    return lax.pad(x, jnp.zeros((), x.dtype), cfg)


def _update(F, G, coeffs, pml, psi, lay: Layout2D, *, electric: bool, extra=None):
    """Shared body of the E and H updates: new F and new slab state.

    F: the group being advanced; G: the group whose curl drives it; psi: {slab key:
    {component: array}} (CPML psi or the split part); extra: None or, per group
    position, a list of (start, patch) terms added to the curl (the dispersive boxes'
    currents, :mod:`emjax.fdtd.dispersive`), folded into the fused update.
    """
    f_comps, g_comps = lay.comps if electric else lay.comps[::-1]
    sign = 1.0 if electric else -1.0
    fkey = "E" if electric else "H"
    new_F, new_psi = [], {s.key: {} for s in lay.slabs}
    for pos, comp in enumerate(f_comps):
        curl, curl_slab, out_slab = None, [], []
        for s_, src, ax in curl_terms(comp):
            g = G[g_comps.index(src)]
            d = diff_backward(g, ax, lay) if electric else diff_forward(g, ax)
            term = s_ * lay.inv_d[ax] * d
            curl = term if curl is None else curl + term
        for start, x in (extra[pos] if extra is not None else ()):
            curl = curl + _pad_patch(x.astype(curl.dtype), start, lay.shape)
        for slab in lay.slabs:
            terms = [t for t in curl_terms(comp) if t[2] == slab.axis]
            if not terms:
                continue
            (s_, src, ax), = terms
            D = s_ * lay.inv_d[ax] * _slab_diff(G[g_comps.index(src)], ax, slab,
                                                backward=electric)
            p = pml[slab.key]
            if slab.key in lay.split:
                c = p[fkey][comp]
                if comp == 2:  # the split component: advance its part along this axis
                    X = psi[slab.key][comp]
                    new_psi[slab.key][comp] = c["A"] * X + sign * c["B"] * D
                else:
                    X = _slab_part(F[pos], slab)
                out_slab.append((slab, c["dA"] * X + sign * c["dB"] * D))
            else:
                pb, pc, pk = p.of(fkey)
                psi_new = _along(pb, ax) * psi[slab.key][comp] + _along(pc, ax) * D
                new_psi[slab.key][comp] = psi_new
                curl_slab.append((slab, _along(pk, ax) * D + psi_new))
        a, b = coefficient(coeffs, pos)
        if curl_slab or out_slab:
            # Materialise the slab terms (slab-sized traffic) so that XLA does not
            # recompute them inside the bulk kernel (update3d: 30.0 -> 35.5 Gcells/s).
            slabs_, terms_ = zip(*(curl_slab + out_slab), strict=True)
            terms_ = lax.optimization_barrier(list(terms_))
            # CPML terms join the curl (times b), split-field terms the new field
            in_curl = [(sl, t, True) for sl, t in zip(slabs_[:len(curl_slab)],
                                                      terms_[:len(curl_slab)], strict=True)]
            in_out = [(sl, t, False) for sl, t in zip(slabs_[len(curl_slab):],
                                                      terms_[len(curl_slab):], strict=True)]
            out = _with_slabs(F[pos], curl, a, sign * b, in_curl + in_out, lay)
        else:
            out = a * F[pos] + sign * b * curl
        if electric:  # tangential E on the low faces is zero (PEC or PML backing)
            out = _mask_low(out, [a_ for a_ in range(2) if a_ != comp])
        new_F.append(out)
    return tuple(new_F), new_psi


def _with_slabs(F, curl, a, sb, terms, lay: Layout2D):
    """``a F + sb curl`` with each slab term (slab, t, times_b) added: ``sb t`` (a CPML
    curl term) or ``t`` (a split-field term), folded zero-padded or in place after
    the fused update (:attr:`Layout2D.fold`; constant starts: in place on XLA:CPU)."""
    if lay.fold:
        for slab, t, times_b in terms:
            if times_b:
                curl = curl + _pad_to_full(t, slab, lay.shape[slab.axis])
        out = a * F + sb * curl
        for slab, t, times_b in terms:
            if not times_b:
                out = out + _pad_to_full(t, slab, lay.shape[slab.axis])
        return out
    out = lax.optimization_barrier(a * F + sb * curl)
    for slab, t, times_b in terms:
        start = [0, 0]
        start[slab.axis] = slab.start
        where = tuple(slice(s0, s0 + n) for s0, n in zip(start, t.shape, strict=True))
        out = add_at(out, (sb if jnp.ndim(sb) == 0 else sb[where]) * t if times_b else t,
                     start)
    return out


def update_H(E, H, coeffs_H, pml, psi_H, lay: Layout2D):
    """Advance H by one step: H^{n+1/2} from H^{n-1/2} and E^n."""
    return _update(H, E, coeffs_H, pml, psi_H, lay, electric=False)


def update_E(E, H, coeffs_E, pml, psi_E, lay: Layout2D, extra=None):
    """Advance E by one step (no sources): E^{n+1} from E^n and H^{n+1/2} (``extra``:
    curl patches, see :func:`_update`)."""
    return _update(E, H, coeffs_E, pml, psi_E, lay, electric=True, extra=extra)


def zeros_psi(lay: Layout2D, dtype) -> tuple[dict, dict]:
    """Zero slab state for E and H: ({key: {comp: array}}, same for H).

    CPML slabs carry psi for every component with a curl term across the slab;
    split-field slabs carry only the part of the z component (Ez or Hz).
    """
    out = []
    for electric in (True, False):
        comps = lay.comps[0 if electric else 1]
        psi = {}
        for slab in lay.slabs:
            shape = slab.psi_shape(lay.shape)
            keep = [c for c in comps if any(t[2] == slab.axis for t in curl_terms(c))]
            if slab.key in lay.split:
                keep = [c for c in keep if c == 2]
            psi[slab.key] = {c: jnp.zeros(shape, dtype) for c in keep}
        out.append(psi)
    return out[0], out[1]


def tfsf_add(F, terms, inc):
    """Add TF/SF corrections to a field group.

    terms: {position in the group: (index tuple of 2 int arrays, weight, aux index,
    aux weight)}; each listed sample gets ``weight * inc(s)``, the incident 1D field
    ``inc`` interpolated linearly at its precomputed position (the weight holds the
    update coefficient, 1/d, the curl's signs and the field's direction component).
    """
    F = list(F)
    for pos, (index, weight, idx, w) in terms.items():
        F[pos] = F[pos].at[index].add(weight * sample(inc, idx, w))
    return tuple(F)


def conformal_h(H_new, H_old, E, cut):
    """Dey-Mittra conformal PEC (TEz): recompute Hz on the cells a PEC boundary cuts.

    cut: (index tuple of the cut cells, da there, {E position: (index tuple, coef)} with
    the two edges of that component stacked, each of shape (2 n_cut,)):
    ``Hz = da Hz_old + sum_k coef_k E_k`` over the four edges of each cell, where coef
    holds -+ db l_k / A_free (free edge length over free cell area; Dey and Mittra,
    IEEE MGWL 7, 273, 1997). Faraday's law over the part of the cell outside the
    conductor, whose boundary carries no tangential E.
    """
    index, da, terms = cut
    val = da * H_old[0][index]
    for pos, (q, coef) in terms.items():
        val = val + jnp.sum((coef * E[pos][q]).reshape(2, -1), axis=0)
    return (H_new[0].at[index].set(val),)


def offdiag_e(E, H, terms):
    """Add the off-diagonal smoothed-permittivity terms (TEz) to E: ``terms`` {E position:
    (index tuple, Hz index tuple, coef)} of :func:`emjax.fdtd.offdiag2d.stencils`."""
    E = list(E)
    for pos, (index, q, coef) in terms.items():
        val = jnp.sum((coef * H[0][q]).reshape(8, -1), axis=0)
        E[pos] = E[pos].at[index].add(val)
    return tuple(E)


def step(E, H, psi_E, psi_H, coeffs, pml, lay: Layout2D, src_E=None, src_H=None, tfsf=None,
         cut=None, poles=None, offdiag=None, fields=AS_COMPUTED, points=None):
    """One leapfrog step with sources: (E, H, psi_E, psi_H, aux, disp) at the next step.

    src_E / src_H: (sources, values) for :func:`emjax.fdtd.update3d.inject` on the
    E group (electric currents, after the E update) and on the H group (magnetic
    currents, after the H update); None for none. tfsf: None or a list of plane
    waves (aux coefficients, aux state, {"H": terms, "E": terms}, hard-source value),
    each advanced on its 1D grid (:mod:`emjax.fdtd.auxgrid`) between the updates.
    cut: the conformal PEC cells of :func:`conformal_h` (TEz), or None. poles: None
    or the dispersive media (disp, coefficients, boxes, dt in s, eps0 in F/m) of
    :func:`emjax.fdtd.dispersive.step_E`; disp: their carried state at the next step
    (() if none). offdiag: None or the TEz off-diagonal permittivity terms of
    :func:`offdiag_e`, added to E^{n+1} with H^{n+1/2}. fields: the storage of E and H
    (:mod:`emjax.fdtd.fieldstore`): E, H come in loaded and go out stored, H^{n+1/2}
    stored before the E update reads it. points: None, or src_E as curl patches of the E
    update (:func:`emjax.fdtd.update3d.source_patches`), which then replace src_E.
    """
    tfsf = tfsf or []
    H_old = H
    H, psi_H = update_H(E, H, coeffs["H"], pml, psi_H, lay)
    if cut is not None:
        H = conformal_h(H, H_old, E, cut)
    for _, a, terms, _ in tfsf:  # H^{n+1/2} needs the incident E^n
        H = tfsf_add(H, terms["H"], a["e"])
    if src_H is not None:
        H = inject(H, *src_H)
    H_kept = fields.kept(H, "H")
    H = fields.load(H_kept, "H")
    aux = [auxgrid.step_h(c, a) for c, a, _, _ in tfsf]

    def finish(E):
        if offdiag is not None:
            E = offdiag_e(E, H, offdiag)
        for (_, _, terms, _), a in zip(tfsf, aux, strict=True):  # E^{n+1} needs H^{n+1/2}
            E = tfsf_add(E, terms["E"], a["h"])
        return E if src_E is None or points is not None else inject(E, *src_E)

    if poles is None:
        E, psi_E = update_E(E, H, coeffs["E"], pml, psi_E, lay, points)
        E, disp = finish(E), ()
    else:
        disp, c_poles, boxes, dt, eps0 = poles
        E, psi_E, disp = dispersive.step_E(
            E, disp, c_poles, boxes, points,
            lambda E_n, extra: update_E(E_n, H, coeffs["E"], pml, psi_E, lay, extra),
            dt, eps0)
        E = finish(E)  # the poles read the final E^{n+1} at the next step
    aux = [auxgrid.step_e(c, a, v) for (c, _, _, v), a in zip(tfsf, aux, strict=True)]
    return fields.store(E, "E"), H_kept, psi_E, psi_H, aux, disp


__all__ = ["POLARIZATIONS", "Layout2D", "conformal_h", "curl_terms", "offdiag_e", "step",
           "tfsf_add", "update_E", "update_H", "zeros_psi"]
