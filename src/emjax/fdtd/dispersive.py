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
of float32's comfortable range), and ``jh`` is ``Jh dt / eps0``.

What a step carries is not (p, j) at n but the part of (p, j) at n + 1 known at step n,
the **carried state** ``Xp = p^{n+1} - w E^{n+1}``, ``Xj = j^{n+1} - 2 w E^{n+1}``
(p^{n+1} = p^n + jh, j^{n+1} = 2 jh - j^n and jh's E^{n+1} term w E^{n+1}). A step then
reads E^n only: p^n = Xp + w E^n, j^n = Xj + 2 w E^n give g and the patch, and the new
carried state is Xp = p^n + k, Xj = 2 k - j^n with k = g + w E^n. So the box work runs
before the E update, whose in-place write of E ends E^n's life, and the patch folds its
reads of E^n into the update's own. (Advancing p, j after the update, from E^n and
E^{n+1}, kept E^n alive: a copy of the boxes each step.) The two forms are the same
arithmetic; :func:`energy` recovers p^n, j^n from X and E^n.

They exist only inside each E component's box (the bounding box of the dispersive
structures, :mod:`emjax.fdtd.dispersive_setup`), stacked per kind of array:
``{"P": (nP, bx, by, bz), "J": (nJ, bx, by, bz)}`` holding Xp, Xj. Slots (one per pole
position) are grouped by kind: Lorentz slots hold a P and a J, Debye slots a P, Drude
slots a J. Cells of the box outside any dispersive medium carry table row 0, all zero:
their p, j stay zero. The box term enters the E update as a TF/SF-like patch (``extra``
of :func:`emjax.fdtd.update3d.update_E`): folded into the fused update or added in
place, as the backend's layout says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class PoleBox:
    """Static layout of one E component's dispersive box (hashable).

    comp: 0, 1, 2 (Ex, Ey, Ez); start, shape: the box on the stored grid (entries; 3
    axes, or 2 on FDTD2D's plane); p_slot, j_slot: per slot, its index in the stacked P
    (resp. J) array or None; pos: the component's place in the field tuple the kernels
    get (``comp`` in 3D; in 2D its place in the polarization's E group).
    """

    comp: int
    start: tuple[int, ...]
    shape: tuple[int, ...]
    p_slot: tuple[int | None, ...]
    j_slot: tuple[int | None, ...]
    pos: int

    @property
    def slices(self) -> tuple[slice, ...]:
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
    """Zero carried state (p = j = 0 with E = 0) of every box: per box
    ``{"P": (nP, ...), "J": (nJ, ...)}`` (only the kinds the box holds)."""
    out = []
    for b in boxes:
        d = {}
        if b.n_p:
            d["P"] = jnp.zeros((b.n_p, *b.shape), dtype)
        if b.n_j:
            d["J"] = jnp.zeros((b.n_j, *b.shape), dtype)
        out.append(d)
    return tuple(out)


def _split(aux: dict, c: PoleCoefficients, box: PoleBox, E_box) -> tuple[list, list]:
    """Per slot, p^n and j^n (None where the slot has none) from the carried state and
    the box's E^n: ``p = Xp + w E^n``, ``j = Xj + 2 w E^n`` (the module docstring)."""
    ps, js = [], []
    for s, (ip, ij) in enumerate(zip(box.p_slot, box.j_slot, strict=True)):
        wE = c.w[s][c.idx] * E_box
        ps.append(None if ip is None else aux["P"][ip] + wE)
        js.append(None if ij is None else aux["J"][ij] + 2 * wE)
    return ps, js


def currents(ps: list, js: list, c: PoleCoefficients) -> list:
    """Per slot, g = cP p^n + cJ j^n over the box (V/m): the part of the pole's
    current at n + 1/2 (times dt / eps0) known before E^{n+1}."""
    out = []
    for s, (p, j) in enumerate(zip(ps, js, strict=True)):
        g = None if p is None else c.cP[s][c.idx] * p
        if j is not None:
            t = c.cJ[s][c.idx] * j
            g = t if g is None else g + t
        out.append(g)
    return out


