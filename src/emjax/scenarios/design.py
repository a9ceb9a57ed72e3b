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


__all__ = ["lossy_box"]
