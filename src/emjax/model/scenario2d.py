"""The 2D FDTD scenario (seed 002): TMz (Ez, Hx, Hy) or TEz (Hz, Ex, Ey) on the plane z = 0.

Everything is invariant along z. The model reuses the 3D pieces wherever they fit:
media (:class:`Medium`, :class:`PEC`), waveforms, the CPML, the monitors (their
points and regions lie on the plane: give z = 0) and the 3D shapes, which are cut by
the plane z = 0. What is new here: the 2D shapes (:class:`Rectangle`,
:class:`Circle`, :class:`Polygon`), the :class:`LineSource`, Berenger's split-field
:class:`SplitPML`, per-axis :class:`Boundaries2D`, :class:`Domain2D` and
:class:`FDTD2D` itself.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, PositiveFloat, PositiveInt, field_validator, model_validator

from ..constants import c0
from .base import Axis, EmModel, Name
from .boundaries import CPML
from .geometry import Box, Cylinder, Ellipsoid, Sphere, Voxels, square
from .media import PEC, Medium
from .monitors import DFTMonitor, EnergyMonitor, FieldSnapshot, Probe
from .pml_rules import pml_interior_problem, thick_pml_problems
from .scenario import (
    MAX_STEPS,
    Domain,
    Structure,
    _TimeDomain,
    storage_problems,
    time_step_problems,
)
from .sources import PlaneWave, amplitude_problems
from .waveforms import Waveform

Vec2 = tuple[float, float]
"""A point or vector in the plane, (x, y) in m."""

_ALL_COMPONENTS = ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz")
POLARIZATION_COMPONENTS = {"TMz": ("Ez", "Hx", "Hy"), "TEz": ("Hz", "Ex", "Ey")}
"""The field components each polarization carries."""


# ------------------------------------------------------------------ geometry
class _Shape2D(EmModel):
    """A shape of the plane, extruded along z (its membership ignores z)."""

    def _bounds2(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """3D bounds: the 2D box, and z = 0 (the plane rasterization samples)."""
        lo, hi = self._bounds2()
        return np.array([lo[0], lo[1], 0.0]), np.array([hi[0], hi[1], 0.0])


class Rectangle(_Shape2D):
    """An axis-aligned rectangle."""

    type: Literal["Rectangle"] = "Rectangle"
    center: Vec2 = Field((0.0, 0.0), description="Centre (x, y) in m.")
    size: tuple[Annotated[float, Field(ge=0)], Annotated[float, Field(ge=0)]] = Field(
        ..., description="Width and height in m (>= 0).")

    def _bounds2(self):
        c, s = np.array(self.center), np.array(self.size)
        return c - s / 2, c + s / 2

    def inside(self, x, y, z):
        """True where (x, y), in m, lies in the rectangle; z is ignored."""
        del z
        lo, hi = self._bounds2()
        return (x >= lo[0]) & (x <= hi[0]) & (y >= lo[1]) & (y <= hi[1])


class Circle(_Shape2D):
    """A disc of given centre and radius."""

    type: Literal["Circle"] = "Circle"
    center: Vec2 = Field((0.0, 0.0), description="Centre (x, y) in m.")
    radius: PositiveFloat = Field(..., description="Radius in m (> 0).")

    def _bounds2(self):
        c = np.array(self.center)
        return c - self.radius, c + self.radius

    def inside(self, x, y, z):
        """True where (x, y), in m, lies in the circle; z is ignored."""
        del z
        return (x - self.center[0]) ** 2 + (y - self.center[1]) ** 2 <= square(self.radius)


class Polygon(_Shape2D):
    """A simple polygon given by its vertices in order (closed implicitly; even-odd rule)."""

    type: Literal["Polygon"] = "Polygon"
    vertices: list[Vec2] = Field(..., min_length=3, description="Vertices (x, y) in m.")

    @field_validator("vertices")
    @classmethod
    def _has_area(cls, v):
        p = np.asarray(v, dtype=np.float64)
        area = 0.5 * abs(np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1]))
        if not area > 0:
            raise ValueError(f"vertices {v} enclose no area; give at least three points "
                             "not on one line")
        return v

    def _bounds2(self):
        p = np.asarray(self.vertices, dtype=np.float64)
        return p.min(axis=0), p.max(axis=0)

    def inside(self, x, y, z):
        """True where (x, y), in m, lies in the polygon; z is ignored."""
        del z
        x, y = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(y, np.float64))
        out = np.zeros(x.shape, dtype=bool)
        p = np.asarray(self.vertices, dtype=np.float64)
        for (x1, y1), (x2, y2) in zip(p, np.roll(p, -1, axis=0), strict=True):
            if y1 == y2:
                continue
            crosses = (y1 > y) != (y2 > y)
            xc = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
            out ^= crosses & (x < xc)
        return out


Geometry2D = Annotated[
    Rectangle | Circle | Polygon | Box | Sphere | Cylinder | Ellipsoid | Voxels,
    Field(discriminator="type"),
]
"""2D shapes, and 3D shapes cut by the plane z = 0."""


class Structure2D(Structure):
    """A 2D shape (or a 3D one, cut by z = 0) filled with a medium; later ones win."""

    geometry: Geometry2D


# ------------------------------------------------------------------ sources
class LineSource(EmModel):
    """A line current along z (or a z-invariant sheet of in-plane current) at one sample.

    The current density is ``J = amplitude * waveform(t) / (dx dy)`` on the Yee sample
    of component ``J<polarization>`` nearest ``position``: for polarization "z" the
    ``amplitude`` is the line current in A (TMz; in free space
    ``Ez = -(omega mu0 I / 4) H0^(2)(k rho)``). TEz takes "x" or "y". With
    ``current = "magnetic"`` it is a magnetic current M (amplitude in V): "z" for TEz,
    "x" or "y" for TMz.
    """

    type: Literal["LineSource"] = "LineSource"
    position: Vec2 = Field(..., description="(x, y) in m; snapped to the nearest sample.")
    polarization: Axis = Field("z", description="Direction of the current: 'x', 'y' or 'z'.")
    current: Literal["electric", "magnetic"] = Field("electric", description="J or M.")
    amplitude: float = Field(1.0, description="Line current in A (magnetic: V).")
    waveform: Waveform


Source2D = Annotated[LineSource | PlaneWave, Field(discriminator="type")]
Monitor2D = Annotated[Probe | FieldSnapshot | DFTMonitor | EnergyMonitor,
                      Field(discriminator="type")]
"""The 3D monitors, on the plane (the scattering width comes from DFT monitors on a
contour through :mod:`emjax.analysis.nf2ff2d`)."""


# --------------------------------------------------------------- boundaries
class SplitPML(EmModel):
    """Berenger's split-field PML (seed 002) of ``thickness`` cells inside the domain.

    The field normal to the plane is split (Ez = Ezx + Ezy, or Hz = Hzx + Hzy) in the
    layers only; conductivity ``sigma(d) = sigma_max (d/L)^m`` with the matched magnetic
    conductivity ``sigma_m = sigma mu / eps``. Backed by PEC.
    """

    type: Literal["SplitPML"] = "SplitPML"
    thickness: int = Field(10, ge=1, description="Cells (>= 1).")
    m: float = Field(3.0, ge=0, description="Polynomial grading order.")
    sigma_max: float | None = Field(
        None, ge=0,
        description="Peak conductivity in S/m; default 0.8 (m+1) / (eta0 d sqrt(eps_r mu_r)).",
    )


Boundary2D = Annotated[PEC | CPML | SplitPML, Field(discriminator="type")]
AxisBoundary2D = Boundary2D | tuple[Boundary2D, Boundary2D]


class Boundaries2D(EmModel):
    """Per-axis boundaries of the plane: one for both faces of an axis, or a [low, high] pair."""

    type: Literal["Boundaries2D"] = "Boundaries2D"
    x: AxisBoundary2D = Field(default_factory=CPML, description="x faces.")
    y: AxisBoundary2D = Field(default_factory=CPML, description="y faces.")

    def faces(self) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
        """((x_lo, x_hi), (y_lo, y_hi))."""
        return tuple(tuple(b) if isinstance(b, tuple) else (b, b) for b in (self.x, self.y))


BoundarySpec2D = Annotated[PEC | CPML | SplitPML | Boundaries2D, Field(discriminator="type")]


# ------------------------------------------------------------------- domain
class Domain2D(EmModel):
    """The simulated rectangle: ``size`` or ``shape`` (cells), with ``spacing``.

    As :class:`Domain` in 3D: ``size`` is rounded to whole cells, and the rectangle
    is centred on (0, 0) unless ``origin`` (its lower corner) is given.
    """

    size: tuple[PositiveFloat, PositiveFloat] | None = Field(
        None, description="Extent in m along x, y (> 0).")
    shape: tuple[PositiveInt, PositiveInt] | None = Field(
        None, description="Cells along x, y (>= 1).")
    spacing: PositiveFloat | tuple[PositiveFloat, PositiveFloat] = Field(
        ..., description="Cell size in m, one value or (dx, dy).")
    origin: Vec2 | None = Field(None, description="Lower corner (x, y) in m; default: centred.")

    @model_validator(mode="after")
    def _valid_as_3d(self):
        self.as_3d()  # the 3D Domain's rules (one of size/shape, at least half a cell)
        return self

    @property
    def spacing2(self) -> tuple[float, float]:
        """(dx, dy) in m."""
        s = self.spacing
        return (float(s),) * 2 if isinstance(s, int | float) else (float(s[0]), float(s[1]))

    def as_3d(self) -> Domain:
        """The same cells as a 3D domain one cell thick, centred on the plane z = 0."""
        dx, dy = self.spacing2
        dz = min(dx, dy)
        return Domain(
            size=None if self.size is None else (*self.size, dz),
            shape=None if self.shape is None else (*self.shape, 1),
            spacing=(dx, dy, dz),
            origin=None if self.origin is None else (*self.origin, -dz / 2),
        )

    @property
    def cells(self) -> tuple[int, int]:
        """Number of cells (nx, ny)."""
        return self.as_3d().cells[:2]

    @property
    def lower(self) -> tuple[float, float]:
        """Lower corner (x, y) in m."""
        return self.as_3d().lower[:2]

    @property
    def upper(self) -> tuple[float, float]:
        """Upper corner (x, y) in m."""
        return self.as_3d().upper[:2]


# ----------------------------------------------------------------- scenario
class FDTD2D(_TimeDomain):
    """A 2D Yee FDTD simulation on the plane z = 0 (seed 002), TMz or TEz.

    Give ``duration`` (s) or ``steps``. The time step is ``courant`` times the 2D
    Courant limit ``1 / (v sqrt(dx^-2 + dy^-2))`` of the fastest medium present (a
    PoleMedium counts with eps_inf, as in 3D).
    Monitors record the polarization's components (all of them by default).
    """

    type: Literal["FDTD2D"] = "FDTD2D"
    name: Name = Field("fdtd2d", description="Name used in outputs: 1-100 letters, digits, "
                       "_ - . (not starting with '.').")
    polarization: Literal["TMz", "TEz"] = Field(
        "TMz", description="TMz: Ez, Hx, Hy; TEz: Hz, Ex, Ey.")
    domain: Domain2D
    background: Medium = Field(default_factory=Medium, description="Medium filling the domain.")
    structures: list[Structure2D] = Field(default_factory=list, description="Later ones win.")
    sources: list[Source2D] = Field(default_factory=list)
    monitors: list[Monitor2D] = Field(default_factory=list)
    boundary: BoundarySpec2D = Field(default_factory=CPML, description="Face boundaries.")
    courant: float = Field(0.99, gt=0, le=1, description="Fraction of the Courant limit (0, 1].")
    duration: float | None = Field(None, gt=0, description="Simulated time in s.")
    steps: int | None = Field(None, ge=1, le=MAX_STEPS, description="Number of time steps.")
    dtype: Literal["float32", "float64"] = Field("float32", description="Field precision.")
    storage: Literal["indices", "arrays"] = Field(
        "indices", description="Update coefficients as indices into a table (CIS) or arrays (CAS)."
    )
    conformal: bool = Field(
        True, description="TEz: conformal (Dey-Mittra) PEC boundaries instead of staircases "
        "(stable at any courant; most accurate at courant 0.7 or below, where fewer small "
        "cut cells need enlarging).")
    subpixel: bool = Field(
        False, description="Average eps on E samples cut by a dielectric surface "
        "(emjax.grid.subpixel: the arithmetic mean for Ez; for Ex, Ey the smoothed tensor, "
        "harmonic along the surface normal and arithmetic along the surface, with its "
        "off-diagonal entry where both media are lossless) instead of staircasing.")

    @model_validator(mode="after")
    def _check_consistency(self):
        problems = []
        if (self.duration is None) == (self.steps is None):
            problems.append(
                "give exactly one of 'duration' (s) and 'steps'"
                + (f" (both given: {self.duration:.6g} s, {self.steps})"
                   if self.duration is not None else " (neither given)"))
        if not problems:
            problems += time_step_problems(self)
        problems += _placement_problems_2d(self)
        problems += storage_problems(self)
        problems += amplitude_problems(self.sources, self.dtype)
        if problems:
            raise ValueError("\n".join(problems))  # one line each
        return self

    # Derived quantities, computed once and passed down to the solver.
    @property
    def components(self) -> tuple[str, str, str]:
        """The polarization's components: the z one first, then x and y."""
        return POLARIZATION_COMPONENTS[self.polarization]

    def monitor_components(self, m) -> list[str]:
        """Components monitor ``m`` records: its own list, or, when it names all six (the
        default), those of the polarization."""
        if set(m.components) == set(_ALL_COMPONENTS):  # the default: all that exist
            return list(self.components)
        return list(m.components)

    @property
    def dt(self) -> float:
        """Time step in s."""
        dx, dy = self.domain.spacing2
        try:
            vmax = c0 / math.sqrt(min([m.eps_r * m.mu_r for m in self.media]
                                      + [m.eps_inf for m in self.pole_media]))
            return self.courant / (vmax * math.sqrt(dx**-2 + dy**-2))
        except (OverflowError, ZeroDivisionError):  # refused by time_step_problems
            return math.nan

    @property
    def cpml_strategy(self) -> str:
        """How PML slab terms enter the update: the backend's choice in 2D (folded into
        the fused update on accelerators, added in place after it on a CPU)."""
        return "auto"

    @property
    def faces(self):
        """((x_lo, x_hi), (y_lo, y_hi)) boundary objects."""
        if isinstance(self.boundary, Boundaries2D):
            return self.boundary.faces()
        return ((self.boundary, self.boundary),) * 2

    def pml_cells(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """PML (CPML or split) thickness in cells on each face (0 where there is none)."""
        return tuple(tuple(getattr(b, "thickness", 0) for b in pair) for pair in self.faces)

    def summary(self) -> str:
        """One line for logs: polarization, grid, steps and time step."""
        return (f"{self.polarization}, {'x'.join(map(str, self.domain.cells))} cells, "
                f"{self.num_steps} steps of dt = {self.dt:.4g} s")

    def run(self, **kwargs) -> Any:
        """Run on whatever device JAX has; see :func:`emjax.fdtd.solver2d.run`."""
        from .. import registry

        return registry.run(self, **kwargs)

    def estimate(self) -> dict[str, int]:
        """Device bytes the run needs, by item and in ``total``; allocates nothing."""
        from .. import registry

        return registry.estimate(self)


def _source_problems_2d(sim: FDTD2D, where) -> list[str]:
    """Sources that do not couple to the polarization, leave the plane, or sit outside
    the interior (``where(point)`` says where a point is wrong, or None)."""
    out: list[str] = []
    allowed = sim.components
    for i, s in enumerate(sim.sources):
        if isinstance(s, LineSource):
            comp = ("E" if s.current == "electric" else "H") + s.polarization
            if comp not in allowed:
                ok = [c for c in ("x", "y", "z") if
                      ("E" if s.current == "electric" else "H") + c in allowed]
                out.append(f"sources[{i}] LineSource: a {s.current} current along "
                           f"'{s.polarization}' does not couple to {sim.polarization}; use "
                           f"polarization {' or '.join(map(repr, ok))}")
            msg = where(s.position)
            if msg:
                out.append(f"sources[{i}] LineSource at {tuple(s.position)} m: {msg}")
        else:
            e = s.e_hat
            if abs(s.k_hat[2]) > 1e-9:
                out.append(f"sources[{i}] PlaneWave: theta = {s.theta} deg puts k out of the "
                           "plane; a 2D scenario needs theta = 90")
            elif sim.polarization == "TMz" and abs(abs(e[2]) - 1) > 1e-9:
                out.append(f"sources[{i}] PlaneWave: polarization = {s.polarization} deg gives "
                           "E in the plane; TMz needs E along z (polarization 0 or 180)")
            elif sim.polarization == "TEz" and abs(e[2]) > 1e-9:
                out.append(f"sources[{i}] PlaneWave: polarization = {s.polarization} deg gives "
                           "E along z; TEz needs E in the plane (polarization 90 or -90)")
            if s.waveform is None:
                out.append(f"sources[{i}] PlaneWave: FDTD needs a 'waveform'")
    return out


def _placement_problems_2d(sim: FDTD2D) -> list[str]:
    """Cross-object rules: PML size, sources and monitors on the plane, inside and out of PML."""
    out: list[str] = []
    dom = sim.domain
    cells, lower, upper, d = dom.cells, dom.lower, dom.upper, dom.spacing2
    pml = sim.pml_cells()
    out += thick_pml_problems(pml, cells, "PML")
    in_lo = [lower[a] + pml[a][0] * d[a] for a in range(2)]
    in_hi = [upper[a] - pml[a][1] * d[a] for a in range(2)]

    def where(p) -> str | None:
        if len(p) == 3 and abs(p[2]) > 1e-9 * min(d):
            return f"z = {p[2]:.6g} m is off the plane z = 0 of a 2D scenario; give z = 0"
        for a, ax in enumerate("xy"):
            tol = 1e-9 * d[a]
            if not (lower[a] - tol <= p[a] <= upper[a] + tol):
                return (f"{ax} = {p[a]:.6g} m is outside the domain "
                        f"[{lower[a]:.6g}, {upper[a]:.6g}] m")
            msg = pml_interior_problem(ax, p[a], in_lo[a], in_hi[a], tol, "PML")
            if msg:
                return msg
        return None

    allowed = sim.components
    out += _source_problems_2d(sim, where)
    for i, m in enumerate(sim.monitors):
        label = f"monitors[{i}] {m.type} '{m.name}'"
        if m.type != "EnergyMonitor":
            bad = [c for c in sim.monitor_components(m) if c not in allowed]
            if bad:
                out.append(f"{label}: components {bad} do not exist in {sim.polarization}; "
                           f"choose from {list(allowed)}")
        pts: list = []
        if isinstance(m, Probe):
            pts = list(m.positions)
        elif isinstance(m, DFTMonitor | FieldSnapshot):
            c, s = np.array(m.center), np.array(m.size)
            if s[2] != 0:
                out.append(f"{label}: size along z is {s[2]:.6g} m; a 2D region lies on the "
                           "plane z = 0, give size z = 0")
            pts = [tuple(c - s / 2), tuple(c + s / 2)]
        for p in pts:
            msg = where(p)
            if msg:
                pt = ", ".join(f"{float(x):.6g}" for x in p)
                out.append(f"{label}: point ({pt}) m: {msg}")
                break
    names = [m.name for m in sim.monitors]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        out.append(f"monitors: names must be unique, repeated: {dup}")
    return out


__all__ = [
    "FDTD2D", "POLARIZATION_COMPONENTS", "Boundaries2D", "Circle", "Domain2D", "LineSource",
    "Polygon", "Rectangle", "SplitPML", "Structure2D",
]
