"""Scenarios: the complete, validated description of one simulation.

A scenario is pure data: it loads from and saves to TOML or JSON exactly, and its
derived quantities (grid shape, time step, number of steps) are properties computed
once here and handed down to the solvers.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from ..constants import c0
from .base import EmModel, Name, Vec3
from .boundaries import CPML, PMC, BoundarySpec, Mur, face_boundaries
from .dispersion import PoleMedium
from .geometry import Geometry, Voxels
from .media import PEC, AnyMedium, Medium
from .monitors import DFTMonitor, FieldSnapshot, FluxMonitor, Monitor, Probe
from .pml_rules import pml_interior_problem, thick_pml_problems
from .sources import Source, amplitude_problems, excitation_problems

MAX_CELLS_PER_AXIS = 2**24
"""Cells along one axis: 16.7 million, far past any grid that fits in memory (which
refuses much smaller ones), small enough that the lowering's per-axis coordinate
arrays (128 MiB at most) never exhaust the host before the memory check (a fuzzed
2D grid of 2**31 - 1 cells per axis did)."""
MAX_STEPS = 10**9
"""Time steps of one run (the step counter is int32); about 30 years at 1 s per step."""


class Domain(EmModel):
    """The simulated box: ``size`` or ``shape`` (cells), with ``spacing``.

    Cells are uniform along each axis. ``size`` is rounded to a whole number of
    cells; the grid's ``extent`` is what is simulated. The box sits with its lower
    corner at ``origin``, or centred on (0, 0, 0) when ``origin`` is not given.
    """

    size: Vec3 | None = Field(None, description="Extent in m along x, y, z (> 0).")
    shape: tuple[int, int, int] | None = Field(None, description="Cells along x, y, z (>= 1).")
    spacing: float | Vec3 = Field(..., description="Cell size in m, one value or per axis.")
    origin: Vec3 | None = Field(None, description="Lower corner in m; default: centred.")

    @field_validator("spacing")
    @classmethod
    def _positive_spacing(cls, v):
        vals = (v,) if isinstance(v, int | float) else v
        if min(vals) <= 0 or not all(math.isfinite(x) for x in vals):
            raise ValueError(f"spacing {v} m must be finite and > 0; give the cell size in m")
        return v

    @field_validator("size")
    @classmethod
    def _positive_size(cls, v):
        if v is not None and (min(v) <= 0 or not all(math.isfinite(x) for x in v)):
            raise ValueError(f"size {v} m must be finite and > 0 along every axis")
        return v

    @field_validator("shape")
    @classmethod
    def _positive_shape(cls, v):
        if v is not None and (min(v) < 1 or max(v) > MAX_CELLS_PER_AXIS):
            raise ValueError(f"shape {v} must have 1 to {MAX_CELLS_PER_AXIS} cells along "
                             "every axis")
        return v

    @model_validator(mode="after")
    def _size_or_shape(self):
        if (self.size is None) == (self.shape is None):
            raise ValueError("give exactly one of 'size' (m) or 'shape' (cells)")
        if self.size is not None:
            for ax, s, d in zip("xyz", self.size, self.spacing3, strict=True):
                if s / d < 0.5:
                    raise ValueError(
                        f"size along {ax} ({s} m) is smaller than half a cell ({d} m); "
                        "enlarge the domain or refine the spacing"
                    )
                if s / d > MAX_CELLS_PER_AXIS:  # also catches s / d = inf
                    raise ValueError(
                        f"size along {ax} ({s} m) at spacing {d} m is {s / d:.3g} cells, more "
                        f"than {MAX_CELLS_PER_AXIS}; coarsen the spacing or shrink the domain"
                    )
        return self

    @property
    def spacing3(self) -> tuple[float, float, float]:
        """(dx, dy, dz) in m."""
        s = self.spacing
        return (float(s),) * 3 if isinstance(s, int | float) else tuple(float(x) for x in s)

    @property
    def cells(self) -> tuple[int, int, int]:
        """Number of cells (nx, ny, nz)."""
        if self.shape is not None:
            return tuple(self.shape)
        return tuple(max(1, round(s / d)) for s, d in zip(self.size, self.spacing3, strict=True))

    @property
    def extent(self) -> tuple[float, float, float]:
        """Simulated size in m (cells times spacing)."""
        return tuple(n * d for n, d in zip(self.cells, self.spacing3, strict=True))

    @property
    def lower(self) -> tuple[float, float, float]:
        """Lower corner in m."""
        if self.origin is not None:
            return tuple(self.origin)
        return tuple(-e / 2 for e in self.extent)

    @property
    def upper(self) -> tuple[float, float, float]:
        """Upper corner in m."""
        return tuple(lo + e for lo, e in zip(self.lower, self.extent, strict=True))


class Structure(EmModel):
    """A geometry filled with a medium. Later structures override earlier ones."""

    geometry: Geometry
    medium: AnyMedium | None = Field(
        None, description="The filling medium; omit for Voxels, which carry their own map."
    )

    @model_validator(mode="after")
    def _medium_given(self):
        if self.medium is None and not isinstance(self.geometry, Voxels):
            raise ValueError(
                f"a {self.geometry.type} structure needs a 'medium' and none is given; "
                "add one, e.g. medium = {type = \"Medium\", eps_r = 4.0}"
            )
        if self.medium is not None and isinstance(self.geometry, Voxels):
            raise ValueError(
                f"a Voxels structure takes its media from Voxels.media, but 'medium' is given "
                f"({self.medium.type}); drop 'medium'"
            )
        return self


class _Scenario(EmModel):
    """Shared I/O of every scenario kind."""

    def to_json(self, indent: int | None = 2) -> str:
        """The scenario as JSON text (unset fields left out)."""
        return self.model_dump_json(indent=indent, exclude_none=True)

    def to_toml(self) -> str:
        """The scenario as TOML text (unset fields left out)."""
        import tomli_w

        return tomli_w.dumps(self.model_dump(mode="json", exclude_none=True))

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write TOML or JSON, chosen by the suffix, atomically; returns the path.

        Missing folders are created; an existing file is replaced only with
        ``overwrite=True`` (:func:`emjax.io.targets.check_output`)."""
        from ..io.atomic import atomic_path
        from ..io.targets import check_output

        path = check_output(path, overwrite=overwrite)
        text = self.to_toml() if path.suffix == ".toml" else self.to_json()
        with atomic_path(path) as tmp:
            tmp.write_text(text)
        return path

    def plot(self, x: float | None = None, y: float | None = None, z: float | None = None,
             ax: Any = None) -> Any:
        """Draw the cross-section at x, y or z = value (m; one of them, default z through
        the centre; FDTD2D: its plane z = 0) with structures by medium, sources, monitors
        and PML, before anything runs; returns the matplotlib Axes (a new Agg figure's
        unless ``ax`` is given). See :func:`emjax.preview.preview`."""
        from ..preview import preview

        return preview(self, x=x, y=y, z=z, ax=ax)


