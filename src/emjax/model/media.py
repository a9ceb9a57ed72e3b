"""Media: linear isotropic materials and the perfect electric conductor."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import EmModel
from .dispersion import PoleMedium


class Medium(EmModel):
    """A linear, isotropic, possibly lossy medium.

    Electric loss enters through ``sigma`` (S/m), magnetic loss through ``sigma_m``
    (ohm/m); the FDTD update treats both semi-implicitly.
    """

    type: Literal["Medium"] = "Medium"
    # Bounded so that eps0 eps_r and mu0 mu_r stay far from float64's under- and overflow.
    eps_r: float = Field(1.0, ge=1e-6, le=1e9,
                         description="Relative permittivity (dimensionless, 1e-6 to 1e9).")
    mu_r: float = Field(1.0, ge=1e-6, le=1e9,
                        description="Relative permeability (dimensionless, 1e-6 to 1e9).")
    sigma: float = Field(0.0, ge=0, description="Electric conductivity in S/m (>= 0).")
    sigma_m: float = Field(0.0, ge=0, description="Magnetic conductivity in ohm/m (>= 0).")
    name: str = Field("", description="Optional label used in reports.")


class PEC(EmModel):
    """Perfect electric conductor: tangential E is zero on and inside it.

    Also serves as a boundary condition on a domain face.
    """

    type: Literal["PEC"] = "PEC"
    name: str = Field("", description="Optional label used in reports.")


AnyMedium = Annotated[Medium | PEC | PoleMedium, Field(discriminator="type")]
"""A structure's medium (also a Voxels label's). A :class:`PoleMedium` (dispersive) runs
in FDTD3D and FDTD2D (auxiliary-differential-equation update) and FDFD3D (eps at the
solve frequency)."""

vacuum = Medium(name="vacuum")
