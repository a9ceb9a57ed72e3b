"""Pure, jittable ADE update of dispersive media: Debye, Drude and Lorentz poles.

Auxiliary-differential-equation (ADE) method (Taflove and Hagness, *Computational
Electrodynamics*, 3rd ed., sec. 9.4; the trapezoidal form of Okoniewski, Mrozowski and
Stuchly, IEEE MGWL 7, 1997, extended to a second-order pole by a state (P, J)). With
e^{+j omega t} and the poles of :mod:`emjax.model.dispersion`, each pole's
polarization P (C/m^2) and current J = dP/dt (A/m^2) obey, per E component,

    Debye:    tau dP/dt + P            = eps0 delta_eps E
    Drude:    dJ/dt + gamma J          = eps0 omega_p^2 E
    Lorentz:  dJ/dt + 2 delta J + omega_0^2 P = eps0 delta_eps omega_0^2 E,  dP/dt = J

and Ampere's law is ``eps0 eps_inf dE/dt + sigma E + sum_p J_p = curl H``. All of it is
discretized by the trapezoidal rule centred at (n + 1/2) dt, E and P, J at whole
steps, H at half steps (Yee):

    Debye:    P^{n+1} = P^n + dt Jh,  Jh = -2 / (2 tau + dt) P^n
                                          + eps0 delta_eps / (2 tau + dt) (E^{n+1} + E^n)
    Drude:    Jh = 2 / (2 + gamma dt) J^n + eps0 omega_p^2 dt / (2 (2 + gamma dt)) (E^{n+1} + E^n)
    Lorentz:  Jh = J^n / D - omega_0^2 dt / (2 D) P^n
                   + eps0 delta_eps omega_0^2 dt / (4 D) (E^{n+1} + E^n),
              D = 1 + delta dt + omega_0^2 dt^2 / 4
    then J^{n+1} = 2 Jh - J^n, P^{n+1} = P^n + dt Jh (Jh: the pole's J at n + 1/2),

    eps0 eps_inf (E^{n+1} - E^n) / dt + sigma (E^{n+1} + E^n) / 2 + sum_p Jh_p = curl H^{n+1/2}.

Each Jh is ``g_p + w_p (E^{n+1} + E^n)`` with g_p from the stored P^n, J^n, so the E
update stays explicit: ``E^{n+1} = ca E^n + cb (curl H - sum_p g_p)`` with
``1 / cb = eps0 eps_inf / dt + sigma / 2 + sum_p w_p`` and ``ca = cb (eps0 eps_inf / dt
- sigma / 2 - sum_p w_p)`` (the lowering puts those in the ordinary coefficient
tables). The trapezoidal rule is second order, and it conserves a discrete energy:
dotting Ampere with (E^{n+1} + E^n) / 2 and each pole equation with Jh gives
``W^{n+1} - W^n = -dt (sigma |E_avg|^2 + sum losses) <= 0`` for

    W^n = 1/2 eps0 eps_inf |E^n|^2 + 1/2 mu H^{n-1/2}.H^{n+1/2}
          + |P|^2 / (2 eps0 delta_eps)                        (Debye)
          + |J|^2 / (2 eps0 omega_p^2)                        (Drude)
          + (|J|^2 + omega_0^2 |P|^2) / (2 eps0 delta_eps omega_0^2)   (Lorentz),

which is positive definite at the Yee Courant limit of eps_inf: the update is stable for
every passive pole at any dt up to that limit (no omega_0 dt < 2 condition, unlike the
central-difference Lorentz ADE). :func:`energy` is W's polarization part.

Storage: P and J are kept as ``p = P / eps0`` and ``j = J dt / eps0``, both in V/m
like E (float32 keeps them, and their squares in the energy, in range: a metal's J /
eps0 reaches 1e18 V/(m s), and its energy weight eps0 dV / omega_p^2 1e-43 J, both out
of float32's comfortable range), and ``jh`` is ``Jh dt / eps0``. They exist only
inside each E component's box (the bounding box of the dispersive structures,
:mod:`emjax.fdtd.dispersive_setup`), stacked per kind of array:
``{"P": (nP, bx, by, bz), "J": (nJ, bx, by, bz)}``. Slots (one per pole position) are
grouped by kind: Lorentz slots hold a P and a J, Debye slots a P, Drude slots a J.
Cells of the box outside any dispersive medium carry table row 0, all zero: their
p, j stay zero. The box term enters the E update as a TF/SF-like patch (``extra`` of
:func:`emjax.fdtd.update3d.update_E`): folded into the fused update or added in place,
as the backend's layout says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class PoleBox:
    """Static layout of one E component's dispersive box (hashable).

    comp: 0, 1, 2 (Ex, Ey, Ez); start, shape: the box on the stored grid (entries);
    p_slot, j_slot: per slot, its index in the stacked P (resp. J) array or None.
    """

    comp: int
    start: tuple[int, int, int]
    shape: tuple[int, int, int]
    p_slot: tuple[int | None, ...]
    j_slot: tuple[int | None, ...]

    @property
    def slices(self) -> tuple[slice, slice, slice]:
        return tuple(slice(s, s + n) for s, n in zip(self.start, self.shape, strict=True))

    @property
    def n_p(self) -> int:
        return sum(i is not None for i in self.p_slot)

    @property
    def n_j(self) -> int:
        return sum(i is not None for i in self.j_slot)


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class PoleCoefficients:
    """Coefficient tables of one box (a pytree of arrays).

    idx: (bx, by, bz) uint8/uint16, the dispersive medium's row (0: none); cP, cJ, w:
    (slots, rows) dimensionless tables of ``g = cP p + cJ j`` and of w in ``jh = g + w
    (E^{n+1} + E^n)`` (p, j, jh scaled as the module docstring says); eP, eJ: (slots,
    rows) energy weights in J/(V/m)^2 (dV included).
    """

    idx: Any
    cP: Any
    cJ: Any
    w: Any
    eP: Any
    eJ: Any


def zeros(boxes: tuple[PoleBox, ...], dtype) -> tuple[dict, ...]:
    """Zero p and j of every box: per box ``{"P": (nP, ...), "J": (nJ, ...)}`` (only the
    kinds the box holds)."""
    out = []
    for b in boxes:
        d = {}
        if b.n_p:
            d["P"] = jnp.zeros((b.n_p, *b.shape), dtype)
        if b.n_j:
            d["J"] = jnp.zeros((b.n_j, *b.shape), dtype)
        out.append(d)
    return tuple(out)


def currents(aux: dict, c: PoleCoefficients, box: PoleBox) -> list:
    """Per slot, g = cP p^n + cJ j^n over the box (V/m): the part of the pole's
    current at n + 1/2 (times dt / eps0) known before E^{n+1}."""
    out = []
    for s, (ip, ij) in enumerate(zip(box.p_slot, box.j_slot, strict=True)):
        g = None
        if ip is not None:
            g = c.cP[s][c.idx] * aux["P"][ip]
        if ij is not None:
            t = c.cJ[s][c.idx] * aux["J"][ij]
            g = t if g is None else g + t
        out.append(g)
    return out


def patch(g: list, eps0_dt: float):
    """The box's term in the E update's curl (A/m^2): ``-eps0 / dt sum_p g_p``."""
    total = g[0]
    for x in g[1:]:
        total = total + x
    return -eps0_dt * total


def advance(aux: dict, g: list, c: PoleCoefficients, box: PoleBox, E_old, E_new) -> dict:
    """p, j of the box at n + 1 from g (:func:`currents`) and the box's E^n, E^{n+1}."""
    E_sum = E_old + E_new
    P = list(aux["P"]) if "P" in aux else []
    J = list(aux["J"]) if "J" in aux else []
    for s, (ip, ij) in enumerate(zip(box.p_slot, box.j_slot, strict=True)):
        jh = g[s] + c.w[s][c.idx] * E_sum
        if ip is not None:
            P[ip] = P[ip] + jh
        if ij is not None:
            J[ij] = 2 * jh - J[ij]
    out = {}
    if P:
        out["P"] = jnp.stack(P)
    if J:
        out["J"] = jnp.stack(J)
    return out


