"""The one base model every scenario object derives from (frozen, strict keys).

Numbers must be finite: NaN and infinities are refused everywhere (``allow_inf_nan``
off) except in fields that say otherwise (a box may be infinitely long).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

Vec3 = tuple[float, float, float]
"""A point or vector in metres, (x, y, z)."""

Component = Annotated[
    str, Field(pattern=r"^(Ex|Ey|Ez|Hx|Hy|Hz)$", description="Field component name.")
]
Axis = Annotated[str, Field(pattern=r"^[xyz]$", description="Cartesian axis: 'x', 'y' or 'z'.")]

AXES = ("x", "y", "z")

NAME_RULE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}")
"""Scenario and monitor names: 1 to 100 letters, digits, '_', '-' or '.', not starting
with '.'. They become file names in the output folder, so nothing else is allowed."""


def _check_name(value: str) -> str:
    if not NAME_RULE.fullmatch(value):
        raise ValueError(
            f"name {value[:120]!r}{'...' if len(value) > 120 else ''} is not allowed: use 1 to "
            "100 letters, digits, '_', '-' or '.', not starting with '.' (names become file "
            "names in the output folder)")
    return value


Name = Annotated[str, AfterValidator(_check_name)]
"""A name that is safe as a file name in the output folder (:data:`NAME_RULE`)."""


class EmModel(BaseModel):
    """Frozen, validated, self-describing: unknown keys are refused."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        validate_default=True,
        populate_by_name=False,
        ser_json_inf_nan="constants",
        allow_inf_nan=False,
    )
