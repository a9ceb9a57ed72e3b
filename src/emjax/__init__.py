"""emjax: GPU-accelerated Maxwell solvers in JAX.

Import the scenario classes from here; every solver runs on whatever device JAX has
(CPU, one GPU, many GPUs). Names load on first use, so that ``import emjax`` (and the
kernel modules below it) pull in neither pydantic nor JAX until they are needed.
``dir(emjax)`` lists the public names only (no import leftovers such as ``importlib``):
no ``from __future__ import annotations`` here, and the import machinery is imported
under a private name.
"""

import importlib as _importlib

__version__ = "0.1.0"

_LAZY = {
    **dict.fromkeys(("c0", "eps0", "eta0", "mu0"), "constants"),
    **dict.fromkeys(
        ("AdviceWarning", "CheckpointError", "ConvergenceError", "EmjaxError", "EmjaxWarning",
         "InstabilityError",
         "MeshError", "OutputError", "ResourceError", "SetupError"),
        "errors",
    ),
    **dict.fromkeys(
        ("CPML", "FDTD3D", "Mur", "PEC", "PMC", "Boundaries", "Box", "ContinuousWave", "Cylinder",
         "DFTMonitor", "Domain", "EdgeSource", "Ellipsoid", "EnergyMonitor", "FieldSnapshot",
         "FluxMonitor", "GaussianPulse", "LumpedPort", "Medium", "NearToFar", "PlaneWave",
         "PointDipole", "Probe", "RickerWavelet", "Sphere", "Structure", "Voxels",
         "Mesh", "GdsExtrusion", "WaveguidePort",
         "load_scenario", "vacuum"),
        "model",
    ),
    **dict.fromkeys(("DGATD", "BoxMesh", "CylinderMesh", "MeshEdgeSource", "MeshFile", "MeshSnapshot", "Region", "SphereMesh"), "model"),  # noqa: E501
    **dict.fromkeys(("FDTD2D", "Boundaries2D", "Circle", "Domain2D", "LineSource", "Polygon", "Rectangle", "SplitPML", "Structure2D"), "model"),  # noqa: E501
    **dict.fromkeys(("FDFD3D", "PML", "FDFDSolver"), "model"),
    **dict.fromkeys(("ColeColeMedium", "ColeColeTerm", "DebyePole", "DrudePole", "LorentzPole",
                     "PoleMedium"), "model.dispersion"),
    **dict.fromkeys(("METALS", "TISSUES", "PoleFit", "fit_poles", "metal", "tissue", "water"),
                    "materials"),
    **dict.fromkeys(("Results", "MonitorData"), "results"),
    "run": "registry",
    "enable_compilation_cache": "driver.compile_cache",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(_importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'emjax' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The lazy names, ``__version__`` and the subpackages imported so far (public
    globals); private helpers and module dunders are left out."""
    public = {k for k in globals() if not k.startswith("_")}
    return sorted({*public, *_LAZY, "__version__"})
