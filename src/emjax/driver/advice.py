"""Advice on a time-domain run's set-up: checks of plain numbers that warn.

Every time-domain lowering (FDTD3D, FDTD2D, DGATD) calls :func:`advise` with its
sources' samplers, dt, the number of steps and, where it has them, the grid spacing,
the densest medium and the monitors' frequencies. The run goes ahead; a warning
(:class:`emjax.errors.EmjaxWarning`) names the value, the limit and the fix when the
results are probably not what was meant:

- a source waveform still above :data:`CUTOFF` of its peak when the run ends (the
  pulse is cut off; continuous waves never decay and are not checked);
- fewer than :data:`MIN_CELLS` cells per shortest wavelength: c / (f_max sqrt(max
  eps_r mu_r)) over the largest spacing, f_max the top of the sources' band; in a
  dispersive medium (a PoleMedium's eps(f)) c / max_f (f n(f)) over the band, with
  n = sqrt(|eps(f)|) (the scale 1 / |k| of a lossy medium's field, its conductivity
  and pole losses included) where Re eps(f) > 0, and the medium left out where Re eps(f)
  <= 0 (:func:`resolved_index`);
- DFT or near-to-far frequencies above the Nyquist frequency 1 / (2 dt), or outside
  the sources' band.

A source's band is where the amplitude spectrum of its waveform, sampled at
(n + 1/2) dt (the driver's source times) until it has decayed (the run, or longer
when the run cuts it off), is within :data:`BAND_DB` of its peak (an FFT, so any
waveform works); a continuous wave's band is its frequency, give or take the run's
frequency resolution 1 / (steps dt).
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..constants import c0
from ..errors import AdviceWarning

CUTOFF = 1e-3
"""A pulse above this fraction of its peak at or after the run's end is cut off."""

BAND_DB = -40.0
"""A source's band: where its amplitude spectrum is within this many dB of its peak."""

MIN_CELLS = 10
"""Fewest cells per shortest wavelength before the FDTD grid's dispersion shows."""

MAX_SAMPLES = 2**20
"""Most waveform samples a check takes (longer spans are sampled with a stride)."""

LOOKAHEAD = 16
"""How far past the run's end (in run lengths) a cut-off pulse is followed to find
when it has decayed."""


@dataclass(frozen=True)
class Signal:
    """One source's time function as the checks see it.

    what: how messages name it ("sources[0] PointDipole"); g: the waveform g(t), t in
    s (``Waveform.sampler()``); cw: the frequency in Hz of a continuous wave (it never
    decays), None for a pulse.
    """

    what: str
    g: Callable[[np.ndarray], np.ndarray]
    cw: float | None = None


@dataclass(frozen=True)
class Spectrum:
    """What the checks read of one signal: its amplitude spectrum |G| at frequencies
    f (Hz), normalized to its peak; end: the time (s) after which the pulse stays below
    CUTOFF of its peak (None: not within the look-ahead); tail: its largest level at or
    after the run's end, relative to its peak."""

    f: np.ndarray
    level: np.ndarray
    end: float | None
    tail: float

    def band(self) -> tuple[float, float]:
        """(lowest, highest) frequency in Hz within BAND_DB of the peak; (0, 0) for a
        signal without one (all zero or not finite: a degenerate waveform such as
        f0 = 1e-300, which the run itself will show)."""
        inside = np.flatnonzero(self.level >= 10 ** (BAND_DB / 20))
        if inside.size == 0:
            return 0.0, 0.0
        return float(self.f[inside[0]]), float(self.f[inside[-1]])

    def db(self, f: np.ndarray) -> np.ndarray:
        """The spectrum's level at frequencies f (Hz) in dB below its peak."""
        with np.errstate(divide="ignore"):
            return 20 * np.log10(np.interp(f, self.f, self.level, right=0.0))


def spectrum(signal: Signal, dt: float, steps: int) -> Spectrum:
    """The spectrum, end and tail of a pulse sampled at (n + 1/2) dt (see the module
    docstring). The look-ahead covers one run length past the end, and LOOKAHEAD of
    them (within MAX_SAMPLES) when the pulse is still there."""
    stride = max(1, math.ceil(steps / MAX_SAMPLES))
    n_run = math.ceil(steps / stride)

    def sample(i0: int, i1: int) -> np.ndarray:
        t = (np.arange(i0, i1, dtype=np.float64) * stride + 0.5) * dt
        return np.nan_to_num(np.asarray(signal.g(t), np.float64), posinf=0.0, neginf=0.0)

    g = sample(0, n_run)
    after = sample(n_run, 2 * n_run)
    peak = max(np.abs(g).max(), np.abs(after).max())
    if peak == 0:
        return Spectrum(np.zeros(1), np.zeros(1), 0.0, 0.0)
    cut = np.abs(after).max() > CUTOFF * peak
    if cut:  # follow the pulse until it has decayed
        after = sample(n_run, max(2 * n_run, min((LOOKAHEAD + 1) * n_run, MAX_SAMPLES)))
        peak = max(peak, np.abs(after).max())
    whole = np.concatenate([g, after])
    last = int(np.flatnonzero(np.abs(whole) > CUTOFF * peak)[-1])
    settled = last < len(whole) - n_run  # quiet over the last run length looked at
    end = (last + 1) * stride * dt if settled else None
    if cut and settled:  # the whole pulse, not its truncation
        g = whole[: last + 1]
    n_fft = 1 << max(4, math.ceil(math.log2(4 * len(g))))
    G = np.abs(np.fft.rfft(g, n_fft))
    return Spectrum(np.fft.rfftfreq(n_fft, stride * dt), G / max(G.max(), 1e-300), end,
                    float(np.abs(after).max() / peak))


