"""Sources: currents and lumped voltage sources on single Yee edges."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import Axis, EmModel, Vec3
from .waveforms import Waveform


class PointDipole(EmModel):
    """An electric current element on the Yee edge nearest ``position``.

    The current moment is ``amplitude * waveform(t)`` in A*m, spread over the cell
    volume: ``J = I dl / (dx dy dz)``.
    """

    type: Literal["PointDipole"] = "PointDipole"
    position: Vec3 = Field(..., description="Location in m; snapped to the nearest edge.")
    polarization: Axis = Field(..., description="Direction of the current: 'x', 'y' or 'z'.")
    amplitude: float = Field(1.0, description="Current moment scale in A*m.")
    waveform: Waveform


class EdgeSource(EmModel):
    """A lumped source on one Yee edge, as the MRI coil of seed 001 uses.

    ``kind="current"`` drives ``amplitude * waveform(t)`` amperes along the edge.
    ``kind="voltage"`` is a voltage source of ``amplitude * waveform(t)`` volts in series
    with ``resistance`` ohms (a matched port by default); the resistor loads the edge.
    """

    type: Literal["EdgeSource"] = "EdgeSource"
    position: Vec3 = Field(..., description="Location in m; snapped to the nearest edge.")
    polarization: Axis = Field(..., description="Edge direction: 'x', 'y' or 'z'.")
    kind: Literal["current", "voltage"] = Field("voltage", description="Current or voltage.")
    amplitude: float = Field(1.0, description="Peak current in A or voltage in V.")
    resistance: float = Field(50.0, gt=0, description="Series resistance in ohm (voltage only).")
    waveform: Waveform


Source = Annotated[PointDipole | EdgeSource, Field(discriminator="type")]
