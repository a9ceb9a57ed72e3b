"""Built-in scenarios: TOML files shipped inside the package.

Each ``<name>.toml`` here is an ordinary scenario file (see :func:`emjax.load_scenario`)
whose first lines carry a comment ``# description: ...``, which :func:`describe`
returns. Scenarios too large or too structured for a hand-written file (a phantom of
many layers) are built by a Python function instead, listed in ``_BUILDERS``.
``emjax run NAME`` and ``emjax list`` use these functions.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import SetupError
from ..model.base import did_you_mean

DEFAULT = "dipole-cube"
"""The scenario ``emjax run`` uses when given none."""

_DESCRIPTION_TAG = "# description:"

_BUILDERS = {
    "mri-coil": ("mri", "mri_coil",
                 "seed 001: synthetic body phantom in an 8-port head coil at 128 MHz, "
                 "312x328x325 cells"),
    "mri-coil-dispersive": ("mri", "mri_coil_dispersive",
                            "mri-coil with dispersive tissue (Gabriel, Debye fits) and one "
                            "broadband pulse: SAR at 64, 128 and 300 MHz from one run"),
    "head-900mhz-dispersive": ("dispersive", "head_900mhz_dispersive",
                               "head-900mhz with dispersive tissue (Gabriel, Debye fits over "
                               "0.3-3 GHz): change its frequency, the tissue follows"),
}
"""name -> (module in this package, function building the scenario, description)."""


def builtin_names() -> list[str]:
    """Names of the built-in scenarios, sorted, the default first."""
    names = sorted(
        [p.name[: -len(".toml")]
         for p in resources.files(__name__).iterdir()
         if p.name.endswith(".toml")] + list(_BUILDERS)
    )
    if DEFAULT in names:
        names.remove(DEFAULT)
        names.insert(0, DEFAULT)
    return names


def _text(name: str) -> str:
    known = builtin_names()
    if name not in known:
        raise SetupError(
            f"unknown built-in scenario '{name}'{did_you_mean(name, known)} (known: "
            f"{', '.join(known)}; or give the path of a .toml or .json scenario file)"
        )
    return resources.files(__name__).joinpath(f"{name}.toml").read_text(encoding="utf-8")


def describe(name: str) -> str:
    """The one-line description from the ``# description:`` comment of a built-in."""
    if name in _BUILDERS:
        return _BUILDERS[name][2]
    for line in _text(name).splitlines():
        if line.startswith(_DESCRIPTION_TAG):
            return line[len(_DESCRIPTION_TAG):].strip()
    return ""


def load_builtin(name: str):
    """The built-in scenario ``name``, validated."""
    from ..model import load_scenario

    if name in _BUILDERS:
        import importlib

        module, function, _ = _BUILDERS[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), function)()
    text = _text(name)
    ref = resources.files(__name__).joinpath(f"{name}.toml")
    if isinstance(ref, Path):  # from its file: the files it reads (car.stl) lie beside it
        return load_scenario(ref)
    return load_scenario(text)


__all__ = ["DEFAULT", "builtin_names", "describe", "load_builtin"]
