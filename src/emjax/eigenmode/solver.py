"""Guided modes of a cross-section: the shift-invert eigensolve and the mode fields.

:func:`solve_modes` builds the operator of :mod:`emjax.eigenmode.operators` (n_eff^2
as eigenvalue, transverse E as unknowns) and asks SciPy's ARPACK (``eigs``, shift-invert
about ``n_guess^2`` with a sparse LU) for the modes nearest the guess. Each
:class:`Mode` carries its six components at the positions of
:mod:`emjax.eigenmode.section`, for fields e^{j(omega t - beta z)} (so a passive,
lossy mode has Im n_eff < 0), normalised to 1 W: (1/2) Re of the sum over the
section of (E x H*)_z dx dy = 1, with half weights on the nodes of the walls
(the trapezoid rule, under which lossless modes are power-orthogonal), and its
phase set so that the largest transverse E entry is real and positive.

A mode's Ez, Hx and Hy sit at the same z as its Ex, Ey and Hz; the 3D Yee grid puts
them half a cell further along z, a phase of e^{-j beta dz / 2} that a port applies.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla

from ..constants import c0, eta0
from ..errors import ConvergenceError, EmjaxWarning, SetupError
from . import operators
from .section import CrossSection, shapes


class NoGuidedModeError(SetupError):
    """The solver found no mode above ``n_min`` (no guided mode at the frequency)."""


@dataclass(frozen=True)
class Mode:
    """One mode: effective index, propagation constant and fields (1 W, module docstring).

    ``n_eff`` (complex; Im < 0 for a lossy mode), ``beta`` = k0 n_eff (1/m), ``frequency``
    (Hz); ``E`` = (Ex, Ey, Ez) in V/m and ``H`` = (Hx, Hy, Hz) in A/m, complex arrays of
    the shapes of :func:`emjax.eigenmode.section.shapes`; ``section`` the cross-section.
    """

    n_eff: complex
    beta: complex
    frequency: float
    E: tuple[np.ndarray, np.ndarray, np.ndarray]
    H: tuple[np.ndarray, np.ndarray, np.ndarray]
    section: CrossSection

    @property
    def power(self) -> float:
        """(1/2) Re of the integral of (E x H*)_z over the section, W (1 for a solved mode)."""
        return float(np.real(cross_power(self.section, self.E, self.H)))

    def fields(self) -> dict[str, np.ndarray]:
        """The six components by name: {"Ex": ..., "Hz": ...}."""
        return dict(zip(("Ex", "Ey", "Ez", "Hx", "Hy", "Hz"), (*self.E, *self.H), strict=True))


def _weights(xs: CrossSection) -> tuple[np.ndarray, np.ndarray]:
    """Trapezoid weights times dx dy at Ex/Hy and at Ey/Hx positions."""
    nx, ny = xs.cells
    dx, dy = xs.spacing
    wy = np.ones(ny + 1)
    wy[[0, -1]] = 0.5
    wx = np.ones(nx + 1)
    wx[[0, -1]] = 0.5
    return np.outer(np.ones(nx), wy) * dx * dy, np.outer(wx, np.ones(ny)) * dx * dy


def cross_power(xs: CrossSection, e: tuple, h: tuple) -> complex:
    """(1/2) sum of (E x H*)_z dx dy over ``xs`` (trapezoid weights at the walls), W.

    With the fields of two different lossless modes it is zero (power orthogonality)."""
    w_x, w_y = _weights(xs)
    return 0.5 * complex(np.sum(w_x * e[0] * np.conj(h[1])) - np.sum(w_y * e[1] * np.conj(h[0])))


def _check(xs: CrossSection, frequency: float, num_modes: int, n_guess, n_min) -> None:
    if not isinstance(xs, CrossSection):
        raise SetupError(f"solve_modes: section must be a CrossSection (see "
                         f"emjax.eigenmode.cross_section); got {type(xs).__name__}")
    where = f"cross-section {xs.name!r}"
    if not (isinstance(frequency, (int, float)) and math.isfinite(frequency) and frequency > 0):
        raise SetupError(f"{where}: frequency {frequency!r} Hz must be positive and finite")
    if not (isinstance(num_modes, int) and num_modes >= 1):
        raise SetupError(f"{where}: num_modes {num_modes!r} must be a positive integer")
    if n_guess is not None and not (math.isfinite(n_guess) and n_guess > 0):
        raise SetupError(f"{where}: n_guess {n_guess!r} must be positive and finite")
    if n_min is not None and not (math.isfinite(n_min) and n_min >= 0):
        raise SetupError(f"{where}: n_min {n_min!r} must be >= 0 and finite")
    n_free = int(np.sum(~np.concatenate([m.ravel() for m in operators.e_masks(xs)[:2]])))
    if n_free < num_modes + 3:
        raise SetupError(f"{where}: {n_free} free transverse E unknowns cannot give "
                         f"{num_modes} modes; refine the grid or remove PEC")


def _largest_index(xs: CrossSection) -> float:
    """sqrt(max Re eps * max Re mu) over the section's non-PEC E positions."""
    masks = operators.e_masks(xs)
    eps = max(float(np.max(np.real(e)[~m], initial=1.0)) for e, m in zip(xs.eps, masks,
                                                                          strict=True))
    mu = max(float(np.max(np.real(m))) for m in xs.mu)
    return math.sqrt(max(eps * mu, 1e-12))