def cut_off(signals: Iterable[Signal], spectra, dt: float, steps: int) -> list[str]:
    """Messages for the pulses still above CUTOFF of their peak at or after the run's end;
    ``spectra``: each signal's :func:`spectrum` (None for a continuous wave)."""
    out = []
    T = steps * dt
    for s, sp in zip(signals, spectra, strict=True):
        if sp is None or sp.tail <= CUTOFF:
            continue
        fix = (f"run to at least {sp.end:.3g} s (duration or steps x dt; more for the "
               "fields to leave or ring down)" if sp.end is not None else
               "run much longer (it has not decayed even well past the run's end)")
        out.append(
            f"{s.what}: its waveform is still at {sp.tail:.2g} of its peak when the run ends "
            f"at t = {T:.4g} s ({steps} steps of dt = {dt:.4g} s; limit {CUTOFF:g}): the "
            f"pulse is cut off and spectra and DFT results hold a truncated signal; {fix}, "
            "or use a shorter pulse (a wider fwidth or a smaller offset)")
    return out


def top_frequency(signals, spectra) -> tuple[float, str] | None:
    """(highest frequency in Hz of any source's band, the source's name), or None."""
    tops = [((s.cw if sp is None else sp.band()[1]), s.what)
            for s, sp in zip(signals, spectra, strict=True) if sp is None or sp.level.any()]
    return max(tops) if tops else None


def bottom_frequency(signals, spectra) -> float | None:
    """Lowest frequency in Hz of any source's band, or None."""
    lows = [(s.cw if sp is None else sp.band()[0])
            for s, sp in zip(signals, spectra, strict=True) if sp is None or sp.level.any()]
    return min(lows) if lows else None


def resolved_index(eps: np.ndarray) -> np.ndarray:
    """The index a grid must resolve in a medium of complex relative permittivity eps
    (e^{+j omega t}, any shape): sqrt(|eps|) = |n| where Re eps > 0, so that the
    wavelength c / (f |n|) is 2 pi / |k|, the scale of both the wave and its decay in a
    lossy dielectric (water, tissue; its conductivity included); 0 where Re eps <= 0.

    Re eps <= 0 is a metal (or a plasma below its plasma frequency): the field decays
    within the skin depth c / (omega |Im n|) without a wavelength, and a metal in a
    microwave run (|eps| ~ 1e7) would ask for cells of microns although its fields
    hardly matter; such frequencies are not checked. Resolve the skin depth by hand
    where the fields inside a metal matter (plasmonics); a Drude sphere near its
    surface-plasmon resonance (Re eps about -2) is checked through its surroundings.
    """
    eps = np.asarray(eps, dtype=complex)
    return np.where(eps.real > 0, np.sqrt(np.abs(eps)), 0.0)


DISPERSIVE_SAMPLES = 512
"""Frequencies (log-spaced over the sources' band) at which a dispersive medium's eps(f)
is read for the cells-per-wavelength check."""


def resolution(top: tuple[float, str], spacing, eps_mu: float, dispersive=(),
               bottom: float | None = None) -> list[str]:
    """The message for fewer than MIN_CELLS cells per shortest wavelength (largest
    spacing in m, densest constant medium's eps_r mu_r), or none.

    dispersive: ((what, eps), ...) with eps(f) the complex relative permittivity at
    frequencies f (Hz) of a dispersive medium, read over the band from ``bottom`` (Hz;
    None: 1e-3 of the top) to the top through :func:`resolved_index`.
    """
    f, what = top
    if not f > 0:
        return []
    lam, where, f_at, fix_band = c0 / (f * math.sqrt(eps_mu)), f"eps_r*mu_r = {eps_mu:.4g}", f, True
    lo = max(bottom or 0.0, 1e-3 * f)
    band = np.unique(np.append(np.geomspace(lo, f, DISPERSIVE_SAMPLES), f))
    for name, eps in dispersive:
        fn = band * resolved_index(eps(band))
        i = int(np.argmax(fn))
        if fn[i] > 0 and c0 / fn[i] < lam:
            lam, f_at, fix_band = c0 / fn[i], float(band[i]), False
            where = f"{name}, |eps(f)| = {abs(complex(eps(band[i]))):.4g}"
    cell = max(spacing)
    n = lam / cell
    if n >= MIN_CELLS:
        return []
    # a narrower band helps in a constant medium; in a dispersive one, eps moves with it
    fix = (f" or a narrower-band pulse (its band up to {f * n / MIN_CELLS:.4g} Hz at most)"
           if fix_band else "")
    return [f"{n:.3g} cells per shortest wavelength (lambda = {lam:.4g} m in {where} at f = "
            f"{f_at:.4g} Hz, within the band of {what} ({BAND_DB:g} dB of its peak, top "
            f"{f:.4g} Hz); largest cell {cell:.4g} m); use at least {MIN_CELLS}: a finer grid "
            f"(spacing <= {lam / MIN_CELLS:.4g} m){fix}"]


