"""Pure, jittable 3D Yee updates with CPML slabs, sources and masks.

Fields are tuples of three arrays (x, y, z components), each of the grid's stored
shape, placed as ``emjax.grid.yee`` describes (``Layout.pad_z`` inert entries beyond
the upper z wall, held at zero by the E update). One time step is

    H^{n+1/2} = da H^{n-1/2} - db (curl E^n + CPML terms)
    E^{n+1}   = ca E^n + cb (curl H^{n+1/2} + CPML terms) - cb J^{n+1/2}

with semi-implicit loss coefficients (Taflove and Hagness 2005, eqs. 3.29-3.31) and
the CPML recursion of eq. 7.105. Curl differences are built from shifted copies
(``lax.pad`` with a negative edge), which XLA fuses into the update, so that the
bulk of a step is one read of each input and one write of each output.

CPML slab terms enter per axis (:attr:`Layout.fold`, from the scenario's strategy,
seed 001): folded, zero-padded to the full axis, into the single fused field
expression (``combined`` folds all three axes), or added after the bulk update over
their slab, in place (``per_face`` none). On a CPU the lowering's default folds z
only: XLA:CPU ran the fused update 2.5x slower with x or y slab terms padded into it,
and a z slab's in-place update (12 of every 128 contiguous entries) slowly
(BENCHMARKS.md). An in-place correction's start is traced data on accelerators
(``pml[key].start``: XLA:GPU keeps the slice read and the update on one buffer only
so; with static starts each correction copied the whole field) and a constant on a
CPU (XLA:CPU's in-place update needs it: 130 -> 290 Mcells/s). The slab terms pass
through ``lax.optimization_barrier`` first: without it XLA recomputes psi inside the
bulk kernel and the step ran 15% slower (BENCHMARKS.md).

First-order Mur faces (``fdtd/mur.py``) replace the tangential E on their boundary
planes at the end of the E update, folded: plane values computed first, written with
an index comparison in the same fused pass. (Writing them in place with
``dynamic_update_slice`` after the update moved more bytes; it left src/, see
BENCHMARKS.md.)

TF/SF patches are folded into the fused update zero-padded, or added after it in
place patch by patch: :attr:`Layout.tfsf_fold`, chosen per backend by the lowering
(``fdtd/setup.py``): folded on accelerators, in place on a CPU.

Static choices live in :class:`Layout`; arrays live in pytrees: ``coeffs`` (update
coefficients), ``pml`` (slab key -> :class:`emjax.fdtd.cpml.SlabCoefficients`: 1D b,
c, 1/kappa - 1) and the state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from .cpml import CURL_TERMS, Slab, tangential
from .mur import MurFace, mur_planes, put_planes


@dataclass(frozen=True)
class Layout:
    """Static description of a grid's update (hashable; part of the jit cache key).

    shape: array shape; inv_d: (1/dx, 1/dy, 1/dz) in 1/m; slabs: CPML slabs;
    pmc_low/pmc_high: per axis, PMC on that face (high implies an extended axis);
    pec_low: per axis, tangential E on the low face forced to zero (PEC or CPML);
    fold: per axis, CPML slab terms folded into the fused update zero-padded (True) or
    added after it in place (False); starts_as_data: in-place slab corrections take
    their start as traced data (accelerators) or as constants (CPU); mur: first-order
    Mur faces as (axis, side,
    coefficient), side 0 low and 1 high (see :mod:`emjax.fdtd.mur`); pad_z: stored
    entries beyond the upper z wall (``shape`` includes them; E is zero there);
    tfsf_fold: TF/SF patches folded into the fused update zero-padded (True) or added
    after it in place, patch by patch (False). The car-rcs step with a plane wave ran
    at 15 Mcells/s folded and 52 in place on a CPU, and at 17.3 Gcells/s folded and 6.3
    in place on an H100 (BENCHMARKS.md); the lowering picks by backend. transpose:
    reverse mode through the hand-written transpose of the update
    (:mod:`emjax.fdtd.transpose3d`; gradient runs set it, forward runs never do).
    """

    shape: tuple[int, int, int]
    inv_d: tuple[float, float, float]
    slabs: tuple[Slab, ...] = ()
    pmc_low: tuple[bool, bool, bool] = (False, False, False)
    pmc_high: tuple[bool, bool, bool] = (False, False, False)
    pec_low: tuple[bool, bool, bool] = (False, False, False)
    fold: tuple[bool, bool, bool] = (True, True, True)
    starts_as_data: bool = True
    mur: tuple[MurFace, ...] = ()
    pad_z: int = 0
    tfsf_fold: bool = False
    transpose: bool = False

    def __post_init__(self):
        if self.pad_z and self.pmc_high[2]:  # the image terms read the last stored entry
            raise ValueError("Layout: pad_z must be 0 with PMC on the upper z face")

    @property
    def strategy(self) -> str:
        """The CPML strategy's name: "combined" (all folded), "per_face" (none) or
        "mixed"."""
        return "combined" if all(self.fold) else "per_face" if not any(self.fold) else "mixed"

    @property
    def nodes(self) -> tuple[int, int, int]:
        """The physical shape: ``shape`` without the z padding."""
        return (self.shape[0], self.shape[1], self.shape[2] - self.pad_z)

    @property
    def mur_high(self) -> tuple[bool, bool, bool]:
        """Per axis, a Mur face on the upper side (its last tangential H is dead)."""
        return tuple(any(a == ax and side == 1 for ax, side, _ in self.mur) for a in range(3))


def _shift(F, axis: int, by: int):
    """F shifted by ``by`` (+1: entry i holds F[i-1]; -1: F[i+1]), zero-filled."""
    cfg = [(0, 0, 0)] * F.ndim
    cfg[axis] = (1, -1, 0) if by > 0 else (-1, 1, 0)
    return lax.pad(F, jnp.zeros((), F.dtype), cfg)


def _iota(shape, axis: int):
    return lax.broadcasted_iota(jnp.int32, shape, axis)


def diff_backward(F, axis: int, lay: Layout):
    """F[i] - F[i-1] along ``axis`` (E update), with PMC image terms where set."""
    prev = _shift(F, axis, +1)
    D = F - prev
    n = F.shape[axis]
    if lay.pmc_low[axis]:  # image H[-1] = -H[0]: the difference doubles
        D = D + jnp.where(_iota(F.shape, axis) == 0, F, 0)
    if lay.pmc_high[axis]:  # unused last entry stands for the image -H[n-2]
        D = D - jnp.where(_iota(F.shape, axis) == n - 1, prev, 0)
    return D


def diff_forward(F, axis: int):
    """F[i+1] - F[i] along ``axis`` (H update); beyond the last entry F is zero."""
    return _shift(F, axis, -1) - F


def _slab_diff(F, axis: int, slab: Slab, backward: bool):
    """The difference of F along ``axis`` restricted to ``slab`` (slab-sized work)."""
    lo, hi = _window(slab, F.shape[axis], backward)
    return _window_diff(lax.slice_in_dim(F, lo, hi, axis=axis), axis, slab, backward, lo,
                        F.shape[axis])


def _window(slab: Slab, n: int, backward: bool) -> tuple[int, int]:
    """[lo, hi) along the slab's axis: the entries its difference reads."""
    s, L = slab.start, slab.length
    lo = s - 1 if backward and s > 0 else s
    return lo, s + L + 1 if not backward and s + L < n else s + L


