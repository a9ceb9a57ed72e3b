"""CAD geometry: a closed surface mesh file (STL, OBJ, PLY, OFF) read through trimesh,
and a GDS layer read through gdstk, extruded between two heights.

The models read their files (cached per file state and parameters) and check them:
a mesh must be watertight (every edge shared by two faces) with consistently wound
faces, unless ``repair = true`` asks trimesh to fill holes, fix normals and merge
vertices first; a GDS cell and layer/datatype must exist. The checks run at
validation when the file can be found, else when the structure is rasterized
(:class:`~emjax.errors.SetupError`). The point-membership numerics live in
:mod:`emjax.grid.cad` (``inside`` reaches them through :mod:`emjax.registry`, as
scenarios reach their solvers, so that the model imports no grid code).
"""

from __future__ import annotations

import functools
import math
import struct
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
from pydantic import Field, ValidationInfo, field_validator, model_validator

from ..errors import SetupError
from .base import EmModel, Vec3
from .files import file_problem, resolved, scenario_file

MESH_FORMATS = (".stl", ".obj", ".ply", ".off")
"""Surface mesh suffixes read by trimesh."""
GDS_FORMATS = (".gds", ".gds2", ".gdsii", ".oas", ".oasis")
"""Layout suffixes read by gdstk (GDSII, OASIS)."""
_Positive = Annotated[float, Field(gt=0)]
# What trimesh and gdstk raise on a file they cannot parse.
_READ_ERRORS = (ValueError, OSError, KeyError, IndexError, TypeError, AttributeError,
                struct.error, UnicodeDecodeError, EOFError, RuntimeError)


def _suffix(v: str, allowed: tuple[str, ...], what: str) -> None:
    if not v.lower().endswith(allowed):
        raise ValueError(f"{what} '{v}' has the suffix '{Path(v).suffix or '(none)'}'; "
                         f"allowed: {', '.join(allowed)}")


def rotation_matrix(degrees: Vec3) -> np.ndarray:
    """R = Rz Ry Rx for rotations by ``degrees`` about the fixed x, then y, then z axes."""
    ax, ay, az = (math.radians(v) for v in degrees)
    cx, sx, cy, sy, cz, sz = (math.cos(ax), math.sin(ax), math.cos(ay), math.sin(ay),
                              math.cos(az), math.sin(az))
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return rz @ ry @ rx