def patch(g: list, eps0_dt: float):
    """The box's term in the E update's curl (A/m^2): ``-eps0 / dt sum_p g_p``."""
    total = g[0]
    for x in g[1:]:
        total = total + x
    return -eps0_dt * total


def carried(ps: list, js: list, g: list, c: PoleCoefficients, E_box) -> dict:
    """The carried state X^n from p^n, j^n, g and E^n: with ``k = g + w E^n`` (jh without
    its E^{n+1} part), ``Xp = p + k`` and ``Xj = 2 k - j``."""
    P, J = [], []
    for s, (p, j) in enumerate(zip(ps, js, strict=True)):
        k = g[s] + c.w[s][c.idx] * E_box
        if p is not None:
            P.append(p + k)
        if j is not None:
            J.append(2 * k - j)
    out = {}
    if P:
        out["P"] = jnp.stack(P)
    if J:
        out["J"] = jnp.stack(J)
    return out


def step_E(E, disp: tuple, coeffs: tuple, boxes: tuple[PoleBox, ...], extra, update, dt: float,
           eps0: float):
    """E^{n+1} and the boxes' carried state X^n: ``update(E, extra)`` is the E update of
    E^n with the given per-component curl patches (``update3d.update_E`` closed over its
    other arguments, returning (E, psi)); the boxes' patches join ``extra`` (None or three
    lists of (start, patch)); E is indexed by the boxes' ``pos`` (3D and the 2D E group
    alike). Sources may be added to the returned E afterwards: the poles read it as
    E^{n+1} at the next step. Returns (E, psi, disp).

    Everything here reads E^n only, never E^{n+1}: the box work runs before the update,
    which then writes E in place, and the patch's reads of E^n fold into the update's own
    (the earlier form, p and j advanced after the update from E^n and E^{n+1}, kept E^n
    alive through it: a copy of the boxes each step, 0.78 of the plain run's speed)."""
    extra = tuple(list(x) for x in extra) if extra is not None else tuple([] for _ in E)
    out, patches = [], []
    for aux, c, b in zip(disp, coeffs, boxes, strict=True):
        E_box = E[b.pos][b.slices]
        ps, js = _split(aux, c, b, E_box)
        g = currents(ps, js, c)
        out.append(carried(ps, js, g, c, E_box))
        patches.append(patch(g, eps0 / dt))
    # The box work (new X and the patch, box-sized) is materialised before the update,
    # behind a barrier: left to XLA it ran after the update, or read E^n inside it
    # through the box's slice; either way the update could not write E in place and all
    # of E was copied each step (23.0 against 34.7 Gcells/s at 512^3, BENCHMARKS.md).
    out, patches, E = jax.lax.optimization_barrier((tuple(out), patches, E))
    for b, pt in zip(boxes, patches, strict=True):
        extra[b.pos].append((b.start, pt))
    E_new, psi = update(E, extra)
    return E_new, psi, out


def energy(disp: tuple, coeffs: tuple, boxes: tuple[PoleBox, ...], E):
    """The polarization energy (J) at step n of every box, sum eP p^2 + eJ j^2, from the
    carried state X^{n-1} and E^n (the field tuple, indexed by the boxes' ``pos``)."""
    total = jnp.zeros((), E[0].dtype)
    for aux, c, b in zip(disp, coeffs, boxes, strict=True):
        ps, js = _split(aux, c, b, E[b.pos][b.slices])
        for s, (p, j) in enumerate(zip(ps, js, strict=True)):
            if p is not None:
                total = total + jnp.sum(c.eP[s][c.idx] * p ** 2)
            if j is not None:
                total = total + jnp.sum(c.eJ[s][c.idx] * j ** 2)
    return total
