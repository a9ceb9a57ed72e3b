"""Physical constants in SI units (CODATA 2018)."""

from __future__ import annotations

import math

c0: float = 299_792_458.0
"""Speed of light in vacuum, m/s."""
mu0: float = 1.25663706212e-6
"""Vacuum permeability, H/m."""
eps0: float = 1.0 / (mu0 * c0**2)
"""Vacuum permittivity, F/m."""
eta0: float = math.sqrt(mu0 / eps0)
"""Impedance of free space, ohm."""
