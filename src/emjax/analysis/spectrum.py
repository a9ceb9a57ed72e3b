"""Spectra of sampled time signals and their peaks (NumPy FFTs, scipy.signal windows and peaks).

``spectrum`` approximates the continuous Fourier transform
``X(f) = integral x(t) exp(-i 2 pi f t) dt`` by ``dt * sum_n w_n x_n exp(-i 2 pi f t_n)``
on the non-negative rfft frequencies, the same sign and scaling as the DFT monitors
(``sum_n F^n exp(-i 2 pi f t_n) dt``), so probe and DFT-monitor spectra compare directly.
Zero padding (``pad_to``) interpolates the spectrum on a finer frequency grid; it does not
add resolution, which stays ``1 / T`` for a record of duration ``T``.

``find_peaks`` picks the strongest local maxima of an amplitude spectrum (found by
``scipy.signal.find_peaks``) and refines
each one by fitting a parabola to the log-amplitude of the three bins around it. For a
Gaussian line the fit is exact; for the Lorentzian line of a damped resonance, or a
windowed sinusoid, its bias is a small fraction of a bin, and padding shrinks the bins
(Smith, "Spectral Audio Signal Processing", quadratic interpolation of spectral peaks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_WINDOWS = ("hann", "hamming", "blackman")  # the common ones; scipy knows more


@dataclass(frozen=True)
class Peak:
    """One spectral peak."""

    frequency: float  # Hz, refined between bins
    amplitude: float  # peak amplitude, in the units of the spectrum given


def window_weights(name: str | tuple | np.ndarray | None, n: int) -> np.ndarray:
    """Window weights of length ``n``: None (rectangular), a name or (name, parameter)
    tuple that ``scipy.signal.get_window`` knows ('hann', 'hamming', 'blackman',
    ('tukey', 0.5), ...), in its symmetric form (as ``numpy.hanning``), or an array of
    ``n`` weights."""
    from scipy.signal import get_window

    if name is None:
        return np.ones(n)
    if isinstance(name, np.ndarray):
        if name.shape != (n,):
            raise ValueError(f"window has shape {name.shape}; give {n} weights, one per sample")
        return name.astype(np.float64)
    try:
        return np.asarray(get_window(name, n, fftbins=False), dtype=np.float64)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"window {name!r} is not known ({exc}); use None, an array of {n} "
                         f"weights or a scipy.signal.get_window name such as {_WINDOWS}"
                         ) from None


def spectrum(
    t: np.ndarray,
    x: np.ndarray,
    pad_to: int | None = None,
    window: str | np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Fourier transform of a uniformly sampled signal.

    Args:
        t: sample times, shape (nt,), s, uniformly spaced (relative spread < 1e-6).
        x: samples, shape (nt,) or (nt, ...); the transform runs along axis 0.
        pad_to: FFT length >= nt (zero padding); default nt.
        window: None (rectangular), a scipy.signal window ('hann', 'hamming',
            'blackman', ('tukey', 0.5), ...; symmetric form) or (nt,) weights.

    Returns:
        f: frequencies, shape (pad_to // 2 + 1,), Hz, from 0 in steps of 1 / (pad_to dt).
        X: complex spectrum, shape (pad_to // 2 + 1, ...), in units of x times s; the
        phase refers to t = 0 (not to t[0]), as for the DFT monitors.
    """
    t = np.asarray(t, dtype=np.float64)
    x = np.asarray(x)
    nt = t.shape[0] if t.ndim == 1 else -1
    if t.ndim != 1 or nt < 2 or x.shape[0] != nt:
        raise ValueError(
            f"spectrum needs t of shape (nt,) with nt >= 2 and x with nt rows; got t "
            f"{t.shape} and x {x.shape}"
        )
    steps = np.diff(t)
    dt = float(np.mean(steps))
    if dt <= 0 or np.max(np.abs(steps - dt)) > 1e-6 * dt:
        raise ValueError(
            f"spectrum needs uniformly increasing sample times; steps range from "
            f"{steps.min():.6g} s to {steps.max():.6g} s; resample the signal first"
        )
    n = nt if pad_to is None else int(pad_to)
    if n < nt:
        raise ValueError(f"pad_to = {pad_to} is shorter than the signal ({nt} samples); "
                         "give pad_to >= nt or None")
    w = window_weights(window, nt).reshape((nt,) + (1,) * (x.ndim - 1))
    f = np.fft.rfftfreq(n, dt)
    X = np.fft.rfft(x * w, n=n, axis=0) * dt
    # rfft puts the first sample at t = 0; shift the phase to the true times.
    shift = np.exp(-2j * np.pi * f * t[0]).reshape((f.size,) + (1,) * (x.ndim - 1))
    return f, X * shift



def find_peaks(
    f: np.ndarray,
    amp: np.ndarray,
    n: int,
    fmin: float | None = None,
    fmax: float | None = None,
) -> list[Peak]:
    """The ``n`` strongest local maxima of ``amp`` with ``fmin <= f <= fmax``, strongest first.

    Each peak at bin ``k`` is refined by the vertex of the parabola through
    ``log amp[k-1], log amp[k], log amp[k+1]``: offset ``p = (a - c) / (2 (a - 2 b + c))``
    bins, frequency ``f[k] + p df``, amplitude ``exp(b - (a - c) p / 4)``. A flat top counts
    once, at its middle bin (``scipy.signal.find_peaks``). Maxima on the
    first or last bin have no such neighbours and are not reported.

    Args:
        f: frequencies, shape (nf,), Hz, increasing and uniformly spaced.
        amp: amplitudes, shape (nf,); complex values are taken by modulus.
        n: the most peaks to return (fewer when fewer maxima exist).
        fmin, fmax: band in Hz; default the whole axis.

    Returns:
        Up to ``n`` :class:`Peak` (frequency in Hz, amplitude in the units of ``amp``).
    """
    f = np.asarray(f, dtype=np.float64)
    a = np.abs(np.asarray(amp)).astype(np.float64)
    if f.ndim != 1 or a.shape != f.shape:
        raise ValueError(f"find_peaks needs f and amp of one shape (nf,); got {f.shape} and "
                         f"{a.shape}")
    if n < 1:
        raise ValueError(f"n = {n}: ask for at least one peak")
    if a.size < 3:
        return []
    band = np.ones(a.size, dtype=bool)
    if fmin is not None:
        band &= f >= fmin
    if fmax is not None:
        band &= f <= fmax
    from scipy.signal import find_peaks as _local_maxima

    idx, _ = _local_maxima(a)  # strict local maxima (a plateau gives its middle bin)
    idx = idx[band[idx]]
    idx = idx[np.argsort(-a[idx], kind="stable")][:n]
    floor = np.finfo(np.float64).tiny
    out = []
    for k in idx:
        la, lb, lc = np.log(np.maximum(a[k - 1 : k + 2], floor))
        denom = la - 2 * lb + lc
        p = 0.0 if denom == 0 else 0.5 * (la - lc) / denom
        df = 0.5 * (f[k + 1] - f[k - 1])
        out.append(Peak(frequency=float(f[k] + p * df),
                        amplitude=float(np.exp(lb - 0.25 * (la - lc) * p))))
    return out


__all__ = ["Peak", "find_peaks", "spectrum", "window_weights"]
