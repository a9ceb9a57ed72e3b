"""The state an FDTD run carries from step to step (3D and 2D), as a JAX pytree.

Times: E^n at n dt, H^(n-1/2) at (n - 1/2) dt after n steps. Fields are on the Yee
grid's edges (E, V/m) and faces (H, A/m); shapes are the stored grid's, z padding
included (:mod:`emjax.grid.yee`). In 2D, ``E`` and ``H`` hold only the components of
the polarization, as (nx, ny) arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class FDTDState:
    """E, H: tuples of field components (V/m, A/m); psi_E, psi_H: CPML (or split-field)
    auxiliary arrays on the PML slabs only, keyed by slab; dft: per DFT monitor,
    component -> (nf, n1, n2, n3) complex running sums (field x s); aux: per plane
    wave, its 1D incident grid (e, h); n2f: per NearToFar monitor, the (nf, ...) surface
    sums; n2f_inc: per NearToFar monitor, the incident spectrum along the 1D grid;
    n: the step count (int32); disp: per dispersive box, its polarizations
    ``{"P": ..., "J": ...}`` (:mod:`emjax.fdtd.dispersive`; P/eps0 and J/eps0 at step n),
    empty (no leaves, so checkpoints without dispersive media are unchanged) otherwise;
    cut: with conformal PEC, (q^{n-1},) the cut faces' explicit circulation term of the
    previous step (:mod:`emjax.fdtd.conformal_implicit`), else empty; scratch: with the
    one-pass GPU kernel (:mod:`emjax.fdtd.pallas2d`), the buffers its next step writes
    into (the three field components, the four psi arrays; their contents are spent),
    else empty."""

    E: tuple
    H: tuple
    psi_E: Any
    psi_H: Any
    dft: list
    aux: list
    n2f: list
    n2f_inc: list
    n: jax.Array
    disp: tuple = ()
    cut: tuple = ()
    scratch: tuple = ()
