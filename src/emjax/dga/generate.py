"""Meshes from a scenario's mesh description: structured (NumPy) or gmsh generators, files.

gmsh is optional: it is imported only when a ``mesher = "gmsh"`` mesh is asked for.
gmsh's realised mean edge differs from its requested characteristic length (about
1.3 times for tetrahedra); :func:`gmsh_mesh` meshes once, measures the mean edge and
meshes again with the length scaled so that ``edge_length`` is the mean edge obtained.
"""

from __future__ import annotations

import numpy as np

from ..errors import MeshError, SetupError
from . import structured
from .mesh import TetMesh, compact, mean_edge, read


def build_mesh(spec) -> TetMesh:
    """A TetMesh (not yet renumbered) from a CylinderMesh, BoxMesh, SphereMesh or MeshFile."""
    kind = spec.type
    if kind == "file":
        return read(spec.path, spec.region_key, spec.scale)
    if getattr(spec, "mesher", "structured") == "gmsh":
        return gmsh_mesh(spec)
    if kind == "cylinder":
        # the ring mesh's mean edge is about 1.25 times its ring spacing
        h = spec.edge_length / 1.25
        return structured.cylinder(spec.radius, spec.height, rings=max(1, round(spec.radius / h)),
                                   layers=max(1, round(spec.height / h)), center=spec.center,
                                   renumber=False)
    if kind == "box":
        h = spec.edge_length / 1.26  # Kuhn edges h, h sqrt2, h sqrt3: mean about 1.26 h
        return structured.box(spec.size, edge_length=h, origin=spec.origin)
    raise SetupError(f"mesh type '{kind}' needs mesher = 'gmsh'")


def _gmsh():
    try:
        import gmsh
    except (ImportError, OSError) as e:  # OSError: missing shared libraries (libGLU, X11)
        raise SetupError(f"mesher = 'gmsh' needs the gmsh package, which did not load ({e}); "
                         "`pip install gmsh` or use mesher = 'structured'") from e
    return gmsh


def _gmsh_once(spec, h: float) -> TetMesh:
    """One gmsh meshing at characteristic length ``h`` (m); whatever gmsh raises (its
    Python API raises a bare ``Exception`` with its last error), a mesh without
    tetrahedra or one :class:`TetMesh` refuses is a :class:`MeshError` naming the shape
    and the length."""
    gmsh = _gmsh()
    try:
        return _gmsh_generate(gmsh, spec, h)
    except MeshError:
        raise
    except Exception as e:  # gmsh's own errors are plain Exception; SetupError: mesh checks
        raise MeshError(f"gmsh could not mesh the {spec.type} at edge_length "
                        f"{spec.edge_length:g} m (characteristic length {h:g} m): "
                        f"{type(e).__name__}: {e}; change edge_length or use "
                        "mesher = 'structured'") from e


def _gmsh_generate(gmsh, spec, h: float) -> TetMesh:
    gmsh.initialize(interruptible=False)
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.model.add("emjax")
        occ = gmsh.model.occ
        if spec.type == "cylinder":
            cx, cy, cz = spec.center
            occ.addCylinder(cx, cy, cz, 0, 0, spec.height, spec.radius)
        elif spec.type == "box":
            occ.addBox(*spec.origin, *spec.size)
        elif spec.type == "sphere":
            occ.addSphere(*spec.center, spec.radius)
        occ.synchronize()
        gmsh.option.setNumber("Mesh.MeshSizeMin", h)
        gmsh.option.setNumber("Mesh.MeshSizeMax", h)
        gmsh.option.setNumber("Mesh.Algorithm3D", 1)
        gmsh.model.mesh.generate(3)
        tags, coords, _ = gmsh.model.mesh.getNodes()
        nodes = coords.reshape(-1, 3)
        index = np.full(int(tags.max()) + 1, -1, np.int64)
        index[tags.astype(np.int64)] = np.arange(tags.size)
        types, _, conn = gmsh.model.mesh.getElements(dim=3)
        tets = [c.reshape(-1, 4) for t, c in zip(types, conn, strict=True) if t == 4]
        if not tets:
            raise MeshError(f"gmsh made no tetrahedra of the {spec.type} at characteristic "
                            f"length {h:g} m; change edge_length or use mesher = 'structured'")
        tets = index[np.concatenate(tets).astype(np.int64)]
    finally:
        gmsh.finalize()
    return compact(nodes, tets)


def gmsh_mesh(spec) -> TetMesh:
    """gmsh mesh of a cylinder, box or sphere whose mean edge is ``spec.edge_length``."""
    h = spec.edge_length
    first = _gmsh_once(spec, h)
    got = mean_edge(first.nodes, first.tets)
    return _gmsh_once(spec, h * h / got)
