"""Pure liquid water as a single Debye pole, temperature dependent.

Source: F. T. Ulaby and D. G. Long, *Microwave Radar and Radiometric Remote Sensing*
(University of Michigan Press, 2014), section 4-1 (the fits of A. Stogryn, IEEE Trans.
Microwave Theory Tech. 19, 733-736, 1971)::

    eps_static(T) = 88.045 - 0.4147 T + 6.295e-4 T^2 + 1.075e-5 T^3
    2 pi tau(T)   = 1.1109e-10 - 3.824e-12 T + 6.938e-14 T^2 - 5.096e-16 T^3  (s)
    eps_inf       = 4.9

with T in degrees Celsius. At 25 degC this gives eps_static 78.24 and tau 8.10 ps
(Kaatze, J. Chem. Eng. Data 34, 371, 1989, measured 78.36 and 8.27 ps). Pure water:
no ionic conductivity (add ``sigma`` for saline). Good to a few per cent up to about
50 GHz, where water's second, faster relaxation begins to show.

**Not yet accepted by the solvers** (issue 20's next step).
"""

from __future__ import annotations

import math

from ..errors import SetupError
from ..model.dispersion import DebyePole, PoleMedium

WATER_EPS_INF = 4.9
"""High-frequency permittivity of the Debye fit (Ulaby and Long 2014)."""


def water(temperature_c: float = 25.0, sigma: float = 0.0) -> PoleMedium:
    """Water at ``temperature_c`` (degC, 0 to 40) as a one-pole Debye medium; ``sigma``
    (S/m) adds an ionic conductivity (0 for pure water)."""
    t = float(temperature_c)
    if not 0.0 <= t <= 40.0:
        raise SetupError(f"water: temperature_c = {temperature_c!r} degC is outside the "
                         "fit's range 0 to 40 degC")
    eps_static = 88.045 - 0.4147 * t + 6.295e-4 * t**2 + 1.075e-5 * t**3
    tau = (1.1109e-10 - 3.824e-12 * t + 6.938e-14 * t**2 - 5.096e-16 * t**3) / (2 * math.pi)
    return PoleMedium(eps_inf=WATER_EPS_INF, sigma=sigma, name=f"water {t:g} degC",
                      poles=[DebyePole(delta_eps=eps_static - WATER_EPS_INF, tau=tau)])


__all__ = ["WATER_EPS_INF", "water"]
