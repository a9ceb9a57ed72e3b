"""Files a run writes beside its results: figures and extra outputs, from per-result hooks.

A hook is a function ``hook(res, directory, stem) -> list[Path]``. It looks at a
:class:`~emjax.results.Results` (its monitors' kinds, coordinates and attrs, its
metadata, its scenario) and, when it applies, writes its files into ``directory``, named
``<stem>_...``, and returns their paths; when it does not apply it returns ``[]``.
Modules register hooks with :func:`register_output`; :func:`write_outputs` imports the
modules listed in :data:`PROVIDERS` (so that they register) and runs every hook, in
registration order. ``emjax run`` calls :func:`write_outputs` and knows nothing of any
scenario or solver; a scenario with outputs of its own (``scenarios/mri_maps.py``)
registers a hook and adds its module to :data:`PROVIDERS`.

Registered here: ``paraview``, one XDMF file (plus its HDF5) per grid FieldSnapshot
or DFTMonitor, written beside the results. :mod:`emjax.plot` registers the figures of
monitors and of FDFD's bistatic RCS.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .results import MonitorData, Results

Hook = Callable[["Results", Path, str], list[Path]]
"""``hook(res, directory, stem) -> paths written`` (``[]`` when it does not apply)."""

PROVIDERS = ("emjax.plot", "emjax.port_outputs", "emjax.scenarios.mri_maps")
"""Modules whose import registers hooks (this module registers its own)."""


@dataclass(frozen=True)
class OutputHook:
    """A registered hook: ``label`` names its files when printed ("figure", "ParaView");
    ``beside_results`` puts them next to the results file instead of the figure folder."""

    name: str
    label: str
    beside_results: bool
    write: Hook


_HOOKS: dict[str, OutputHook] = {}


def register_output(name: str, *, label: str = "figure",
                    beside_results: bool = False) -> Callable[[Hook], Hook]:
    """Decorator: register ``hook`` under ``name`` (a second registration replaces it)."""

    def decorate(hook: Hook) -> Hook:
        _HOOKS[name] = OutputHook(name, label, beside_results, hook)
        return hook

    return decorate


def output_hooks() -> list[OutputHook]:
    """Every registered hook, after importing :data:`PROVIDERS`; a provider missing from
    this installation is skipped with a note on stderr."""
    for module in PROVIDERS:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
            print(f"outputs of {module} skipped: it is not available in this installation",
                  file=sys.stderr)
    return list(_HOOKS.values())


def write_outputs(res: Results, *, figures: Path, results_dir: Path,
                  stem: str, draw: bool = True) -> list[tuple[str, Path]]:
    """Run every hook on ``res``; returns (label, path) of each file written.

    ``figures``: the folder of figures (and of hooks' other outputs); ``results_dir``:
    the folder of the results file, for hooks registered ``beside_results``; ``draw``
    False skips the hooks labelled "figure" (``emjax run --no-figures``).
    """
    written: list[tuple[str, Path]] = []
    for hook in sorted(output_hooks(), key=_order):
        if not draw and hook.label == "figure":
            continue
        directory = Path(results_dir if hook.beside_results else figures)
        directory.mkdir(parents=True, exist_ok=True)
        written += [(hook.label, Path(p)) for p in hook.write(res, directory, stem)]
    return written


def _order(hook: OutputHook) -> tuple[bool, int]:
    """Figures first, then files beside the results; within each, the order of
    :data:`PROVIDERS` (not of whichever module happened to be imported first)."""
    module = getattr(hook.write, "__module__", "")
    rank = PROVIDERS.index(module) if module in PROVIDERS else len(PROVIDERS)
    return hook.beside_results, rank


def on_grid(md: MonitorData) -> bool:
    """Grid monitors carry per-component axes (x_Ez, ...); mesh snapshots carry nodes."""
    return any(k.startswith("x_") for k in md.coords)


@register_output("paraview", label="ParaView", beside_results=True)
def paraview_files(res: Results, directory: Path, stem: str) -> list[Path]:
    """``<stem>_<monitor>.xdmf`` for every FieldSnapshot and DFTMonitor on a grid."""
    grid = [md for md in res.monitors.values()
            if md.kind in ("FieldSnapshot", "DFTMonitor") and on_grid(md)]
    if not grid:
        return []
    from .io.xdmf import write_xdmf

    return [write_xdmf(md, directory / f"{stem}_{md.name}.xdmf") for md in grid]


__all__ = ["PROVIDERS", "Hook", "OutputHook", "on_grid", "output_hooks", "register_output",
           "write_outputs"]
