"""Validation of dispersive media (issue 20): the library, and the 3D FDTD's ADE update.

- ``tissue-fit``: every tissue of :data:`emjax.materials.TISSUES` (Gabriel, Lau and
  Gabriel 1996, four-term Cole-Cole) fitted with passive Debye poles over 10 MHz to
  3 GHz by :func:`emjax.materials.fit_poles` (the fewest poles whose largest error
  is under 0.75%, a margin below the limit). Metric per tissue: the largest relative
  error of the fit against the Cole-Cole model in eps' and in sigma_eff over the band
  (160 frequencies per decade); limit 1%. The record's ``extra`` holds the number of
  poles. Then the Cole-Cole muscle model against its commonly quoted values (eps' 72.2
  / 63.5 / 58.2 and sigma 0.688 / 0.719 / 0.770 S/m at 64 / 128 / 300 MHz, the MRI
  Larmor frequencies at 1.5, 3 and 7 T): the largest relative difference, limit 1%
  (measured 0.07%, the quoted values' rounding). Pure NumPy, a second or so.
- ``debye-halfspace``: a plane wave at normal incidence on a Debye half-space
  (water-like: eps_inf 4.9, delta_eps 74, tau 8.3 ps) in a quasi-1D FDTD3D guide (one
  cell across z between PEC walls, two across y between PMC walls: the TEM wave is the
  plane wave), propagating along x; the water fills x > 0, the interface on a half node
  (an H plane, where the Yee staircase is exact), the water reaching through the upper
  CPML. A z dipole launches the pulse (derivative of a Gaussian, ``fwidth`` 7.8 GHz:
  every frequency of 0.5-20 GHz lies within -20 dB of the spectrum's peak). Metric:
  r(f) = 1 - H_y(f) / H_y,inc(f) at the interface (``H_y,inc`` from the same run
  without the water), DFT at 60 frequencies over 0.5-20 GHz where the incident
  spectrum is within -20 dB of its peak, against Fresnel r = (1 - sqrt(eps(f))) / (1 +
  sqrt(eps(f))) with the model's eps(f): the largest |error| in |r| (limit 0.005) and
  in phase (limit 1 degree) at cell sizes 0.1, 0.05 and 0.025 mm (float64), and the
  observed order of the magnitude error (limit: at least 1.7, second order expected).
  Measured (CPU): 2.2e-3, 6.1e-4, 1.7e-4 in |r|, 0.07, 0.02, 0.005 degrees, order 1.8.
- ``lorentz-slab``: a Lorentz slab (eps_inf 2, delta_eps 3, f_0 10 GHz, damping delta =
  2 pi 1 GHz: Re eps < 0 from 10 to 15.8 GHz, |t| down to 0.13 there) 3 mm thick between
  vacuum half-spaces, in the same guide with the same pulse; both faces on H_y planes
  (the thickness a whole number of cells, 30 and 60), 2.5 mm of vacuum behind it to the
  upper face (the last 10 cells CPML). Metric: t(f) = H_y(f) / H_y,inc(f) e^{-j k0 L}
  1 mm behind the slab (the ratio there is t e^{+j k0 L}), 1.5 ns (the resonance rings
  for 1 / delta = 160 ps),
  at the 60 frequencies of 0.5-20 GHz within -20 dB of the incident peak, against the
  transfer matrix (:func:`emjax.analysis.layers.stack_rt`, Born and Wolf sec. 1.6) of
  the discrete thickness with the model's eps(f): the largest |error| in |t| (limit
  0.005) and in phase (limit 1 degree) at 0.1 and 0.05 mm, and the observed order of
  the |t| error (limit 1.7). Measured (CPU, float64): 1.6e-4 and 4.1e-5 in |t|, 0.068
  and 0.020 degrees, order 2.0; a few seconds.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..materials import TISSUES, fit_poles, tissue
from ..records import Check

BAND = (10e6, 3e9)
"""The fitted band, Hz."""
LIMIT = 0.01
"""Largest relative error allowed in eps' and in sigma."""
FIT_TOL = 0.0075
"""The fitter's own target: the fewest poles that reach it (a margin below LIMIT)."""
MUSCLE_QUOTED = {64e6: (72.2, 0.688), 128e6: (63.5, 0.719), 300e6: (58.2, 0.770)}
"""Muscle's commonly quoted (eps', sigma S/m) at MRI frequencies (Hz), from Gabriel's model."""


