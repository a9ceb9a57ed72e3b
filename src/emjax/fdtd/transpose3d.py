"""Reverse mode of the 3D Yee updates, written out, for gradient runs (issue 22).

An update F' = a F + b (curl G + CPML terms) is linear in F, G, psi and the TF/SF
patches with constant coefficients, so its reverse mode needs no residuals but the
coefficients. Autodiff's own transpose of it pads every CPML slab's slice of G back to
the whole grid and XLA fuses all of those pads into one kernel (51 pads per cell in the
256^3 gradient bench's reverse step on an H200: 3.45x the forward step).

Here the update is a ``jax.custom_vjp`` that also passes the driving field G through
(``(F, G, ...) -> (F', psi', G)``), so that the cotangent of G from everything after
the update arrives in its backward pass. The backward pass materialises q = sign b ct
(b gathered at each cell, the walls' masks applied), then makes G's cotangent in one
fused pass, the arriving cotangent plus the transposed curl of q (as the forward
update is one pass), and each slab's term, transposed over the slab's window of G
(slab-sized work), joins it the way the forward update's slab terms join: zero-padded
into the pass (``combined``) or added in place after it at the slab's start as data
(``per_face``). F's cotangent is a ct, fused into whatever reads it.
A caller that keeps using the G it passed in instead of the one returned gets the same
numbers; JAX then adds that use's cotangent in a separate pass.

Gradient layouts (``Layout.transpose``, set by :class:`emjax.fdtd.gradient.FDTDGradient`)
take this path; forward runs never do. Mur faces keep autodiff's transpose.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax

from .cpml import CURL_TERMS, tangential
from .update3d import (
    Layout,
    _along,
    _curl,
    _mask,
    _update_fields,
    _window,
    _window_diff,
    add_at,
    coefficient,
)


def update_through(F, G, coeffs, pml, psi, lay: Layout, *, electric: bool, extra=None):
    """(new F, new psi, G): :func:`emjax.fdtd.update3d.update_E` (``electric``) or
    ``update_H`` with the driving field G passed through; in gradient layouts
    differentiated by :func:`_transposed`."""
    if lay.mur or not lay.transpose:
        new_F, new_psi = _update_fields(F, G, coeffs, pml, psi, lay, electric=electric,
                                        extra=extra)
        return new_F, new_psi, G
    starts = shapes = patches = None
    if extra is not None:
        starts = tuple(tuple(st for st, _ in e) for e in extra)
        shapes = tuple(tuple((p.shape, jnp.dtype(p.dtype).name) for _, p in e) for e in extra)
        patches = [[p for _, p in e] for e in extra]
    return _linear_update(lay, electric, starts, shapes)(F, G, coeffs, pml, psi, patches)


def _with_starts(starts, patches):
    return None if starts is None else [list(zip(st, p, strict=True))
                                        for st, p in zip(starts, patches, strict=True)]


@functools.lru_cache(maxsize=64)
def _linear_update(lay: Layout, electric: bool, starts, shapes):
    """The update with G passed through, as a jax.custom_vjp whose reverse mode is
    :func:`_transposed` (residuals: the coefficients only)."""

    @jax.custom_vjp
    def update(F, G, coeffs, pml, psi, patches):
        new_F, new_psi = _update_fields(F, G, coeffs, pml, psi, lay, electric=electric,
                                        extra=_with_starts(starts, patches))
        return new_F, new_psi, G

    specs = None if shapes is None else [[jax.ShapeDtypeStruct(sh, dt) for sh, dt in e]
                                         for e in shapes]

    def fwd(F, G, coeffs, pml, psi, patches):
        return update(F, G, coeffs, pml, psi, patches), (coeffs, pml)

    def bwd(res, ct):
        return _transposed(ct, *res, lay, electric, starts, specs)

    update.defvjp(fwd, bwd)
    return update


def _transposed(ct, coeffs, pml, lay: Layout, electric: bool, starts, shapes):
    """Cotangents (F, G, None, None, psi, patches) of the update from those of (new F,
    new psi, G out)."""
    ctF, ctpsi, ctG = ct
    spec = jax.ShapeDtypeStruct(ctF[0].shape, ctF[0].dtype)
    sign, fkey = (1.0, "E") if electric else (-1.0, "H")

    # The bulk by hand: F's cotangent a ct; G's the transposed curl of q = sign b ct,
    # with q materialised first, so that the whole-grid pass reads q at its neighbours
    # (gathering b at shifted cells inside that pass, as linear_transpose of the update
    # did, made it one kernel of 39 pads that took 6x a forward kernel on an H200).
    masked = [_mask(ctF[c], c, lay, electric) for c in range(3)]
    coef = [coefficient(coeffs, c) for c in range(3)]
    q = lax.optimization_barrier([sign * b * m for (_, b), m in zip(coef, masked, strict=True)])
    F_bar = tuple(a * m for (a, _), m in zip(coef, masked, strict=True))
    G_bulk = jax.linear_transpose(lambda G: tuple(_curl(G, c, lay, electric) for c in range(3)),
                                  (spec,) * 3)(tuple(q))[0]
    p_bar = None
    if shapes is not None:
        p_bar = []
        for c in range(3):
            bars = []
            for start, sd in zip(starts[c], shapes[c], strict=True):
                sl = tuple(slice(s0, s0 + n) for s0, n in zip(start, sd.shape, strict=True))
                # folded: inside the masked update (q there); in place: added after the
                # mask, sign b patch
                bar = q[c][sl] if lay.tfsf_fold else sign * coefficient(coeffs, c, sl)[1] \
                    * ctF[c][sl]
                bars.append(bar.astype(sd.dtype))
            p_bar.append(bars)
    psi_bar = {s.key: {} for s in lay.slabs}
    windows: list[list[tuple[int, int, object, object]]] = [[], [], []]  # per G component
    for comp in range(3):
        for slab in lay.slabs:
            if comp not in tangential(slab.axis):
                continue
            (s_, src, ax) = next(t for t in CURL_TERMS[comp] if t[2] == slab.axis)
            ct_corr = q[comp][slab.slices(spec.shape)]
            n = spec.shape[ax]
            lo, hi = _window(slab, n, electric)
            pb, pc, pk = pml[slab.key].of(fkey)

            def part(W, psi_c, ax=ax, slab=slab, lo=lo, n=n, pb=pb, pc=pc, pk=pk, s_=s_):
                D = lay.inv_d[ax] * _window_diff(W, ax, slab, electric, lo, n)
                psi_new = _along(pb, ax) * psi_c + _along(pc, ax) * D
                return s_ * (_along(pk, ax) * D + psi_new), psi_new

            wshape = list(spec.shape)
            wshape[ax] = hi - lo
            W_bar, psi_bar[slab.key][comp] = jax.linear_transpose(
                part, jax.ShapeDtypeStruct(tuple(wshape), spec.dtype),
                jax.ShapeDtypeStruct(slab.psi_shape(spec.shape), spec.dtype))(
                (ct_corr, ctpsi[slab.key][comp]))
            data = pml[slab.key].start
            at = jnp.int32(lo) if data is None else data + (lo - slab.start)
            windows[src].append((ax, lo, at, W_bar))
    G_bar = []
    for src in range(3):
        g = ctG[src] + G_bulk[src]
        if windows[src]:
            # Materialise the window terms (slab-sized) so that XLA does not recompute
            # them inside the whole-grid pass, as the forward update does.
            terms = lax.optimization_barrier([w for *_, w in windows[src]])
            pairs = list(zip(windows[src], terms, strict=True))
            for (ax, lo, _, _), w in pairs:
                if lay.fold[ax]:
                    cfg = [(0, 0, 0)] * 3
                    cfg[ax] = (lo, spec.shape[ax] - lo - w.shape[ax], 0)
                    g = g + lax.pad(w, jnp.zeros((), w.dtype), cfg)
            if not all(lay.fold[ax] for (ax, *_), _ in pairs):
                g = lax.optimization_barrier(g)
            for (ax, lo, at, _), w in pairs:
                if not lay.fold[ax]:
                    where = [jnp.int32(0)] * 3
                    where[ax] = at if lay.starts_as_data else jnp.int32(lo)
                    g = add_at(g, w, where)
        G_bar.append(g)
    return F_bar, tuple(G_bar), None, None, psi_bar, p_bar
