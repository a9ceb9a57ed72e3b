"""Lowering of dispersive media (PoleMedium) for the FDTD (3D and 2D): boxes, slots, tables.

The only place a scenario's poles are read. :func:`boxes` gives each E component's box,
the bounding box (in entries) of every structure (or Voxels label) filled with a
:class:`emjax.model.dispersion.PoleMedium`, found as :mod:`emjax.grid.rasterize` bounds
a structure, from the geometry alone: the memory estimate sizes it before anything is
rasterized. :func:`lower` then fills, on the host in NumPy, the per-cell medium rows and
the coefficient tables of :mod:`emjax.fdtd.dispersive` (whose docstring derives them),
and :func:`e_coefficients` the (ca, cb, eps) of a pole medium's E update.

Slots: the poles of every medium are grouped by kind (Lorentz, Debye, Drude, in the
medium's order within a kind); slot counts per kind are the largest any medium has, so
a box of one medium stores exactly its poles: one P per Debye pole, one J per Drude
pole, a P and a J per Lorentz pole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..constants import eps0
from ..grid.yee import COMPONENTS
from ..model.dispersion import DebyePole, DrudePole, LorentzPole, PoleMedium
from ..model.geometry import Voxels
from .dispersive import PoleBox, PoleCoefficients

KINDS = (LorentzPole, DebyePole, DrudePole)
"""Slot groups, in order; Lorentz slots hold (P, J), Debye P, Drude J."""


@dataclass(frozen=True, eq=False)
class DispersivePlan:
    """The lowered dispersive media: boxes (static, one per E component that has one)
    and their coefficient tables (NumPy, in the run's dtype)."""

    boxes: tuple[PoleBox, ...]
    coeffs: tuple[PoleCoefficients, ...]


def _structures_media(sim):
    """(geometry, [media]) of every structure."""
    for s in sim.structures:
        ms = list(s.geometry.media.values()) if isinstance(s.geometry, Voxels) else [s.medium]
        yield s.geometry, ms


def slot_counts(media) -> tuple[int, int, int]:
    """Slots per kind (Lorentz, Debye, Drude): the most poles of that kind in one medium."""
    return tuple(max((sum(isinstance(p, k) for p in m.poles) for m in media), default=0)
                 for k in KINDS)


def _slots(counts) -> tuple[tuple, tuple]:
    """(p_slot, j_slot) of the slot layout for ``counts`` (see the module docstring)."""
    p_slot, j_slot = [], []
    n_p = n_j = 0
    for kind, n in zip(KINDS, counts, strict=True):
        for _ in range(n):
            has_p, has_j = kind is not DrudePole, kind is not DebyePole
            p_slot.append(n_p if has_p else None)
            j_slot.append(n_j if has_j else None)
            n_p += has_p
            n_j += has_j
    return tuple(p_slot), tuple(j_slot)


def boxes(sim, grid, comps=(0, 1, 2), axes: int = 3) -> tuple[PoleBox, ...]:
    """Each E component's box around the dispersive structures (none: empty tuple).

    comps: the E components (0, 1, 2 = x, y, z) that have boxes; axes: how many of the
    grid's axes the boxes keep (3; 2 for the plane grid of FDTD2D, whose one z sample
    only decides whether a structure reaches the plane). A box's ``pos`` is its
    component's place in ``comps`` (the kernels' field tuple).

    A dispersive background's box (FDTD3D) is the whole grid of physical nodes (the CPML
    included: the ADE is a local constitutive law and composes with the CPML's
    stretched derivatives; the z padding excluded, so that checkpoints stay portable
    between backends); every component's box then has the same shape, ``grid.nodes``.
    """
    background = sim.background if isinstance(sim.background, PoleMedium) else None
    pole_media = [m for _, ms in _structures_media(sim) for m in ms if isinstance(m, PoleMedium)]
    counts = slot_counts(pole_media + ([background] if background else []))
    if not sum(counts):  # pole-free PoleMedia are constant media: no box
        return ()
    p_slot, j_slot = _slots(counts)
    if background is not None and background.poles:
        return tuple(PoleBox(comp, (0,) * axes, tuple(grid.nodes)[:axes], p_slot, j_slot,
                             comps.index(comp)) for comp in comps)
    out = []
    for comp in comps:
        coords = grid.coords(COMPONENTS[comp])
        lo_box, hi_box = [math.inf] * 3, [-math.inf] * 3
        for geom, ms in _structures_media(sim):
            if not any(isinstance(m, PoleMedium) for m in ms):
                continue
            lo, hi = geom.bounds()
            rng = []
            for a in range(3):  # the samples rasterize paints: lo <= x <= hi
                sel = np.nonzero((coords[a] >= lo[a]) & (coords[a] <= hi[a]))[0]
                rng.append((int(sel[0]), int(sel[-1]) + 1) if sel.size else None)
            if any(r is None for r in rng):
                continue
            for a in range(3):
                lo_box[a] = min(lo_box[a], rng[a][0])
                hi_box[a] = max(hi_box[a], rng[a][1])
        if math.isinf(lo_box[0]):
            continue
        out.append(PoleBox(comp, tuple(lo_box[:axes]),
                           tuple(h - lo for lo, h in zip(lo_box[:axes], hi_box[:axes],
                                                          strict=True)),
                           p_slot, j_slot, comps.index(comp)))
    return tuple(out)


def aux_bytes(bxs, dtype) -> int:
    """Bytes of the p and j arrays of the boxes (the state's polarization leaves)."""
    item = np.dtype(dtype).itemsize
    return sum((b.n_p + b.n_j) * math.prod(b.shape) * item for b in bxs)


def pole_rows(pole, dt: float) -> tuple[float, float, float, float, float]:
    """(cP, cJ, w, eP, eJ) of one pole at time step dt (s), for p = P / eps0 and
    j = J dt / eps0 (:mod:`emjax.fdtd.dispersive`: its Jh coefficients times dt, and
    the energy weight of j divided by dt^2); eP, eJ per unit volume, J/m^3/(V/m)^2."""
    if isinstance(pole, DebyePole):
        d = 2 * pole.tau + dt
        return -2 * dt / d, 0.0, pole.delta_eps * dt / d, eps0 / (2 * pole.delta_eps), 0.0
    if isinstance(pole, DrudePole):
        d = 2 + pole.gamma * dt
        wp_dt = (pole.omega_p * dt) ** 2
        return 0.0, 2 / d, wp_dt / (2 * d), 0.0, eps0 / (2 * wp_dt)
    w0_dt = (pole.omega_0 * dt) ** 2
    D = 1 + pole.delta * dt + w0_dt / 4
    return (-w0_dt / (2 * D), 1 / D, pole.delta_eps * w0_dt / (4 * D),
            eps0 / (2 * pole.delta_eps), eps0 / (2 * pole.delta_eps * w0_dt))


def _ordered(m: PoleMedium, counts) -> list:
    """The medium's poles in slot order (None where a slot is unused)."""
    out = []
    for kind, n in zip(KINDS, counts, strict=True):
        mine = [p for p in m.poles if isinstance(p, kind)]
        out += mine + [None] * (n - len(mine))
    return out


def e_coefficients(m: PoleMedium, dt: float) -> tuple[float, float, float]:
    """(ca, cb, eps) of the E update in a pole medium (see :mod:`emjax.fdtd.dispersive`);
    eps = eps0 eps_inf, the field energy's weight."""
    w = eps0 / dt * sum(pole_rows(p, dt)[2] for p in m.poles)
    a = eps0 * m.eps_inf / dt
    den = a + m.sigma / 2 + w
    return (a - m.sigma / 2 - w) / den, 1 / den, eps0 * m.eps_inf


def lower(sim, grid, media: list, index: dict, dt: float, dtype, cell_volume: float,
          comps=(0, 1, 2), axes: int = 3) -> DispersivePlan | None:
    """Rows and tables of every box; ``media``, ``index``: the rasterized media (ports
    included) and per-component indices (arrays of ``axes`` dimensions); comps, axes:
    as :func:`boxes` (FDTD2D: its E components, 2, and ``cell_volume`` the cell's area,
    energies per unit length). None when no structure is dispersive."""
    bxs = boxes(sim, grid, comps, axes)
    if not bxs:
        return None
    pole_media = [m for m in media if isinstance(m, PoleMedium)]
    counts = slot_counts(pole_media)
    rows = np.zeros((len(media),), np.int64)  # global medium -> table row (0: none)
    tables = np.zeros((1 + len(pole_media), sum(counts), 5))
    r = 0
    for i, m in enumerate(media):
        if isinstance(m, PoleMedium):
            r += 1
            rows[i] = r
            for s, p in enumerate(_ordered(m, counts)):
                if p is not None:
                    tables[r, s] = pole_rows(p, dt)
    tables[..., 3:] *= cell_volume
    itype = np.uint8 if len(tables) <= 256 else np.uint16
    coeffs = []
    for b in bxs:
        idx = rows[index[COMPONENTS[b.comp]][b.slices]].astype(itype)
        t = [np.ascontiguousarray(tables[:, :, k].T).astype(dtype) for k in range(5)]
        coeffs.append(PoleCoefficients(idx, *t))
    return DispersivePlan(boxes=bxs, coeffs=tuple(coeffs))
