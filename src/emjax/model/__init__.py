"""The scenario model: pure, validated data (pydantic v2, no JAX)."""

from .base import EmModel
from .boundaries import CPML, PMC, Boundaries, Mur
from .dga import (
    DGATD,
    BoxMesh,
    CylinderMesh,
    MeshEdgeSource,
    MeshFile,
    MeshSnapshot,
    Region,
    SphereMesh,
)
from .fdfd import FDFD3D, PML, FDFDSolver
from .geometry import Box, Cylinder, Ellipsoid, GdsExtrusion, Mesh, Sphere, Voxels
from .load import Scenario, load_scenario
from .media import PEC, Medium, vacuum
from .monitors import DFTMonitor, EnergyMonitor, FieldSnapshot, FluxMonitor, NearToFar, Probe
from .scenario import FDTD3D, Domain, Structure
from .scenario2d import (
    FDTD2D,
    Boundaries2D,
    Circle,
    Domain2D,
    LineSource,
    Polygon,
    Rectangle,
    SplitPML,
    Structure2D,
)
from .sources import EdgeSource, LumpedPort, PlaneWave, PointDipole, WaveguidePort
from .waveforms import ContinuousWave, GaussianPulse, RickerWavelet

__all__ = [
    "CPML",
    "DGATD",
    "FDFD3D",
    "FDTD2D",
    "FDTD3D",
    "PEC",
    "PMC",
    "PML",
    "Boundaries",
    "Boundaries2D",
    "Box",
    "BoxMesh",
    "Circle",
    "ContinuousWave",
    "Cylinder",
    "CylinderMesh",
    "DFTMonitor",
    "Domain",
    "Domain2D",
    "EdgeSource",
    "Ellipsoid",
    "EmModel",
    "EnergyMonitor",
    "FDFDSolver",
    "FieldSnapshot",
    "FluxMonitor",
    "GaussianPulse",
    "GdsExtrusion",
    "LineSource",
    "LumpedPort",
    "Medium",
    "Mesh",
    "MeshEdgeSource",
    "MeshFile",
    "MeshSnapshot",
    "Mur",
    "NearToFar",
    "PlaneWave",
    "PointDipole",
    "Polygon",
    "Probe",
    "Rectangle",
    "Region",
    "RickerWavelet",
    "Scenario",
    "Sphere",
    "SphereMesh",
    "SplitPML",
    "Structure",
    "Structure2D",
    "Voxels",
    "WaveguidePort",
    "load_scenario",
    "vacuum",
]