def frequencies(monitors, signals, spectra, dt: float, steps: int) -> list[str]:
    """Messages for monitor frequencies above Nyquist or outside every source's band.

    monitors: ((what, frequencies in Hz), ...), e.g. ("monitor DFTMonitor 'dft'", (1e9,)).
    """
    out = []
    nyquist = 1 / (2 * dt)
    df = 1 / (steps * dt)
    pulses = [sp for sp in spectra if sp is not None and sp.level.any()]
    lines = [s.cw for s in signals if s.cw is not None]
    bands = [sp.band() for sp in pulses] + [(f - df, f + df) for f in lines]
    for what, freqs in monitors:
        f = np.asarray(freqs, np.float64)
        high = f[f > nyquist]
        if high.size:
            out.append(
                f"{what}: frequencies {_hz(high)} lie above the Nyquist frequency 1/(2 dt) = "
                f"{nyquist:.4g} Hz of the run's dt = {dt:.4g} s: the grid cannot carry them "
                f"and their transform is aliased; use frequencies below {nyquist:.4g} Hz (within "
                "the source's band) or a finer grid")
        f = f[f <= nyquist]
        if not bands or not f.size:
            continue
        db = np.full(f.shape, -np.inf)
        for sp in pulses:
            db = np.maximum(db, sp.db(f))
        for line in lines:
            db = np.where(np.abs(f - line) <= df, 0.0, db)
        bad = db < BAND_DB
        if bad.any():
            lo, hi = min(b[0] for b in bands), max(b[1] for b in bands)
            out.append(
                f"{what}: frequencies {_hz(f[bad])} lie outside the sources' band (within "
                f"{BAND_DB:g} dB of the peak: {lo:.4g} to {hi:.4g} Hz; the spectrum there is at "
                f"{_db(db[bad])}): their transform holds little but noise and normalizing by "
                "the source amplifies it; choose frequencies inside the band or a source "
                "whose band covers them (centre f0, width fwidth)")
    return out


def _hz(f: np.ndarray) -> str:
    return ", ".join(f"{v:.4g}" for v in f[:6]) + (" ..." if f.size > 6 else "") + " Hz"


def _db(db: np.ndarray) -> str:
    worst = float(db.min())
    return "no signal at all" if not np.isfinite(worst) else f"{float(db.max()):.0f} dB" + (
        f" or less (down to {worst:.0f} dB)" if db.size > 1 else "")


def advise(signals: Iterable[Signal], dt: float, steps: int, *, spacing=None,
           eps_mu: float = 1.0, dispersive=(), monitors=()) -> list[str]:
    """Run every check, warn each message (EmjaxWarning, pointed at the caller outside
    emjax) and return the messages.

    signals: the sources (:class:`Signal`); dt in s; steps; spacing: grid spacings in
    m for the cells-per-wavelength check (None: no check, as for DGATD); eps_mu: the
    largest eps_r mu_r of the constant media present; dispersive: ((what, eps), ...),
    eps(f) the complex relative permittivity of each dispersive medium at f in Hz
    (:func:`resolution`); monitors: ((what, frequencies in Hz), ...).
    """
    signals = list(signals)
    spectra = [None if s.cw is not None else spectrum(s, dt, steps) for s in signals]
    messages = cut_off(signals, spectra, dt, steps)
    top = top_frequency(signals, spectra)
    if spacing is not None and top is not None:
        messages += resolution(top, spacing, eps_mu, dispersive,
                               bottom_frequency(signals, spectra))
    messages += frequencies(monitors, signals, spectra, dt, steps)
    level = _outside_stacklevel()
    for m in messages:
        warnings.warn(m, AdviceWarning, stacklevel=level)
    return messages


_PACKAGE = str(Path(__file__).resolve().parents[1])


def _outside_stacklevel() -> int:
    """The ``stacklevel`` (for a warn call in the caller of this function) of the first
    frame outside the emjax package: the user's line that started the run."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


__all__ = ["BAND_DB", "CUTOFF", "DISPERSIVE_SAMPLES", "MIN_CELLS", "Signal", "Spectrum",
           "advise", "bottom_frequency", "cut_off", "frequencies", "resolution",
           "resolved_index", "spectrum", "top_frequency"]
