"""Geometry primitives, each with a point-membership test and a bounding box.

Membership tests take NumPy coordinate arrays in metres that broadcast against each
other (rasterization passes 1D axes shaped for broadcasting) and return booleans.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import Field, ValidationInfo, field_validator, model_validator

from ..errors import SetupError
from .base import AXES, EmModel, Vec3
from .cad import GdsExtrusion, Mesh
from .files import file_problem, resolved, scenario_file
from .media import AnyMedium

_AXIS_VECTORS = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}
_Length = Annotated[float, Field(ge=0, allow_inf_nan=True)]  # inf allowed, NaN refused by ge
MAX_LABEL = 2**31 - 1
Label = Annotated[int, Field(ge=0, le=MAX_LABEL)]
"""A voxel label: 0 .. 2**31 - 1 (stored as int32)."""



def square(v: float) -> np.float64:
    """``v * v`` as a float64, inf past its range (a Python float's ``v**2`` raises
    OverflowError: a radius of 1e300 covers the whole domain instead)."""
    with np.errstate(over="ignore"):
        return np.float64(v) * np.float64(v)


class Box(EmModel):
    """An axis-aligned box; a zero size along an axis makes a plane or line."""

    type: Literal["Box"] = "Box"
    center: Vec3 = Field((0.0, 0.0, 0.0), description="Centre in m.")
    size: tuple[_Length, _Length, _Length] = Field(
        ..., description="Edge lengths in m (>= 0; inf spans the domain).")

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners in m."""
        c, s = np.array(self.center), np.array(self.size)
        return c - s / 2, c + s / 2

    def inside(self, x, y, z):
        """True where (x, y, z), in m, lies in the box (faces included)."""
        lo, hi = self.bounds()
        return (
            (x >= lo[0]) & (x <= hi[0]) & (y >= lo[1]) & (y <= hi[1]) & (z >= lo[2]) & (z <= hi[2])
        )


class Sphere(EmModel):
    """A ball of given centre and radius."""

    type: Literal["Sphere"] = "Sphere"
    center: Vec3 = Field((0.0, 0.0, 0.0), description="Centre in m.")
    radius: float = Field(..., gt=0, description="Radius in m (> 0).")

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners of the bounding box in m."""
        c = np.array(self.center)
        return c - self.radius, c + self.radius

    def inside(self, x, y, z):
        """True where (x, y, z), in m, lies in the sphere (surface included)."""
        cx, cy, cz = self.center
        return (x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2 <= square(self.radius)


class Cylinder(EmModel):
    """A finite circular cylinder along any axis direction."""

    type: Literal["Cylinder"] = "Cylinder"
    center: Vec3 = Field((0.0, 0.0, 0.0), description="Centre of the axis segment in m.")
    radius: float = Field(..., gt=0, description="Radius in m (> 0).")
    length: float = Field(..., gt=0, description="Length along the axis in m (> 0).")
    axis: Vec3 | Literal["x", "y", "z"] = Field(
        "z", description="Axis direction: 'x', 'y', 'z' or a vector (normalised here)."
    )

    @field_validator("axis")
    @classmethod
    def _nonzero_axis(cls, v):
        if not isinstance(v, str) and math.hypot(*v) == 0:
            raise ValueError(f"axis {v} has zero length; give a non-zero direction vector")
        return v

    def unit_axis(self) -> np.ndarray:
        """The axis as a unit vector."""
        a = np.array(_AXIS_VECTORS[self.axis] if isinstance(self.axis, str) else self.axis)
        return a / np.linalg.norm(a)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners of the bounding box in m."""
        c, a = np.array(self.center), self.unit_axis()
        # Extent of a disc of radius r with normal a along axis i is r*sqrt(1 - a_i^2).
        half = np.abs(a) * self.length / 2 + self.radius * np.sqrt(np.clip(1 - a**2, 0, 1))
        return c - half, c + half

    def inside(self, x, y, z):
        """True where (x, y, z), in m, lies in the cylinder (surface included)."""
        a = self.unit_axis()
        dx, dy, dz = x - self.center[0], y - self.center[1], z - self.center[2]
        along = dx * a[0] + dy * a[1] + dz * a[2]
        radial2 = dx**2 + dy**2 + dz**2 - along**2
        return (np.abs(along) <= self.length / 2) & (radial2 <= square(self.radius))


