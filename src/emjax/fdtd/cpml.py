"""CPML slabs: where psi lives and the 1D coefficients that drive it (seed 001).

psi arrays exist only inside the slab of each face that has a CPML, so their memory
and work grow with the PML thickness and never with the interior. Each slab of axis
``a`` carries psi for the two E components tangential to its face (the terms of
their curl that differentiate along ``a``) and likewise for H (Roden and Gedney
2000; Taflove and Hagness 2005, sec. 7.9).

Array entries [start, start + length) along ``axis`` form the slab; every other
axis spans the whole stored grid (z padding included), so slabs of different axes
overlap in edges and corners, each adding its own psi there.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from ..grid.pml import cpml_coefficients, grading

# The curl of component c, as (sign, source component, derivative axis) pairs:
# (curl F)_x = dFz/dy - dFy/dz, and cyclic.
CURL_TERMS: tuple[tuple[tuple[int, int, int], tuple[int, int, int]], ...] = (
    ((+1, 2, 1), (-1, 1, 2)),
    ((+1, 0, 2), (-1, 2, 0)),
    ((+1, 1, 0), (-1, 0, 1)),
)


def tangential(axis: int) -> tuple[int, int]:
    """The two components tangential to faces normal to ``axis``."""
    return tuple(c for c in range(3) if c != axis)


@dataclass(frozen=True)
class Slab:
    """One face's CPML: array entries [start, start + length) along ``axis``."""

    axis: int
    side: str  # "low" or "high"
    start: int
    length: int  # stored entries
    thickness: int = 0  # CPML cells; stored entries beyond them carry zero coefficients

    @property
    def key(self) -> str:
        return f"{'xyz'[self.axis]}_{self.side}"

    def slices(self, shape: tuple[int, int, int]) -> tuple[slice, slice, slice]:
        sl = [slice(0, n) for n in shape]
        sl[self.axis] = slice(self.start, self.start + self.length)
        return tuple(sl)

    def psi_shape(self, shape: tuple[int, int, int]) -> tuple[int, int, int]:
        s = list(shape)
        s[self.axis] = self.length
        return tuple(s)


SLAB_ALIGN = (1, 1, 4)
"""Slabs normal to x, y, z are stored a multiple of this many entries thick; the extra
entries reach into the interior with zero coefficients (psi stays 0 there, and the
correction adds nothing), so alignment changes layout, never results. z slabs, whose
rows along the fastest axis are only the thickness long, are stored a multiple of 4:
mri-coil with a 5-cell CPML ran 26.6 Gcells/s unaligned and 28.7 aligned to 4 (H100,
2026-11-23; x and y alignment changed nothing)."""


def stored_thickness(axis: int, thickness: int, n: int) -> int:
    """Entries a slab of ``thickness`` cells normal to ``axis`` stores (axis length n)."""
    return min(-(-thickness // SLAB_ALIGN[axis]) * SLAB_ALIGN[axis], n)


def build_slabs(shape: tuple[int, int, int], pml_cells) -> tuple[Slab, ...]:
    """Slabs for ((x_lo, x_hi), (y_lo, y_hi), (z_lo, z_hi)) PML thicknesses in cells
    (``plan.pml_cells`` of the lowering's face plans).

    shape: the physical array shape (``YeeGrid.nodes``), so that a high slab ends at
    the wall even where the stored arrays carry z padding beyond it (the padding's
    zero E then plays the wall's implicit zero in the slab's forward differences).
    """
    slabs = []
    for a in range(3):
        for side, t in zip(("low", "high"), pml_cells[a], strict=True):
            if not t:
                continue
            stored = stored_thickness(a, t, shape[a])
            start = 0 if side == "low" else shape[a] - stored
            slabs.append(Slab(a, side, start, stored, t))
    return tuple(slabs)


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class SlabCoefficients:
    """One slab's CPML coefficients (a pytree of 1D arrays of length ``slab.length``).

    bE, cE, kE: b, c and 1/kappa - 1 at E samples (nodes along the slab's axis); bH,
    cH, kH: the same at H samples (half nodes); start: the slab's first index as int32
    data for the in-place per_face corrections of ``update3d``, or None (static).
    """

    bE: object
    cE: object
    kE: object
    bH: object
    cH: object
    kH: object
    start: object = None

    def of(self, field: str) -> tuple:
        """(b, c, 1/kappa - 1) at the samples of ``field`` ("E" or "H")."""
        return (self.bE, self.cE, self.kE) if field == "E" else (self.bH, self.cH, self.kH)


def slab_coefficients(slab: Slab, grading, dt: float, dtype) -> SlabCoefficients:
    """1D arrays (length ``slab.length``) b, c and 1/kappa - 1 for E and H samples.

    E components tangential to the face sit on nodes along the axis, H components on
    half nodes; ``grading`` is the face's :class:`emjax.fdtd.plan.PMLGrading` (m,
    sigma_max, kappa_max, alpha_max, m_alpha); dt in s.
    """
    out = {}
    T = slab.thickness or slab.length
    i = np.arange(slab.length, dtype=np.float64)
    for field, off in (("E", 0.0), ("H", 0.5)):
        if slab.side == "low":
            rho = (T - (i + off)) / T
        else:  # the interface is T cells before the wall, which ends the stored slab
            rho = (i + off - (slab.length - T)) / T
        sigma, kappa, alpha = grading_of(rho, grading)
        b, c = cpml_coefficients(sigma, kappa, alpha, dt)
        out[f"b{field}"] = b.astype(dtype)
        out[f"c{field}"] = c.astype(dtype)
        out[f"k{field}"] = (1.0 / kappa - 1.0).astype(dtype)
    return SlabCoefficients(**out)


def grading_of(rho, g) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sigma, kappa, alpha) of a :class:`emjax.fdtd.plan.PMLGrading` at depths ``rho``."""
    return grading(rho, m=g.m, sigma_max=g.sigma_max, kappa_max=g.kappa_max,
                   alpha_max=g.alpha_max, m_alpha=g.m_alpha)
