"""The one base model every scenario object derives from (frozen, strict keys).

Numbers must be finite: NaN and infinities are refused everywhere (``allow_inf_nan``
off) except in fields that say otherwise (a box may be infinitely long).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Vec3 = tuple[float, float, float]
"""A point or vector in metres, (x, y, z)."""

Component = Annotated[
    str, Field(pattern=r"^(Ex|Ey|Ez|Hx|Hy|Hz)$", description="Field component name.")
]
Axis = Annotated[str, Field(pattern=r"^[xyz]$", description="Cartesian axis: 'x', 'y' or 'z'.")]

AXES = ("x", "y", "z")


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