def _stamp(path: Path) -> tuple:
    """What identifies a file's contents for the caches: path, size, mtime."""
    try:
        st = path.stat()
    except (OSError, ValueError):
        return (str(path), None, None)
    return (str(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _read_mesh(stamp: tuple, repair: bool) -> tuple[np.ndarray, float]:
    """(vertices (V, 3), faces (F, 3)) as read, checked, repaired when asked; in the
    file's units. Raises SetupError naming the file."""
    import trimesh

    path = stamp[0]
    problem = file_problem(Path(path), "Mesh.path")
    if problem:
        raise SetupError(f"{problem}; give an STL, OBJ, PLY or OFF file of a closed surface")
    try:
        mesh = trimesh.load(path, force="mesh", process=True)
    except _READ_ERRORS as e:
        raise SetupError(f"Mesh.path '{path}' is not a readable surface mesh ({e}); export "
                         "it as STL, OBJ, PLY or OFF") from e
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise SetupError(f"Mesh.path '{path}' holds no triangles; export the solid's "
                         "surface as STL, OBJ, PLY or OFF")
    if not np.isfinite(mesh.vertices).all():
        raise SetupError(f"Mesh.path '{path}' has non-finite vertex coordinates")
    if repair:
        mesh.merge_vertices()
        mesh.update_faces(mesh.nondegenerate_faces())
        try:
            trimesh.repair.fill_holes(mesh)
            trimesh.repair.fix_normals(mesh)
        except ImportError as e:  # trimesh's repair walks the face graph with networkx
            raise SetupError(f"Mesh.path '{path}': repair = true needs networkx ({e}); "
                             "pip install networkx") from e
    open_edges = _open(mesh)
    done = " after repair (fill_holes, fix_normals, merge_vertices)" if repair else ""
    fix = ("; close the surface in the CAD tool" if repair else
           "; close the surface in the CAD tool, or set repair = true")
    if open_edges:
        raise SetupError(f"Mesh.path '{path}' is not watertight{done}: {open_edges} edges "
                         f"are not shared by exactly two faces{fix}")
    if not mesh.is_winding_consistent:
        redo = "" if repair else ", or set repair = true"
        raise SetupError(f"Mesh.path '{path}': its faces are not consistently wound{done} "
                         f"(the inside is ambiguous); orient them in the CAD tool{redo}")
    if not abs(mesh.volume) > 0:
        raise SetupError(f"Mesh.path '{path}' encloses no volume ({len(mesh.faces)} faces); "
                         "give a solid's surface")
    tri = np.asarray(mesh.vertices, np.float64)[np.asarray(mesh.faces)]
    tri.flags.writeable = False
    return tri, abs(float(mesh.volume))


def _open(mesh) -> int:
    """Edges not shared by exactly two faces (holes, T-junctions, non-manifold)."""
    from trimesh.grouping import group_rows

    return int(len(mesh.edges_sorted) - 2 * len(group_rows(mesh.edges_sorted,
                                                           require_count=2)))


class Mesh(EmModel):
    """A closed surface mesh from a file (STL, OBJ, PLY, OFF), placed by ``scale``,
    then ``rotate``, then ``translate``: x_m = R(rotate) (scale * x_file) + translate."""

    type: Literal["Mesh"] = "Mesh"
    path: str = Field(..., description="Surface mesh file (.stl, .obj, .ply, .off); relative "
                      "to the scenario file's folder when loaded from a file (stored "
                      "absolute), else to the working directory.")
    scale: _Positive | tuple[_Positive, _Positive, _Positive] = Field(
        1.0, description="Factor(s) from the file's units to m, one or per axis (> 0), "
        "e.g. 1e-3 for a file in mm.")
    rotate: Vec3 = Field((0.0, 0.0, 0.0), description="Rotation in degrees about the fixed "
                         "x, then y, then z axis (right-handed), applied after scaling.")
    translate: Vec3 = Field((0.0, 0.0, 0.0), description="Shift in m, applied last.")
    repair: bool = Field(False, description="Let trimesh merge vertices, fill holes and fix "
                         "normals before the watertightness check.")

    @field_validator("path")
    @classmethod
    def _path(cls, v: str, info: ValidationInfo) -> str:
        _suffix(v, MESH_FORMATS, "Mesh.path")
        return scenario_file(v, info, "Mesh.path")

    @model_validator(mode="after")
    def _readable(self):
        if file_problem(resolved(self.path), "Mesh.path") is None:  # else at rasterization
            try:
                self.triangles()
            except SetupError as e:
                raise ValueError(str(e)) from None
        return self

    def cache_key(self) -> tuple:
        """What the surface depends on: the file's state and the parameters."""
        return ("Mesh", _stamp(resolved(self.path)), self.scale, self.rotate,
                self.translate, self.repair)

    def triangles(self) -> np.ndarray:
        """The placed triangles, (T, 3, 3) float64 in m (read-only)."""
        return _placed(self.cache_key())

    def volume(self) -> float:
        """Enclosed volume in m^3."""
        _, vol = _read_mesh(_stamp(resolved(self.path)), self.repair)
        return vol * float(np.prod(np.broadcast_to(self.scale, 3)))

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) corners in m of the placed surface's bounding box."""
        t = self.triangles()
        return t.min(axis=(0, 1)), t.max(axis=(0, 1))

    def inside(self, x, y, z):
        """Whether each point (x, y, z in m, broadcasting arrays) is inside the closed
        surface or on it (the exact ray test of :mod:`emjax.grid.cad`)."""
        from ..registry import entry

        return entry("Mesh", "inside")(self, x, y, z)


@functools.lru_cache(maxsize=8)
def _placed(key: tuple) -> np.ndarray:
    _, stamp, scale, rotate, translate, repair = key
    tri, _ = _read_mesh(stamp, repair)
    out = (tri * np.asarray(scale, np.float64)) @ rotation_matrix(rotate).T
    out = out + np.asarray(translate, np.float64)
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=8)
def _read_gds(stamp: tuple) -> object:
    import gdstk

    path = stamp[0]
    problem = file_problem(Path(path), "GdsExtrusion.path")
    if problem:
        raise SetupError(f"{problem}; give a GDSII (.gds) or OASIS (.oas) layout")
    try:
        return (gdstk.read_oas(path, unit=1.0) if path.lower().endswith((".oas", ".oasis"))
                else gdstk.read_gds(path, unit=1.0))
    except _READ_ERRORS as e:
        raise SetupError(f"GdsExtrusion.path '{path}' is not a readable layout ({e})") from e


