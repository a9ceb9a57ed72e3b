"""Monitors: what a run records."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from .base import Component, EmModel, Name, Vec3

_ALL = ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz")


class _Named(EmModel):
    name: Name = Field(..., description="Unique monitor name: 1-100 letters, digits, _ - . "
                       "(not starting with '.').")


class Probe(_Named):
    """Field components at points, every step (trilinear interpolation of the Yee grid)."""

    type: Literal["Probe"] = "Probe"
    positions: list[Vec3] = Field(..., min_length=1, description="Points in m.")
    components: list[Component] = Field(list(_ALL), min_length=1, description="Components.")


class _Region(_Named):
    center: Vec3 = Field((0.0, 0.0, 0.0), description="Centre of the region in m.")
    size: Vec3 = Field(..., description="Extent in m; a zero extent makes a plane.")
    components: list[Component] = Field(list(_ALL), min_length=1, description="Components.")

    @field_validator("size")
    @classmethod
    def _nonneg(cls, v):
        if min(v) < 0:
            raise ValueError(f"size {v} must be >= 0 along every axis")
        return v


class FieldSnapshot(_Region):
    """Raw component values on a plane or box every ``interval`` steps."""

    type: Literal["FieldSnapshot"] = "FieldSnapshot"
    interval: int = Field(..., ge=1, description="Steps between snapshots (>= 1).")


class DFTMonitor(_Region):
    """Running discrete Fourier transform of components on a plane or box.

    Accumulates ``sum_n F^n exp(-i 2 pi f t_n) dt`` at each component's own time.
    """

    type: Literal["DFTMonitor"] = "DFTMonitor"
    frequencies: list[Annotated[float, Field(gt=0)]] = Field(
        ..., min_length=1, description="Frequencies in Hz (> 0)."
    )


class EnergyMonitor(_Named):
    """Total electromagnetic energy in the domain (J), every ``interval`` steps.

    Uses the leapfrog's conserved form ``(eps E^n.E^n + mu H^(n-1/2).H^(n+1/2)) / 2``.
    """

    type: Literal["EnergyMonitor"] = "EnergyMonitor"
    interval: int = Field(1, ge=1, description="Steps between samples (>= 1).")


class NearToFar(_Named):
    """Far fields from a closed Huygens box: running DFT of tangential E and H on its faces.

    The box is ``center``/``size`` (m, snapped to grid nodes) or, by default, the
    interior (inside any CPML) less ``margin`` cells on each side. It must enclose
    every source and scatterer and, with a plane wave, lie outside its TF/SF box.
    Results give far fields, bistatic RCS (normalised by the incident spectrum),
    radiated power and directivity (:mod:`emjax.analysis.nf2ff`).
    """

    type: Literal["NearToFar"] = "NearToFar"
    frequencies: list[Annotated[float, Field(gt=0)]] = Field(
        ..., min_length=1, description="Frequencies in Hz (> 0)."
    )
    center: Vec3 | None = Field(None, description="Box centre in m; default the interior's.")
    size: Vec3 | None = Field(None, description="Extent of the box in m (> 0 on every axis).")
    margin: int = Field(3, ge=1, description="Cells between the CPML (or wall) and default box.")

    @field_validator("size")
    @classmethod
    def _positive(cls, v):
        if v is not None and min(v) <= 0:
            raise ValueError(f"size {v} must be > 0 along every axis (a closed box)")
        return v


Monitor = Annotated[
    Probe | FieldSnapshot | DFTMonitor | EnergyMonitor | NearToFar, Field(discriminator="type")
]
