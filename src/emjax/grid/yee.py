"""The Yee grid: where each field component lives, and the Courant limit.

Axis order is (x, y, z) everywhere, z varying fastest in memory. Every component is
stored in an array of the grid's ``shape``; index (i, j, k) of a component sits at

    lower + (i + ox, j + oy, k + oz) * (dx, dy, dz)

with the half-cell offsets ``OFFSETS[comp]``: E on cell edges, H on cell faces
(Taflove and Hagness, ch. 3). E tangential to a lower face lies on that face (index
0); the upper face's E nodes are implicit zeros (PEC), except along an axis whose
upper face is PMC, where the arrays carry one more node (``extended``) so that the
wall's tangential E exists, and the components staggered along that axis keep an
unused last entry.

The stored z size may exceed the physical one by ``pad_z`` trailing entries (the
FDTD solver rounds it up to the backend's ``fdtd.setup.align_z()`` so that the
x-neighbour offset ny*nz keeps vector loads aligned on GPUs). Those entries lie
beyond the upper z wall: the E update holds all three E components there at zero
(the first of them is the wall's implicit zero made explicit), so the H there stays
zero too and the padded run equals the unpadded one. ``shape`` is the stored shape,
``nodes`` the physical one that every user-visible index refers to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..constants import c0

COMPONENTS = ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz")
OFFSETS: dict[str, tuple[float, float, float]] = {
    "Ex": (0.5, 0.0, 0.0),
    "Ey": (0.0, 0.5, 0.0),
    "Ez": (0.0, 0.0, 0.5),
    "Hx": (0.0, 0.5, 0.5),
    "Hy": (0.5, 0.0, 0.5),
    "Hz": (0.5, 0.5, 0.0),
}


def courant_dt(spacing: tuple[float, float, float], courant: float, vmax: float = c0) -> float:
    """Time step in s: ``courant`` times the 3D Yee stability limit for wave speed vmax."""
    dx, dy, dz = spacing
    return courant / (vmax * math.sqrt(dx**-2 + dy**-2 + dz**-2))


@dataclass(frozen=True)
class YeeGrid:
    """A uniform Yee grid.

    cells: physical cells (nx, ny, nz); spacing: (dx, dy, dz) in m; lower: lower
    corner in m; extended: per axis, whether arrays carry the upper-wall node (PMC);
    pad_z: inert storage entries beyond the upper z wall (never with an extended z).
    """

    cells: tuple[int, int, int]
    spacing: tuple[float, float, float]
    lower: tuple[float, float, float]
    extended: tuple[bool, bool, bool] = (False, False, False)
    pad_z: int = 0

    def __post_init__(self):
        if self.pad_z < 0 or (self.pad_z and self.extended[2]):
            raise ValueError(f"pad_z = {self.pad_z}: must be >= 0, and 0 on an extended z axis")

    @property
    def nodes(self) -> tuple[int, int, int]:
        """Physical array shape: the cells, plus the wall node along extended axes."""
        return tuple(n + int(e) for n, e in zip(self.cells, self.extended, strict=True))

    @property
    def shape(self) -> tuple[int, int, int]:
        """Stored array shape of every component (``nodes`` plus ``pad_z`` along z)."""
        nx, ny, nz = self.nodes
        return (nx, ny, nz + self.pad_z)

    @property
    def num_cells(self) -> int:
        return int(np.prod(self.cells))

    @property
    def cell_volume(self) -> float:
        return float(np.prod(self.spacing))

    def valid_count(self, comp: str, axis: int) -> int:
        """Entries of ``comp`` along ``axis`` that are real unknowns (not the unused last)."""
        n = self.nodes[axis]
        staggered = OFFSETS[comp][axis] == 0.5
        return n - 1 if (staggered and self.extended[axis]) else n

    def axis_coords(self, comp: str, axis: int) -> np.ndarray:
        """Positions in m of ``comp`` along ``axis`` (valid entries only)."""
        n = self.valid_count(comp, axis)
        return self.lower[axis] + (np.arange(n) + OFFSETS[comp][axis]) * self.spacing[axis]

    def coords(self, comp: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return tuple(self.axis_coords(comp, a) for a in range(3))

    def nearest_index(self, comp: str, point) -> tuple[int, int, int]:
        """Index of the ``comp`` sample nearest ``point`` (m), clipped to valid entries."""
        out = []
        for a in range(3):
            u = (point[a] - self.lower[a]) / self.spacing[a] - OFFSETS[comp][a]
            # Ties go up whatever the rounding of u, so that the same physical point
            # snaps to the same edge in grids with different origins.
            i = int(np.floor(u + 0.5 + 1e-6))
            out.append(int(np.clip(i, 0, self.valid_count(comp, a) - 1)))
        return tuple(out)

    def index_range(self, comp: str, lo, hi) -> tuple[slice, slice, slice]:
        """Slices of ``comp`` samples with positions in [lo, hi] (m) per axis.

        A zero-width interval selects the single nearest sample, so planes work.
        """
        out = []
        for a in range(3):
            x = self.axis_coords(comp, a)
            tol = 1e-6 * self.spacing[a]
            sel = np.nonzero((x >= lo[a] - tol) & (x <= hi[a] + tol))[0]
            if sel.size == 0:
                mid = 0.5 * (lo[a] + hi[a])
                i = int(np.argmin(np.abs(x - mid)))
                out.append(slice(i, i + 1))
            else:
                out.append(slice(int(sel[0]), int(sel[-1]) + 1))
        return tuple(out)

    def interpolation(self, comp: str, point) -> tuple[np.ndarray, np.ndarray]:
        """Trilinear interpolation of ``comp`` at ``point``.

        Returns (index, weight): index int array (8, 3), weights (8,) summing to 1.
        """
        lo_idx, frac = [], []
        for a in range(3):
            n = self.valid_count(comp, a)
            u = (point[a] - self.lower[a]) / self.spacing[a] - OFFSETS[comp][a]
            if n == 1:
                lo_idx.append(0)
                frac.append(0.0)
                continue
            u = float(np.clip(u, 0.0, n - 1))
            i0 = min(int(np.floor(u)), n - 2)
            lo_idx.append(i0)
            frac.append(u - i0)
        idx, w = [], []
        for corner in range(8):
            bits = [(corner >> a) & 1 for a in range(3)]
            idx.append([lo_idx[a] + bits[a] if self.valid_count(comp, a) > 1 else lo_idx[a]
                        for a in range(3)])
            w.append(np.prod([frac[a] if bits[a] else 1 - frac[a] for a in range(3)]))
        return np.array(idx, dtype=np.int32), np.array(w, dtype=np.float64)
