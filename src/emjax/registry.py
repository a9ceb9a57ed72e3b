"""Which solver runs which scenario: a table the solver packages fill.

``emjax.model`` imports no solver. A scenario's ``run()``, ``estimate()`` and
``prepare()`` look their solver up here by the scenario's class name; the built-in
solver packages (:data:`PACKAGES`) register their entry points when they are imported,
which the first look-up does. Entry points are ``"module:function"`` strings, imported
on first call, so that registering costs nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

PACKAGES = ("emjax.fdtd", "emjax.fdfd", "emjax.dga")
"""The built-in solver packages; each registers its scenarios in its ``__init__``."""

_TABLE: dict[str, dict[str, str]] = {}


def register(scenario: str, **entries: str) -> None:
    """Register ``scenario``'s (a scenario class name) entry points, e.g.
    ``run="emjax.fdtd.solver:run"``; names: run, estimate, prepare."""
    _TABLE.setdefault(scenario, {}).update(entries)


def entry(scenario: str, name: str) -> Callable[..., Any]:
    """The function ``name`` registered for ``scenario``."""
    if scenario not in _TABLE:
        for pkg in PACKAGES:
            importlib.import_module(pkg)
    try:
        target = _TABLE[scenario][name]
    except KeyError:
        known = {k: sorted(v) for k, v in _TABLE.items()}
        raise LookupError(f"no solver registered '{name}' for scenario type '{scenario}' "
                          f"(registered: {known})") from None
    module, _, func = target.partition(":")
    return getattr(importlib.import_module(module), func)


def run(sim, **kwargs) -> Any:
    """Run any scenario on its solver; returns :class:`emjax.results.Results`."""
    return entry(type(sim).__name__, "run")(sim, **kwargs)


def estimate(sim) -> dict[str, int]:
    """Device bytes ``sim``'s run needs, by item and in ``total``; allocates nothing."""
    return entry(type(sim).__name__, "estimate")(sim)
