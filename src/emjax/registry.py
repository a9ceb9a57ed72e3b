"""Which solver runs which scenario: a table the solver packages fill.

``emjax.model`` imports no solver. A scenario's ``run()``, ``estimate()`` and
``prepare()`` call :func:`run`, :func:`estimate` and :func:`prepare` here, which
validate the scenario again (:func:`validated`) and look its solver up by the
scenario's class name; the built-in solver packages (:data:`PACKAGES`) register their
entry points when they are imported, which the first look-up does. Entry points are
``"module:function"`` strings, imported on first call, so that registering costs nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

PACKAGES = ("emjax.fdtd", "emjax.fdfd", "emjax.dga")
"""The built-in solver packages; each registers its scenarios in its ``__init__``."""

_TABLE: dict[str, dict[str, str]] = {
    # CAD geometry: the model's ``inside`` reaches the numerics in emjax.grid.cad here,
    # so that emjax.model imports no grid code.
    "Mesh": {"inside": "emjax.grid.cad:inside"},
    "GdsExtrusion": {"inside": "emjax.grid.cad:inside"},
}


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


def validated(sim):
    """``sim``, checked once more by its own model before a run entry point uses it.

    ``model_copy(update=...)`` skips pydantic's validation, so ``steps=-3`` or a NaN
    ``eps_r`` could reach a solver; every entry point validates the scenario's data
    again (``model_dump`` then ``model_validate``: 0.1-0.3 ms for the built-in
    scenarios, about 0.1 s per 10^6 inline voxel labels) and raises pydantic's
    ``ValidationError``. The scenario itself is returned (not the copy: private
    attributes such as the folder files resolve against stay with it). Warnings of
    the first validation are not repeated.
    """
    import warnings

    if hasattr(sim, "model_dump"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            type(sim).model_validate(sim.model_dump())
    return sim


def refuse_non_finite(sim, results) -> None:
    """Raise :class:`emjax.errors.InstabilityError` (cause "result") when ``results``
    hold inf or NaN: results are never handed back with silent non-finite values. The
    time-domain driver's guard stops such runs at the chunk where they go wrong; this
    catches every solver, FDFD's solution included."""
    from .errors import InstabilityError

    bad = results.non_finite() if hasattr(results, "non_finite") else []
    if not bad:
        return
    what = "; ".join(f"monitor '{m}' {c}: {n} of {size} values" for m, c, n, size in bad[:4])
    raise InstabilityError(
        f"{type(sim).__name__} '{getattr(sim, 'name', '?')}' produced non-finite values "
        f"(inf/NaN): {what}. The solve overflowed or broke down: check the media (eps_r, "
        "sigma), the sources' amplitudes, the PML and the solver settings (a wider "
        "precision: dtype = \"float64\", precision = \"complex128\")",
        cause="result", monitor=bad[0][0])


def run(sim, **kwargs) -> Any:
    """Run any scenario on its solver; returns :class:`emjax.results.Results`, never
    with non-finite data (:func:`refuse_non_finite`). The scenario and the checkpoint
    interval are checked before any solver code runs."""
    if kwargs.get("checkpoint_every") is not None:
        from .driver.loop import check_every

        check_every(kwargs["checkpoint_every"])
    results = entry(type(sim).__name__, "run")(validated(sim), **kwargs)
    refuse_non_finite(sim, results)
    return results


def estimate(sim) -> dict[str, int]:
    """Device bytes ``sim``'s run needs, by item and in ``total``; allocates nothing."""
    return entry(type(sim).__name__, "estimate")(validated(sim))


def prepare(sim) -> Any:
    """The prepared solver of ``sim`` (its ``prepare`` entry, e.g. DGATD's set-up)."""
    return entry(type(sim).__name__, "prepare")(validated(sim))