def _window_diff(W, axis: int, slab: Slab, backward: bool, lo: int, n: int):
    """:func:`_slab_diff` from the window W = F[lo:hi] along ``axis``."""
    s, L = slab.start - lo, slab.length
    here = lax.slice_in_dim(W, s, s + L, axis=axis)
    if backward:
        prev = _shift(here, axis, +1) if slab.start == 0 else lax.slice_in_dim(
            W, s - 1, s + L - 1, axis=axis)
        return here - prev
    nxt = _shift(here, axis, -1) if slab.start + L == n else lax.slice_in_dim(
        W, s + 1, s + L + 1, axis=axis)
    return nxt - here


def _along(v, axis: int):
    """A 1D array shaped to broadcast along ``axis`` of a 3D array."""
    shape = [1, 1, 1]
    shape[axis] = v.shape[0]
    return v.reshape(shape)


def _pad_to_full(x, slab: Slab, n: int):
    cfg = [(0, 0, 0)] * 3
    cfg[slab.axis] = (slab.start, n - slab.start - slab.length, 0)
    return lax.pad(x, jnp.zeros((), x.dtype), cfg)


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class UpdateCoefficients:
    """The update F <- a F + b curl G of one field's components (3D: 3; 2D: the
    polarization's), in one of three storages: CIS, ``a`` and ``b`` tables of the
    distinct media gathered through ``idx`` (one uint8/uint16 index array per component
    on the grid); uniform, one-entry tables and ``idx`` None; CAS, ``a`` and ``b`` tuples
    of per-component arrays on the grid and ``idx`` None. a is dimensionless, b in
    (V/m)/(A/m^2 s) for E and the dual for H, times dt."""

    a: Any
    b: Any
    idx: Any = None