def step_E(E, disp: tuple, coeffs: tuple, boxes: tuple[PoleBox, ...], extra, update, dt: float,
           eps0: float):
    """E^{n+1} and the boxes' p, j at n + 1: ``update(E, extra)`` is the E update of E^n
    with the given per-component curl patches (``update3d.update_E`` closed over its
    other arguments, returning (E, psi)); the boxes' patches join ``extra`` (None or
    three lists of (start, patch)). Returns (E, psi, disp)."""
    extra = tuple(list(x) for x in extra) if extra is not None else ([], [], [])
    gs = []
    for aux, c, b in zip(disp, coeffs, boxes, strict=True):
        g = currents(aux, c, b)
        gs.append(g)
        extra[b.comp].append((b.start, patch(g, eps0 / dt)))
    # E^n is needed in the boxes after the update; read there before it, so that E^n
    # as a whole dies with the update, which can then write in place (the barrier
    # keeps XLA from postponing the box reads: a copy of all of E each step otherwise)
    E_old_boxes, E = jax.lax.optimization_barrier(
        (tuple(E[b.comp][b.slices] for b in boxes), E))
    E_new, psi = update(E, extra)
    disp = tuple(advance(aux, g, c, b, E_box, E_new[b.comp][b.slices])
                 for aux, g, c, b, E_box in zip(disp, gs, coeffs, boxes, E_old_boxes,
                                                strict=True))
    return E_new, psi, disp


def energy(disp: tuple, coeffs: tuple, boxes: tuple[PoleBox, ...]):
    """The polarization energy (J) of every box: sum eP p^2 + eJ j^2."""
    total = jnp.zeros((), next(iter(disp[0].values())).dtype) if disp else 0.0
    for aux, c, b in zip(disp, coeffs, boxes, strict=True):
        for s, (ip, ij) in enumerate(zip(b.p_slot, b.j_slot, strict=True)):
            if ip is not None:
                total = total + jnp.sum(c.eP[s][c.idx] * aux["P"][ip] ** 2)
            if ij is not None:
                total = total + jnp.sum(c.eJ[s][c.idx] * aux["J"][ij] ** 2)
    return total