class Ellipsoid(EmModel):
    """An axis-aligned ellipsoid."""

    type: Literal["Ellipsoid"] = "Ellipsoid"
    center: Vec3 = Field((0.0, 0.0, 0.0), description="Centre in m.")
    semi_axes: tuple[
        Annotated[float, Field(gt=0)], Annotated[float, Field(gt=0)], Annotated[float, Field(gt=0)]
    ] = Field(..., description="Semi-axes along x, y, z in m (> 0).")

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners of the bounding box in m."""
        c, s = np.array(self.center), np.array(self.semi_axes)
        return c - s, c + s

    def inside(self, x, y, z):
        """True where (x, y, z), in m, lies in the ellipsoid (surface included)."""
        (cx, cy, cz), (a, b, c) = self.center, self.semi_axes
        return ((x - cx) / a) ** 2 + ((y - cy) / b) ** 2 + ((z - cz) / c) ** 2 <= 1.0


class Voxels(EmModel):
    """A voxel model: an integer label array on its own regular grid.

    Voxel (i, j, k) covers ``origin + spacing * [i, i+1) x [j, j+1) x [k, k+1)``. Labels
    found in ``media`` take that medium; any other label (0 by convention) leaves the
    material beneath unchanged. Give the labels inline or as a ``.npy`` file.
    """

    type: Literal["Voxels"] = "Voxels"
    origin: Vec3 = Field((0.0, 0.0, 0.0), description="Lower corner of voxel (0,0,0) in m.")
    spacing: Vec3 = Field(..., description="Voxel edge lengths in m (> 0).")
    labels: list[list[list[Label]]] | None = Field(
        None, description="Label array indexed [i][j][k] (x fastest-varying last), 0..2**31-1."
    )
    file: str | None = Field(None, description="Path of a .npy file holding the label array; "
                             "relative to the scenario file's folder when loaded from a file "
                             "(stored absolute), else to the working directory.")
    media: dict[Label, AnyMedium] = Field(..., description="Label -> medium map.")

    @field_validator("file")
    @classmethod
    def _file(cls, v: str | None, info: ValidationInfo) -> str | None:
        return None if v is None else scenario_file(v, info, "Voxels.file")

    @field_validator("spacing")
    @classmethod
    def _positive_spacing(cls, v):
        if min(v) <= 0:
            raise ValueError(f"spacing {v} must be > 0 along every axis")
        return v

    @model_validator(mode="after")
    def _one_source_of_labels(self):
        if self.labels is not None and self.file is not None:
            raise ValueError(
                f"both 'labels' (inline array) and file = '{self.file}' are given; "
                "give exactly one of them"
            )
        if self.labels is None and self.file is None:
            raise ValueError(
                "neither 'labels' (inline array) nor 'file' (.npy path) is given; "
                "give exactly one of them"
            )
        if self.labels is not None:
            shape = np.shape(np.asarray(self.labels, dtype=object))
            if len(shape) != 3 or min(shape) < 1:
                raise ValueError(
                    f"labels must be a non-empty 3D array [i][j][k] of equal-length rows, "
                    f"got shape {shape}"
                )
        return self

    def label_array(self) -> np.ndarray:
        """The labels as an int32 array of shape (ni, nj, nk)."""
        if self.labels is not None:
            return np.asarray(self.labels, dtype=np.int32)
        path = resolved(self.file)
        problem = file_problem(path, "Voxels.file")
        if problem:
            raise SetupError(f"{problem}; give the path of a .npy file of integer labels")
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:  # EOFError: a truncated file
            raise SetupError(f"Voxels.file '{path}' is not a readable .npy file ({e}); save "
                             "the labels with np.save") from e
        if not isinstance(arr, np.ndarray):  # an .npz archive
            raise SetupError(f"Voxels.file '{path}' is an .npz archive, not one array; save "
                             "the labels with np.save (.npy)")
        if arr.ndim != 3 or min(arr.shape) < 1 or not np.issubdtype(arr.dtype, np.integer):
            raise SetupError(
                f"Voxels.file '{path}': need a non-empty 3D integer array, got {arr.dtype} of "
                f"shape {arr.shape}; save the labels with np.save as a 3D integer array"
            )
        if arr.min() < 0 or arr.max() > MAX_LABEL:
            raise SetupError(f"Voxels.file '{path}': labels range over [{arr.min()}, "
                             f"{arr.max()}], allowed are 0..{MAX_LABEL}")
        return arr.astype(np.int32)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners of the voxel grid in m."""
        n = np.array(self.label_array().shape)
        o = np.array(self.origin)
        return o, o + n * np.array(self.spacing)

    def sample(self, x, y, z) -> np.ndarray:
        """Label at each point (nearest voxel); -1 outside the voxel grid."""
        lab = self.label_array()
        idx = [
            np.floor((np.asarray(coord) - o) / d).astype(np.int64)
            for coord, o, d in zip((x, y, z), self.origin, self.spacing, strict=True)
        ]
        inb = np.ones(np.broadcast_shapes(*(i.shape for i in idx)), dtype=bool)
        for i, n in zip(idx, lab.shape, strict=True):
            inb = inb & (i >= 0) & (i < n)
        clipped = [np.clip(i, 0, n - 1) for i, n in zip(idx, lab.shape, strict=True)]
        return np.where(inb, lab[clipped[0], clipped[1], clipped[2]], -1)


Geometry = Annotated[Box | Sphere | Cylinder | Ellipsoid | Voxels | Mesh | GdsExtrusion,
                     Field(discriminator="type")]

__all__ = ["AXES", "Box", "Cylinder", "Ellipsoid", "GdsExtrusion", "Geometry", "Mesh", "Sphere",
           "Voxels"]
