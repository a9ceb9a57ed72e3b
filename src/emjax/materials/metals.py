"""Noble and common metals at optical frequencies: Rakic's Lorentz-Drude fits.

Source: A. D. Rakic, A. B. Djurisic, J. M. Elazar and M. L. Majewski, "Optical
properties of metallic films for vertical-cavity optoelectronic devices", Appl. Opt.
37, 5271-5283 (1998), Table 1 (Lorentz-Drude model), fitted over 0.1 to 5 eV
(wavelengths of about 0.25 to 12 um). Cross-checked against Meep's materials library
(``python/materials.py``, which keeps the first four oscillators) and, for the fifth
oscillators of Ag and Au, against qpms's and Aether's transcriptions. Rakic writes::

    eps(omega) = 1 - f0 wp^2 / (omega (omega - j G0))
                 + sum_j fj wp^2 / (wj^2 - omega^2 + j omega Gj)

(energies in eV), which in :class:`~emjax.model.dispersion.PoleMedium` terms is a Drude
pole (omega_p = sqrt(f0) wp, gamma = G0) and Lorentz poles (delta_eps = fj wp^2 / wj^2,
omega_0 = wj, delta = Gj / 2), every energy divided by hbar.

**Not yet accepted by the solvers** (issue 20's next step).
"""

from __future__ import annotations

import math

from ..errors import SetupError
from ..model.dispersion import DrudePole, LorentzPole, PoleMedium

HBAR_EV_S = 6.582119569e-16
"""Reduced Planck constant in eV s (CODATA 2018): omega = E / hbar."""

# metal: (wp eV, f0, G0 eV, ((fj, Gj eV, wj eV), ...))
_RAKIC_1998: dict[str, tuple[float, float, float, tuple[tuple[float, float, float], ...]]] = {
    "Ag": (9.01, 0.845, 0.048, ((0.065, 3.886, 0.816), (0.124, 0.452, 4.481),
                                (0.011, 0.065, 8.185), (0.840, 0.916, 9.083),
                                (5.646, 2.419, 20.29))),
    "Au": (9.03, 0.760, 0.053, ((0.024, 0.241, 0.415), (0.010, 0.345, 0.830),
                                (0.071, 0.870, 2.969), (0.601, 2.494, 4.304),
                                (4.384, 2.214, 13.32))),
    "Cu": (10.83, 0.575, 0.030, ((0.061, 0.378, 0.291), (0.104, 1.056, 2.957),
                                 (0.723, 3.213, 5.300), (0.638, 4.305, 11.18))),
    "Al": (14.98, 0.523, 0.047, ((0.227, 0.333, 0.162), (0.050, 0.312, 1.544),
                                 (0.166, 1.351, 1.808), (0.030, 3.382, 3.473))),
}

METALS: tuple[str, ...] = tuple(_RAKIC_1998)
"""The chemical symbols :func:`metal` knows."""


def metal(symbol: str) -> PoleMedium:
    """Rakic's Lorentz-Drude model of ``symbol`` ("Ag", "Au", "Cu", "Al"; case does not
    matter). Raises :class:`~emjax.errors.SetupError` listing :data:`METALS` otherwise."""
    key = {m.lower(): m for m in METALS}.get(symbol.strip().lower())
    if key is None:
        raise SetupError(f"metal {symbol!r} is not in the library; known metals: "
                         f"{', '.join(METALS)}")
    wp, f0, g0, oscillators = _RAKIC_1998[key]
    poles: list = [DrudePole(omega_p=math.sqrt(f0) * wp / HBAR_EV_S, gamma=g0 / HBAR_EV_S)]
    poles += [LorentzPole(delta_eps=fj * wp**2 / wj**2, omega_0=wj / HBAR_EV_S,
                          delta=gj / (2 * HBAR_EV_S)) for fj, gj, wj in oscillators]
    return PoleMedium(eps_inf=1.0, sigma=0.0, poles=poles, name=f"{key} (Rakic 1998)")


__all__ = ["HBAR_EV_S", "METALS", "metal"]
