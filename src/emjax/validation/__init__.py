"""Validation cases: each runs a solver on a problem with a known answer.

Every case returns records ``{"case", "metric", "value", "limit", "unit", "pass"}``;
``emjax validate NAME`` prints them and the tests assert their ``pass`` fields.
Each solver keeps its cases in its own submodule, listed in ``_MODULES``, whose
``CASES`` dict maps case names to functions; the cases themselves are described in
each submodule's docstring.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

_MODULES = ("fdtd3d", "scatter", "fdtd2d", "dga", "parallel", "fdfd", "sar")
"""Submodules holding ``CASES``; a solver's cases are registered by naming its module."""


def _collect() -> dict[str, Callable[[], list[dict]]]:
    cases: dict[str, Callable[[], list[dict]]] = {}
    for name in _MODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        clash = set(cases) & set(mod.CASES)
        if clash:
            raise RuntimeError(f"validation cases defined twice: {sorted(clash)}")
        cases.update(mod.CASES)
    return cases


CASES = _collect()


def run_case(name: str) -> list[dict]:
    """Records of one case, or of every case for ``"all"``."""
    if name == "all":
        return [r for fn in CASES.values() for r in fn()]
    return CASES[name]()


__all__ = ["CASES", "run_case"]
