"""CAD geometry numerics (emjax.grid.cad): exact inside tests against independent
references, rasterization against the primitives, the shipped car.

- Random points in a torus (non-convex): the ray-parity/winding test against the
  generalized winding number (sum of the triangles' solid angles / 4 pi), and against
  trimesh.contains where rtree is installed; the tensor-grid path equals the scattered
  points path.
- Grazing rays: an octahedron and a box whose vertices, edges and faces lie exactly on
  the sample planes (dyadic coordinates, exact in float32 and float64) against their
  closed analytic sets: equal everywhere, vertices included.
- A box STL rasterizes exactly like the Box primitive on all six components' own
  positions, faces on sample planes included; scale, rotate, translate against a Box
  of the transformed size.
- A box rotated so that its side faces are 1e-9 degrees from vertical (slivers in
  projection) against the analytic rotated box.
- Sub-cell fill fractions of a mesh (one finer tensor grid) equal the point-wise test
  at the same sub-sample points.
- GDS: a rectangle extruded equals a Box; overlapping polygons form their union.
- The shipped car.stl equals its generator and rasterizes within 1% of the primitives.
"""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from emjax.grid import cad
from emjax.grid.rasterize import rasterize
from emjax.grid.yee import COMPONENTS, YeeGrid
from emjax.model import PEC, Box, GdsExtrusion, Medium, Mesh, Structure, vacuum


