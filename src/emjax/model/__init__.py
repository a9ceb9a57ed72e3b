"""The scenario model: pure, validated data (pydantic v2, no JAX)."""

from .base import EmModel
from .boundaries import CPML, PMC, Boundaries
from .geometry import Box, Cylinder, Ellipsoid, Sphere, Voxels
from .load import Scenario, load_scenario
from .media import PEC, Medium, vacuum
from .monitors import DFTMonitor, EnergyMonitor, FieldSnapshot, Probe
from .scenario import FDTD3D, Domain, Structure
from .sources import EdgeSource, PointDipole
from .waveforms import ContinuousWave, GaussianPulse, RickerWavelet

__all__ = [
    "CPML", "FDTD3D", "PEC", "PMC", "Boundaries", "Box", "ContinuousWave", "Cylinder",
    "DFTMonitor", "Domain", "EdgeSource", "Ellipsoid", "EmModel", "EnergyMonitor",
    "FieldSnapshot", "GaussianPulse", "Medium", "PointDipole", "Probe", "RickerWavelet", "Scenario",
    "Sphere", "Structure", "Voxels", "load_scenario", "vacuum",
]