def coefficient(c: UpdateCoefficients, comp: int, slices=None):
    """(a, b) update coefficients of component ``comp``: scalars, gathered or arrays."""
    if c.idx is not None:
        idx = c.idx[comp] if slices is None else c.idx[comp][slices]
        return c.a[idx], c.b[idx]
    if isinstance(c.a, tuple):
        a, b = c.a[comp], c.b[comp]
        return (a, b) if slices is None else (a[slices], b[slices])
    return c.a[0], c.b[0]


def _mask_low(F, axes, start=(0, 0, 0)):
    """Zero the index-0 plane of F along each axis in ``axes`` (PEC walls); F is the
    box of the grid that begins at ``start``."""
    if not axes:
        return F
    keep = None
    for a in axes:
        k = _iota(F.shape, a) + start[a] != 0
        keep = k if keep is None else keep & k
    return jnp.where(keep, F, 0)


def _mask_high(F, axes, nodes, start=(0, 0, 0)):
    """Zero the last physical entry (index ``nodes[a] - 1``) along each axis in ``axes``:
    the unused entry of an extended axis, or the dead half cell beyond a Mur plane."""
    if not axes:
        return F
    keep = None
    for a in axes:
        k = _iota(F.shape, a) + start[a] != nodes[a] - 1
        keep = k if keep is None else keep & k
    return jnp.where(keep, F, 0)


def _mask_padding(F, lay: Layout, start=(0, 0, 0)):
    """Zero the z padding of an E component: the wall plane's tangential E (the
    unpadded array's implicit zero beyond its end) and everything beyond it."""
    if not lay.pad_z:
        return F
    return jnp.where(_iota(F.shape, 2) + start[2] < lay.nodes[2], F, 0)


def _mask(F, comp: int, lay: Layout, electric: bool, start=(0, 0, 0)):
    """Entries of component ``comp`` that the walls hold at zero, zeroed; F is the box
    of the grid that begins at ``start`` (masks are linear: a box's correction can be
    masked on its own)."""
    if electric:
        F = _mask_low(F, [a_ for a_ in range(3) if a_ != comp and lay.pec_low[a_]], start)
        F = _mask_high(F, [comp] if lay.pmc_high[comp] else [], lay.nodes, start)
        # All three components: the normal Ez there lies beyond the wall.
        return _mask_padding(F, lay, start)
    # Beyond an upper Mur plane the half cell is dead: its tangential H is zero.
    # (H in the z padding needs no mask: it only ever sees zero E.)
    dead = [a_ for a_ in range(3) if a_ != comp and (lay.pmc_high[a_] or lay.mur_high[a_])]
    return _mask_high(F, dead, lay.nodes, start)


def _pad_patch(x, start, shape):
    """A patch placed at ``start`` in a zero array of ``shape`` (fused by XLA)."""
    cfg = [(start[a], shape[a] - start[a] - x.shape[a], 0) for a in range(3)]
    return lax.pad(x, jnp.zeros((), x.dtype), cfg)


