"""Benchmarks: throughput of each solver against the device's copy bandwidth.

Every case returns :class:`~emjax.records.Measurement` records, printed as
``{"case", "size", "metric", "value", "unit", "device"}``; ``emjax bench NAME`` prints
them and ``make bench`` saves them.
Each solver keeps its cases in its own submodule, listed in ``_MODULES``, whose
``CASES`` dict maps case names to functions; the cases themselves are described in
each submodule's docstring. Options the command passes (:func:`run_case`): ``figures``
(folder of the figures a case draws), ``fdfd_sizes`` and ``fdfd_candidates``
(``seed000-sphere``).
"""

from __future__ import annotations

from typing import Any

from ..records import Case, Measurement, call_case, collect_cases

_MODULES = ("fdtd3d", "fdtd2d", "scatter", "dga", "parallel", "fdfd", "dispersive", "ports",
            "gradients", "smoothing", "cpu", "fdfd_sweep")
"""Submodules holding ``CASES``; a solver's cases are registered by naming its module."""

CASES: dict[str, Case] = collect_cases(__name__, _MODULES, "benchmark")


def run_case(name: str, **options: Any) -> list[Measurement]:
    """Records of one case, or of every case for ``"all"``; ``options`` go to the cases
    that take them (:func:`~emjax.records.call_case`)."""
    if name == "all":
        return [r for fn in CASES.values() for r in call_case(fn, **options)]
    return call_case(CASES[name], **options)


__all__ = ["CASES", "run_case"]

from .common import copy_bandwidth  # noqa: E402  (benchmarks/ use these)
from .fdtd3d import cube_scenario, time_scenario  # noqa: E402

__all__ += ["copy_bandwidth", "cube_scenario", "time_scenario"]
