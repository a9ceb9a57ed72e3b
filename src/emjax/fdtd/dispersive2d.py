"""Pure, jittable 2D glue of the dispersive ADE update (FDTD2D: TMz and TEz).

The physics, the storage and the kernels are those of :mod:`emjax.fdtd.dispersive`
(trapezoidal ADE of Debye, Drude and Lorentz poles; p = P / eps0, j = J dt / eps0):
this module only places them on the 2D grid. A box (:class:`PoleBox` with 2D
``start`` and ``shape``) lives on one E component of the polarization (TMz: Ez; TEz:
Ex, Ey), its arrays are ``(slots, bx, by)``; ``comp`` is the component number (0, 1,
2 = x, y, z) and the group position is ``comps.index(comp)``. A z-invariant field has
the same pole equations per component as in 3D, so the coefficient tables are the
3D lowering's (:func:`emjax.fdtd.dispersive_setup.lower` with ``axes=2``) and the
energy weights hold the cell's area: J per metre along z, as the 2D energy monitor.

Order within a step: the poles' known currents g (:func:`currents`) enter the E
update's curl as box patches (:func:`emjax.fdtd.update2d.update_E`'s ``extra``); the
TF/SF corrections and electric line sources are then added to the new E (their
weights hold the same cb, that of the pole medium's implicit update); only then do p
and j advance (:func:`advance`) with the final E^{n+1}, so that a source or a TF/SF
edge inside a dispersive medium keeps the discrete energy balance.
"""

from __future__ import annotations

from collections.abc import Callable

import jax

from .dispersive import PoleBox, PoleCoefficients, advance, currents, patch


def step_E(E: tuple, disp: tuple, coeffs: tuple[PoleCoefficients, ...],
           boxes: tuple[PoleBox, ...], comps: tuple[int, ...], update: Callable,
           finish: Callable, dt: float, eps0: float):
    """E^{n+1} and the boxes' p, j at n + 1.

    E: the E group, a tuple of (nx, ny) arrays (V/m) of components ``comps``; disp:
    per box ``{"P": (nP, bx, by), "J": (nJ, bx, by)}`` at step n; update(E, extra) ->
    (E, psi_E): the E update of E^n with per-group-position lists of (start, patch)
    curl patches (A/m^2; ``update2d.update_E`` closed over its other arguments);
    finish(E) -> E: what is added after the update (TF/SF corrections, line sources);
    dt in s, eps0 in F/m. Returns (E, psi_E, disp).
    """
    extra = tuple([] for _ in comps)
    gs = []
    for aux, c, b in zip(disp, coeffs, boxes, strict=True):
        g = currents(aux, c, b)
        gs.append(g)
        extra[comps.index(b.comp)].append((b.start, patch(g, eps0 / dt)))
    # E^n is needed in the boxes after the update: read there first, so that E^n as a
    # whole dies with the update, which can then write in place (as in 3D)
    E_old_boxes, E = jax.lax.optimization_barrier(
        (tuple(E[comps.index(b.comp)][b.slices] for b in boxes), E))
    E_new, psi = update(E, extra)
    E_new = finish(E_new)
    disp = tuple(advance(aux, g, c, b, E_box, E_new[comps.index(b.comp)][b.slices])
                 for aux, g, c, b, E_box in zip(disp, gs, coeffs, boxes, E_old_boxes,
                                                strict=True))
    return E_new, psi, disp


__all__ = ["step_E"]
