"""Loading scenarios of every kind from TOML, JSON or a dict.

The top-level key ``type`` picks the scenario kind (``FDTD3D`` when absent). A
solver registers its scenario class by adding it to the ``Scenario`` union here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import Field, TypeAdapter, ValidationError

from ..errors import SetupError
from .base import ScenarioValidationError
from .dga import DGATD
from .fdfd import FDFD3D
from .files import SCENARIO_DIR, resolved
from .scenario import FDTD3D
from .scenario2d import FDTD2D

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib


Scenario = Annotated[FDTD3D | FDTD2D | DGATD | FDFD3D, Field(discriminator="type")]
"""Every scenario kind, told apart by its ``type`` key."""
_SCENARIO = TypeAdapter(Scenario)


MAX_DOCUMENT_BYTES = 64 * 2**20
"""Largest scenario document: 64 MiB (a file's bytes, a string's characters). A scenario
is a few kB; only inline voxel labels grow large, and those belong in a ``.npy`` file
(``Voxels.file``)."""
MAX_NESTING = 64
"""Deepest nesting of brackets, braces or dotted TOML keys in a scenario document
(scenarios nest about 8 deep). Checked before parsing: the parsers recurse once per
level (a RecursionError thousands deep) and tomllib takes quadratic time in a dotted
key's length."""

_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_TOML_SKIP = re.compile(  # multi-line strings first, then one-line strings and comments
    r'"""[^\\]*?(?:\\.[^\\]*?)*?"""|\'\'\'.*?\'\'\'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
    r"|'[^'\n]*'|#[^\n]*", re.S)
_TOML_DOTTED = re.compile(  # MAX_NESTING dots joining key parts (strings are "" by now)
    r'\.(?:[ \t]*+(?:[\w+-]++|"")[ \t]*+\.){' + str(MAX_NESTING - 1) + "}")
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_NESTING_STEP = np.zeros(256, np.int32)
_NESTING_STEP[list(b"[{")], _NESTING_STEP[list(b"]}")] = 1, -1


def load_scenario(source: str | Path | dict) -> Scenario:
    """Load a scenario from a TOML or JSON file, a TOML/JSON string or a dict.

    A ``str`` is scenario text when it holds a newline or starts with ``{`` (one-line
    JSON), and a file path otherwise; a ``Path`` is always a file path. Files the
    scenario reads (``Voxels.file``, a mesh ``path``) are relative to the scenario
    file's folder, else to the working directory (:mod:`emjax.model.files`). Documents
    over :data:`MAX_DOCUMENT_BYTES` or nested deeper than :data:`MAX_NESTING` are refused.

    An invalid scenario raises :class:`~emjax.model.base.ScenarioValidationError`, both a
    pydantic ``ValidationError`` and a :class:`~emjax.errors.SetupError`, whose message
    gives one line per problem; pydantic's own error is its ``__cause__``.
    """
    context = None
    if isinstance(source, dict):
        data = source
    else:
        text: str
        is_text = isinstance(source, str) and ("\n" in source or source.lstrip().startswith("{"))
        p = None if is_text else Path(source)
        if p is not None and _is_file(p):
            _check_size(p.stat().st_size, f"scenario file '{p}'")
            text = p.read_text()
            suffix = p.suffix
            context = {SCENARIO_DIR: resolved(p).parent}
        elif p is not None and (not isinstance(source, str) or p.suffix in (".toml", ".json")):
            raise SetupError(
                f"scenario file '{p}' does not exist; give the path of a .toml or .json file"
            )
        else:
            text, suffix = str(source), ""
            _check_size(len(text), "scenario text")
        what = f"scenario file '{p}'" if context else "scenario"
        json_text = suffix == ".json" or (not suffix and text.lstrip().startswith("{"))
        _check_nesting(text, json_text, what)
        data = _parse(text, json_text, what)
    if isinstance(data, dict) and "type" not in data:
        data = {"type": "FDTD3D", **data}
    try:
        return _SCENARIO.validate_python(data, context=context)
    except ValidationError as e:  # the same problems, one line each, without pydantic's names
        raise ScenarioValidationError.of(e) from e
    except RecursionError:  # a dict built in Python, nested past the parsers' checks
        raise SetupError(f"scenario is nested too deeply to validate; scenarios nest at most "
                         f"{MAX_NESTING} levels") from None


def _check_size(size: int, what: str) -> None:
    if size > MAX_DOCUMENT_BYTES:
        raise SetupError(f"{what} is {size / 2**20:.1f} MiB, more than the limit of "
                         f"{MAX_DOCUMENT_BYTES // 2**20} MiB for a scenario document; put large "
                         "voxel label arrays in a .npy file (Voxels.file)")


def _check_nesting(text: str, json_text: bool, what: str) -> None:
    """Refuse brackets/braces (outside strings and comments) or dotted TOML keys nested
    deeper than MAX_NESTING, before a parser recurses into them."""
    bare = (_JSON_STRING if json_text else _TOML_SKIP).sub('""', text)
    dotted = None if json_text else _TOML_DOTTED.search(bare)
    brackets = bare.encode("utf-8", "replace").translate(None, _NOT_BRACKETS)
    depth = int(np.cumsum(_NESTING_STEP[np.frombuffer(brackets, np.uint8)]).max(initial=0))
    if depth > MAX_NESTING or dotted:
        found = (f"brackets or braces nested {depth} deep" if depth > MAX_NESTING else
                 f"a dotted key of more than {MAX_NESTING} parts")
        raise SetupError(f"{what} holds {found}, more than the limit of {MAX_NESTING} levels "
                         "for a scenario document (scenarios nest about 8 deep); fix the text")


def _parse(text: str, json_text: bool, what: str) -> dict:
    """The JSON or TOML document; syntax errors and parser recursion as SetupError."""
    kind = "JSON" if json_text else "TOML"
    try:
        return json.loads(text) if json_text else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise SetupError(f"{what} is not valid {kind}: {e}; fix the text there") from e
    except RecursionError:  # past the scan (it cannot be: a fallback)
        raise SetupError(f"{what} is nested too deeply to parse as {kind}; scenarios nest at "
                         f"most {MAX_NESTING} levels") from None


def _is_file(p: Path) -> bool:
    """``p.is_file()``, False for a string too long or odd to be a path."""
    try:
        return p.is_file()
    except (OSError, ValueError):
        return False


__all__ = ["MAX_DOCUMENT_BYTES", "MAX_NESTING", "Scenario", "load_scenario"]