def winding(tri: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Generalized winding number of points p (N, 3) for triangles tri (T, 3, 3)."""
    out = np.zeros(len(p))
    for k in range(0, len(p), 256):
        r = tri[None] - p[k:k + 256, None, None, :]  # (n, T, 3, 3)
        a, b, c = r[..., 0, :], r[..., 1, :], r[..., 2, :]
        la, lb, lc = (np.linalg.norm(v, axis=-1) for v in (a, b, c))
        det = np.einsum("ntk,ntk->nt", a, np.cross(b, c))
        den = (la * lb * lc + np.einsum("ntk,ntk->nt", a, b) * lc
               + np.einsum("ntk,ntk->nt", a, c) * lb + np.einsum("ntk,ntk->nt", b, c) * la)
        out[k:k + 256] = 2 * np.arctan2(det, den).sum(-1) / (4 * np.pi)
    return out


@pytest.fixture(scope="module")
def torus():
    return trimesh.creation.torus(major_radius=1.0, minor_radius=0.4, major_sections=24,
                                  minor_sections=12)


def test_torus_against_winding_number(torus):
    s = cad.Surface.of(torus.triangles)
    p = np.random.default_rng(0).uniform(-1.5, 1.5, (3000, 3)) * (1, 1, 0.4)
    got = cad.mesh_inside(s, p[:, 0], p[:, 1], p[:, 2])
    w = winding(torus.triangles, p)
    print(f"inside {got.sum()} of {len(p)}; winding numbers in [{w.min():.3f}, {w.max():.3f}]")
    assert np.array_equal(got, np.abs(w) > 0.5)
    assert 300 < got.sum() < 2700  # both kinds of points were tested


def test_against_trimesh_contains(torus):
    pytest.importorskip("rtree", reason="trimesh.contains needs rtree")
    p = np.random.default_rng(1).uniform(-1.5, 1.5, (2000, 3)) * (1, 1, 0.4)
    got = cad.mesh_inside(cad.Surface.of(torus.triangles), *p.T)
    assert np.array_equal(got, torus.contains(p))


def test_grid_path_equals_point_path(torus):
    s = cad.Surface.of(torus.triangles)
    xs, ys, zs = np.linspace(-1.5, 1.5, 31), np.linspace(-1.4, 1.4, 29), np.linspace(-.5, .5, 9)
    grid = cad.mesh_inside_grid(s, xs, ys, zs)
    X, Y, Z = np.meshgrid(xs, ys, zs, indexing="ij")
    assert 0 < grid.mean() < 1 and np.array_equal(grid, cad.mesh_inside(s, X, Y, Z))


def test_grazing_rays_octahedron_and_box():
    r = 0.5  # vertices, edges and faces on the planes of the 1/16 grid
    octa = np.array([[r, 0, 0], [-r, 0, 0], [0, r, 0], [0, -r, 0], [0, 0, r], [0, 0, -r]])
    faces = [[0, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4], [2, 0, 5], [1, 2, 5], [3, 1, 5],
             [0, 3, 5]]
    xs = np.arange(-12, 13) / 16
    X, Y, Z = np.meshgrid(xs, xs, xs, indexing="ij")
    got = cad.mesh_inside_grid(cad.Surface.of(octa[faces]), xs, xs, xs)
    ref = np.abs(X) + np.abs(Y) + np.abs(Z) <= r  # exact in binary
    assert np.array_equal(got, ref)
    box = trimesh.creation.box(extents=(0.5, 0.75, 0.25))
    got = cad.mesh_inside_grid(cad.Surface.of(box.triangles), xs, xs, xs)
    assert np.array_equal(got, (np.abs(X) <= .25) & (np.abs(Y) <= .375) & (np.abs(Z) <= .125))


def _grid(n=(24, 20, 16), d=1 / 64, lower=(-0.1875, -0.15625, -0.125)):
    return YeeGrid(cells=n, spacing=(d, d, d), lower=lower)


def _same(grid, a, b) -> None:
    ra, rb = (rasterize(grid, vacuum, [s]).index for s in (a, b))
    for c in COMPONENTS:
        assert (ra[c] > 0).sum() > 100, c
        assert np.array_equal(ra[c], rb[c]), (c, int((ra[c] != rb[c]).sum()))


def test_box_stl_rasterizes_like_box(tmp_path):
    path = tmp_path / "box.stl"
    # Faces at multiples of 1/128 m: on the E and H sample planes of the 1/64 m grid.
    trimesh.creation.box(extents=(0.25, 0.1875, 0.125),
                         transform=trimesh.transformations.translation_matrix(
                             (1 / 64, -1 / 128, 0))).export(path)
    m = Medium(eps_r=3.0)
    _same(_grid(), Structure(geometry=Mesh(path=str(path)), medium=m),
          Structure(geometry=Box(center=(1 / 64, -1 / 128, 0), size=(0.25, 0.1875, 0.125)),
                    medium=m))


def test_transforms(tmp_path):
    path = tmp_path / "box.obj"
    trimesh.creation.box(extents=(2.0, 1.0, 3.0)).export(path)  # in cm, say
    g = Mesh(path=str(path), scale=0.05, rotate=(0.0, 0.0, 90.0), translate=(0.011, 0.0, -0.013))
    lo, hi = g.bounds()  # x and y swapped by the rotation
    assert np.allclose(hi - lo, (0.05, 0.1, 0.15))
    assert np.allclose((lo + hi) / 2, (0.011, 0, -0.013))
    assert g.volume() == pytest.approx(0.1 * 0.05 * 0.15)
    box = Box(center=(0.011, 0.0, -0.013), size=(0.05, 0.1, 0.15))
    _same(_grid(), Structure(geometry=g, medium=PEC()), Structure(geometry=box, medium=PEC()))
    tilted = Mesh(path=str(path), scale=(0.05, 0.05, 0.05), rotate=(90.0, 0.0, 0.0))
    lo, hi = tilted.bounds()  # y and z swapped
    assert np.allclose(hi - lo, (0.1, 0.15, 0.05))


def test_subcell_fine_grid_equals_points(torus, tmp_path):
    """The sub-sampled fill of a mesh (one tensor-grid inside test) equals the mean of
    the pointwise test at the same sub-samples."""
    from emjax.grid.subpixel import _sampled

    path = tmp_path / "torus.ply"
    torus.export(path)
    g = Mesh(path=str(path), scale=0.1)
    u = (np.arange(4) + 0.5) / 4 - 0.5
    d = np.array([0.02, 0.02, 0.02])
    xs, ys, zs = np.linspace(-0.15, 0.15, 7), np.linspace(-0.15, 0.15, 8), np.linspace(-.05, .05, 5)
    ox, oy, oz = np.array(np.meshgrid(u, u, u, indexing="ij")).reshape(3, -1) * d[:, None]
    pts = g.inside(xs[:, None, None, None] + ox, ys[None, :, None, None] + oy,
                   zs[None, None, :, None] + oz)
    f, _ = _sampled(g, xs, ys, zs, d, 4, 3)
    assert 0 < f.mean() < 1 and np.array_equal(f, pts.reshape(-1, 64).mean(-1))


def _gds(tmp_path, polys, name="TOP"):
    import gdstk

    lib = gdstk.Library(unit=1e-6, precision=1e-9)
    cell = lib.new_cell(name)
    for p, layer in polys:
        cell.add(gdstk.Polygon(p, layer=layer))
    path = tmp_path / "chip.gds"
    lib.write_gds(path)
    return path


def test_gds_rectangle_equals_box(tmp_path):
    # 0.1 x 0.05 m drawn in um: corners on sample planes (multiples of 1/128 m = 7812.5 um).
    path = _gds(tmp_path, [([(-31250, -15625), (62500, -15625), (62500, 31250),
                             (-31250, 31250)], 3)])
    g = GdsExtrusion(path=str(path), layer=3, z0=-0.0625, z1=0.03125)  # read in m
    box = Box(center=(0.015625, 0.0078125, -0.015625), size=(0.09375, 0.046875, 0.09375))
    _same(_grid(), Structure(geometry=g, medium=PEC()), Structure(geometry=box, medium=PEC()))


def test_gds_overlapping_polygons_union(tmp_path):
    tri = [(0, 0), (4, 0), (0, 4)]  # counter-clockwise
    sq = [(1, 1), (1, 3), (3, 3), (3, 1)]  # clockwise, overlapping the triangle
    g = GdsExtrusion(path=str(_gds(tmp_path, [(tri, 1), (sq, 1), ([(9, 9), (9, 10), (10, 9)],
                                                                   2)])),
                     layer=1, z0=0.0, z1=1.0, scale=1e6)  # drawn in um, here m
    xs = np.arange(-2, 19) / 4
    X, Y = np.meshgrid(xs, xs, indexing="ij")
    ref = ((X >= 0) & (Y >= 0) & (X + Y <= 4)) | ((X >= 1) & (X <= 3) & (Y >= 1) & (Y <= 3))
    assert np.array_equal(g.inside(X, Y, 0.5), ref)
    assert not g.inside(X, Y, 1.5).any()


def test_shipped_car(tmp_path):
    from importlib import resources

    from emjax.bench.scatter import car_scenario
    from emjax.scenarios.car import car_mesh

    ref = car_mesh()
    path = resources.files("emjax.scenarios").joinpath("car.stl")
    assert path.stat().st_size < 300_000
    shipped = trimesh.load(str(path))
    assert shipped.is_watertight and len(shipped.faces) == len(ref.faces)
    assert np.allclose(np.sort(shipped.triangles.reshape(-1, 9), axis=0),
                       np.sort(ref.triangles.reshape(-1, 9), axis=0), atol=1e-6)
    sim = car_scenario(full=False)  # 3.6 cm cells
    d = sim.domain
    grid = YeeGrid(cells=d.cells, spacing=d.spacing3, lower=d.lower)
    from emjax.model import Cylinder
    from emjax.scenarios.car import BOXES, WHEELS

    prims = [Structure(geometry=Box(center=c, size=s), medium=PEC()) for c, s in BOXES]
    prims += [Structure(geometry=Cylinder(center=c, radius=0.31, length=0.22, axis="y"),
                        medium=PEC()) for c in WHEELS]
    a = rasterize(grid, sim.background, sim.structures).index
    b = rasterize(grid, sim.background, prims).index
    for c in COMPONENTS:
        diff = ((a[c] > 0) != (b[c] > 0)).sum() / (b[c] > 0).sum()
        assert diff < 0.01, (c, diff)


def test_rotated_box_with_nearly_vertical_faces():
    """Faces tilted 1e-9 degrees from vertical project to slivers whose floating-point
    area cancels: the winding stays exact against the analytic rotated box."""
    from emjax.model.cad import rotation_matrix

    rot = rotation_matrix((0.0, 1e-9, 30.0))
    box = trimesh.creation.box(extents=(1.0, 0.6, 0.4))
    xs = np.linspace(-0.8, 0.8, 41)
    got = cad.mesh_inside_grid(cad.Surface.of(box.triangles @ rot.T), xs, xs, xs)
    p = np.stack(np.meshgrid(xs, xs, xs, indexing="ij"), -1) @ rot  # in the box's frame
    ref = (np.abs(p[..., 0]) <= 0.5) & (np.abs(p[..., 1]) <= 0.3) & (np.abs(p[..., 2]) <= 0.2)
    assert ref.sum() > 1000 and np.array_equal(got, ref)