def _add_patches(out, terms, coeffs, comp: int, sign: float, runtime=None):
    """``out[patch] += sign * b * patch`` for each (start, patch), in place (the buffer
    is fresh from the update); b gathered over the patch only.

    ``runtime``: per patch, None or a traced int32 equal to the start along the patch's
    thin axis (the one where it is smaller than ``out``). XLA:GPU updates a slice in
    place only when the slice read and the update share their index operands; static
    starts turn the read into a plain slice and the update into a copy of all of
    ``out`` (ncu: 96 us per slab correction on 322 x 338 x 336)."""
    for i, (start, patch) in enumerate(terms):
        sl = tuple(slice(s_, s_ + n) for s_, n in zip(start, patch.shape, strict=True))
        _, b = coefficient(coeffs, comp, sl)
        at = start
        r = None if runtime is None else runtime[i]
        # a patch as large as ``out`` (a slab over a whole tiny grid) has no thin axis;
        # its start is 0 everywhere and stays static
        thin = None if r is None else next(
            (a for a in range(3) if patch.shape[a] < out.shape[a]), None)
        if thin is not None:
            at = tuple(r if a == thin else jnp.int32(start[a]) for a in range(3))
        out = add_at(out, sign * b * patch.astype(out.dtype), at)
    return out


def add_at(out, patch, at):
    """``out`` with ``patch`` added over the box that begins at ``at`` (ints or traced
    int32s), written in place where XLA can (see :func:`_add_patches` on the starts)."""
    return lax.dynamic_update_slice(out, lax.dynamic_slice(out, at, patch.shape) + patch, at)


def _curl(G, comp: int, lay: Layout, electric: bool):
    """The bulk curl of G driving component ``comp`` (differences over the whole grid)."""
    curl = None
    for s_, src, ax in CURL_TERMS[comp]:
        d = diff_backward(G[src], ax, lay) if electric else diff_forward(G[src], ax)
        term = s_ * lay.inv_d[ax] * d
        curl = term if curl is None else curl + term
    return curl


def _update_fields(F, G, coeffs, pml, psi, lay: Layout, *, electric: bool, extra=None):
    """Shared body of the E and H updates.

    F: the field being advanced; G: the field whose curl drives it; extra: per
    component, a list of (start, patch) terms added to the curl (TF/SF corrections,
    one plane each). Returns the new F and new psi ({slab key: {component: array}}).
    """
    n_shape = F[0].shape
    sign = 1.0 if electric else -1.0
    fkey = "E" if electric else "H"
    new_F, new_psi = [], {s.key: {} for s in lay.slabs}
    corrections: list[list[tuple[Slab, object]]] = [[], [], []]
    for comp in range(3):
        curl = _curl(G, comp, lay, electric)
        for slab in lay.slabs:
            if comp not in tangential(slab.axis):
                continue
            (s_, src, ax) = next(t for t in CURL_TERMS[comp] if t[2] == slab.axis)
            pb, pc, pk = pml[slab.key].of(fkey)
            D = lay.inv_d[ax] * _slab_diff(G[src], ax, slab, backward=electric)
            psi_new = _along(pb, ax) * psi[slab.key][comp] + _along(pc, ax) * D
            new_psi[slab.key][comp] = psi_new
            corrections[comp].append((slab, s_ * (_along(pk, ax) * D + psi_new)))
        if extra is not None and lay.tfsf_fold:
            for start, patch in extra[comp]:
                curl = curl + _pad_patch(patch.astype(curl.dtype), start, n_shape)
        a, b = coefficient(coeffs, comp)
        folded = [sc for sc in corrections[comp] if lay.fold[sc[0].axis]]
        in_place = [sc for sc in corrections[comp] if not lay.fold[sc[0].axis]]
        if folded:
            # Materialise the slab terms (slab-sized traffic) so that XLA does not
            # recompute psi inside the bulk kernel: 30.0 -> 35.5 Gcells/s at 512^3.
            slabs_, corr = zip(*folded, strict=True)
            corr = lax.optimization_barrier(list(corr))
            for slab, c_ in zip(slabs_, corr, strict=True):
                curl = curl + _pad_to_full(c_, slab, n_shape[slab.axis])
        # The walls' masks go on the bulk and on each in-place slab correction, so that
        # the corrections are the last writes: XLA then updates their slabs in place.
        out = _mask(a * F[comp] + sign * b * curl, comp, lay, electric)
        if in_place:
            out = lax.optimization_barrier(out)  # 14.3 -> 15.9 Gcells/s at 512^3
            terms = []
            for slab, corr in in_place:
                start = tuple(s_.start for s_ in slab.slices(n_shape))
                terms.append((start, _mask(corr, comp, lay, electric, start)))
            # in place: 12.2 -> 25.0 Gcells/s on mri-coil with 5 cells (BENCHMARKS.md)
            out = _add_patches(out, terms, coeffs, comp, sign, runtime=[
                pml[slab.key].start for slab, _ in in_place] if lay.starts_as_data else None)
        if extra is not None and not lay.tfsf_fold:
            out = _add_patches(out, extra[comp], coeffs, comp, sign)
        if electric and lay.mur:
            planes = mur_planes(F[comp], out, comp, lay.mur, lay.nodes)
            if planes:
                # Materialise the planes (plane-sized) so that XLA writes them inside
                # the one fused update instead of recomputing them per element.
                values = lax.optimization_barrier([v for _, _, v in planes])
                out = put_planes(out, [(ax, b, v) for (ax, b, _), v in
                                       zip(planes, values, strict=True)])
        new_F.append(out)
    return tuple(new_F), new_psi


