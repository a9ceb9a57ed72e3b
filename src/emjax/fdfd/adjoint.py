"""Differentiable FDFD: ``jax.grad`` through the Krylov solve by an implicit adjoint.

The solved system is the separable, symmetrized one of :func:`emjax.fdfd.operator.
apply_sep_stencil` (mu = mu0 everywhere, time convention e^{+j omega t}):

    mu0 T y = -k0^2 eps_r y + r curl'(curl'(m y / r)) = b,   E_scat = y / r,

with r = sqrt(s_x s_y s_z) the stretched-coordinate PML factors and m the PEC wall mask.
The only place eps enters T is the diagonal -k0^2 eps_r, and the scattered-field right-
hand side of :func:`emjax.fdfd.incident.rhs`, scaled as :func:`emjax.fdfd.solver.
prepare` scales it, is ``b = r k0^2 (eps_r - 1) E_inc`` (the background is vacuum).

**T is complex symmetric** (T^T = T, unconjugated; not Hermitian: the PML and losses make
it non-normal): the similarity transform by r of the SC-PML operator is the form in which
the stretched curl-curl is symmetric (Shin and Fan 2012; :mod:`emjax.fdfd.operator`), and
the eps term is diagonal. ``tests/fdfd/test_adjoint.py`` checks x^T T y = y^T T x for
random complex x, y. So no extra scaling is needed: the transposed (adjoint) system of
reverse mode is the same system, and :func:`jax.lax.custom_linear_solve` with
``symmetric=True`` solves it with the same preconditioned COCG
(:func:`emjax.fdfd.krylov.make_cocg`, fast-diagonalization preconditioner of
:mod:`emjax.fdfd.precond`, itself complex symmetric). JAX differentiates ``b`` (a plain
function of eps_r) and the eps dependence of T (through ``matvec``) itself; the gradient
costs one more solve of the same kind as the forward one.

Design regions: :class:`DesignRegion` maps a density ``rho`` in [0, 1] on a box of cells
(index ranges) to eps_r on the three Yee E components by linear interpolation between two
(possibly lossy) media; :func:`conic_filter` and :func:`tanh_projection` compose in front
(both in :mod:`emjax.grid.design`, shared with FDTD).
Objectives (:func:`point_intensity`, :func:`flux_z`, :func:`rcs`) are plain functions of
the fields; :func:`rcs` runs the one near-to-far transform (:mod:`emjax.analysis.nf2ff`,
through :mod:`emjax.fdfd.farfield`) on JAX arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..analysis import nf2ff
from ..constants import c0, eps0
from ..errors import SetupError
from ..grid.design import (  # noqa: F401  (re-exported: the FDFD API)
    check_cells,
    check_parameters,
    conic_filter,
    tanh_projection,
)
from . import farfield, krylov, operator, precond


@dataclass(frozen=True)
class AdjointStatic:
    """What a differentiable solve needs from a prepared scenario (all fixed: only eps_r
    is traced). ``ops``: the separable operator without its permittivity table; ``r``
    (3, nx, ny, nz) sqrt(s_x s_y s_z); ``e_inc``/``h_inc`` incident fields (V/m, A/m);
    ``eps_r`` the scenario's complex relative permittivity at the E samples (the base a
    design region writes into); ``k0`` (rad/m), ``omega`` (rad/s), ``spacing`` (m),
    ``pml`` (cells), ``tol`` and ``max_iter`` of every (forward and adjoint) solve."""

    ops: dict
    r: jax.Array
    e_inc: jax.Array
    h_inc: jax.Array
    eps_r: jax.Array
    k0: float
    omega: float
    spacing: tuple
    pml: int
    tol: float
    max_iter: int

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(self.r.shape[1:])


def from_prepared(prep, *, tol: float | None = None, max_iter: int | None = None
                  ) -> AdjointStatic:
    """:class:`AdjointStatic` of ``prep`` (:func:`emjax.fdfd.solver.prepare`), which must
    use separable storage (mu = mu0) and no Jacobi scaling; ``tol``/``max_iter`` default to
    the scenario's solver settings."""
    if prep.storage != "separable":
        raise SetupError(f"adjoint FDFD needs storage='separable' (mu_r = 1 everywhere), not "
                         f"{prep.storage!r}")
    if "scale" in prep.ops:
        raise SetupError("adjoint FDFD: preconditioner='jacobi' is not supported (its scaling "
                         "depends on eps); use 'fastdiag' or 'none'")
    ops = {k: v for k, v in prep.ops.items() if k not in ("ki", "kt", "symmetrize")}
    shape = prep.st.grid.shape
    r = operator._sep_factors(ops, shape)[1]
    cdt = r.dtype
    return AdjointStatic(
        ops=ops, r=r, e_inc=jnp.asarray(prep.e_inc.astype(cdt)),
        h_inc=jnp.asarray(prep.h_inc.astype(cdt)),
        eps_r=jnp.asarray((prep.st.eps / eps0).astype(cdt)), k0=prep.st.omega / c0,
        omega=prep.st.omega, spacing=tuple(prep.st.grid.spacing), pml=int(prep.st.pml),
        tol=float(prep.krylov.tol if tol is None else tol),
        max_iter=int(prep.krylov.max_iter if max_iter is None else max_iter))


