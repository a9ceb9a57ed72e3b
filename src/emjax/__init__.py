"""emjax: GPU-accelerated Maxwell solvers in JAX.

Import the scenario classes from here; every solver runs on whatever device JAX has
(CPU, one GPU, many GPUs).
"""

from __future__ import annotations

from .constants import c0, eps0, eta0, mu0
from .errors import ConvergenceError, EmjaxError, InstabilityError, ResourceError, SetupError
from .model import (
    CPML,
    FDTD3D,
    PEC,
    PMC,
    Boundaries,
    Box,
    ContinuousWave,
    Cylinder,
    DFTMonitor,
    Domain,
    EdgeSource,
    Ellipsoid,
    EnergyMonitor,
    FieldSnapshot,
    GaussianPulse,
    Medium,
    PointDipole,
    Probe,
    RickerWavelet,
    Sphere,
    Structure,
    Voxels,
    load_scenario,
    vacuum,
)

__version__ = "0.1.0"


def __getattr__(name: str):
    # Results pulls in h5py and matplotlib lazily: `import emjax` stays light.
    if name in ("Results", "MonitorData"):
        from . import results

        return getattr(results, name)
    raise AttributeError(f"module 'emjax' has no attribute {name!r}")


__all__ = [
    "CPML", "FDTD3D", "PEC", "PMC", "Boundaries", "Box", "ContinuousWave", "ConvergenceError",
    "Cylinder", "DFTMonitor", "Domain", "EdgeSource", "Ellipsoid", "EmjaxError",
    "EnergyMonitor", "FieldSnapshot", "GaussianPulse", "InstabilityError", "Medium",
    "MonitorData", "PointDipole", "Probe", "ResourceError", "Results", "RickerWavelet",
    "SetupError", "Sphere", "Structure", "Voxels", "c0", "eps0", "eta0", "load_scenario",
    "mu0", "vacuum",
]
