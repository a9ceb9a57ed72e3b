"""Dispersive tissue for the built-in phantoms (issue 20), fitted once per process.

The phantoms of :mod:`emjax.scenarios.mri` (``mri-coil``) and ``head-900mhz`` name
their tissues ("skin", "muscle", "grey matter", ...) and hold constant (eps_r, sigma)
tabulated at one frequency. Their dispersive variants replace each tissue by the
Debye-pole fit (:func:`emjax.materials.fit_poles`, largest error 1% in eps' and
sigma) of Gabriel's Cole-Cole model (:func:`emjax.materials.tissue`) over a band,
keeping the phantom's medium name (densities and maps look tissues up by name):

- ``mri-coil-dispersive``: band :data:`MRI_BAND` (30-600 MHz: the Larmor frequencies
  of 1.5, 3 and 7 T and the broadband pulse that covers them; 2-3 poles a tissue);
- ``head-900mhz-dispersive``: band :data:`HEAD_BAND` (300 MHz-3 GHz, the mobile
  bands), built from the ``head-900mhz`` TOML by swapping media, so that the file stays
  the one description of the geometry. The eyes keep their constant vitreous-humour
  values: the library has no vitreous humour.

Route chosen for the head: a builder, not a TOML file of PoleMedium tables, since
the tables would be a copy of the fitter's output that no one could check by eye
and that would drift when the fitter or the library changes. Every results file
carries its scenario's JSON, poles included, when a file of the fitted scenario is
wanted (or ``sim.model_dump_json()``).

Fits are cached per (tissue, band) with :func:`functools.cache` (each takes
10-50 ms), so building a scenario twice in one process fits once.
:func:`frozen_tissue` gives the constant medium that holds a fit's eps' and
sigma_eff at one frequency: at that frequency it is the same material (the
single-frequency references of ``emjax validate dispersive-sar``).
"""

from __future__ import annotations

from functools import cache

from ..model import Medium
from ..model.dispersion import PoleMedium

MRI_BAND = (30e6, 600e6)
"""Fit band of the MRI phantom's tissues, Hz."""
HEAD_BAND = (300e6, 3e9)
"""Fit band of the 900 MHz head's tissues, Hz."""

LIBRARY_NAME = {
    # mri-coil's phantom (emjax.scenarios.mri.TISSUES_128MHZ)
    "skin": "skin_dry", "fat": "fat", "muscle": "muscle", "bone": "bone_cortical",
    "brain": "brain_grey_matter", "csf": "csf",
    # head-900mhz.toml
    "skull": "bone_cortical", "grey matter": "brain_grey_matter",
    "white matter": "brain_white_matter",
}
"""Phantom medium name -> the :func:`emjax.materials.tissue` model it stands for."""


@cache
def fitted_tissue(name: str, band: tuple[float, float] = MRI_BAND) -> PoleMedium:
    """The pole fit over ``band`` (Hz) of the library tissue behind the phantom medium
    ``name`` (see :data:`LIBRARY_NAME`), named ``name``; cached per process."""
    from ..errors import SetupError
    from ..materials import fit_poles, tissue

    if name not in LIBRARY_NAME:
        raise SetupError(f"phantom tissue {name!r} has no library model; known: "
                         f"{', '.join(LIBRARY_NAME)}")
    fit = fit_poles(tissue(LIBRARY_NAME[name]), *band, name=name)
    return fit.medium.model_copy(update={"name": name})


def frozen_tissue(name: str, frequency: float, band: tuple[float, float] = MRI_BAND
                  ) -> Medium:
    """A constant :class:`Medium` holding :func:`fitted_tissue`'s eps' and sigma_eff
    (S/m) at ``frequency`` (Hz): the same complex permittivity there."""
    fit = fitted_tissue(name, band)
    return Medium(eps_r=float(fit.eps(frequency).real),
                  sigma=float(fit.sigma_eff(frequency)), name=name)


def head_900mhz_dispersive():
    """The ``head-900mhz`` FDFD scenario with its tissues fitted over :data:`HEAD_BAND`
    (the eyes stay constant, see the module docstring)."""
    from . import load_builtin

    sim = load_builtin("head-900mhz")
    data = sim.model_dump()
    for s in data["structures"]:
        name = (s.get("medium") or {}).get("name", "")
        if name in LIBRARY_NAME:
            s["medium"] = fitted_tissue(name, HEAD_BAND).model_dump()
    data["name"] = "head-900mhz-dispersive"
    return type(sim).model_validate(data)  # validated again, as a file would be


__all__ = ["HEAD_BAND", "LIBRARY_NAME", "MRI_BAND", "fitted_tissue", "frozen_tissue",
           "head_900mhz_dispersive"]
