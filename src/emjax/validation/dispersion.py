"""Validation of the dispersive-media library (issue 20): pure NumPy, a second or so.

- ``tissue-fit``: every tissue of :data:`emjax.materials.TISSUES` (Gabriel, Lau and
  Gabriel 1996, four-term Cole-Cole) fitted with passive Debye poles over 10 MHz to
  3 GHz by :func:`emjax.materials.fit_poles` (the fewest poles whose largest error
  is under 0.75%, a margin below the limit). Metric per tissue: the largest relative
  error of the fit against the Cole-Cole model in eps' and in sigma_eff over the band
  (160 frequencies per decade); limit 1%. The record's ``extra`` holds the number of
  poles. Then the Cole-Cole muscle model against its commonly quoted values (eps' 72.2
  / 63.5 / 58.2 and sigma 0.688 / 0.719 / 0.770 S/m at 64 / 128 / 300 MHz, the MRI
  Larmor frequencies at 1.5, 3 and 7 T): the largest relative difference, limit 1%
  (measured 0.07%, the quoted values' rounding).
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


CASES: dict[str, Callable[..., list[Check]]] = {"tissue-fit": tissue_fit}

__all__ = ["BAND", "CASES", "tissue_fit"]
