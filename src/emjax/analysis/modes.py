"""Resonance extraction from a ringing time signal by the matrix pencil method.

For a signal that is a sum of damped complex exponentials,
``x[k] = sum_i a_i z_i^k``, the poles z_i are the eigenvalues of the pencil built
from the signal's Hankel matrix (Hua and Sarkar, IEEE Trans. ASSP 38, 1990). Unlike
a DFT peak, whose resolution is 1/T, the poles come out accurate to far below a
bin, which is what measuring a second-order dispersion error needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Mode:
    """One damped resonance: frequency in Hz, amplitude decay rate in 1/s, amplitude."""

    frequency: float  # Hz
    decay: float  # 1/s (amplitude envelope exp(-decay t))
    amplitude: float  # |a_i| in signal units

    @property
    def q(self) -> float:
        """Quality factor pi f / decay (inf for an undamped mode)."""
        return np.inf if self.decay <= 0 else np.pi * self.frequency / self.decay


def matrix_pencil(x: np.ndarray, dt: float, order: int, pencil: int | None = None) -> list[Mode]:
    """Modes of the real or complex samples ``x`` (spacing ``dt`` s), strongest first.

    ``order`` is the number of complex exponentials kept (twice the number of real
    resonances); ``pencil`` defaults to a third of the record.
    """
    x = np.asarray(x)
    n = x.size
    L = pencil or n // 3
    Y = np.lib.stride_tricks.sliding_window_view(x, L + 1)  # (n - L, L + 1) Hankel
    _, _, vh = np.linalg.svd(Y, full_matrices=False)
    V = vh[:order].conj().T  # (L + 1, order)
    z = np.linalg.eigvals(np.linalg.pinv(V[:-1]) @ V[1:])
    # Amplitudes by least squares on the Vandermonde system.
    k = np.arange(n)[:, None]
    Z = z[None, :] ** k
    a, *_ = np.linalg.lstsq(Z, x, rcond=None)
    modes = []
    for zi, ai in zip(z, a, strict=True):
        f = np.angle(zi) / (2 * np.pi * dt)
        if f <= 0:
            continue
        modes.append(Mode(frequency=float(f), decay=float(-np.log(abs(zi)) / dt),
                          amplitude=float(abs(ai))))
    return sorted(modes, key=lambda m: -m.amplitude)


def match_modes(modes: list[Mode], targets, rel_tol: float = 0.02) -> list[Mode | None]:
    """For each target frequency the strongest mode within ``rel_tol``, else None."""
    out = []
    for f in targets:
        near = [m for m in modes if abs(m.frequency - f) <= rel_tol * f]
        out.append(max(near, key=lambda m: m.amplitude) if near else None)
    return out