class _GridScenario(_Scenario):
    """What grid kinds (FDTD3D, FDTD2D, FDFD3D) share: a background and structures."""

    @property
    def media(self) -> list[Medium]:
        """The constant media (a dispersive background is in :attr:`pole_media`)."""
        out = [self.background] if isinstance(self.background, Medium) else []
        for s in self.structures:
            ms = s.geometry.media.values() if isinstance(s.geometry, Voxels) else [s.medium]
            out.extend(m for m in ms if isinstance(m, Medium))
        return out

    @property
    def pole_media(self) -> list[PoleMedium]:
        """The dispersive media of the background, the structures and Voxels labels."""
        out = [self.background] if isinstance(self.background, PoleMedium) else []
        for s in self.structures:
            ms = s.geometry.media.values() if isinstance(s.geometry, Voxels) else [s.medium]
            out.extend(m for m in ms if isinstance(m, PoleMedium))
        return out


class _TimeDomain(_GridScenario):
    """Grid kinds stepped in time: ``duration`` or ``steps`` and a ``dt`` property."""

    storage_dtype: Literal["bfloat16", "float16"] | None = Field(
        None, description="E and H stored in 16 bits between half-steps (half the field "
        "memory and traffic), updated in float32 (dtype must be float32); psi, "
        "polarizations and monitor sums stay float32. None: stored in dtype. 'float16' "
        "keeps 3 more bits than 'bfloat16' under a power-of-2 scale set from the "
        "sources' drive (emjax.fdtd.fieldstore); 'bfloat16' has float32's range. It "
        "costs accuracy, most next to point sources: BENCHMARKS.md.")

    @property
    def num_steps(self) -> int:
        """Time steps of the run: ``steps``, or ``duration / dt`` rounded up."""
        if self.steps is not None:
            return self.steps
        return max(1, math.ceil(self.duration / self.dt - 1e-9))


