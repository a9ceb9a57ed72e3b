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
    interval: int = Field(..., ge=1, le=10**9,
                          description="Steps between snapshots (1 .. 1e9).")


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
    interval: int = Field(1, ge=1, le=10**9, description="Steps between samples (1 .. 1e9).")


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


class FluxMonitor(_Named):
    """Poynting flux per frequency through a plane or a closed box (FDTD3D).

    One zero extent in ``size`` makes a plane normal to that axis, with the flux counted
    along +axis (``direction = "+"``) or -axis (``"-"``); no zero extent makes a closed
    box, with the net flux counted outward (``"+"``) or inward (``"-"``, for instance
    the power a body inside absorbs). The plane or the box faces snap to the nearest
    grid nodes; each face pairs the tangential E on it with the tangential H half a
    cell on the counted side, the Yee grid's exact discrete Poynting theorem
    (:func:`emjax.analysis.flux.face_flux`). Results: ``data["flux"]`` (nf,) in W s^2,
    the spectral power of the pulsed fields (see :mod:`emjax.results`).
    """

    type: Literal["FluxMonitor"] = "FluxMonitor"
    center: Vec3 = Field((0.0, 0.0, 0.0), description="Centre of the plane or box in m.")
    size: Vec3 = Field(..., description="Extent in m (>= 0); one zero extent makes a plane "
                       "normal to that axis, none a closed box.")
    frequencies: list[Annotated[float, Field(gt=0)]] = Field(
        ..., min_length=1, description="Frequencies in Hz (> 0)."
    )
    direction: Literal["+", "-"] = Field(
        "+", description="'+': flux along +normal for a plane, outward for a box; '-': the "
        "opposite.")

    @field_validator("size")
    @classmethod
    def _plane_or_box(cls, v):
        if min(v) < 0:
            raise ValueError(f"size {v} must be >= 0 along every axis")
        zeros = [ax for ax, s in zip("xyz", v, strict=True) if s == 0]
        if len(zeros) > 1:
            raise ValueError(f"size {v} is zero along {', '.join(zeros)}: a flux monitor is a "
                             "plane (one zero extent) or a closed box (none); give the "
                             "plane a positive extent along its two tangential axes")
        return v

    @property
    def normal(self) -> int | None:
        """The plane's normal axis (0, 1, 2), or None for a closed box."""
        return next((a for a in range(3) if self.size[a] == 0), None)


Monitor = Annotated[
    Probe | FieldSnapshot | DFTMonitor | EnergyMonitor | NearToFar | FluxMonitor,
    Field(discriminator="type"),
]
