"""Gabriel's four-term Cole-Cole models of body tissues.

Source: S. Gabriel, R. W. Lau and C. Gabriel, "The dielectric properties of biological
tissues: III. Parametric models for the dielectric spectrum of tissues", Phys. Med.
Biol. 41, 2271-2293 (1996), Table 1; the same parameters, at the precision used here,
in C. Gabriel's report "Compilation of the dielectric properties of body tissues at RF
and microwave frequencies" (AL/OE-TR-1996-0037, Appendix C, reproduced by IFAC-CNR's
"Dielectric properties of body tissues" site). Cross-checked, number by number, against
two independent open-source transcriptions (a MATLAB tissue table citing the paper,
and OSS-DBS's ``colecole4.py`` for grey and white matter, CSF and blood): they agree
to their printed precision. ::

    eps(omega) = eps_inf + sum_n delta_eps_n / (1 + (j omega tau_n)^(1 - alpha_n))
                 - j sigma_ionic / (omega eps0)

Terms of zero strength in the table (blood, CSF and dry skin have only the two
fastest dispersions) are left out. The model is meant for 10 Hz to 100 GHz; its
values are those usually quoted (for muscle: eps' 72.2 / 63.5 / 58.2 and sigma
0.688 / 0.719 / 0.770 S/m at 64 / 128 / 300 MHz, checked by the tests).

**Not yet accepted by the solvers**: fit a tissue to poles first
(:func:`emjax.materials.fit.fit_poles`).
"""

from __future__ import annotations

from ..errors import SetupError
from ..model.dispersion import ColeColeMedium, ColeColeTerm

# name: (eps_inf, sigma_ionic S/m, ((delta_eps, tau, tau unit, alpha), ...)) in the
# table's units: tau1 in ps, tau2 in ns, tau3 in us, tau4 in ms.
_PS, _NS, _US, _MS = 1e-12, 1e-9, 1e-6, 1e-3
_GABRIEL_1996: dict[str, tuple[float, float, tuple[tuple[float, float, float, float], ...]]] = {
    "muscle": (4.0, 0.2, ((50.0, 7.234, _PS, 0.1), (7000.0, 353.678, _NS, 0.1),
                          (1.2e6, 318.310, _US, 0.1), (2.5e7, 2.274, _MS, 0.0))),
    "fat": (2.5, 0.01, ((3.0, 7.958, _PS, 0.2), (15.0, 15.915, _NS, 0.1),
                        (3.3e4, 159.155, _US, 0.05), (1.0e7, 7.958, _MS, 0.01))),
    "bone_cortical": (2.5, 0.02, ((10.0, 13.263, _PS, 0.2), (180.0, 79.577, _NS, 0.2),
                                  (5.0e3, 159.155, _US, 0.2), (1.0e5, 15.915, _MS, 0.0))),
    "brain_grey_matter": (4.0, 0.02, ((45.0, 7.958, _PS, 0.1), (400.0, 15.915, _NS, 0.15),
                                      (2.0e5, 106.103, _US, 0.22), (4.5e7, 5.305, _MS, 0.0))),
    "brain_white_matter": (4.0, 0.02, ((32.0, 7.958, _PS, 0.1), (100.0, 7.958, _NS, 0.1),
                                       (4.0e4, 53.052, _US, 0.3), (3.5e7, 7.958, _MS, 0.02))),
    "skin_dry": (4.0, 0.0002, ((32.0, 7.234, _PS, 0.0), (1100.0, 32.481, _NS, 0.2))),
    "blood": (4.0, 0.7, ((56.0, 8.377, _PS, 0.1), (5200.0, 132.629, _NS, 0.1))),
    "csf": (4.0, 2.0, ((65.0, 7.958, _PS, 0.1), (40.0, 1.592, _NS, 0.0))),
    "lung_inflated": (2.5, 0.03, ((18.0, 7.958, _PS, 0.1), (500.0, 63.662, _NS, 0.1),
                                  (2.5e5, 159.155, _US, 0.2), (4.0e7, 7.958, _MS, 0.0))),
}
"""Gabriel et al. (1996), Table 1. "fat" is the paper's "fat (not infiltrated)", "csf"
its "cerebro spinal fluid", "skin_dry" its "skin (dry)"."""

TISSUES: tuple[str, ...] = tuple(_GABRIEL_1996)
"""The names :func:`tissue` knows."""

_ALIASES = {"cerebro_spinal_fluid": "csf", "cerebrospinal_fluid": "csf",
            "fat_not_infiltrated": "fat", "brain_gray_matter": "brain_grey_matter",
            "grey_matter": "brain_grey_matter", "gray_matter": "brain_grey_matter",
            "white_matter": "brain_white_matter", "bone": "bone_cortical",
            "skin": "skin_dry", "lung": "lung_inflated"}


def tissue(name: str) -> ColeColeMedium:
    """Gabriel's Cole-Cole model of the tissue ``name`` (case, spaces and hyphens do not
    matter; a few aliases such as "grey_matter", "cerebro spinal fluid" are accepted).

    Raises :class:`~emjax.errors.SetupError` listing :data:`TISSUES` for an unknown name.
    """
    key = name.strip().lower().replace(" ", "_").replace("-", "_")
    key = _ALIASES.get(key, key)
    if key not in _GABRIEL_1996:
        raise SetupError(f"tissue {name!r} is not in the library; known tissues: "
                         f"{', '.join(TISSUES)}")
    eps_inf, sigma, terms = _GABRIEL_1996[key]
    return ColeColeMedium(
        eps_inf=eps_inf, sigma_ionic=sigma, name=key,
        terms=[ColeColeTerm(delta_eps=d, tau=t * unit, alpha=a) for d, t, unit, a in terms])


__all__ = ["TISSUES", "tissue"]