def _background_kind(v) -> str:
    """The background's class: a PoleMedium by its ``type`` tag, else a Medium (whose
    tag may be left out, as in every scenario written before dispersive backgrounds)."""
    kind = v.get("type") if isinstance(v, dict) else getattr(v, "type", None)
    return "PoleMedium" if kind == "PoleMedium" else "Medium"


Background = Annotated[Annotated[Medium, Tag("Medium")] | Annotated[PoleMedium, Tag("PoleMedium")],
                       Discriminator(_background_kind)]
"""A constant Medium or, in FDTD3D, a dispersive PoleMedium filling the domain."""


class FDTD3D(_TimeDomain):
    """A 3D Yee FDTD simulation (seed 001).

    Give ``duration`` (s) or ``steps``. The time step is ``courant`` times the 3D
    Courant limit of the fastest medium present (a PoleMedium counts with eps_inf: its
    update is stable there for any passive poles, :mod:`emjax.fdtd.dispersive`).
    """

    type: Literal["FDTD3D"] = "FDTD3D"
    name: Name = Field("fdtd3d", description="Name used in outputs: 1-100 letters, digits, "
                       "_ - . (not starting with '.').")
    domain: Domain
    background: Background = Field(
        default_factory=Medium, description="Medium filling the domain: a constant Medium or "
        "a dispersive PoleMedium (water, tissue, soil; its poles then run on every cell, "
        "CPML included).")
    structures: list[Structure] = Field(default_factory=list, description="Later ones win.")
    sources: list[Source] = Field(default_factory=list)
    monitors: list[Monitor] = Field(default_factory=list)
    boundary: BoundarySpec = Field(default_factory=CPML, description="Face boundaries.")
    courant: float = Field(0.99, gt=0, le=1, description="Fraction of the Courant limit (0, 1].")
    duration: float | None = Field(None, gt=0, description="Simulated time in s.")
    steps: int | None = Field(None, ge=1, le=MAX_STEPS, description="Number of time steps.")
    dtype: Literal["float32", "float64"] = Field("float32", description="Field precision.")
    storage: Literal["indices", "arrays"] = Field(
        "indices", description="Update coefficients as indices into a table (CIS) or arrays (CAS)."
    )
    cpml_strategy: Literal["auto", "combined", "per_face"] = Field(
        "auto", description="CPML psi terms folded into the fused field update "
        "('combined'), added per face after it ('per_face'), or the backend's fastest "
        "('auto': combined on accelerators; on a CPU z folded, x and y per face)."
    )
    subpixel: bool = Field(
        False, description="Smooth eps at E samples cut by a dielectric surface instead of "
        "staircasing: the anisotropic tensor (harmonic along the surface normal, arithmetic "
        "along the surface) with its off-diagonal couplings (emjax.grid.subpixel, "
        "emjax.fdtd.anisotropic); second order on curved surfaces."
    )
    conformal_pec: bool = Field(
        False, description="Dey-Mittra conformal PEC surfaces (emjax.fdtd.conformal3d) "
        "instead of staircases: second order, stable at the regular time step (every "
        "cut face keeps its free area and is advanced locally implicitly, "
        "emjax.fdtd.conformal_implicit; one small sparse solve per step on the cut "
        "faces). Off by default while it is new. Voxels PEC stays staircased "
        "(a warning); surfaces within a cell of the CPML or the outer walls stay staircased "
        "there; one device only (sharded runs refuse it).")
    port_excitation: Literal["simultaneous", "each"] = Field(
        "simultaneous", description="'simultaneous': every excited port is driven at once "
        "(one run, one set of fields). 'each': one excitation per excited port, the others "
        "loaded by their Z0, batched in one compiled run (emjax.fdtd.excitations): every "
        "column of the S-matrix at once.")
    port_batch: int | None = Field(
        None, ge=1, description="With port_excitation = 'each': excitations advanced together "
        "on the device; default as many as fit its free memory (the rest run in further "
        "groups through the same compiled chunk).")

    @model_validator(mode="after")
    def _check_consistency(self):
        problems = []
        if self.duration is not None and self.steps is not None:
            problems.append(
                f"duration = {self.duration:.6g} s and steps = {self.steps} are both given; "
                "give exactly one of them"
            )
        elif self.duration is None and self.steps is None:
            problems.append(
                "neither 'duration' (s) nor 'steps' is given; give exactly one of them"
            )
        problems += time_step_problems(self)
        problems += _placement_problems(self)
        problems += _dispersive_background_problems(self)
        problems += excitation_problems(self.sources, self.port_excitation)
        problems += amplitude_problems(self.sources, self.dtype)
        problems += storage_problems(self)
        if problems:
            raise ValueError("\n".join(problems))  # one line each
        return self

    # Derived quantities, computed once and passed down to the solver.
    @property
    def dt(self) -> float:
        """Time step in s."""
        dx, dy, dz = self.domain.spacing3
        try:
            eps_mu = min([m.eps_r * m.mu_r for m in self.media]
                          + [m.eps_inf for m in self.pole_media])
            vmax = c0 / math.sqrt(eps_mu)
            return self.courant / (vmax * math.sqrt(dx**-2 + dy**-2 + dz**-2))
        except (OverflowError, ZeroDivisionError):  # absurd spacing or media: the
            return math.nan  # validator refuses these with time_step_problems

    @property
    def faces(self):
        """((x_lo, x_hi), (y_lo, y_hi), (z_lo, z_hi)) boundary objects."""
        return face_boundaries(self.boundary)

    def pml_cells(self) -> tuple[tuple[int, int], ...]:
        """CPML thickness in cells on each face (0 where there is none)."""
        return tuple(
            tuple(b.thickness if isinstance(b, CPML) else 0 for b in pair) for pair in self.faces
        )

    def summary(self) -> str:
        """One line for logs: grid, steps and time step."""
        return (f"{'x'.join(map(str, self.domain.cells))} cells, "
                f"{self.num_steps} steps of dt = {self.dt:.4g} s")

    def run(self, **kwargs) -> Any:
        """Run on whatever device JAX has; see :func:`emjax.fdtd.solver.run`, reached through
        :mod:`emjax.registry`."""
        from .. import registry

        return registry.run(self, **kwargs)

    def estimate(self) -> dict[str, int]:
        """Device bytes the run needs, by item and in ``total``; allocates nothing."""
        from .. import registry

        return registry.estimate(self)


