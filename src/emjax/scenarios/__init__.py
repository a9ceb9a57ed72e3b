"""Built-in scenarios: TOML files shipped inside the package.

Each ``<name>.toml`` here is an ordinary scenario file (see :func:`emjax.load_scenario`)
whose first lines carry a comment ``# description: ...``, which :func:`describe`
returns. ``emjax run NAME`` and ``emjax list`` use these functions.
"""

from __future__ import annotations

from importlib import resources

from ..errors import SetupError

DEFAULT = "dipole-cube"
"""The scenario ``emjax run`` uses when given none."""

_DESCRIPTION_TAG = "# description:"


def builtin_names() -> list[str]:
    """Names of the built-in scenarios, sorted, the default first."""
    names = sorted(
        p.name[: -len(".toml")]
        for p in resources.files(__name__).iterdir()
        if p.name.endswith(".toml")
    )
    if DEFAULT in names:
        names.remove(DEFAULT)
        names.insert(0, DEFAULT)
    return names


def _text(name: str) -> str:
    known = builtin_names()
    if name not in known:
        raise SetupError(
            f"unknown built-in scenario '{name}'; known: {', '.join(known)} "
            "(or give the path of a .toml or .json scenario file)"
        )
    return resources.files(__name__).joinpath(f"{name}.toml").read_text(encoding="utf-8")


def describe(name: str) -> str:
    """The one-line description from the ``# description:`` comment of a built-in."""
    for line in _text(name).splitlines():
        if line.startswith(_DESCRIPTION_TAG):
            return line[len(_DESCRIPTION_TAG):].strip()
    return ""


def load_builtin(name: str):
    """The built-in scenario ``name``, validated (an :class:`emjax.FDTD3D`)."""
    from ..model import load_scenario

    return load_scenario(_text(name))


__all__ = ["DEFAULT", "builtin_names", "describe", "load_builtin"]
