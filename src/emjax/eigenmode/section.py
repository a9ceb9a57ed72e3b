"""The cross-section a mode solver reads: media on a uniform 2D Yee grid normal to z.

The waveguide axis is z; the cross-section spans ``nx`` x ``ny`` cells of size
(dx, dy) from ``lower`` = (x0, y0). Every component is stored with the nodes on both
walls (wall nodes of a PEC wall hold zeros), so index (i, j) of a component sits at

    (x0 + (i + ox) dx, y0 + (j + oy) dy)

with the offsets and shapes of :data:`OFFSETS` and :func:`shapes`:

=====  ==========  ==============  ===========================================
comp   (ox, oy)    shape           where
=====  ==========  ==============  ===========================================
Ex     (0.5, 0)    (nx, ny + 1)    x edges (horizontal cell edges)
Ey     (0, 0.5)    (nx + 1, ny)    y edges (vertical cell edges)
Ez     (0, 0)      (nx + 1, ny+1)  nodes (cell corners)
Hx     (0, 0.5)    (nx + 1, ny)    with Ey
Hy     (0.5, 0)    (nx, ny + 1)    with Ex
Hz     (0.5, 0.5)  (nx, ny)        cell centres
=====  ==========  ==============  ===========================================

These are the (x, y) offsets of :data:`emjax.grid.yee.OFFSETS` (Ez, Hx, Hy sit half a
cell further along z in the 3D grid): the first ``nx`` x ``ny`` entries of each array
are the FDTD's own layout of a z plane, whose upper-wall nodes are implicit.

Media: relative permittivity at the E positions, relative permeability at the H
positions (complex allowed: e^{+j omega t}, so a passive medium has Im eps <= 0), and a
PEC mask at the E positions (True: the component is held at zero, a perfect conductor's
tangential E; a zero-thickness strip is a line of Ex edges and Ez nodes).
:func:`cross_section` builds all of them from per-cell arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import SetupError

OFFSETS: dict[str, tuple[float, float]] = {
    "Ex": (0.5, 0.0), "Ey": (0.0, 0.5), "Ez": (0.0, 0.0),
    "Hx": (0.0, 0.5), "Hy": (0.5, 0.0), "Hz": (0.5, 0.5),
}
"""Half-cell offsets (x, y) of each component in the cross-section."""
WALLS = ("pec", "pmc")
"""Allowed boundary conditions on each of the four sides."""
SIDES = ("x_low", "x_high", "y_low", "y_high")
"""The order of :attr:`CrossSection.boundaries`."""


def shapes(cells: tuple[int, int]) -> dict[str, tuple[int, int]]:
    """Array shape of each component on ``cells`` = (nx, ny) cells (module docstring)."""
    nx, ny = cells
    return {c: (nx + int(ox == 0.0), ny + int(oy == 0.0)) for c, (ox, oy) in OFFSETS.items()}


@dataclass(frozen=True)
class CrossSection:
    """Media on the cross-section's Yee grid (module docstring for positions).

    ``eps``: (eps at Ex, at Ey, at Ez), relative, complex allowed; ``mu``: (mu at Hx,
    at Hy, at Hz); ``pec``: boolean masks at (Ex, Ey, Ez), True where E is held at
    zero; ``spacing``: (dx, dy) in m; ``lower``: (x0, y0) in m; ``boundaries``: "pec"
    or "pmc" on (x_low, x_high, y_low, y_high); ``name`` names the section (a port) in
    error messages. Build one with :func:`cross_section`; the constructor checks shapes.
    """

    eps: tuple[np.ndarray, np.ndarray, np.ndarray]
    mu: tuple[np.ndarray, np.ndarray, np.ndarray]
    pec: tuple[np.ndarray, np.ndarray, np.ndarray]
    spacing: tuple[float, float]
    lower: tuple[float, float] = (0.0, 0.0)
    boundaries: tuple[str, str, str, str] = ("pec", "pec", "pec", "pec")
    name: str = "cross-section"

    def __post_init__(self) -> None:
        where = f"cross-section {self.name!r}"
        dx, dy = (float(s) for s in self.spacing)
        if not (np.isfinite(dx) and np.isfinite(dy) and dx > 0 and dy > 0):
            raise SetupError(f"{where}: spacing {self.spacing} m must be two positive "
                             "finite cell sizes (dx, dy)")
        bad = [w for w in self.boundaries if w not in WALLS]
        if len(self.boundaries) != 4 or bad:
            raise SetupError(f"{where}: boundaries {self.boundaries!r} must be four of "
                             f"{WALLS} for {SIDES}")
        want = shapes(self.cells)
        for group, comps in (("eps", "Ex Ey Ez"), ("mu", "Hx Hy Hz"), ("pec", "Ex Ey Ez")):
            arrays = getattr(self, group)
            for comp, arr in zip(comps.split(), arrays, strict=True):
                if np.shape(arr) != want[comp]:
                    raise SetupError(f"{where}: {group} at {comp} has shape {np.shape(arr)}; "
                                     f"{want[comp]} expected on {self.cells} cells")
                if group != "pec" and not np.all(np.isfinite(arr)):
                    raise SetupError(f"{where}: {group} at {comp} holds non-finite values")

    @property
    def cells(self) -> tuple[int, int]:
        """(nx, ny): cells across the section (read off the Ex array's shape)."""
        nx, ny1 = np.shape(self.eps[0])
        return int(nx), int(ny1) - 1

    def coords(self, comp: str) -> tuple[np.ndarray, np.ndarray]:
        """1D x and y coordinates (m) of component ``comp``'s array indices."""
        ox, oy = OFFSETS[comp]
        nx, ny = shapes(self.cells)[comp]
        dx, dy = self.spacing
        return (self.lower[0] + (np.arange(nx) + ox) * dx,
                self.lower[1] + (np.arange(ny) + oy) * dy)


def _edge_mean(cells: np.ndarray, axis: int) -> np.ndarray:
    """Mean of the two cells beside each node line along ``axis`` (one cell at walls)."""
    first = np.take(cells, [0], axis=axis)
    last = np.take(cells, [-1], axis=axis)
    padded = np.concatenate([first, cells, last], axis=axis)
    n = padded.shape[axis]
    a = np.take(padded, np.arange(n - 1), axis=axis)
    b = np.take(padded, np.arange(1, n), axis=axis)
    return 0.5 * (a + b)


def _cell_array(value, cells: tuple[int, int], what: str, name: str, dtype) -> np.ndarray:
    arr = np.asarray(value, dtype=dtype)
    if arr.ndim == 0:
        arr = np.full(cells, arr, dtype=dtype)
    if arr.shape != cells:
        raise SetupError(f"cross-section {name!r}: {what} has shape {arr.shape}; one value "
                         f"per cell, shape {cells}, expected")
    return arr


def cross_section(eps: np.ndarray, spacing: Sequence[float], *, mu=1.0, pec_cells=None,
                  pec_edges: Sequence[np.ndarray | None] | None = None,
                  boundaries: str | Sequence[str] = "pec",
                  lower: Sequence[float] = (0.0, 0.0),
                  name: str = "cross-section") -> CrossSection:
    """A :class:`CrossSection` from per-cell media.

    ``eps``: relative permittivity per cell, shape (nx, ny), complex allowed; each E
    component takes the mean of the cells that touch it (two for Ex and Ey, four for
    Ez: the tangential average, exact for interfaces on cell edges). ``mu``: a scalar
    or per-cell relative permeability (averaged likewise onto Hx, Hy; Hz takes its cell).
    ``pec_cells``: boolean (nx, ny), a perfect conductor filling those cells (every E
    on their edges and corners held at zero); ``pec_edges``: optional boolean masks at
    (Ex, Ey, Ez) (None entries allowed) for zero-thickness conductors, e.g. a microstrip
    strip as Ex edges and Ez nodes on one y line. ``spacing`` = (dx, dy) in m;
    ``boundaries``: one of "pec"/"pmc" for all four sides or four values for (x_low,
    x_high, y_low, y_high); ``lower`` = (x0, y0) in m.
    """
    arr = np.asarray(eps)
    if arr.ndim != 2 or 0 in arr.shape:
        raise SetupError(f"cross-section {name!r}: eps must be a 2D per-cell array (nx, ny); "
                         f"got shape {arr.shape}")
    cells = (int(arr.shape[0]), int(arr.shape[1]))
    dtype = np.complex128 if np.iscomplexobj(arr) else np.float64
    eps_c = _cell_array(arr, cells, "eps", name, dtype)
    mu_arr = np.asarray(mu)
    mu_c = _cell_array(mu_arr, cells, "mu", name,
                       np.complex128 if np.iscomplexobj(mu_arr) else np.float64)
    eps_x = _edge_mean(eps_c, 1)                      # (nx, ny+1)
    eps_y = _edge_mean(eps_c, 0)                      # (nx+1, ny)
    eps_z = _edge_mean(_edge_mean(eps_c, 0), 1)       # (nx+1, ny+1)
    mus = (_edge_mean(mu_c, 0), _edge_mean(mu_c, 1), mu_c)
    want = shapes(cells)
    masks = [np.zeros(want[c], dtype=bool) for c in ("Ex", "Ey", "Ez")]
    if pec_cells is not None:
        p = _cell_array(pec_cells, cells, "pec_cells", name, bool)
        masks[0][:, :-1] |= p
        masks[0][:, 1:] |= p
        masks[1][:-1, :] |= p
        masks[1][1:, :] |= p
        for di in (0, 1):
            for dj in (0, 1):
                masks[2][di:di + cells[0], dj:dj + cells[1]] |= p
    for k, (comp, extra) in enumerate(zip(("Ex", "Ey", "Ez"), pec_edges or (None,) * 3,
                                          strict=True)):
        if extra is None:
            continue
        e = np.asarray(extra, dtype=bool)
        if e.shape != want[comp]:
            raise SetupError(f"cross-section {name!r}: pec_edges at {comp} has shape "
                             f"{e.shape}; {want[comp]} expected")
        masks[k] |= e
    walls = (boundaries,) * 4 if isinstance(boundaries, str) else tuple(boundaries)
    return CrossSection(eps=(eps_x, eps_y, eps_z), mu=mus, pec=tuple(masks),
                        spacing=(float(spacing[0]), float(spacing[1])),
                        lower=(float(lower[0]), float(lower[1])),
                        boundaries=walls, name=name)


__all__ = ["OFFSETS", "SIDES", "WALLS", "CrossSection", "cross_section", "shapes"]