def tissue_fit() -> list[Check]:
    """Per tissue, the pole fit's largest relative error in eps' and sigma (limit 1%);
    then muscle's Cole-Cole values against the quoted ones (limit 1%)."""
    out = []
    for name in TISSUES:
        fit = fit_poles(tissue(name), *BAND, tol=FIT_TOL)
        for what, err in (("eps'", fit.max_error_eps), ("sigma", fit.max_error_sigma)):
            out.append(Check("tissue-fit", f"{name}: max rel error of {what}, 10 MHz-3 GHz",
                             err, LIMIT, "", err <= LIMIT,
                             extra={"poles": len(fit.medium.poles)}))
    muscle = tissue("muscle")
    f = np.array(list(MUSCLE_QUOTED))
    quoted = np.array(list(MUSCLE_QUOTED.values()))
    err_eps = np.max(np.abs(muscle.eps(f).real / quoted[:, 0] - 1))
    err_sig = np.max(np.abs(muscle.sigma_eff(f) / quoted[:, 1] - 1))
    for what, err in (("eps'", err_eps), ("sigma", err_sig)):
        out.append(Check("tissue-fit", f"muscle Cole-Cole {what} vs quoted at 64/128/300 MHz",
                         err, LIMIT, "", err <= LIMIT))
    return out


WATER_DEBYE = {"eps_inf": 4.9, "delta_eps": 74.0, "tau": 8.3e-12}
"""The debye-halfspace case's water-like Debye medium (issue 20)."""
HALFSPACE_BAND = (0.5e9, 20e9)
"""Band of the debye-halfspace case, Hz."""


def _guide_spectra(medium, spacing: float, *, slab: tuple[float, float], probe_x: float,
                   vacuum: float, depth: float, duration: float, dtype: str, fwidth: float,
                   band, nfreq: int):
    """(f, total H_y(f), incident H_y(f)) at ``probe_x`` in the quasi-1D guide of the
    module docstring: ``medium`` fills ``slab`` = (x0, x1) (m; x0 = 0, an H_y plane);
    the domain spans ``vacuum`` before x = 0 and ``depth`` after it (CPML included).
    The incident spectrum is the same run without the medium; f keeps the frequencies
    of ``band`` (Hz) whose incident spectrum is within -20 dB of its peak."""
    from ..model import (
        CPML,
        FDTD3D,
        PMC,
        Boundaries,
        Box,
        Domain,
        GaussianPulse,
        PointDipole,
        Probe,
        Structure,
    )
    from ..model.media import PEC

    d, pml = spacing, 10
    n_vac, n_med = round(vacuum / d), round(depth / d)
    y, z = d, 0.5 * d  # the guide's middle H_y sample (PMC y walls, PEC z walls)
    x0, x1 = slab

    def run(filled: bool) -> tuple[np.ndarray, float]:
        sim = FDTD3D(
            # the lower corner half a cell off: x = 0, the front face, is an H_y plane
            domain=Domain(shape=(n_vac + n_med, 2, 1), spacing=d,
                          origin=(-(n_vac + 0.5) * d, 0.0, 0.0)),
            boundary=Boundaries(x=CPML(thickness=pml), y=PMC(), z=PEC()),
            structures=[Structure(geometry=Box(center=(0.5 * (x0 + x1), 0.0, 0.0),
                                               size=(x1 - x0, 1.0, 1.0)),
                                  medium=medium)] if filled else [],
            sources=[PointDipole(position=(-(n_vac - pml - 5) * d, y, z), polarization="z",
                                 waveform=GaussianPulse(f0=0.0, fwidth=fwidth))],
            monitors=[Probe(name="h", positions=[(probe_x, y, z)], components=["Hy"])],
            duration=duration, dtype=dtype)
        res = sim.run(progress=False)
        return res["h"].data["Hy"][:, 0].astype(np.float64), sim.dt

    total, dt = run(True)
    incident, _ = run(False)
    f = np.geomspace(*band, nfreq)
    kernel = np.exp(-2j * np.pi * f[:, None] * dt * np.arange(len(total))[None, :])
    inc_f, tot_f = kernel @ incident, kernel @ total
    keep = np.abs(inc_f) >= 0.1 * np.abs(inc_f).max()
    return f[keep], tot_f[keep], inc_f[keep]


