"""Loading scenarios of every kind from TOML, JSON or a dict.

The top-level key ``type`` picks the scenario kind (``FDTD3D`` when absent). A
solver registers its scenario class by adding it to the ``Scenario`` union here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

from pydantic import Field, TypeAdapter

from ..errors import SetupError
from .dga import DGATD
from .fdfd import FDFD3D
from .scenario import FDTD3D
from .scenario2d import FDTD2D

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib


Scenario = Annotated[FDTD3D | FDTD2D | DGATD | FDFD3D, Field(discriminator="type")]
"""Every scenario kind, told apart by its ``type`` key."""
_SCENARIO = TypeAdapter(Scenario)


def load_scenario(source: str | Path | dict) -> Scenario:
    """Load a scenario from a TOML or JSON file, a TOML/JSON string or a dict.

    A ``str`` is scenario text when it holds a newline or starts with ``{`` (one-line
    JSON), and a file path otherwise; a ``Path`` is always a file path.
    """
    if isinstance(source, dict):
        data = source
    else:
        text: str
        is_text = isinstance(source, str) and ("\n" in source or source.lstrip().startswith("{"))
        p = None if is_text else Path(source)
        if p is not None and _is_file(p):
            text = p.read_text()
            suffix = p.suffix
        elif p is not None and (not isinstance(source, str) or p.suffix in (".toml", ".json")):
            raise SetupError(
                f"scenario file '{p}' does not exist; give the path of a .toml or .json file"
            )
        else:
            text, suffix = str(source), ""
        if suffix == ".json" or (not suffix and text.lstrip().startswith("{")):
            try:
                data = json.loads(text)
            except json.JSONDecodeError as e:
                raise SetupError(f"scenario is not valid JSON: {e}; fix the text there") from e
        else:
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as e:
                raise SetupError(f"scenario is not valid TOML: {e}; fix the text there") from e
    if isinstance(data, dict) and "type" not in data:
        data = {"type": "FDTD3D", **data}
    return _SCENARIO.validate_python(data)


def _is_file(p: Path) -> bool:
    """``p.is_file()``, False for a string too long or odd to be a path."""
    try:
        return p.is_file()
    except (OSError, ValueError):
        return False



__all__ = ["Scenario", "load_scenario"]