def update_H(E, H, coeffs_H, pml, psi_H, lay: Layout, extra=None):
    """Advance H by one step: H^{n+1/2} from H^{n-1/2} and E^n (``extra``: TF/SF terms)."""
    return _update_fields(H, E, coeffs_H, pml, psi_H, lay, electric=False, extra=extra)


def update_E(E, H, coeffs_E, pml, psi_E, lay: Layout, extra=None):
    """Advance E by one step (no point sources): E^{n+1} from E^n and H^{n+1/2}."""
    return _update_fields(E, H, coeffs_E, pml, psi_E, lay, electric=True, extra=extra)


def inject(E, sources, values):
    """Add source terms: ``sources`` is {comp: (index tuple of 3 int arrays, scale)}.

    ``values`` is {comp: waveform samples} at this step; each sample is multiplied
    by its precomputed scale (-cb J per unit waveform) and added on its edge.
    """
    E = list(E)
    for comp, (index, scale) in sources.items():
        E[comp] = E[comp].at[index].add(scale * values[comp])
    return tuple(E)


MAX_SOURCE_PATCHES = 16
"""Point sources per component that :func:`source_patches` takes as curl patches (each
adds a select per cell to the folded update); more are injected."""


def source_patches(edges, values, coeffs) -> list | None:
    """Point sources as one-cell patches of the E update's curl (``extra`` of
    :func:`update_E`), so that E^{n+1} holds them when the update writes it: per
    component, (index, increment / b) for each source edge. ``edges``: per component,
    the static (i, j, k) of its sources in the order of ``values[comp]`` (this step's
    samples, the increments). None where a component has more than
    :data:`MAX_SOURCE_PATCHES` (or none at all)."""
    if not edges or max(len(e) for e in edges.values()) > MAX_SOURCE_PATCHES:
        return None
    out: list = [[], [], []]
    for comp, points in edges.items():
        for k, p in enumerate(points):
            _, b = coefficient(coeffs, comp, tuple(slice(i, i + 1) for i in p))
            b = jnp.broadcast_to(b, (1,) * len(p))  # 2D: (i, j) and group positions
            inc = values[comp][k]
            out[comp].append((tuple(p), jnp.where(b != 0, inc / jnp.where(b != 0, b, 1), 0)))
    return out


def zeros_psi(lay: Layout, dtype) -> tuple[dict, dict]:
    """Zero psi for E and H on every slab: ({key: {comp: array}}, same for H)."""
    psi = {}
    for slab in lay.slabs:
        shape = slab.psi_shape(lay.shape)
        psi[slab.key] = {c: jnp.zeros(shape, dtype) for c in tangential(slab.axis)}
    psi_H = {k: {c: jnp.zeros_like(v) for c, v in d.items()} for k, d in psi.items()}
    return psi, psi_H
