"""The DGATD scenario (seed 004): a tetrahedral mesh, media per region, edge sources.

The mesh is described, not stored: a generator with its parameters (``cylinder``,
``box``, ``sphere``; ``mesher = "structured"`` needs nothing, ``"gmsh"`` needs the
``gmsh`` package) or a file any meshio reader takes. The boundary of the mesh is a
perfect electric conductor. The time step is ``safety`` times the stability limit
``2 / sqrt(rho(K))`` found by power iteration when the run is prepared.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from .base import EmModel, Name, Vec3
from .files import scenario_file
from .media import Medium
from .monitors import EnergyMonitor, Probe
from .scenario import MAX_STEPS, _Scenario
from .sources import amplitude_problems
from .waveforms import Waveform

TETS_PER_EDGE_CUBE = 12.0
"""Tetrahedra per edge_length^3 of volume, rounded up from the meshers (Kuhn cubes of
side edge / 1.26 give 12.0; gmsh and the ring mesher fewer): a bound for refusals."""
MAX_TETS = 2**31 - 1
"""Tetrahedra of one mesh (indices are int32)."""


def _tets(volume: float, edge: float) -> float:
    """TETS_PER_EDGE_CUBE * volume / edge^3 without overflow or underflow (inf if huge)."""
    if volume == 0:
        return 0.0
    log = math.log(TETS_PER_EDGE_CUBE * volume) - 3 * math.log(edge)
    return math.exp(log) if log < 700 else math.inf


class CylinderMesh(EmModel):
    """A cylinder along z, base centre at ``center``."""

    type: Literal["cylinder"] = "cylinder"
    radius: float = Field(..., gt=0, description="Radius in m.")
    height: float = Field(..., gt=0, description="Height in m.")
    edge_length: float = Field(..., gt=0, description="Target mean edge length in m.")
    center: Vec3 = Field((0.0, 0.0, 0.0), description="Centre of the base in m.")
    mesher: Literal["structured", "gmsh"] = Field(
        "structured", description="Extruded ring-triangulated disk, or gmsh (optional package).")

    def estimated_tets(self) -> float:
        """Expected number of tetrahedra (volume over a regular tet of edge_length)."""
        return _tets(math.pi * self.radius**2 * self.height, self.edge_length)


class BoxMesh(EmModel):
    """A box with lower corner ``origin``: Kuhn-cut cubes or gmsh."""

    type: Literal["box"] = "box"
    size: Vec3 = Field(..., description="Extent in m along x, y, z (> 0).")
    edge_length: float = Field(..., gt=0, description="Target mean edge length in m "
                                "(structured: cubes of side edge_length / 1.26).")
    origin: Vec3 = Field((0.0, 0.0, 0.0), description="Lower corner in m.")
    mesher: Literal["structured", "gmsh"] = Field("structured", description="Mesher.")

    def estimated_tets(self) -> float:
        """Expected number of tetrahedra (volume over a regular tet of edge_length)."""
        return _tets(math.prod(self.size), self.edge_length)

    @model_validator(mode="after")
    def _positive(self):
        if min(self.size) <= 0:
            raise ValueError(f"size {self.size} m must be > 0 along every axis")
        return self


class SphereMesh(EmModel):
    """A ball (gmsh only)."""

    type: Literal["sphere"] = "sphere"
    radius: float = Field(..., gt=0, description="Radius in m.")
    edge_length: float = Field(..., gt=0, description="Target mean edge length in m.")
    center: Vec3 = Field((0.0, 0.0, 0.0), description="Centre in m.")
    mesher: Literal["gmsh"] = Field("gmsh", description="Only gmsh meshes spheres.")

    def estimated_tets(self) -> float:
        """Expected number of tetrahedra (volume over a regular tet of edge_length)."""
        return _tets(4 / 3 * math.pi * self.radius**3, self.edge_length)


class MeshFile(EmModel):
    """A volume mesh file read by meshio (.msh, .vtu, .xdmf, .mesh, ...)."""

    type: Literal["file"] = "file"
    path: str = Field(..., min_length=1, description="File path; relative to the scenario "
                      "file's folder when loaded from a file (stored absolute), else to the "
                      "working directory.")
    region_key: str | None = Field(None, description="Cell data holding region tags.")
    scale: float = Field(1.0, gt=0, description="Factor taking file units to m.")

    @field_validator("path")
    @classmethod
    def _file(cls, v: str, info: ValidationInfo) -> str:
        return scenario_file(v, info, "mesh file", mesh=True)


MeshSpec = Annotated[CylinderMesh | BoxMesh | SphereMesh | MeshFile, Field(discriminator="type")]


class Region(EmModel):
    """The medium of the tets tagged ``tag``."""

    tag: int = Field(..., description="Region tag in the mesh.")
    medium: Medium


class MeshEdgeSource(EmModel):
    """A source on the mesh edge nearest ``position`` and best aligned with ``direction``.

    ``kind="current"``: a current ``amplitude * waveform(t)`` A along the edge (enters
    Ampere's law through the edge's dual face). ``kind="soft"``: ``amplitude *
    waveform(t)`` V added to the edge's e circulation every step.
    """

    type: Literal["MeshEdgeSource"] = "MeshEdgeSource"
    position: Vec3 = Field(..., description="Point in m; snapped to an edge.")
    direction: Vec3 = Field((0.0, 0.0, 1.0), description="Preferred edge direction.")
    kind: Literal["current", "soft"] = Field("current", description="Current or soft source.")
    amplitude: float = Field(1.0, description="A (current) or V (soft).")
    waveform: Waveform

    @model_validator(mode="after")
    def _direction(self):
        if sum(d * d for d in self.direction) == 0:
            raise ValueError("direction (0, 0, 0) has no direction; give a nonzero vector")
        return self


class MeshSnapshot(EmModel):
    """Tet-averaged e and h every ``interval`` steps (for ParaView:
    emjax.dga.solver.write_snapshots)."""

    name: Name = Field(..., description="Unique snapshot name: 1-100 letters, digits, _ - . "
                       "(not starting with '.').")
    interval: int = Field(..., ge=1, le=10**9, description="Steps between frames (1 .. 1e9).")


_VARIANT_KERNELS = {"auto": "auto", "tets-node-sym-dam": "xla", "tets-tile-sym-dam-pe": "pallas"}
"""The old ``variant`` names that live on as ``kernels``."""


class DGATD(_Scenario):
    """A fractioned DGATD run (seed 004) on a PEC-bounded tetrahedral mesh.

    Give ``duration`` (s) or ``steps``. Tets whose tag no region names get ``background``.
    """

    type: Literal["DGATD"] = "DGATD"
    name: Name = Field("dgatd", description="Name used in outputs: 1-100 letters, digits, "
                       "_ - . (not starting with '.').")
    mesh: MeshSpec
    background: Medium = Field(default_factory=Medium, description="Medium of untagged tets.")
    regions: list[Region] = Field(default_factory=list, description="Media by region tag.")
    sources: list[MeshEdgeSource] = Field(default_factory=list)
    probes: list[Probe] = Field(default_factory=list, description="Points sampled each step.")
    energy: list[EnergyMonitor] = Field(default_factory=list, description="Energy monitors.")
    snapshots: list[MeshSnapshot] = Field(default_factory=list, description="Field frames.")
    safety: float = Field(0.9, gt=0, lt=1, description="Fraction of the stable time step.")
    duration: float | None = Field(None, gt=0, description="Simulated time in s.")
    steps: int | None = Field(None, ge=1, le=MAX_STEPS, description="Number of time steps.")
    dtype: Literal["float32", "float64"] = Field("float32", description="Field precision.")
    formulation: Literal["dense", "sparse"] = Field(
        "dense", description="Batched local matrices (custom) or global sparse (SpMV).")
    kernels: Literal["auto", "xla", "pallas"] = Field(
        "auto", description="Kernels of the dense formulation (emjax.dga.layout): 'xla' "
        "(jitted JAX; the reference and the CPU path), 'pallas' (Triton kernels; on a GPU, "
        "elsewhere only in Pallas' slow interpreter) or 'auto' (on a GPU Pallas when the run "
        "is long enough for its faster steps to repay its longer compilation, else XLA; "
        "XLA elsewhere). Both give the same fields to rounding; with formulation = 'sparse' "
        "only the order of the state follows it.")
    renumber: bool = Field(True, description="Reverse Cuthill-McKee renumbering of the mesh.")

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data):
        """Old scenarios' ``variant`` (a layout name) is refused with its replacement."""
        if isinstance(data, dict) and "variant" in data:
            v = data["variant"]
            now = _VARIANT_KERNELS.get(v) if isinstance(v, str) else None
            fix = (f"write kernels = '{now}'" if now else
                   f"the layout {v!r} was removed (its measurements are in BENCHMARKS.md); "
                   "write kernels = 'auto'")
            raise ValueError(f"variant = {v!r}: the field 'variant' was replaced by 'kernels' "
                             f"('auto', 'xla' or 'pallas'); {fix}")
        return data

    @model_validator(mode="after")
    def _check(self):
        problems = []
        if (self.duration is None) == (self.steps is None):
            problems.append("give exactly one of 'duration' (s) or 'steps'")
        est = getattr(self.mesh, "estimated_tets", lambda: 0.0)()
        if not est <= MAX_TETS:
            problems.append(
                f"mesh: edge_length = {self.mesh.edge_length:g} m makes about {est:.3g} "
                f"tetrahedra, more than {MAX_TETS} (int32 indices); coarsen edge_length")
        problems += amplitude_problems(self.sources, self.dtype)
        tags = [r.tag for r in self.regions]
        dup = sorted({t for t in tags if tags.count(t) > 1})
        if dup:
            problems.append(f"regions: tags given twice: {dup}")
        names = [m.name for m in (*self.probes, *self.energy, *self.snapshots)]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            problems.append(f"probes/energy/snapshots: names must be unique, repeated: {dup}")
        if problems:
            raise ValueError("\n".join(problems))  # one line each
        return self

    def summary(self) -> str:
        """One line for logs: mesh, time span and formulation."""
        m = self.mesh
        what = m.path if m.type == "file" else f"{m.type} ({m.mesher}, edge {m.edge_length:g} m)"
        span = f"{self.steps} steps" if self.steps else f"{self.duration:.4g} s"
        return f"DGATD on {what}, {span}, {self.formulation} {self.dtype}"

    def prepare(self) -> Any:
        """Mesh, operators and time step (:class:`emjax.dga.solver.DGASolver`)."""
        from .. import registry

        return registry.prepare(self)

    def run(self, **kwargs) -> Any:
        """Run on whatever device JAX has; see :meth:`emjax.dga.solver.DGASolver.run`."""
        from .. import registry

        return registry.run(self, **kwargs)

    def estimate(self) -> dict[str, int]:
        """Device bytes the run needs, by item and in ``total`` (builds the mesh only)."""
        from .. import registry

        return registry.estimate(self)


__all__ = ["DGATD", "BoxMesh", "CylinderMesh", "MeshEdgeSource", "MeshFile", "MeshSnapshot",
           "Region", "SphereMesh"]