def _cocg(ops, b, tol: float, max_iter: int):
    """The solver's preconditioned COCG on ``ops`` as one while_loop (traceable)."""
    pc = precond.from_ops if "pc" in ops else None
    init, step = krylov.make_cocg(operator.matvec_sep_stencil, max_iter, None, None, pc)
    state = init(ops, b, jnp.zeros_like(b), tol)
    state, _ = step(ops, state, jnp.int32(max_iter))
    return state["x"]


def solve_e(eps_r: jax.Array, static: AdjointStatic) -> jax.Array:
    """Scattered E (3, nx, ny, nz), V/m, for relative permittivity ``eps_r`` (3, nx, ny,
    nz) complex at the E samples; differentiable in ``eps_r`` (reverse mode: one adjoint
    solve with the same method, as T is complex symmetric; see the module docstring).

    Convergence is not checked inside the trace; :func:`residual` measures it."""
    if tuple(eps_r.shape) != (3, *static.shape):
        raise SetupError(f"eps_r: shape {tuple(eps_r.shape)}, expected {(3, *static.shape)}")
    k2 = static.k0 ** 2
    eps_r = eps_r.astype(static.r.dtype)
    ops = dict(static.ops, kw=-k2 * eps_r)
    b = static.r * (k2 * (eps_r - 1)) * static.e_inc

    def matvec(y):
        return operator.matvec_sep_stencil(ops, y)

    def solve(_matvec, rhs):  # T^T = T: the same COCG serves the transposed solve
        return _cocg(ops, rhs, static.tol, static.max_iter)

    y = lax.custom_linear_solve(matvec, b, solve, symmetric=True)
    return y / static.r


def residual(eps_r: jax.Array, static: AdjointStatic, e: jax.Array) -> float:
    """||b - mu0 T (r e)|| / ||b|| of a solution ``e`` of :func:`solve_e`."""
    k2 = static.k0 ** 2
    ops = dict(static.ops, kw=-k2 * eps_r)
    b = static.r * (k2 * (eps_r - 1)) * static.e_inc
    res = b - operator.matvec_sep_stencil(ops, static.r * e)
    return float(jnp.linalg.norm(res) / jnp.linalg.norm(b))


def magnetic_field(e: jax.Array, static: AdjointStatic) -> jax.Array:
    """Scattered H (3, nx, ny, nz), A/m, from the scattered E (mu = mu0)."""
    em = jnp.where(operator.wall_mask(e.shape[1:]), e, 0)
    return operator.apply_ah_sep(static.ops, em, static.omega)


# ------------------------------------------------------------------ design regions
@dataclass(frozen=True)
class DesignRegion:
    """A box of cells ``lo[a] <= i_a < hi[a]`` whose E samples (all three components at
    those indices) take eps_r = eps_min + rho (eps_max - eps_min); complex eps allowed
    (lossy media: eps_r - j sigma / (omega eps0))."""

    lo: tuple[int, int, int]
    hi: tuple[int, int, int]
    eps_min: complex
    eps_max: complex

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(h - lo for lo, h in zip(self.lo, self.hi, strict=True))

    def eps(self, rho: jax.Array, base: jax.Array) -> jax.Array:
        """``base`` (3, nx, ny, nz) with the region set from ``rho`` (shape :attr:`shape`)."""
        check_parameters(rho.shape, self.shape, f"{self.lo}..{self.hi}")
        val = self.eps_min + rho * (self.eps_max - self.eps_min)
        sl = tuple(slice(lo, h) for lo, h in zip(self.lo, self.hi, strict=True))
        return base.at[(slice(None), *sl)].set(jnp.broadcast_to(val, (3, *self.shape)))