def halfspace_reflection(medium, spacing: float, *, dtype: str = "float64",
                         fwidth: float = 7.8e9, band=HALFSPACE_BAND, nfreq: int = 60,
                         vacuum: float = 2e-3, depth: float = 3e-3, duration: float = 0.6e-9):
    """(f, r measured, r Fresnel) of a normally incident plane wave on a half-space of
    ``medium`` (a PoleMedium) filling x > 0; see the module docstring. f: the
    frequencies (Hz) of ``band`` whose incident spectrum is within -20 dB of its peak;
    spacing, vacuum (interface to the lower domain face) and depth (interface to the
    upper face) in m; duration in s."""
    f, tot_f, inc_f = _guide_spectra(medium, spacing, slab=(0.0, 2.0), probe_x=0.0,
                                     vacuum=vacuum, depth=depth, duration=duration,
                                     dtype=dtype, fwidth=fwidth, band=band, nfreq=nfreq)
    n = np.sqrt(medium.eps(f))
    return f, 1 - tot_f / inc_f, (1 - n) / (1 + n)


def slab_transmission(medium, spacing: float, thickness: float, *, dtype: str = "float64",
                      fwidth: float = 7.8e9, band=HALFSPACE_BAND, nfreq: int = 60,
                      vacuum: float = 2e-3, gap: float = 1e-3, behind: float = 2.5e-3,
                      duration: float = 1.5e-9):
    """(f, t measured, t transfer matrix, cells) of a slab of ``medium`` (a PoleMedium)
    filling 0 < x < L between vacuum half-spaces, at normal incidence (module docstring).

    L = cells x spacing, cells = round(thickness / spacing): both faces on H_y planes,
    and the reference is the transfer matrix (:func:`emjax.analysis.layers.stack_rt`,
    index sqrt(eps(f)) of the model) of that discrete L. t is the transmitted field at
    the back face per unit incident field at the front face: the probe sits ``gap``
    (m) behind the slab and the ratio of the two runs there is t e^{+j k0 L}. vacuum:
    front face to the lower domain face; behind: back face to the upper face (CPML
    included), m; duration in s.
    """
    from ..analysis.layers import stack_rt
    from ..constants import c0

    cells = round(thickness / spacing)
    L = cells * spacing
    f, tot_f, inc_f = _guide_spectra(medium, spacing, slab=(0.0, L), probe_x=L + gap,
                                     vacuum=vacuum, depth=L + behind, duration=duration,
                                     dtype=dtype, fwidth=fwidth, band=band, nfreq=nfreq)
    k0 = 2 * np.pi * f / c0
    _, t_ref = stack_rt(f, [np.sqrt(medium.eps(f))], [L])
    return f, tot_f / inc_f * np.exp(-1j * k0 * L), t_ref, cells