def storage_problems(sim) -> list[str]:
    """16-bit field storage with float32 arithmetic only."""
    if sim.storage_dtype is None or sim.dtype == "float32":
        return []
    return [f"storage_dtype = '{sim.storage_dtype}' needs dtype = 'float32' (16-bit "
            f"storage with float32 updates), got dtype = '{sim.dtype}'; drop storage_dtype "
            "or set dtype = 'float32'"]


def time_step_problems(sim) -> list[str]:
    """dt positive and finite, and the number of steps at most MAX_STEPS (any time-domain
    scenario with ``dt``, ``duration`` and ``steps``)."""
    dt = sim.dt
    if not (math.isfinite(dt) and dt > 0):
        eps_mu = min([m.eps_r * m.mu_r for m in sim.media]
                     + [m.eps_inf for m in getattr(sim, "pole_media", ())])
        return [f"time step dt = {dt} s from spacing {sim.domain.spacing} m and the fastest "
                f"medium (eps_r * mu_r = {eps_mu:.6g}) is not a positive finite number; give "
                "the spacing in m and physical media"]
    if sim.duration is not None and not sim.duration / dt <= MAX_STEPS:
        return [f"duration = {sim.duration:.6g} s is {sim.duration / dt:.3g} steps of dt = "
                f"{dt:.4g} s, more than {MAX_STEPS}; shorten the duration or coarsen the grid"]
    return []


