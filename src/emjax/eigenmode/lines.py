"""Voltage, current and characteristic impedance of a mode (quasi-TEM lines).

For a TEM line the three definitions agree; for a quasi-TEM one (microstrip) they
differ slightly, and which one a port uses is a choice (Marks and Williams, "A general
waveguide circuit theory", J. Res. NIST 97, 533 (1992)):

- power-voltage  Z = |V|^2 / (2 P)
- power-current  Z = 2 P / |I|^2
- voltage-current Z = V / I

with P the mode's power (1 W for a solved mode). V is the line integral of E along an
axis-aligned path of grid lines (E nodes), I the circulation of H around a rectangle
whose corners are cell centres (H nodes), counter-clockwise seen from +z (the current
flowing in +z inside it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import SetupError
from .solver import Mode


def _index(xs, value: float, axis: int, half: bool, what: str) -> int:
    """Grid index of coordinate ``value`` on integer (or half) nodes along ``axis``."""
    d = xs.spacing[axis]
    t = (value - xs.lower[axis]) / d - (0.5 if half else 0.0)
    i = round(t)
    n = xs.cells[axis] + (0 if half else 1)
    if abs(t - i) > 1e-6 or not 0 <= i < n:
        kind = "cell centres" if half else "grid lines"
        raise SetupError(f"cross-section {xs.name!r}: {what} = {value:.6g} m (axis "
                         f"{'xy'[axis]}) is not on the section's {kind}")
    return i


def voltage(mode: Mode, start: Sequence[float], stop: Sequence[float]) -> complex:
    """The line integral of E from ``start`` to ``stop`` (points (x, y) in m on grid
    lines, differing in x or in y only), V: the potential of ``start`` minus ``stop``."""
    xs = mode.section
    i0, j0 = (_index(xs, start[a], a, False, "voltage path start") for a in (0, 1))
    i1, j1 = (_index(xs, stop[a], a, False, "voltage path stop") for a in (0, 1))
    if i0 != i1 and j0 != j1:
        raise SetupError(f"cross-section {xs.name!r}: voltage path {tuple(start)} -> "
                         f"{tuple(stop)} must run along x or along y")
    ex, ey, _ = mode.E
    if j0 == j1:
        lo, hi = sorted((i0, i1))
        v = np.sum(ex[lo:hi, j0]) * xs.spacing[0]
        return complex(v if i1 >= i0 else -v)
    lo, hi = sorted((j0, j1))
    v = np.sum(ey[i0, lo:hi]) * xs.spacing[1]
    return complex(v if j1 >= j0 else -v)


def current(mode: Mode, lower: Sequence[float], upper: Sequence[float]) -> complex:
    """The circulation of H around the rectangle of corners ``lower`` and ``upper``
    ((x, y) in m, at cell centres), counter-clockwise: the +z current inside, A."""
    xs = mode.section
    i0, j0 = (_index(xs, lower[a], a, True, "current loop lower corner") for a in (0, 1))
    i1, j1 = (_index(xs, upper[a], a, True, "current loop upper corner") for a in (0, 1))
    if not (i1 > i0 and j1 > j0):
        raise SetupError(f"cross-section {xs.name!r}: current loop {tuple(lower)} .. "
                         f"{tuple(upper)} needs upper > lower in x and y")
    hx, hy, _ = mode.H
    dx, dy = xs.spacing
    # Hx at integer x, half y: the bottom side runs at y index j0, the top at j1
    bottom = np.sum(hx[i0 + 1:i1 + 1, j0]) * dx
    top = np.sum(hx[i0 + 1:i1 + 1, j1]) * dx
    right = np.sum(hy[i1, j0 + 1:j1 + 1]) * dy
    left = np.sum(hy[i0, j0 + 1:j1 + 1]) * dy
    return complex(bottom + right - top - left)


def impedance(mode: Mode, *, voltage_path: tuple | None = None,
              current_loop: tuple | None = None) -> complex:
    """Characteristic impedance (ohm) by the definition the arguments select (module
    docstring): ``voltage_path`` = (start, stop) alone gives power-voltage,
    ``current_loop`` = (lower, upper) alone power-current, both voltage-current."""
    if voltage_path is None and current_loop is None:
        raise SetupError("impedance: give voltage_path=(start, stop), current_loop="
                         "(lower, upper), or both")
    p = mode.power
    v = voltage(mode, *voltage_path) if voltage_path is not None else None
    i = current(mode, *current_loop) if current_loop is not None else None
    if v is not None and i is not None:
        return v / i
    if v is not None:
        return complex(abs(v) ** 2 / (2 * p))
    return complex(2 * p / abs(i) ** 2)


__all__ = ["current", "impedance", "voltage"]
