"""Mesh input (issue #19, item 3): every failure of meshio or gmsh is a MeshError naming
the file (absolute) and the reason, checked before reading where possible (exists, a
regular file, not empty, a known suffix); meshio's ``sys.exit(1)`` on damaged XML is
caught; sources outside the mesh are refused as probes are; the command line answers
each with exit 2 and one line."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError

import emjax as em
from emjax.cli import main
from emjax.errors import MeshError, SetupError

meshio = pytest.importorskip("meshio")

from emjax.dga import structured  # noqa: E402
from emjax.dga.generate import build_mesh  # noqa: E402
from emjax.dga.mesh import read  # noqa: E402

RANDOM = np.random.default_rng(19).integers(0, 256, 4096, dtype=np.uint8).tobytes()


def _refused(call, *words: str, error: type = MeshError) -> None:
    """``call()`` raises ``error`` whose message holds every one of ``words``."""
    with pytest.raises(error) as err:
        call()
    for w in words:
        assert w in str(err.value), str(err.value)


def _small_box():
    return structured.box((0.3, 0.2, 0.2), shape=(3, 2, 2))


def _damaged(tmp_path, kind: str):
    """A file that meshio cannot read, and the words its MeshError must hold."""
    if kind == "missing.msh":
        return tmp_path / kind, "does not exist"
    path = tmp_path / kind
    if kind == "empty.msh":
        path.write_bytes(b"")
        return path, "is empty (0 bytes)"
    if kind in ("random.msh", "random.vtu"):
        path.write_bytes(RANDOM)
        return path, "could not be read by meshio"
    if kind == "folder.vtu":
        path.mkdir()
        return path, "is not a regular file"
    if kind in ("truncated.vtu", "truncated.msh"):
        _small_box().write(path)
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        return path, "could not be read by meshio"
    if kind == "garbage.vtu":
        path.write_text('<?xml version="1.0"?>\n<VTKFile type="UnstructuredGrid"><Piece>')
        return path, "could not be read by meshio"
    raise AssertionError(kind)


DAMAGED = ["missing.msh", "empty.msh", "random.msh", "random.vtu", "folder.vtu",
           "truncated.vtu", "truncated.msh", "garbage.vtu"]


@pytest.mark.parametrize("kind", DAMAGED)
def test_damaged_mesh_files_raise_mesh_error_naming_the_file(tmp_path, kind, capsys):
    path, reason = _damaged(tmp_path, kind)
    with pytest.raises(MeshError) as err:  # never SystemExit, UnicodeDecodeError, ...
        read(path)
    msg = str(err.value)
    assert f"mesh file '{path}'" in msg and reason in msg, msg
    out = capsys.readouterr()
    assert out.out == out.err == ""  # meshio's own printing is folded into the message


def test_unknown_suffix_is_refused_by_the_model_and_the_reader(tmp_path):
    path = tmp_path / "mesh.txt"
    path.write_bytes(RANDOM)
    with pytest.raises(ValidationError, match=r"suffix '\.txt', which is not a volume mesh"):
        em.MeshFile(path=str(path))
    _refused(lambda: read(path), f"mesh file '{path}' has the suffix '.txt'")
    with pytest.raises(ValidationError, match=r"suffix '\.stl'"):  # surfaces hold no tets
        em.MeshFile(path="part.stl")


def test_known_suffixes_are_meshio_formats():
    from emjax.model.files import MESH_SUFFIXES

    assert set(MESH_SUFFIXES) <= set(meshio.extension_to_filetypes)


def _write(path, points, cells, **cell_data):
    meshio.Mesh(points, cells, cell_data=cell_data).write(path)


def test_meshes_the_solver_cannot_use_name_the_file(tmp_path):
    box = _small_box()
    tri = tmp_path / "surface.vtu"
    _write(tri, box.nodes, [("triangle", box.tets[:, :3])])
    _refused(lambda: read(tri), f"'{tri}' holds no tetrahedra (cells: ['triangle']")
    nan = tmp_path / "nan.vtu"
    nodes = box.nodes.copy()
    nodes[3, 1] = np.nan
    _write(nan, nodes, [("tetra", box.tets)])
    _refused(lambda: read(nan), f"mesh file '{nan}': mesh nodes hold non-finite")
    flat = tmp_path / "flat.vtu"
    nodes = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.0]])
    _write(flat, nodes, [("tetra", np.array([[0, 1, 2, 3]]))])
    _refused(lambda: read(flat), f"mesh file '{flat}': 1 degenerate tetrahedra")
    ok = tmp_path / "box.vtu"
    box.write(ok)
    _refused(lambda: read(ok, region_key="material"), f"'{ok}' has no cell data 'material'")
    mesh = build_mesh(em.MeshFile(path=str(ok), scale=2.0))
    np.testing.assert_allclose(mesh.nodes.max(axis=0), (0.6, 0.4, 0.4))


def test_gmsh_failures_are_mesh_errors(monkeypatch):
    gmsh = pytest.importorskip("gmsh")

    def fail(dim):
        raise Exception("Invalid boundary mesh (overlapping facets) on surface 1")

    monkeypatch.setattr(gmsh.model.mesh, "generate", fail)
    spec = em.SphereMesh(radius=1.0, edge_length=0.5)
    with pytest.raises(MeshError) as err:
        build_mesh(spec)
    msg = str(err.value)
    assert "gmsh could not mesh the sphere at edge_length 0.5 m" in msg, msg
    assert "overlapping facets" in msg and "mesher = 'structured'" in msg
    assert not gmsh.isInitialized()  # finalized after the failure: the next mesh can start


def _sim(**kw):
    return em.DGATD(name="m", mesh=em.BoxMesh(size=(0.3, 0.2, 0.2), edge_length=0.1),
                    steps=2, dtype="float64", **kw)


def _source(position):
    return em.MeshEdgeSource(position=position, waveform=em.GaussianPulse(f0=5e8, fwidth=3e8))


def test_source_outside_the_mesh_is_refused_like_a_probe():
    from emjax.dga.solver import prepare

    sim = _sim(sources=[_source((0.1, 0.1, 0.1)), _source((5.0, 0.1, 0.1))])
    with pytest.raises(SetupError) as err:
        prepare(sim)  # before the power iteration
    msg = str(err.value)
    assert msg.startswith("sources[1] at (5, 0.1, 0.1) m lies outside the mesh"), msg
    assert "bounding box (0, 0, 0) .. (0.3, 0.2, 0.2) m" in msg
    sim = _sim(probes=[em.Probe(name="far", positions=[(0.1, 0.1, 0.1), (0.1, -3.0, 0.1)])])
    with pytest.raises(SetupError, match=r"probes 'far': point \(0.1, -3, 0.1\) m lies "
                                         r"outside the mesh \(bounding box"):
        prepare(sim)


def test_source_on_a_curved_wall_just_off_the_facets_is_snapped():
    """The facets of a meshed cylinder cut inside its surface: a source on the true
    surface lies outside the mesh by far less than half an edge and is kept."""
    from emjax.dga.complex import build
    from emjax.dga.placement import snap_edge, source_inside

    mesh = build_mesh(em.CylinderMesh(radius=0.3, height=0.2, edge_length=0.1))
    cx = build(mesh)
    r = np.hypot(mesh.nodes[:, 0], mesh.nodes[:, 1])
    k = int(np.argmax(r))  # a node on the wall; halfway to the next one along the wall
    phi = math.atan2(mesh.nodes[k, 1], mesh.nodes[k, 0]) + math.pi / 64
    on_wall = (0.3 * math.cos(phi), 0.3 * math.sin(phi), 0.1)
    source_inside(cx, on_wall)  # accepted
    pec = np.zeros(cx.num_edges, bool)
    edge, _ = snap_edge(cx, pec, on_wall, (0, 0, 1))
    assert np.linalg.norm(cx.nodes[cx.edges[edge]].mean(0) - on_wall) < 0.1
    with pytest.raises(SetupError, match="within half an edge"):
        source_inside(cx, (0.45, 0.0, 0.1), "sources[0] at")


def _cli_one_line(capsys, args) -> str:
    """The CLI's error: one line, or (an invalid scenario) a title line and one indented
    line per problem, which must be a single problem here; returned joined."""
    assert main(args) == 2
    err = capsys.readouterr().err
    first, *rest = err.strip().splitlines()
    assert first.startswith("emjax run: error: "), err
    assert not rest or (first.endswith("1 problem in the scenario:") and len(rest) == 1
                        and rest[0].startswith("  ")), err
    assert "Traceback" not in err
    return " ".join([first, *rest])


@pytest.mark.parametrize("kind", ["missing.msh", "random.msh", "truncated.vtu", "garbage.vtu"])
def test_cli_answers_damaged_mesh_files_with_one_line(tmp_path, capsys, kind):
    path, reason = _damaged(tmp_path, kind)
    text = em.DGATD(name="m", mesh=em.MeshFile(path=path.name), steps=2).model_dump_json()
    scenario = tmp_path / "s.json"
    scenario.write_text(text)
    line = _cli_one_line(capsys, ["run", str(scenario), "-o", str(tmp_path / "out.h5")])
    assert str(path) in line and reason in line, line


def test_cli_answers_a_source_outside_the_mesh_with_one_line(tmp_path, capsys):
    scenario = tmp_path / "s.json"
    scenario.write_text(_sim(sources=[_source((0.1, 0.1, 9.0))]).model_dump_json())
    line = _cli_one_line(capsys, ["run", str(scenario), "-o", str(tmp_path / "out.h5")])
    assert "sources[0] at (0.1, 0.1, 9) m lies outside the mesh" in line, line


@pytest.mark.parametrize("kind, args", [
    ("cylinder", dict(rings=1, layers=1)), ("cylinder", dict(rings=2, layers=3)),
    ("cylinder", dict(rings=7, layers=2, radius=0.3, height=2.0)),
    ("box", dict(shape=(1, 1, 1))), ("box", dict(shape=(3, 1, 2))),
    ("box", dict(shape=(4, 5, 3), size=(0.2, 1.0, 3.0)))])
def test_generated_meshes_pass_every_check(kind, args):
    """The structured generators skip TetMesh's checks (structured.generated): their
    meshes, thin, flat or coarse, pass them all, flipped the same tets."""
    from emjax.dga.mesh import TetMesh

    if kind == "cylinder":
        mesh = structured.cylinder(renumber=False, **args)
    else:
        mesh = structured.box(**args)
    checked = TetMesh(mesh.nodes, mesh.tets)  # oriented already: nothing to flip
    assert checked.flipped == 0
    assert np.array_equal(checked.tets, mesh.tets) and np.all(mesh.volumes > 0)
    raw = TetMesh(mesh.nodes, mesh.tets[:, [0, 1, 3, 2]])  # every tet reversed
    assert raw.flipped == mesh.num_tets and np.array_equal(raw.tets, mesh.tets)


@pytest.mark.parametrize("scale", [1e-120, 1e120])
def test_generated_meshes_of_hostile_sizes_are_refused_by_the_checks(scale):
    """Sizes whose volumes underflow or overflow fall back to TetMesh's checks, which
    refuse them as before the generators skipped them."""
    with pytest.raises(SetupError, match=r"degenerate|overflow"):
        structured.box(size=(scale,) * 3, shape=(2, 2, 2))
    with pytest.raises(SetupError, match=r"degenerate|overflow"):
        structured.cylinder(radius=scale, height=scale, rings=2, layers=2, renumber=False)
