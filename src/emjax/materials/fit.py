"""Fit a dispersive target (Cole-Cole medium, measured table, any eps(f)) with poles.

The time-domain update needs poles (Debye, Lorentz); tissue comes as Cole-Cole terms
and measurements as tables. :func:`fit_poles` turns either into a
:class:`~emjax.model.dispersion.PoleMedium` over a band [f_min, f_max].

Method: fixed relaxation times, non-negative linear least squares. With the Debye
relaxation times tau_k log-spaced over the band (half a decade beyond each end) and,
optionally, Lorentz resonances omega_k log-spaced inside it with a fixed damping ratio
delta_k / omega_k, the model::

    eps(omega) = eps_inf - j sigma / (omega eps0) + sum_k delta_eps_k chi_k(omega)

is linear in (eps_inf - 1, sigma, delta_eps_k). Matching the target's eps' and
sigma_eff = -omega eps0 Im eps at log-spaced samples, each equation divided by the
target value (relative errors), is a linear least-squares problem; solving it with
non-negative unknowns (``scipy.optimize.nnls``, Lawson and Hanson) makes every pole
passive and eps_inf >= 1 by construction. The Debye relaxation times that carry
weight are then moved off the grid by least squares over log tau with the strengths
solved by NNLS inside (variable projection, Golub and Pereyra 1973): a medium that is
itself a sum of Debye poles is recovered to rounding, and tissue needs fewer poles
(4-5 over 10 MHz-3 GHz instead of 5-8 on the grid). Least squares spreads the error evenly;
the 1% criterion is on the largest error, so the rows are then reweighted a few times
by their residuals (Lawson's iteration towards the minimax fit) and the best iterate
kept. With ``n_debye=None`` the fewest Debye poles (1 to 16) that meet ``tol`` are
used.

The largest relative errors in eps' and in sigma_eff are measured on a grid four
times finer than the fit's (for a table: at its own points). A fit whose error
exceeds ``tol`` warns (:class:`~emjax.errors.EmjaxWarning`) with the achieved errors.
Relative errors are taken against ``max(|target|, 1e-3 |eps|)`` (in sigma units,
``1e-3 omega eps0 |eps|``), so that a nearly lossless target is judged on its loss
tangent to 1e-3 instead of an undefined relative error.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares, nnls

from ..constants import eps0
from ..errors import EmjaxWarning, SetupError
from ..model.dispersion import (
    ColeColeMedium,
    DebyePole,
    LorentzPole,
    PoleMedium,
    angular_frequency,
)

MAX_DEBYE = 16
"""Most Debye poles the automatic choice (``n_debye=None``) tries."""
SAMPLES_PER_DECADE = 40
"""Fit frequencies per decade of the band (the check grid is four times finer)."""
REWEIGHTS = 30
"""Lawson reweighting passes after the plain least-squares fit."""


@dataclass(frozen=True)
class PoleFit:
    """A fitted pole medium and how well it matches its target over ``band`` (Hz)."""

    medium: PoleMedium
    band: tuple[float, float]
    max_error_eps: float
    """Largest relative error in eps' over the check frequencies."""
    max_error_sigma: float
    """Largest relative error in sigma_eff (S/m) over the check frequencies."""
    n_debye: int
    n_lorentz: int

    @property
    def max_error(self) -> float:
        """The larger of the two relative errors."""
        return max(self.max_error_eps, self.max_error_sigma)


Target = ColeColeMedium | PoleMedium | Callable[[np.ndarray], np.ndarray] | tuple


