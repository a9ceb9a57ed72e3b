"""Small scenarios for design and gradient work (issue 22), shared by the ``grad-fdfd``
validation case and the ``grad-fdfd`` benchmark."""

from __future__ import annotations

import numpy as np

from ..constants import eps0
from ..model import Box, Domain, Medium, Structure


def lossy_box(cells: int, pml: int):
    """FDFD3D at 1 GHz on ``cells``^3 cells of 2 cm with a ``pml``-cell PML: a lossy box
    (eps_r 2 - 0.5j, 8 x 8 x 4 cm, 4 cm below the centre) in the default x-polarised
    plane wave along +z; solver to 1e-12 (the finite differences need it)."""
    from ..model.fdfd import FDFD3D, PML, FDFDSolver

    f = 1e9
    lossy = Medium(eps_r=2.0, sigma=0.5 * 2 * np.pi * f * eps0)  # 2 - 0.5j at f
    d = 0.02
    return FDFD3D(domain=Domain(size=(cells * d,) * 3, spacing=d), frequency=f,
                  structures=[Structure(geometry=Box(center=(0, 0, -0.04),
                                                     size=(0.08, 0.08, 0.04)), medium=lossy)],
                  boundary=PML(thickness=pml), rcs=False,
                  solver=FDFDSolver(tol=1e-12, max_iter=4000))



def fdtd_design(cells: int = 24, pml: int = 6, steps: int = 300, source: str = "dipole",
                dtype: str = "float64", spacing: float = 0.01, sigma: float = 0.1):
    """FDTD3D on ``cells``^3 cells of ``spacing`` (1 cm) with a ``pml``-cell CPML, a
    Gaussian pulse (3 GHz centre, 2 GHz width), ``steps`` steps. ``source``: "dipole"
    (an x dipole 5 cells below the centre) or "planewave" (an x-polarised plane wave
    along +z, TF/SF box 2 cells inside the CPML, and a NearToFar box ``far`` at 3 GHz
    one cell inside the CPML, for RCS objectives). A lossy slab (eps_r 2, ``sigma`` S/m,
    6 x 6 x 1 cells) 1.5 cells above the centre. Monitors: a DFT plane ``dft`` of E at
    3 GHz 3 cells above the centre (3 x 3 nodes) and a flux plane ``flux`` 5 cells
    above it (10 x 10 cells). The design region of the gradient checks: the box -3..3 x
    -3..3 x -3..0 cells (:data:`FDTD_REGION`)."""
    from ..model import (
        CPML,
        FDTD3D,
        DFTMonitor,
        FluxMonitor,
        GaussianPulse,
        NearToFar,
        PlaneWave,
        PointDipole,
    )

    d = spacing
    pulse = GaussianPulse(f0=3e9, fwidth=2e9)
    if source == "dipole":
        src = PointDipole(position=(0, 0, -5 * d), polarization="x", waveform=pulse)
    else:
        half = (cells / 2 - pml - 2) * d
        src = PlaneWave(waveform=pulse, box_center=(0, 0, 0), box_size=(2 * half,) * 3)
    lossy = Medium(eps_r=2.0, sigma=sigma)
    return FDTD3D(
        domain=Domain(size=(cells * d,) * 3, spacing=d),
        structures=[Structure(geometry=Box(center=(0, 0, 1.5 * d), size=(6 * d, 6 * d, d)),
                              medium=lossy)],
        sources=[src],
        monitors=[DFTMonitor(name="dft", center=(0, 0, 3 * d), size=(2 * d, 2 * d, 0),
                             components=["Ex", "Ey", "Ez"], frequencies=[3e9]),
                  FluxMonitor(name="flux", center=(0, 0, 5 * d), size=(10 * d, 10 * d, 0),
                              frequencies=[3e9]),
                  *([] if source == "dipole" else
                    [NearToFar(name="far", frequencies=[3e9], margin=1)])],
        boundary=CPML(thickness=pml), steps=steps, dtype=dtype)



FDTD_REGION = ((-0.03, -0.03, -0.03), (0.03, 0.03, 0.0))
"""The design box (m) of :func:`fdtd_design` at its default 1 cm spacing."""

__all__ = ["FDTD_REGION", "fdtd_design", "lossy_box"]