def _dispersive_background_problems(sim: FDTD3D) -> list[str]:
    """What a dispersive (PoleMedium) background cannot run with: each of these reads
    one constant eps_r of the background. (A background whose Re eps(f) <= 0 in the
    sources' band is refused by the lowering, which knows the band.)"""
    if not isinstance(sim.background, PoleMedium):
        return []
    from .monitors import NearToFar
    from .sources import PlaneWave

    out = []
    const = ("give a constant Medium background (eps_r, sigma of eps(f) at your frequency) "
             "for it")
    for i, src in enumerate(sim.sources):
        if isinstance(src, PlaneWave):
            out.append(f"sources[{i}] PlaneWave: the TF/SF incident field is computed in a "
                       "constant background, not a dispersive PoleMedium background; drive "
                       f"the dispersive domain with dipoles or ports, or {const}")
    for i, m in enumerate(sim.monitors):
        if isinstance(m, NearToFar):
            out.append(f"monitors[{i}] NearToFar '{m.name}': the far-field transform needs a "
                       "lossless constant background, not a dispersive PoleMedium background;"
                       f" use DFT monitors for the near field, or {const}")
    if sim.subpixel:
        out.append("subpixel: averaging eps at surfaces needs a constant background eps_r, "
                   "not a dispersive PoleMedium background; set subpixel = false")
    for a, pair in enumerate(sim.faces):
        for side, face in zip(("low", "high"), pair, strict=True):
            if isinstance(face, Mur) and face.eps_r is None:
                out.append(f"boundary: Mur on the {side} {'xyz'[a]} face takes its wave speed "
                           "from the background's eps_r, which a dispersive PoleMedium "
                           "background has no single value of; give that Mur face eps_r "
                           "(Re eps(f) at your frequency) or use CPML")
    return out


def _placement_problems(sim: FDTD3D) -> list[str]:
    """Cross-object rules: PML size, sources and monitors inside the domain and out of PML."""
    out: list[str] = []
    dom = sim.domain
    cells, lower, upper, d = dom.cells, dom.lower, dom.upper, dom.spacing3
    pml = sim.pml_cells()
    out += thick_pml_problems(pml, cells, "CPML")
    for a, pair in enumerate(sim.faces):
        if any(isinstance(b, PMC) for b in pair) and cells[a] < 2:
            out.append(f"boundary: PMC along {'xyz'[a]} needs at least 2 cells")
        if any(isinstance(b, Mur) for b in pair) and cells[a] < 3:
            out.append(f"boundary: Mur along {'xyz'[a]} needs at least 3 cells, the domain "
                       f"has {cells[a]}; enlarge the domain or use PEC or PMC there")
    # The usable interior: inside the domain and outside every CPML.
    in_lo = [lower[a] + pml[a][0] * d[a] for a in range(3)]
    in_hi = [upper[a] - pml[a][1] * d[a] for a in range(3)]
    tol = [1e-9 * d[a] for a in range(3)]

    def where(p) -> str | None:
        for a, ax in enumerate("xyz"):
            if not (lower[a] - tol[a] <= p[a] <= upper[a] + tol[a]):
                return (f"{ax} = {p[a]:.6g} m is outside the domain "
                        f"[{lower[a]:.6g}, {upper[a]:.6g}] m")
            msg = pml_interior_problem(ax, p[a], in_lo[a], in_hi[a], tol[a], "CPML")
            if msg:
                return msg
        return None

    for i, s in enumerate(sim.sources):
        if not hasattr(s, "position"):  # plane waves: TF/SF box checked at set-up;
            pts = [("corner", c) for c in getattr(s, "corners", ())]  # waveguide ports
        else:
            pts = [("position", s.position)]
            size = np.array(getattr(s, "size", (0.0, 0.0, 0.0)))
            if size.any():  # a sheet port: both corners of its box
                c = np.array(s.position)
                pts = [("corner", tuple(c - size / 2)), ("corner", tuple(c + size / 2))]
        name = f" '{s.name}'" if getattr(s, "name", None) else ""
        for label, p in pts:
            msg = where(p)
            if msg:
                pt = ", ".join(f"{float(x):.6g}" for x in p)
                out.append(f"sources[{i}] {s.type}{name}: {label} ({pt}) m: {msg}")
                break
    for i, m in enumerate(sim.monitors):
        pts: list = []
        if isinstance(m, Probe):
            pts = list(m.positions)
        elif isinstance(m, DFTMonitor | FieldSnapshot | FluxMonitor):
            c, s = np.array(m.center), np.array(m.size)
            pts = [tuple(c - s / 2), tuple(c + s / 2)]
        for p in pts:
            msg = where(p)
            if msg:
                pt = ", ".join(f"{float(x):.6g}" for x in p)
                out.append(f"monitors[{i}] {m.type} '{m.name}': point ({pt}) m: {msg}")
                break
    names = [m.name for m in sim.monitors]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        out.append(f"monitors: names must be unique, repeated: {dup}")
    return out


__all__ = ["FDTD3D", "PEC", "Domain", "Structure"]
