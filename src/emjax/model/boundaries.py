"""Boundary conditions for the faces of the domain."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import EmModel
from .media import PEC


class PMC(EmModel):
    """Perfect magnetic conductor: tangential H is zero on the face (a symmetry plane)."""

    type: Literal["PMC"] = "PMC"


class CPML(EmModel):
    """Convolutional PML (Roden and Gedney 2000) of ``thickness`` cells inside the domain.

    Grading ``sigma(d) = sigma_max (d/L)^m``, ``kappa(d) = 1 + (kappa_max - 1)(d/L)^m``,
    ``alpha(d) = alpha_max (1 - d/L)^m_alpha`` with depth d from the inner interface.
    The PML is backed by PEC.
    """

    type: Literal["CPML"] = "CPML"
    thickness: int = Field(10, ge=1, description="Cells (>= 1).")
    m: float = Field(3.0, ge=0, description="Polynomial grading order of sigma and kappa.")
    sigma_max: float | None = Field(
        None, ge=0,
        description="Peak conductivity in S/m; default 0.8 (m+1) / (eta0 d sqrt(eps_r mu_r)).",
    )
    kappa_max: float = Field(1.0, ge=1, description="Peak coordinate stretch (>= 1).")
    alpha_max: float = Field(0.05, ge=0, description="Peak CFS alpha in S/m (>= 0).")
    m_alpha: float = Field(1.0, ge=0, description="Grading order of alpha.")


class Mur(EmModel):
    """First-order Mur absorbing boundary (G. Mur, IEEE Trans. EMC 23, 377, 1981).

    The tangential E on the face follows the one-way wave equation at the wave speed
    c = c0 / sqrt(eps_r mu_r) of the background medium (or of ``eps_r`` when given).
    It takes no cells and holds no state: seed 001's speed reference. Normal
    incidence reflects at -50 dB (30 cells per wavelength) to -38 dB (12 cells),
    oblique incidence far more; use CPML where accuracy matters. Needs at least 3
    cells along the face's axis.
    """

    type: Literal["Mur"] = "Mur"
    eps_r: float | None = Field(
        None, ge=1.0,
        description="Relative permittivity (>= 1) of the medium the waves leave through; "
        "default: the background's.",
    )


Boundary = Annotated[PEC | PMC | CPML | Mur, Field(discriminator="type")]
AxisBoundary = Boundary | tuple[Boundary, Boundary]


class Boundaries(EmModel):
    """Per-axis boundaries: one for both faces of an axis, or a [low, high] pair."""

    type: Literal["Boundaries"] = "Boundaries"
    x: AxisBoundary = Field(default_factory=CPML, description="x faces.")
    y: AxisBoundary = Field(default_factory=CPML, description="y faces.")
    z: AxisBoundary = Field(default_factory=CPML, description="z faces.")

    def faces(self) -> tuple[tuple[EmModel, EmModel], ...]:
        """((x_lo, x_hi), (y_lo, y_hi), (z_lo, z_hi))."""
        out = []
        for b in (self.x, self.y, self.z):
            out.append(tuple(b) if isinstance(b, tuple) else (b, b))
        return tuple(out)


BoundarySpec = Annotated[PEC | PMC | CPML | Mur | Boundaries, Field(discriminator="type")]


def face_boundaries(spec) -> tuple[tuple[EmModel, EmModel], ...]:
    """Normalise any boundary specification to ((x_lo, x_hi), (y_lo, y_hi), (z_lo, z_hi))."""
    if isinstance(spec, Boundaries):
        return spec.faces()
    return ((spec, spec),) * 3
