"""Frequency-dependent (dispersive) media: Debye, Drude and Lorentz poles, Cole-Cole terms.

A :class:`PoleMedium` is a structure's medium (``model.media.AnyMedium``) in FDTD3D and
FDTD2D (the auxiliary-differential-equation update of :mod:`emjax.fdtd.dispersive`) and
FDFD3D (``eps(f)`` at the solve frequency), and an FDTD3D background (the others stay a
constant :class:`emjax.model.media.Medium`). The
models evaluate ``eps(f)`` anywhere in Python, feed the fitter
(:mod:`emjax.materials.fit`) and the material library (:mod:`emjax.materials`).

Time convention e^{+j omega t}, as in :mod:`emjax.fdfd.setup` (``eps = eps_r - j sigma /
(omega eps0)``): a passive medium has ``Im eps(f) <= 0`` at every frequency. The complex
relative permittivity of a :class:`PoleMedium` is (Taflove and Hagness, *Computational
Electrodynamics*, 3rd ed., section 9.4)::

    eps(omega) = eps_inf - j sigma / (omega eps0) + sum_p chi_p(omega)
    Debye:    chi = delta_eps / (1 + j omega tau)
    Drude:    chi = -omega_p^2 / (omega^2 - j omega gamma)
    Lorentz:  chi = delta_eps omega_0^2 / (omega_0^2 + 2 j omega delta - omega^2)

Im chi <= 0 at every omega > 0 for Debye with delta_eps > 0 and tau > 0, Drude with
gamma >= 0, Lorentz with delta_eps > 0 and delta >= 0: the validators refuse anything
else (a negative delta_eps or damping makes the pole a gain, feeding energy into the
field). A :class:`ColeColeMedium` (Cole and Cole 1941; the form of Gabriel, Lau and
Gabriel 1996) is::

    eps(omega) = eps_inf + sum_n delta_eps_n / (1 + (j omega tau_n)^(1 - alpha_n))
                 - j sigma_ionic / (omega eps0)

It has no time-domain update of its own: fit it to poles first
(:func:`emjax.materials.fit.fit_poles`).
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import Field, model_validator

from ..constants import eps0
from ..errors import SetupError
from .base import EmModel


def angular_frequency(f) -> np.ndarray:
    """omega = 2 pi f (rad/s) as a float array; f in Hz must be finite and > 0 (the
    conductivity term is singular at f = 0)."""
    f = np.asarray(f, dtype=float)
    if not np.all(np.isfinite(f)) or np.any(f <= 0):
        bad = f[~(np.isfinite(f) & (f > 0))].ravel()[:3]
        raise SetupError(f"frequency {bad.tolist()} Hz is not allowed: eps(f) needs finite "
                         "f > 0 (the conductivity term is singular at f = 0)")
    return 2 * math.pi * f


MAX_RATE = 1e20
"""Largest angular frequency or damping rate of a pole, rad/s (X-rays are ~1e19 rad/s;
beyond this omega^2 terms overflow the float64 arithmetic of eps(f) and of the ADE
coefficients)."""
MIN_TAU, MAX_TAU = 1e-21, 1e3
"""Allowed Debye relaxation times, s (tissue's slowest Gabriel dispersions are ~1e-2 s)."""
MAX_STRENGTH = 1e9
"""Largest pole strength delta_eps, as the largest eps_r of a constant medium."""


def _refuse(kind: str, problems: list[str]) -> None:
    if problems:
        raise ValueError(f"{kind} pole is not passive: " + "; ".join(problems))


class DebyePole(EmModel):
    """A Debye relaxation, ``delta_eps / (1 + j omega tau)`` (water, tissue)."""

    type: Literal["Debye"] = "Debye"
    delta_eps: float = Field(..., le=MAX_STRENGTH,
                             description="Strength: eps_static - eps_high (> 0).")
    tau: float = Field(..., le=MAX_TAU, description="Relaxation time in s (> 0).")

    @model_validator(mode="after")
    def _passive(self) -> DebyePole:
        problems = []
        if self.delta_eps <= 0:
            problems.append(f"delta_eps = {self.delta_eps:g} gives Im eps >= 0 (gain); use "
                            "delta_eps > 0 or drop the pole")
        if self.tau <= 0:
            problems.append(f"tau = {self.tau:g} s must be > 0 (a relaxation time)")
        elif self.tau < MIN_TAU:
            problems.append(f"tau = {self.tau:g} s is below {MIN_TAU:g} s (faster than any "
                            "electromagnetic relaxation)")
        _refuse("Debye", problems)
        return self

    def chi(self, omega: np.ndarray) -> np.ndarray:
        """Complex susceptibility at angular frequencies omega (rad/s)."""
        return self.delta_eps / (1 + 1j * omega * self.tau)


class DrudePole(EmModel):
    """A Drude free-carrier term, ``-omega_p^2 / (omega^2 - j omega gamma)`` (metals,
    plasmas)."""

    type: Literal["Drude"] = "Drude"
    omega_p: float = Field(..., le=MAX_RATE,
                           description="Plasma angular frequency in rad/s (> 0).")
    gamma: float = Field(..., le=MAX_RATE,
                         description="Collision rate in rad/s (>= 0; 0: lossless).")

    @model_validator(mode="after")
    def _passive(self) -> DrudePole:
        problems = []
        if self.omega_p <= 0:
            problems.append(f"omega_p = {self.omega_p:g} rad/s must be > 0")
        if self.gamma < 0:
            problems.append(f"gamma = {self.gamma:g} rad/s gives Im eps > 0 (gain); use "
                            "gamma >= 0")
        _refuse("Drude", problems)
        return self

    def chi(self, omega: np.ndarray) -> np.ndarray:
        """Complex susceptibility at angular frequencies omega (rad/s)."""
        return -self.omega_p**2 / (omega**2 - 1j * omega * self.gamma)


class LorentzPole(EmModel):
    """A damped Lorentz resonance, ``delta_eps omega_0^2 / (omega_0^2 + 2 j omega delta -
    omega^2)`` (bound electrons, phonons; Taflove and Hagness's notation)."""

    type: Literal["Lorentz"] = "Lorentz"
    delta_eps: float = Field(..., le=MAX_STRENGTH,
                             description="Strength: its static contribution (> 0).")
    omega_0: float = Field(..., le=MAX_RATE,
                           description="Resonance angular frequency in rad/s (> 0).")
    delta: float = Field(..., le=MAX_RATE, description="Damping in rad/s (>= 0; the full "
                                                       "width at half maximum of Im chi is "
                                                       "2 delta).")

    @model_validator(mode="after")
    def _passive(self) -> LorentzPole:
        problems = []
        if self.delta_eps <= 0:
            problems.append(f"delta_eps = {self.delta_eps:g} gives Im eps >= 0 (gain); use "
                            "delta_eps > 0 or drop the pole")
        if self.omega_0 <= 0:
            problems.append(f"omega_0 = {self.omega_0:g} rad/s must be > 0 (omega_0 = 0 is "
                            "a Drude pole: use DrudePole)")
        if self.delta < 0:
            problems.append(f"delta = {self.delta:g} rad/s gives Im eps > 0 (gain); use "
                            "delta >= 0")
        _refuse("Lorentz", problems)
        return self

    def chi(self, omega: np.ndarray) -> np.ndarray:
        """Complex susceptibility at angular frequencies omega (rad/s)."""
        w0 = self.omega_0
        return self.delta_eps * w0**2 / (w0**2 + 2j * omega * self.delta - omega**2)


Pole = Annotated[DebyePole | DrudePole | LorentzPole, Field(discriminator="type")]
"""One pole of a :class:`PoleMedium`, chosen by its ``type`` tag."""


class _Dispersive(EmModel):
    """What every dispersive medium offers: eps(f) and the effective conductivity."""

    def eps(self, f) -> np.ndarray:  # pragma: no cover - each medium defines it
        raise NotImplementedError

    def sigma_eff(self, f) -> np.ndarray:
        """Effective conductivity ``-omega eps0 Im eps(f)`` in S/m (static plus dielectric
        loss): what absorbs power, ``0.5 sigma_eff |E|^2`` W/m^3, and what SAR uses."""
        return -angular_frequency(f) * eps0 * self.eps(f).imag


class PoleMedium(_Dispersive):
    """A medium of eps_inf, a static conductivity and any number of poles.

    A structure's medium in FDTD3D, FDTD2D and FDFD3D, and an FDTD3D background.
    Passivity is checked pole by pole: an error names ``poles.<index>`` and the
    offending value.
    """

    type: Literal["PoleMedium"] = "PoleMedium"
    eps_inf: float = Field(1.0, gt=0, le=MAX_STRENGTH,
                           description="Relative permittivity at frequencies above every "
                                       "pole (dimensionless, > 0).")
    sigma: float = Field(0.0, ge=0, le=1e12,
                         description="Static electric conductivity in S/m (>= 0).")
    poles: list[Pole] = Field(default_factory=list, max_length=64,
                              description="Debye, Drude and Lorentz poles, each by its type.")
    name: str = Field("", description="Optional label used in reports.")

    def eps(self, f) -> np.ndarray:
        """Complex relative permittivity at frequencies f (Hz, > 0), e^{+j omega t}:
        ``eps' - j eps''`` with eps'' >= 0. Same shape as f."""
        omega = angular_frequency(f)
        out = self.eps_inf - 1j * self.sigma / (omega * eps0)
        for p in self.poles:
            out = out + p.chi(omega)
        return np.asarray(out, dtype=complex)

    @property
    def eps_static(self) -> float:
        """eps_inf plus every Debye and Lorentz strength: Re eps as f -> 0 (infinite when
        a Drude pole is present)."""
        if any(isinstance(p, DrudePole) for p in self.poles):
            return math.inf
        return self.eps_inf + sum(p.delta_eps for p in self.poles)


class ColeColeTerm(EmModel):
    """One Cole-Cole dispersion, ``delta_eps / (1 + (j omega tau)^(1 - alpha))``."""

    delta_eps: float = Field(..., ge=0, le=MAX_STRENGTH,
                             description="Strength (dimensionless, >= 0).")
    tau: float = Field(..., ge=MIN_TAU, le=MAX_TAU, description="Relaxation time in s (> 0).")
    alpha: float = Field(0.0, ge=0, lt=1, description="Broadening, 0 <= alpha < 1 "
                                                      "(0: a Debye pole).")


class ColeColeMedium(_Dispersive):
    """A multi-term Cole-Cole medium (Gabriel's tissue model).

    **Not yet accepted by the solvers**: it has no time-domain update; fit it to a
    :class:`PoleMedium` with :func:`emjax.materials.fit.fit_poles`. Passive for every
    allowed parameter (delta_eps >= 0, tau > 0, 0 <= alpha < 1, sigma_ionic >= 0).
    """

    type: Literal["ColeColeMedium"] = "ColeColeMedium"
    eps_inf: float = Field(..., gt=0, le=MAX_STRENGTH,
                           description="High-frequency relative permittivity.")
    sigma_ionic: float = Field(0.0, ge=0, le=1e12,
                               description="Static ionic conductivity in S/m.")
    terms: list[ColeColeTerm] = Field(default_factory=list, description="The dispersions.")
    name: str = Field("", description="Optional label used in reports.")

    def eps(self, f) -> np.ndarray:
        """Complex relative permittivity at frequencies f (Hz, > 0), e^{+j omega t}."""
        omega = angular_frequency(f)
        out = self.eps_inf - 1j * self.sigma_ionic / (omega * eps0)
        for t in self.terms:
            out = out + t.delta_eps / (1 + (1j * omega * t.tau) ** (1 - t.alpha))
        return np.asarray(out, dtype=complex)


__all__ = ["ColeColeMedium", "ColeColeTerm", "DebyePole", "DrudePole", "LorentzPole", "Pole",
           "PoleMedium", "angular_frequency"]
