"""Validation of CAD geometry: a mesh file against the analytic shape it approximates.

Every case returns records ``{"case", "metric", "value", "limit", "bound", "unit", "pass"}``.

- ``stl-sphere``: seed 000's sphere (radius 7.2 cm, eps_r = 4, 32 cm domain, FDTD3D
  with sub-cell averaging, x-polarised plane wave along +z at 1 GHz,
  :func:`emjax.validation.scatter.sphere_scenario`) written as an icosphere STL
  (``trimesh.creation.icosphere``, ``subdivisions`` 5: 20480 facets, vertices on the
  sphere, enclosed volume 0.054% below the ball's) to a temporary folder and given
  as a :class:`~emjax.model.cad.Mesh`. Metrics: (1) the samples of every Yee
  component that the mesh and the analytic :class:`~emjax.model.geometry.Sphere`
  rasterize differently, as a fraction of the sphere's samples of that component
  (limit 0.5%); (2) the volume of the fill fractions (4^3 sub-samples per cell, as
  :mod:`emjax.grid.subpixel` takes them) against the analytic volume 4/3 pi a^3
  (limit 1%); (3) the E- and H-plane bistatic RCS of the mesh run against the
  analytic-sphere run, largest difference over angles within 30 dB of the peak
  (limit 0.1 dB). Default cell 5 mm (64^3, 10-cell CPML; a GPU case). Measured on a
  CPU: 8 mm cells (6-cell CPML): no sample differs, fill volume 0.037% low, RCS
  difference 0.00 dB (33 s, two compilations); 10 mm cells with icosphere 4 (0.22%
  low): 0.03 dB (E) and 0.08 dB (H). The CPU test checks the geometry at 5 mm.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..analysis.nf2ff import to_db
from ..records import Check
from .scatter import sphere_scenario

RADIUS = 0.072
"""Seed 000's sphere radius in m."""


def icosphere_stl(folder: Path, subdivisions: int = 5, radius: float = RADIUS) -> Path:
    """An icosphere of ``radius`` m about the origin written as a binary STL."""
    import trimesh

    path = Path(folder) / f"icosphere-{subdivisions}.stl"
    trimesh.creation.icosphere(subdivisions=subdivisions, radius=radius).export(path)
    return path


def cell_mismatch(sim_a, sim_b) -> dict[str, float]:
    """Per Yee component, the samples filled differently by two scenarios' first
    structure, over the samples ``sim_a`` fills."""
    from ..grid.rasterize import rasterize
    from ..grid.yee import YeeGrid

    d = sim_a.domain
    grid = YeeGrid(cells=d.cells, spacing=d.spacing3, lower=d.lower)
    a = rasterize(grid, sim_a.background, sim_a.structures[:1]).index
    b = rasterize(grid, sim_b.background, sim_b.structures[:1]).index
    return {c: float(((a[c] > 0) != (b[c] > 0)).sum() / max((a[c] > 0).sum(), 1)) for c in a}


def fill_volume(geom, spacing: float, samples: int = 4) -> float:
    """The volume in m^3 of the fill fractions of ``geom`` on cells of ``spacing`` m
    over its bounds (``samples``^3 sub-samples per cell)."""
    from ..grid.cad import inside_grid

    lo, hi = geom.bounds()
    u = (np.arange(samples) + 0.5) / samples - 0.5
    axes = []
    for a in range(3):
        centres = np.arange(math.floor(lo[a] / spacing) - 1, math.ceil(hi[a] / spacing) + 2)
        axes.append((centres[:, None] * spacing + u * spacing).ravel())
    return float(inside_grid(geom, *axes).sum()) * (spacing / samples) ** 3


def rcs_difference(res_a, res_b, window_db: float = 30.0) -> dict[str, float]:
    """{plane: largest |RCS_a - RCS_b| in dB} over E- and H-plane angles 0..180 deg
    where ``res_a``'s RCS is within ``window_db`` of its peak."""
    th = np.radians(np.arange(0.0, 180.5, 1.0))
    out = {}
    for plane, phi in (("E", 0.0), ("H", math.pi / 2)):
        a = to_db(res_a["far"].rcs(th, phi, 1e9))
        b = to_db(res_b["far"].rcs(th, phi, 1e9))
        sel = a >= a.max() - window_db
        out[plane] = float(np.abs(a[sel] - b[sel]).max())
    return out


def stl_sphere(spacing: float = 5e-3, subdivisions: int = 5, thickness: int = 10,
               duration: float | None = None, rcs: bool = True) -> list[Check]:
    """See the module docstring; ``spacing`` in m, ``thickness`` CPML cells; ``rcs``
    False leaves out the two FDTD runs (the geometry checks alone take a second)."""
    case = "stl-sphere"
    ball = sphere_scenario(spacing, subpixel=True, thickness=thickness, duration=duration)
    with tempfile.TemporaryDirectory() as tmp:
        path = icosphere_stl(Path(tmp), subdivisions)
        data = ball.model_dump(mode="json", exclude_none=True)
        data["structures"][0]["geometry"] = {"type": "Mesh", "path": str(path)}
        mesh = type(ball).model_validate(data)
        geom = mesh.structures[0].geometry
        exact = 4 / 3 * math.pi * RADIUS**3
        facets = abs(geom.volume() / exact - 1)
        n_facets = len(geom.triangles())
        cells = cell_mismatch(ball, mesh)
        vol = abs(fill_volume(geom, spacing) / exact - 1)
        if rcs:
            res_ball, res_mesh = ball.run(progress=False), mesh.run(progress=False)
    worst = max(cells, key=cells.get)
    tag = f"{spacing * 1e3:.3g} mm cells, icosphere {subdivisions} ({n_facets} " \
          f"facets, volume {facets:.3%} below the ball's)"
    recs = [Check(case, f"samples rasterized differently from the Sphere, worst component "
                  f"{worst}, {tag}", cells[worst], 0.005, "", cells[worst] <= 0.005),
            Check(case, f"|fill-fraction volume / (4/3 pi a^3) - 1|, {tag}", vol, 0.01, "",
                  vol <= 0.01)]
    for plane, diff in (rcs_difference(res_ball, res_mesh) if rcs else {}).items():
        recs.append(Check(case, f"max |RCS(mesh) - RCS(Sphere)|, {plane}-plane, {tag}",
                          diff, 0.1, "dB", diff <= 0.1))
    return recs


CASES: dict[str, Callable[..., list[Check]]] = {"stl-sphere": stl_sphere}