def solve_modes(xs: CrossSection, frequency: float, num_modes: int = 1, *,
                n_guess: float | None = None, n_min: float | None = None,
                tol: float = 1e-10) -> tuple[Mode, ...]:
    """The ``num_modes`` guided modes of ``xs`` at ``frequency`` (Hz) nearest ``n_guess``.

    ``n_guess``: shift-invert target (default: the section's largest sqrt(eps mu), so
    the modes of largest Re n_eff come first). ``n_min``: the least Re n_eff a mode may
    have to count as guided (default 0: every propagating mode; pass the cladding's
    index for a dielectric guide, whose lower modes are the box's). Modes come sorted by
    Re n_eff, descending. ``tol``: ARPACK's relative tolerance on the eigenvalue (0:
    machine precision).

    Raises :class:`NoGuidedModeError` (a ``SetupError``) naming the section, the
    frequency and the largest index found when no mode lies above ``n_min``;
    ``ConvergenceError`` when ARPACK does not converge; ``SetupError`` for bad input.
    Fewer guided modes than asked give a warning and the ones found.
    """
    _check(xs, frequency, num_modes, n_guess, n_min)
    where = f"cross-section {xs.name!r} at {frequency:.6g} Hz"
    k0 = 2 * math.pi * frequency / c0
    op = operators.build(xs, k0)
    a, p = operators.mode_matrix(op)
    guess = _largest_index(xs) if n_guess is None else float(n_guess)
    # a hair above the guess: a TEM line's n_eff^2 equals max eps mu exactly, and a
    # shift on an eigenvalue would make the LU singular
    sigma = guess**2 * (1 + 1e-6) + 1e-9
    k = min(num_modes, a.shape[0] - 2)
    # SuperLU with the minimum-degree ordering of A + A^T: on these 2D stencils about
    # half the fill and time of the default COLAMD
    shifted = (a - sigma * sp.identity(a.shape[0], format="csc")).tocsc()
    lu = sla.splu(shifted, permc_spec="MMD_AT_PLUS_A")
    opinv = sla.LinearOperator(a.shape, matvec=lu.solve, dtype=lu.U.dtype)
    try:
        vals, vecs = sla.eigs(a, k=k, sigma=sigma, which="LM", tol=tol, OPinv=opinv,
                              ncv=min(max(2 * k + 1, 12), a.shape[0] - 1))
    except sla.ArpackNoConvergence as exc:
        raise ConvergenceError(f"{where}: the eigensolver (ARPACK shift-invert about n_eff "
                               f"{guess:.6g}) did not converge; {len(exc.eigenvalues)} of "
                               f"{k} modes found. Try n_guess nearer the mode.") from exc
    n_eff = np.sqrt(vals.astype(complex))
    n_eff = np.where(n_eff.imag > 0, -n_eff, n_eff)  # passive: decays along +z
    order = np.argsort(-n_eff.real)
    floor = max(n_min or 0.0, 1e-6)
    kept = [i for i in order if n_eff[i].real > floor][:num_modes]
    if not kept:
        raise NoGuidedModeError(
            f"{where}: no guided mode; the largest Re n_eff found is "
            f"{n_eff[order[0]].real:.6g} (of {k} modes nearest {guess:.6g}), not above "
            f"n_min = {floor:.6g}. Check the frequency (below cutoff?), the materials or "
            "n_min.")
    if len(kept) < num_modes:
        warnings.warn(f"{where}: {len(kept)} guided mode(s) above n_min = {floor:.6g}, "
                      f"{num_modes} asked", EmjaxWarning, stacklevel=2)
    return tuple(_mode(xs, op, p, vecs[:, i], complex(n_eff[i]), frequency, k0)
                 for i in kept)


def _mode(xs: CrossSection, op: operators.Operators, p, vec: np.ndarray, n: complex,
          frequency: float, k0: float) -> Mode:
    """Fields of one eigenvector: H from P, Ez and Hz from the curls, 1 W, phase fixed."""
    shp = shapes(xs.cells)
    et = np.zeros(op.n_ex + op.eps[1].size, dtype=complex)
    et[op.free] = vec
    ht = (p @ et) / n
    n_hx = op.mu[0].size
    ex, ey = et[:op.n_ex], et[op.n_ex:]
    hx, hy = ht[:n_hx], ht[n_hx:]
    # P comes from Ampere's law for the transverse E, which does not hold on a PEC E
    # node (a surface current flows there); Faraday's law gives the H beside it: zero,
    # the normal H of a PEC wall or conductor face (its E and the Ez at its ends vanish)
    mask_x, mask_y, _ = operators.e_masks(xs)
    hx = np.where(mask_y.ravel(), 0.0, hx)
    hy = np.where(mask_x.ravel(), 0.0, hy)
    hz = -1j * op.inv_mu_z * (op.dyf_e @ ex - op.dxf_e @ ey)
    ez = -1j * op.inv_eps_z * (op.dxb_z @ hy - op.dyb_z @ hx)
    e = (ex.reshape(shp["Ex"]), ey.reshape(shp["Ey"]), ez.reshape(shp["Ez"]))
    h = tuple(c.reshape(shp[name]) / eta0
              for c, name in ((hx, "Hx"), (hy, "Hy"), (hz, "Hz")))
    power = cross_power(xs, e, h).real
    scale = 1.0 / math.sqrt(abs(power)) if power != 0 else 1.0
    peak = et[np.argmax(np.abs(et))]
    scale *= abs(peak) / peak if peak != 0 else 1.0
    return Mode(n_eff=n, beta=k0 * n, frequency=float(frequency),
                E=tuple(c * scale for c in e), H=tuple(c * scale for c in h), section=xs)


__all__ = ["Mode", "NoGuidedModeError", "cross_power", "solve_modes"]
