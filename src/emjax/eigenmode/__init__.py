"""A 2D full-vector eigenmode solver on the Yee cross-section (issue 21).

Arrays in, arrays out: :func:`cross_section` turns per-cell media (and PEC cells or
zero-thickness PEC edges) into a :class:`CrossSection` on a uniform (dx, dy) Yee grid
normal to the waveguide axis z; :func:`solve_modes` returns its guided modes at a
frequency as frozen :class:`Mode` records (n_eff, beta, the six field components at the
positions of :mod:`emjax.eigenmode.section`, 1 W); :mod:`emjax.eigenmode.lines` gives
the voltage, current and characteristic impedance of quasi-TEM lines. Not to be
confused with :mod:`emjax.analysis.modes` (resonances of a time signal).
"""

from __future__ import annotations

from .lines import current, impedance, voltage
from .section import OFFSETS, CrossSection, cross_section, shapes
from .solver import Mode, NoGuidedModeError, cross_power, solve_modes

__all__ = ["OFFSETS", "CrossSection", "Mode", "NoGuidedModeError", "cross_power",
           "cross_section", "current", "impedance", "shapes", "solve_modes", "voltage"]
