"""Source time functions, evaluated in NumPy at the solver's sample times (s).

Each model's ``sampler()`` is a plain function of t (s) over plain numbers (a
``functools.partial`` of this module's ``gaussian_pulse``, ``ricker_wavelet`` or
``continuous_wave``): what a solver's lowering keeps, so that no pydantic model
reaches its plan. ``model(t)`` calls the same function.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from .base import EmModel

MAX_FREQUENCY = 1e20
"""Highest frequency a waveform may name, Hz (hard X-rays: far beyond any grid)."""


class GaussianPulse(EmModel):
    """Modulated Gaussian ``g(t) = exp(-(t-t0)^2 / (2 tau^2)) * cos(2 pi f0 (t-t0) + phase)``.

    ``tau = 1 / (2 pi fwidth)`` so that ``fwidth`` is the standard deviation of the
    spectrum in Hz; ``t0 = offset * tau``. With ``remove_dc`` (the default, as in
    Tidy3D) the waveform is instead the time derivative of ``g`` with the carrier
    shifted by a quarter period, scaled to unit carrier amplitude: its integral is
    zero, so a current source leaves no static charge behind.
    """

    type: Literal["GaussianPulse"] = "GaussianPulse"
    f0: float = Field(..., ge=0, le=MAX_FREQUENCY, description="Centre frequency in Hz (>= 0).")
    fwidth: float = Field(..., gt=0, le=MAX_FREQUENCY,
                          description="Spectral standard deviation in Hz (> 0).")
    offset: float = Field(5.0, gt=0, description="Delay of the peak in units of tau.")
    phase: float = Field(0.0, description="Carrier phase in rad.")
    remove_dc: bool = Field(True, description="Use the zero-mean derivative form.")

    @property
    def tau(self) -> float:
        """Temporal width in s."""
        return 1.0 / (2 * math.pi * self.fwidth)

    @property
    def fmax(self) -> float:
        """Highest frequency with appreciable content (spectrum down by about 1e-4), Hz."""
        return self.f0 + 4.3 * self.fwidth

    @property
    def steady_frequency(self) -> None:
        """A pulse decays: no steady frequency (see :class:`ContinuousWave`)."""
        return None

    def sampler(self) -> Callable[[np.ndarray], np.ndarray]:
        """g(t) as a plain function (see the module docstring)."""
        return partial(gaussian_pulse, f0=self.f0, tau=self.tau, offset=self.offset,
                       phase=self.phase, remove_dc=self.remove_dc)

    def __call__(self, t: np.ndarray) -> np.ndarray:
        return self.sampler()(t)


class RickerWavelet(EmModel):
    """Ricker (Mexican hat) wavelet of peak frequency ``fp``, delayed by ``delay`` s."""

    type: Literal["RickerWavelet"] = "RickerWavelet"
    fp: float = Field(..., gt=0, le=MAX_FREQUENCY, description="Peak frequency in Hz (> 0).")
    delay: float | None = Field(None, ge=0, description="Delay in s; default sqrt(2)/fp.")

    @property
    def fmax(self) -> float:
        """Highest frequency with appreciable content (3 fp), Hz."""
        return 3.0 * self.fp

    @property
    def steady_frequency(self) -> None:
        """A pulse decays: no steady frequency (see :class:`ContinuousWave`)."""
        return None

    def sampler(self) -> Callable[[np.ndarray], np.ndarray]:
        """g(t) as a plain function (see the module docstring)."""
        t0 = self.delay if self.delay is not None else math.sqrt(2) / self.fp
        return partial(ricker_wavelet, fp=self.fp, t0=t0)

    def __call__(self, t: np.ndarray) -> np.ndarray:
        return self.sampler()(t)


class ContinuousWave(EmModel):
    """``sin(2 pi f t + phase)`` switched on smoothly over ``ramp`` s (raised cosine)."""

    type: Literal["ContinuousWave"] = "ContinuousWave"
    frequency: float = Field(..., gt=0, le=MAX_FREQUENCY, description="Frequency in Hz (> 0).")
    ramp: float = Field(0.0, ge=0, description="Rise time in s (>= 0).")
    phase: float = Field(0.0, description="Phase in rad.")

    @property
    def fmax(self) -> float:
        """Highest frequency with appreciable content (1.5 times the carrier, for the ramp), Hz."""
        return 1.5 * self.frequency

    @property
    def steady_frequency(self) -> float:
        """The frequency in Hz of a wave that never decays (the run advice of
        :mod:`emjax.driver.advice` takes it as the source's band)."""
        return self.frequency

    def sampler(self) -> Callable[[np.ndarray], np.ndarray]:
        """g(t) as a plain function (see the module docstring)."""
        return partial(continuous_wave, frequency=self.frequency, ramp=self.ramp,
                       phase=self.phase)

    def __call__(self, t: np.ndarray) -> np.ndarray:
        return self.sampler()(t)


def gaussian_pulse(t, *, f0: float, tau: float, offset: float, phase: float,
                   remove_dc: bool) -> np.ndarray:
    """:class:`GaussianPulse` at times ``t`` (s); tau in s, f0 in Hz, phase in rad."""
    tau = np.float64(tau)  # NumPy scalars: overflow gives inf, masked below
    with np.errstate(all="ignore"):
        s = np.asarray(t, dtype=np.float64) - offset * tau
        env = np.exp(-(s**2) / (2 * tau**2))
        w = 2 * math.pi * f0
        if not remove_dc:
            return _where_env(env, env * np.cos(w * s + phase))
        # d/dt [env sin(w s + phase)] / (w + 1/tau): cos carrier, exactly zero mean;
        # with no carrier, the derivative of the Gaussian itself.
        ph = phase + (math.pi / 2 if f0 == 0 else 0.0)
        d = env * (w * np.cos(w * s + ph) - s / tau**2 * np.sin(w * s + ph))
        return _where_env(env, d / (w + 1 / tau))


def ricker_wavelet(t, *, fp: float, t0: float) -> np.ndarray:
    """:class:`RickerWavelet` at times ``t`` (s): peak frequency fp in Hz, delay t0 in s."""
    with np.errstate(all="ignore"):
        a = (math.pi * fp * (np.asarray(t, dtype=np.float64) - t0)) ** 2
        env = np.exp(-a)
        return _where_env(env, (1 - 2 * a) * env)


def continuous_wave(t, *, frequency: float, ramp: float, phase: float) -> np.ndarray:
    """:class:`ContinuousWave` at times ``t`` (s): frequency in Hz, ramp in s."""
    t = np.asarray(t, dtype=np.float64)
    env = np.ones_like(t)
    with np.errstate(all="ignore"):
        if ramp > 0:
            x = np.clip(t / ramp, 0.0, 1.0)
            env = 0.5 * (1 - np.cos(math.pi * x))
        return env * np.sin(2 * math.pi * frequency * t + phase)


def _where_env(env: np.ndarray, value: np.ndarray) -> np.ndarray:
    """``value`` where the envelope is non-zero, else 0 (no inf * 0 far from the pulse)."""
    return np.where(env > 0, value, 0.0)


Waveform = Annotated[
    GaussianPulse | RickerWavelet | ContinuousWave, Field(discriminator="type")
]