def design_region(static: AdjointStatic, lo, hi, eps_min: complex, eps_max: complex
                  ) -> DesignRegion:
    """A :class:`DesignRegion` checked against the grid: inside the domain and clear of
    the PML (and of the PEC walls) on every face."""
    lo, hi = tuple(int(v) for v in lo), tuple(int(v) for v in hi)
    if len(lo) != 3 or len(hi) != 3:
        raise SetupError(f"design region: lo = {lo}, hi = {hi}; both need 3 cell indices")
    first = (max(static.pml, 1),) * 3
    last = tuple(n - static.pml for n in static.shape)
    check_cells(lo, hi, static.shape, first, last, f"{static.pml} PML cells on each face")
    return DesignRegion(lo=lo, hi=hi, eps_min=complex(eps_min), eps_max=complex(eps_max))


# ------------------------------------------------------------------ objectives
def point_intensity(e: jax.Array, index, component: int | None = None) -> jax.Array:
    """|E(index)|^2 (V^2/m^2): summed over components, or one (0, 1, 2 = x, y, z)."""
    i, j, k = index
    v = e[:, i, j, k] if component is None else e[component, i, j, k]
    return jnp.sum(jnp.abs(v) ** 2)


def flux_z(e: jax.Array, h: jax.Array, k: int, spacing, window=None) -> jax.Array:
    """Time-averaged power (W) through the plane of E nodes z = k (normal +z):
    0.5 Re sum (E_x H_y* - E_y H_x*) dx dy, H averaged over the faces at k -+ 1/2 to the
    E samples' z; ``window`` ((i0, i1), (j0, j1)) limits the cells (default all)."""
    (i0, i1), (j0, j1) = window or ((0, e.shape[1]), (0, e.shape[2]))
    hx = 0.5 * (h[0, i0:i1, j0:j1, k] + h[0, i0:i1, j0:j1, k - 1])
    hy = 0.5 * (h[1, i0:i1, j0:j1, k] + h[1, i0:i1, j0:j1, k - 1])
    ex, ey = e[0, i0:i1, j0:j1, k], e[1, i0:i1, j0:j1, k]
    return 0.5 * spacing[0] * spacing[1] * jnp.sum(
        jnp.real(ex * jnp.conj(hy) - ey * jnp.conj(hx)))


def huygens(prep, lo=None, hi=None) -> farfield.Huygens:
    """The sampled Huygens box of :func:`rcs` for ``prep`` (:func:`emjax.fdfd.solver.
    prepare`): corners ``lo``, ``hi`` in m, by default the solver's box midway between the
    scenario's structures and the PML. It must enclose every scatterer, the design region
    included, and stay clear of the PML; the default does not know the design region."""
    box = farfield.huygens(prep.sim, prep.st, lo, hi)
    d, t = np.asarray(prep.st.grid.spacing), prep.st.pml
    first = np.asarray(prep.st.grid.lower) + t * d
    last = first + (np.asarray(prep.st.grid.cells) - 2 * t) * d
    if np.any(box.points < first - 1e-9 * d) or np.any(box.points > last + 1e-9 * d):
        raise SetupError(f"Huygens box {lo}..{hi} m: it leaves the interior {first.tolist()}"
                         f"..{last.tolist()} m ({t} PML cells on each face)")
    return box


def rcs(e: jax.Array, h: jax.Array, box: farfield.Huygens, theta: float, phi: float
        ) -> jax.Array:
    """Bistatic radar cross section (m^2) in the direction (``theta``, ``phi``) (rad; polar
    from +z, azimuth from +x) of the **scattered** fields ``e``, ``h`` (3, nx, ny, nz; V/m,
    A/m) sampled on ``box`` (:func:`huygens`): 4 pi |E_far|^2 r^2 / |E_inc|^2, the same
    transform and formula as the solver's ``rcs_*_dBsm`` (:func:`emjax.analysis.nf2ff.
    far_field` and :func:`emjax.analysis.nf2ff.rcs` with ``xp=jax.numpy``)."""
    et, ep = farfield.box_far_field(box, e, h, np.asarray(theta, np.float64),
                                    np.asarray(phi, np.float64), xp=jnp)
    return nf2ff.rcs(et, ep, box.amplitude, xp=jnp)
