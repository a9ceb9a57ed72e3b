"""Validation cases: each runs a solver on a problem with a known answer.

Every case returns :class:`~emjax.records.Check` records, printed as
``{"case", "metric", "value", "limit", "bound", "unit", "pass"}``; ``emjax validate NAME`` prints
them and the tests assert their ``pass`` fields. Each solver keeps its cases in its own
submodule, listed in ``_MODULES``, whose ``CASES`` dict maps case names to functions;
the cases themselves are described in each submodule's docstring. A case that draws a
figure takes ``figures`` (a folder; ``emjax validate --figures DIR``).
"""

from __future__ import annotations

import warnings
from typing import Any

from ..errors import EmjaxWarning
from ..records import Case, Check, call_case, collect_cases

_MODULES = ("fdtd3d", "cavity3d", "scatter", "fdtd2d", "dielectric2d", "dga", "parallel",
            "fdfd", "sar", "dispersion", "dispersive_sar", "plasmon", "smatrix", "eigenmode",
            "ports", "cad", "waveguide", "modeport", "gradients", "gradients_fdtd", "storage16")
"""Submodules holding ``CASES``; a solver's cases are registered by naming its module."""

CASES: dict[str, Case] = collect_cases(__name__, _MODULES, "validation")


def run_case(name: str, **options: Any) -> list[Check]:
    """Records of one case, or of every case for ``"all"``; ``options`` (``figures``)
    go to the cases that take them (:func:`~emjax.records.call_case`)."""
    with warnings.catch_warnings():
        # Convergence studies run coarse grids on purpose (their pulses span f0/2 to
        # 3f0/2 with 20 cells at f0): the cells-per-wavelength advice is for users.
        warnings.filterwarnings("ignore", message=".*cells per shortest wavelength",
                                category=EmjaxWarning)
        if name == "all":
            return [r for fn in CASES.values() for r in call_case(fn, **options)]
        return call_case(CASES[name], **options)


__all__ = ["CASES", "run_case"]