def _samples(target: Target, f_min: float, f_max: float, factor: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """(f Hz, complex eps) of the target inside the band: a table's own rows, or a
    log-spaced grid of ``factor * SAMPLES_PER_DECADE`` points per decade."""
    if isinstance(target, tuple):
        if len(target) != 3:
            raise SetupError(f"a measured table is (f, eps_real, sigma): got {len(target)} "
                             "arrays")
        f, eps_real, sigma = (np.asarray(a, dtype=float).ravel() for a in target)
        if not f.shape == eps_real.shape == sigma.shape:
            raise SetupError(f"table columns differ in length: f {f.size}, eps_real "
                             f"{eps_real.size}, sigma {sigma.size}")
        keep = (f >= f_min) & (f <= f_max)
        if keep.sum() < 4:
            raise SetupError(f"the table has {int(keep.sum())} rows inside the band "
                             f"[{f_min:g}, {f_max:g}] Hz: at least 4 are needed")
        f = f[keep]
        return f, eps_real[keep] - 1j * sigma[keep] / (angular_frequency(f) * eps0)
    decades = math.log10(f_max / f_min)
    f = np.logspace(math.log10(f_min), math.log10(f_max),
                    max(8, math.ceil(factor * SAMPLES_PER_DECADE * decades) + 1))
    eps_fn = target.eps if hasattr(target, "eps") else target
    eps = np.asarray(eps_fn(f), dtype=complex)
    if eps.shape != f.shape or not np.all(np.isfinite(eps)):
        raise SetupError("the target's eps(f) must return one finite complex value per "
                         f"frequency (shape {f.shape}); got shape {eps.shape}")
    return f, eps


def _scales(omega: np.ndarray, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Denominators of the relative errors in eps' and sigma_eff (module docstring)."""
    floor = 1e-3 * np.abs(eps)
    return (np.maximum(np.abs(eps.real), floor),
            omega * eps0 * np.maximum(np.abs(eps.imag), floor))


def _errors(medium: PoleMedium, f: np.ndarray, eps: np.ndarray) -> tuple[float, float]:
    omega = angular_frequency(f)
    d_eps, d_sig = _scales(omega, eps)
    fit = medium.eps(f)
    return (float(np.max(np.abs(fit.real - eps.real) / d_eps)),
            float(np.max(np.abs(omega * eps0 * (fit.imag - eps.imag)) / d_sig)))


def _basis(omega: np.ndarray, taus: np.ndarray, resonances: np.ndarray, damping: float
           ) -> np.ndarray:
    """Complex susceptibility of each unit-strength pole, shape (n_f, n_poles)."""
    cols = [1.0 / (1 + 1j * omega[:, None] * taus[None, :])]
    if resonances.size:
        w0 = resonances[None, :]
        cols.append(w0**2 / (w0**2 + 2j * omega[:, None] * damping * w0 - omega[:, None]**2))
    return np.concatenate(cols, axis=1)


def _system(omega: np.ndarray, eps: np.ndarray, basis: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) of the relative-error equations ``a x = b`` (module docstring)."""
    d_eps, d_sig = _scales(omega, eps)
    n = omega.size
    # rows: eps' equations, then sigma_eff equations; columns: eps_inf - 1, sigma, poles
    a = np.zeros((2 * n, 2 + basis.shape[1]))
    a[:n, 0] = 1.0 / d_eps
    a[:n, 2:] = basis.real / d_eps[:, None]
    a[n:, 1] = 1.0 / d_sig
    a[n:, 2:] = -(omega * eps0)[:, None] * basis.imag / d_sig[:, None]
    b = np.concatenate([(eps.real - 1.0) / d_eps, -omega * eps0 * eps.imag / d_sig])
    return a, b


def _solve(omega: np.ndarray, eps: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Non-negative (eps_inf - 1, sigma, strengths), minimax-reweighted (docstring)."""
    a, b = _system(omega, eps, basis)
    weights = np.ones(b.size)
    best, best_err = None, math.inf
    for _ in range(REWEIGHTS + 1):
        x, _ = nnls(a * weights[:, None], b * weights, maxiter=50 * a.shape[1])
        r = np.abs(a @ x - b)
        if r.max() < best_err:
            best, best_err = x, r.max()
        weights = weights * (r + 1e-3 * r.max() + 1e-300)
        weights /= weights.mean()
    return best


def _pole_medium(x: np.ndarray, taus: np.ndarray, resonances: np.ndarray, damping: float,
                 name: str) -> PoleMedium:
    """The medium of the solution ``x``; poles of zero strength are dropped."""
    strengths = x[2:]
    poles: list = [DebyePole(delta_eps=float(s), tau=float(t))
                   for s, t in zip(strengths[:taus.size], taus, strict=True) if s > 0]
    poles += [LorentzPole(delta_eps=float(s), omega_0=float(w), delta=float(damping * w))
              for s, w in zip(strengths[taus.size:], resonances, strict=True) if s > 0]
    return PoleMedium(eps_inf=1.0 + float(x[0]), sigma=float(x[1]), poles=poles, name=name)


def _fit_once(f: np.ndarray, eps: np.ndarray, band: tuple[float, float], n_debye: int,
              n_lorentz: int, damping: float, name: str) -> PoleMedium:
    f_min, f_max = band
    # relaxation times half a decade beyond the band: their tails shape its edges
    taus = np.logspace(math.log10(1 / (2 * math.pi * f_max * 10**0.5)),
                       math.log10(1 / (2 * math.pi * f_min / 10**0.5)), n_debye)
    resonances = 2 * math.pi * np.logspace(math.log10(f_min), math.log10(f_max),
                                           n_lorentz + 2)[1:-1]
    omega = angular_frequency(f)
    x = _solve(omega, eps, _basis(omega, taus, resonances, damping))
    taus = _refine(omega, eps, taus[x[2:2 + taus.size] > 0], resonances, damping)
    x = _solve(omega, eps, _basis(omega, taus, resonances, damping))
    return _pole_medium(x, taus, resonances, damping, name)


def _refine(omega: np.ndarray, eps: np.ndarray, taus: np.ndarray, resonances: np.ndarray,
            damping: float) -> np.ndarray:
    """Relaxation times moved off the grid to where they fit best: least squares over
    log tau, the strengths solved by NNLS inside (variable projection), so they stay
    non-negative. Returns the grid's times when that does not improve the fit."""
    if taus.size == 0:
        return taus

    def residual(log_tau: np.ndarray) -> np.ndarray:
        a, b = _system(omega, eps, _basis(omega, np.exp(log_tau), resonances, damping))
        x, _ = nnls(a, b, maxiter=50 * a.shape[1])
        return a @ x - b

    start = np.log(taus)
    out = least_squares(residual, start, method="trf", x_scale=1.0, max_nfev=200 * taus.size)
    better = np.sum(out.fun**2) < np.sum(residual(start)**2)
    return np.sort(np.exp(out.x)) if better else taus


def fit_poles(target: Target, f_min: float, f_max: float, *, n_debye: int | None = None,
              n_lorentz: int = 0, lorentz_damping: float = 0.5, tol: float = 0.01,
              name: str = "") -> PoleFit:
    """A passive pole medium matching ``target`` over [f_min, f_max] (Hz).

    ``target``: a :class:`ColeColeMedium` or :class:`PoleMedium`, a callable ``eps(f)``
    (complex relative permittivity, e^{+j omega t}: ``eps' - j eps''``), or a measured
    table ``(f Hz, eps_real, sigma S/m)`` of equal-length arrays (fitted and judged at
    its own rows inside the band). ``n_debye`` Debye poles (None: the fewest, up to
    :data:`MAX_DEBYE`, that meet ``tol``), ``n_lorentz`` Lorentz poles with damping
    ratio ``lorentz_damping`` (delta / omega_0). Warns with the achieved errors when
    the largest relative error in eps' or sigma_eff exceeds ``tol``.
    """
    if not (0 < f_min < f_max and math.isfinite(f_max)):
        raise SetupError(f"fit band [{f_min!r}, {f_max!r}] Hz: need 0 < f_min < f_max")
    if (n_debye is not None and n_debye < 1) or n_lorentz < 0 or lorentz_damping <= 0:
        raise SetupError(f"n_debye = {n_debye!r} (>= 1 or None), n_lorentz = {n_lorentz!r} "
                         f"(>= 0), lorentz_damping = {lorentz_damping!r} (> 0): out of range")
    band = (float(f_min), float(f_max))
    table = isinstance(target, tuple)
    f_fit, eps_fit = _samples(target, *band, factor=1)
    f_chk, eps_chk = (f_fit, eps_fit) if table else _samples(target, *band, factor=4)
    label = name or getattr(target, "name", "") or "fit"
    counts = [n_debye] if n_debye is not None else range(1, MAX_DEBYE + 1)
    for n in counts:
        medium = _fit_once(f_fit, eps_fit, band, n, n_lorentz, lorentz_damping, label)
        err_eps, err_sig = _errors(medium, f_chk, eps_chk)
        if max(err_eps, err_sig) <= tol:
            break
    result = PoleFit(medium, band, err_eps, err_sig, n, n_lorentz)
    if result.max_error > tol:
        warnings.warn(f"pole fit of {label!r} over [{f_min:g}, {f_max:g}] Hz with {n} Debye "
                      f"and {n_lorentz} Lorentz poles misses tol = {tol:g}: largest relative "
                      f"error {err_eps:.3g} in eps', {err_sig:.3g} in sigma; add poles or "
                      "narrow the band", EmjaxWarning, stacklevel=2)
    return result


__all__ = ["MAX_DEBYE", "PoleFit", "fit_poles"]
