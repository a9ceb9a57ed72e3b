"""Quantities with units in scenario files: ``"6 ns"``, ``"1 GHz"``, ``"2.5 mm"``.

Every float field of every model takes a string of a number and a unit wherever it
takes an SI number (and inside its tuples and lists: ``center = ["1 mm", 0, "-2 mm"]``);
the string becomes the SI number before pydantic sees it, so the model only ever holds
SI floats and a saved scenario has plain numbers. Numbers, and strings without a unit,
pass unchanged.

The unit a field expects is read from its description, which states it for every
field that has one (``"Radius in m (> 0)."``, ``"Frequency in Hz"``, ``"Polar angle
of k from +z, degrees."``): :func:`field_unit`. A quantity of another dimension is an
error naming the field, the value and the expected unit; a field whose description
names no unit, or two (``"current in A or voltage in V"``), takes plain numbers only.
Angular frequencies (rad/s) refuse Hz and frequencies (Hz) refuse rad/s, which pint
would otherwise convert one to one (the radian is dimensionless) and so be off by 2 pi.

Parsing is pint's (:data:`registry`, imported on the first string with a unit).
"""

from __future__ import annotations

import math
import re
from functools import cache
from typing import Any, get_args

_UNITS = r"rad/s|S/m|V/m|A/m|ohm/m|A\*m|ohm|Hz|rad|m|s|A|V|W"
_IN_UNIT = re.compile(rf"\bin ({_UNITS})(?=[\s.,;:)]|$)")
_DEGREES = re.compile(r"\bdegrees\b")
_NUMBER_FIRST = re.compile(r"^\s*[-+]?(\d|\.\d|inf|nan)", re.IGNORECASE)
MAX_LENGTH = 64
"""Longest string read as a quantity (anything longer is left to pydantic, which refuses it)."""


@cache
def registry():
    """pint's default unit registry (one per process)."""
    import pint

    return pint.UnitRegistry()


def field_unit(description: str | None) -> str | None:
    """The unit a field's description names (``"Radius in m (> 0)."`` -> ``"m"``), or
    None where it names none or more than one."""
    text = description or ""
    found = set(_IN_UNIT.findall(text))
    if _DEGREES.search(text):
        found.add("deg")
    return found.pop() if len(found) == 1 else None


def _takes_float(tp: Any) -> bool:
    return tp is float or any(_takes_float(a) for a in get_args(tp))


def to_si(text: str, unit: str | None, where: str) -> float | str:
    """``text`` as a number in ``unit`` (SI); ``text`` itself when it carries no unit.

    Raises ValueError naming ``where`` for a wrong dimension, a non-finite value or a
    string pint cannot read.
    """
    import pint

    ureg = registry()
    try:
        q = ureg.Quantity(text)
    except (pint.PintError, ValueError, TypeError, SyntaxError, AttributeError) as exc:
        raise ValueError(f"{where} = {text!r}: not a number with a unit ({exc}); give e.g. "
                         f"'2.5 mm' or a number in SI") from None
    if not isinstance(q, ureg.Quantity) or q.unitless:
        return text  # a plain number as a string: pydantic reads it as before
    mag = q.magnitude
    if not isinstance(mag, int | float) or not math.isfinite(mag):
        raise ValueError(f"{where} = {text!r}: the number must be finite")
    if unit is None:
        raise ValueError(f"{where} = {text!r}: this field takes a plain number (its unit is "
                         "not fixed, or it has none); give the value in SI without a unit")
    units = str(q.units)
    if unit == "rad/s" and "radian" not in units:
        raise ValueError(f"{where} = {text!r}: an angular frequency in rad/s is expected; "
                         "write the unit with rad (e.g. '1e10 rad/s'): a frequency in Hz "
                         "would be 2 pi off")
    if unit == "Hz" and "radian" in units:
        raise ValueError(f"{where} = {text!r}: a frequency in Hz is expected, not an angular "
                         "frequency")
    try:
        return float(q.to(unit).magnitude)
    except pint.DimensionalityError:
        raise ValueError(f"{where} = {text!r}: expected a quantity in {unit} "
                         f"({ureg.Unit(unit).dimensionality}), got "
                         f"{q.dimensionality}") from None


def _convert(value: Any, unit: str | None, where: str) -> Any:
    if isinstance(value, str) and len(value) <= MAX_LENGTH and _NUMBER_FIRST.match(value):
        return to_si(value, unit, where)
    if isinstance(value, list | tuple):
        return type(value)(_convert(v, unit, where) for v in value)
    return value


def convert_fields(model: type, data: Any) -> Any:
    """``data`` (a model's input) with every unit string of a float field converted to
    SI (a copy; ``data`` itself is left alone). Non-dict input passes unchanged."""
    if not isinstance(data, dict):
        return data
    out = None
    for key, value in data.items():
        if not (isinstance(value, str | list | tuple)):
            continue
        field = model.model_fields.get(key)
        if field is None or not _takes_float(field.annotation):
            continue
        new = _convert(value, field_unit(field.description), key)
        if new is not value and new != value:
            out = dict(data) if out is None else out
            out[key] = new
    return data if out is None else out


__all__ = ["MAX_LENGTH", "convert_fields", "field_unit", "registry", "to_si"]
