"""The material library: tissues, water and metals, and the pole fitter.

- :func:`tissue` (:mod:`.tissues`): Gabriel's four-term Cole-Cole tissue models
  (Gabriel, Lau and Gabriel 1996); :data:`TISSUES` lists the names.
- :func:`water` (:mod:`.water`): pure water as a temperature-dependent Debye pole.
- :func:`metal` (:mod:`.metals`): Rakic's (1998) Lorentz-Drude fits of Ag, Au, Cu, Al.
- :func:`fit_poles` (:mod:`.fit`): any of these, a measured table or a callable eps(f)
  fitted with passive Debye (and Lorentz) poles over a band.

The media are :mod:`emjax.model.dispersion` models: a :class:`PoleMedium` (or a fit's
``.medium``) is a structure's medium in FDTD3D (the ADE update of
:mod:`emjax.fdtd.dispersive`) and FDFD3D (eps(f) at the solve frequency).
"""

from .fit import PoleFit, fit_poles
from .metals import METALS, metal
from .tissues import TISSUES, tissue
from .water import water

__all__ = ["METALS", "TISSUES", "PoleFit", "fit_poles", "metal", "tissue", "water"]