def debye_halfspace(spacings=(1e-4, 5e-5, 2.5e-5)) -> list[Check]:
    """Reflection of a Debye half-space against Fresnel (module docstring): per cell
    size the largest errors in |r| and in phase, then the observed order."""
    from ..model.dispersion import DebyePole, PoleMedium

    case = "debye-halfspace"
    w = WATER_DEBYE
    water = PoleMedium(eps_inf=w["eps_inf"], poles=[DebyePole(delta_eps=w["delta_eps"],
                                                              tau=w["tau"])])
    out, errs = [], []
    for d in spacings:
        f, r, r_ref = halfspace_reflection(water, d)
        errs.append(_spectrum_checks(out, case, "||r| - |r_Fresnel||", f, r, r_ref, d,
                                     {"frequencies": len(f)}))
    return out + _order_check(case, "|r|", spacings, errs)


def _spectrum_checks(out: list, case: str, what: str, f, got, ref, d: float,
                     extra: dict) -> float:
    """Append the largest magnitude and phase errors of ``got`` against ``ref`` over the
    frequencies ``f`` at cell size ``d`` to ``out`` (limits 0.005 and 1 degree); returns
    the magnitude error."""
    err_mag = float(np.max(np.abs(np.abs(got) - np.abs(ref))))
    err_deg = float(np.max(np.abs(np.degrees(np.angle(got / ref)))))
    band = f"{f[0] / 1e9:.2g}-{f[-1] / 1e9:.3g} GHz"
    out.append(Check(case, f"max {what} {band}, d = {d * 1e3:.3g} mm", err_mag, 0.005, "",
                     err_mag <= 0.005, extra=extra))
    out.append(Check(case, f"max |phase error| {band}, d = {d * 1e3:.3g} mm", err_deg, 1.0,
                     "deg", err_deg <= 1.0))
    return err_mag


def _order_check(case: str, what: str, spacings, errs) -> list[Check]:
    """The observed order of the ``what`` error with the cell size (>= 1.7), when there
    are several sizes."""
    if len(spacings) < 2:
        return []
    order = float(np.polyfit(np.log(spacings), np.log(errs), 1)[0])
    return [Check(case, f"observed order of the {what} error with the cell size", order,
                  1.7, "", order >= 1.7, bound=">=")]


LORENTZ_SLAB = {"eps_inf": 2.0, "delta_eps": 3.0, "f_0": 10e9, "delta_f": 1e9,
                "thickness": 3e-3}
"""The lorentz-slab case: eps_inf, delta_eps, resonance f_0 (Hz), damping delta / (2 pi)
(Hz) and the slab thickness (m)."""


def lorentz_slab(spacings=(1e-4, 5e-5)) -> list[Check]:
    """Transmission of a Lorentz slab against the transfer matrix (module docstring): per
    cell size the largest errors in |t| and in phase, then the observed order."""
    from ..model.dispersion import LorentzPole, PoleMedium

    case, s = "lorentz-slab", LORENTZ_SLAB
    medium = PoleMedium(eps_inf=s["eps_inf"], poles=[LorentzPole(
        delta_eps=s["delta_eps"], omega_0=2 * np.pi * s["f_0"], delta=2 * np.pi * s["delta_f"])])
    out, errs = [], []
    for d in spacings:
        f, t, t_ref, cells = slab_transmission(medium, d, s["thickness"])
        extra = {"frequencies": len(f), "cells": cells, "min_abs_t": float(np.abs(t_ref).min())}
        errs.append(_spectrum_checks(out, case, "||t| - |t_TMM||", f, t, t_ref, d, extra))
    return out + _order_check(case, "|t|", spacings, errs)

CASES: dict[str, Callable[..., list[Check]]] = {"tissue-fit": tissue_fit,
                                                "debye-halfspace": debye_halfspace,
                                                "lorentz-slab": lorentz_slab}

__all__ = ["BAND", "CASES", "HALFSPACE_BAND", "LORENTZ_SLAB", "WATER_DEBYE", "debye_halfspace",
           "halfspace_reflection", "lorentz_slab", "slab_transmission", "tissue_fit"]
