"""Seed 000's dielectric sphere as an :class:`~emjax.model.fdfd.FDFD3D` scenario.

A sphere of radius 7.2 cm and eps_r = 4 in a 32 cm cubic domain, lit at 1 GHz by the
default x-polarised plane wave along +z, with a PML inside the domain. Both the FDFD
validation (:mod:`emjax.validation.fdfd`) and the FDFD benchmark (:mod:`emjax.bench.fdfd`)
build it here, so that neither imports the other.
"""

from __future__ import annotations

from ..model import Domain, Medium, Sphere, Structure
from ..model.fdfd import FDFD3D, PML, FDFDSolver

RADIUS = 0.072
"""Sphere radius in m."""
EPS_R = 4.0
"""Sphere relative permittivity."""
FREQ = 1e9
"""Frequency in Hz."""
SIZE = 0.32
"""Edge of the cubic domain in m (PML included)."""


def sphere_scenario(spacing: float, *, thickness: int = 10, tol: float = 1e-4,
                    storage: str = "auto", method: str = "cocg", size: float = SIZE,
                    precision: str = "complex128", preconditioner: str = "auto",
                    subpixel: bool = False) -> FDFD3D:
    """The seed's sphere with cells of ``spacing`` m (default solver: separable storage,
    COCG preconditioned by fastdiag); ``subpixel`` smooths the sphere's surface."""
    return FDFD3D(
        name="sphere-rcs",
        domain=Domain(size=(size, size, size), spacing=spacing),
        frequency=FREQ,
        structures=[Structure(geometry=Sphere(radius=RADIUS), medium=Medium(eps_r=EPS_R))],
        boundary=PML(thickness=thickness),
        storage=storage, precision=precision, subpixel=subpixel,
        solver=FDFDSolver(method=method, tol=tol, max_iter=20000,
                          preconditioner=preconditioner),
    )


__all__ = ["EPS_R", "FREQ", "RADIUS", "SIZE", "sphere_scenario"]