class GdsExtrusion(EmModel):
    """The polygons of one layer/datatype of a GDSII or OASIS cell (references
    flattened, paths as their outlines), extruded from z0 to z1."""

    type: Literal["GdsExtrusion"] = "GdsExtrusion"
    path: str = Field(..., description="Layout file (.gds or .oas); relative to the scenario "
                      "file's folder when loaded from a file (stored absolute).")
    cell: str | None = Field(None, description="Cell name; omit when the file has one "
                             "top-level cell.")
    layer: int = Field(..., ge=0, le=65535, description="GDS layer number.")
    datatype: int = Field(0, ge=0, le=65535, description="GDS datatype number.")
    z0: float = Field(..., description="Lower face in m.")
    z1: float = Field(..., description="Upper face in m (> z0).")
    scale: _Positive = Field(1.0, description="Factor on the layout's coordinates (read in "
                             "m) before the shift, e.g. 1000 for a layout drawn 1000x small.")
    translate: tuple[float, float] = Field((0.0, 0.0), description="In-plane shift in m.")

    @field_validator("path")
    @classmethod
    def _path(cls, v: str, info: ValidationInfo) -> str:
        _suffix(v, GDS_FORMATS, "GdsExtrusion.path")
        return scenario_file(v, info, "GdsExtrusion.path")

    @model_validator(mode="after")
    def _check(self):
        if not self.z1 > self.z0:
            raise ValueError(f"z1 = {self.z1} m must exceed z0 = {self.z0} m")
        if file_problem(resolved(self.path), "GdsExtrusion.path") is None:
            try:
                self.polygons()
            except SetupError as e:
                raise ValueError(str(e)) from None
        return self

    def cache_key(self) -> tuple:
        """What the extruded polygons depend on: the file's state and the parameters."""
        return ("GdsExtrusion", _stamp(resolved(self.path)), self.cell, self.layer,
                self.datatype, self.scale, self.translate)

    def polygons(self) -> tuple[np.ndarray, ...]:
        """The layer's polygons, each (n, 2) in m after scale and shift."""
        return _gds_polygons(self.cache_key())

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) corners in m of the extrusion's bounding box."""
        pts = np.concatenate(self.polygons())
        return (np.array([*pts.min(axis=0), self.z0]), np.array([*pts.max(axis=0), self.z1]))

    def inside(self, x, y, z):
        """Whether each point (x, y, z in m, broadcasting arrays) lies in a polygon of the
        layer (or on its edge) with z0 <= z <= z1."""
        from ..registry import entry

        return entry("GdsExtrusion", "inside")(self, x, y, z)


@functools.lru_cache(maxsize=8)
def _gds_polygons(key: tuple) -> tuple[np.ndarray, ...]:
    _, stamp, cell, layer, datatype, scale, translate = key
    lib = _read_gds(stamp)
    path = stamp[0]
    cells = {c.name: c for c in lib.cells}
    if cell is None:
        tops = [c.name for c in lib.top_level()]
        if len(tops) != 1:
            raise SetupError(f"GdsExtrusion.path '{path}' has {len(tops)} top-level cells "
                             f"({', '.join(tops[:20]) or 'none'}); name one in 'cell'")
        cell = tops[0]
    if cell not in cells:
        raise SetupError(f"GdsExtrusion.cell '{cell}' is not in '{path}'; its cells: "
                         f"{', '.join(sorted(cells)[:20]) or 'none'}")
    c = cells[cell]
    polys = c.get_polygons(layer=layer, datatype=datatype)
    if not polys:
        have = sorted({(p.layer, p.datatype) for p in c.get_polygons()})
        listed = ", ".join(f"{a}/{b}" for a, b in have[:40]) or "none"
        raise SetupError(f"GdsExtrusion: cell '{cell}' of '{path}' has no polygons on "
                         f"layer/datatype {layer}/{datatype}; its layers/datatypes: {listed}")
    shift = np.asarray(translate, np.float64)
    out = tuple(np.asarray(p.points, np.float64) * scale + shift for p in polys)
    for p in out:
        p.flags.writeable = False
    return out


__all__ = ["GDS_FORMATS", "MESH_FORMATS", "GdsExtrusion", "Mesh", "rotation_matrix"]
