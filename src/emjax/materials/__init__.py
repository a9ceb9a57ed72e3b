"""The material library: tissues, water and metals, and the pole fitter.

- :func:`tissue` (:mod:`.tissues`): Gabriel's four-term Cole-Cole tissue models
  (Gabriel, Lau and Gabriel 1996); :data:`TISSUES` lists the names.
- :func:`water` (:mod:`.water`): pure water as a temperature-dependent Debye pole.
- :func:`metal` (:mod:`.metals`): Rakic's (1998) Lorentz-Drude fits of Ag, Au, Cu, Al.
- :func:`fit_poles` (:mod:`.fit`): any of these, a measured table or a callable eps(f)
  fitted with passive Debye (and Lorentz) poles over a band.

The media are :mod:`emjax.model.dispersion` models, **not yet accepted by the
solvers** (issue 20's next step adds the FDTD update and the FDFD evaluation).
"""

from .fit import PoleFit, fit_poles
from .metals import METALS, metal
from .tissues import TISSUES, tissue
from .water import water

__all__ = ["METALS", "TISSUES", "PoleFit", "fit_poles", "metal", "tissue", "water"]
