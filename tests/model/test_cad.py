"""CAD geometry in the model: files found like Voxels.file, bad input refused with a
message naming the structure, the file and the fix (issue 21's bad-input line), before
any rasterization.

- A non-watertight STL: refused at load naming ``structures[0].geometry``, the path
  and ``repair = true``; with ``repair = true`` trimesh closes it (volume restored).
- Inconsistently wound faces: refused, repaired with ``repair``.
- Garbage and truncated files under mesh and layout suffixes, wrong suffixes,
  non-positive scales, NaN shifts, z1 <= z0: one clear error each (fuzz).
- GDS: a missing file, an unknown cell (names the cells), a layer/datatype with no
  polygons (names those that exist), several top cells without ``cell``.
- A scenario with a relative mesh path round-trips through TOML from another folder.
"""

from __future__ import annotations

import numpy as np
import pytest
import trimesh
from pydantic import ValidationError

import emjax as em
from emjax.errors import SetupError
from emjax.model import GdsExtrusion, Mesh

SCENARIO = """
name = "cad"
steps = 2
[domain]
size = [0.04, 0.04, 0.04]
spacing = 4e-3
[boundary]
type = "PEC"
[[structures]]
geometry = {{ type = "Mesh", path = "{path}"{extra} }}
medium = {{ type = "Medium", eps_r = 2.0 }}
"""


def _open_box(path):
    box = trimesh.creation.box(extents=(0.02, 0.02, 0.02))
    box.update_faces(np.arange(10))  # two triangles gone: a hole
    box.export(path)
    return path


def test_non_watertight_refused_then_repaired(tmp_path):
    _open_box(tmp_path / "open.stl")
    (tmp_path / "s.toml").write_text(SCENARIO.format(path="open.stl", extra=""))
    with pytest.raises(ValidationError) as e:
        em.load_scenario(tmp_path / "s.toml")
    msg = str(e.value)
    print(msg)
    assert "structures[0].geometry" in msg and str(tmp_path / "open.stl") in msg
    assert "not watertight" in msg and "repair = true" in msg
    pytest.importorskip("networkx", reason="trimesh's repair needs networkx")
    (tmp_path / "s.toml").write_text(SCENARIO.format(path="open.stl", extra=", repair = true"))
    sim = em.load_scenario(tmp_path / "s.toml")
    assert sim.structures[0].geometry.volume() == pytest.approx(8e-6)


def test_inconsistent_winding(tmp_path):
    box = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    faces = box.faces.copy()
    faces[:2] = faces[:2, ::-1]
    trimesh.Trimesh(box.vertices, faces, process=False).export(tmp_path / "w.obj")
    with pytest.raises(ValidationError, match=r"not consistently wound.*repair = true"):
        Mesh(path=str(tmp_path / "w.obj"))
    pytest.importorskip("networkx", reason="trimesh's repair needs networkx")
    assert Mesh(path=str(tmp_path / "w.obj"), repair=True).volume() == pytest.approx(1.0)


def test_missing_file_at_rasterization(tmp_path):
    g = Mesh(path=str(tmp_path / "gone.stl"))  # not loaded from a file: checked at use
    with pytest.raises(SetupError, match=r"gone\.stl' does not exist"):
        g.bounds()


@pytest.mark.parametrize("suffix", [".stl", ".obj", ".ply", ".off", ".gds", ".oas"])
def test_fuzz_garbage_files(tmp_path, suffix):
    rng = np.random.default_rng(abs(hash(suffix)) % 2**32)
    for k, blob in enumerate([rng.bytes(200), b"solid x\nfacet normal 0 0 1\n", b"\x00" * 84,
                              b"v 0 0 0\nv 1 0 0\nf 1 2 3\n"]):
        path = tmp_path / f"f{k}{suffix}"
        path.write_bytes(blob)
        with pytest.raises(ValidationError) as e:
            if suffix in (".gds", ".oas"):
                GdsExtrusion(path=str(path), layer=1, z0=0.0, z1=1.0)
            else:
                Mesh(path=str(path))
        assert str(path) in str(e.value)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"path": "a.step"}, "suffix '.step'"),
    ({"path": "a.stl", "scale": 0.0}, "greater than 0"),
    ({"path": "a.stl", "scale": (1.0, -1.0, 1.0)}, "greater than 0"),
    ({"path": "a.stl", "translate": (0.0, float("nan"), 0.0)}, "finite"),
])
def test_bad_mesh_fields(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        Mesh(**kwargs)


def _library(tmp_path, cells=("TOP",)):
    import gdstk

    lib = gdstk.Library()
    for name in cells:
        c = lib.new_cell(name)
        c.add(gdstk.rectangle((0, 0), (1, 1), layer=5, datatype=2))
        c.add(gdstk.rectangle((2, 0), (3, 1), layer=7))
    path = tmp_path / "lay.gds"
    lib.write_gds(path)
    return str(path)


def test_gds_errors(tmp_path):
    path = _library(tmp_path)
    with pytest.raises(ValidationError, match=r"layer/datatype 5/0; its layers/datatypes: "
                       r"5/2, 7/0"):
        GdsExtrusion(path=path, layer=5, z0=0.0, z1=1e-3)
    with pytest.raises(ValidationError, match=r"cell 'NOPE' is not in .*its cells: TOP"):
        GdsExtrusion(path=path, cell="NOPE", layer=5, datatype=2, z0=0.0, z1=1e-3)
    with pytest.raises(ValidationError, match=r"z1 = 0\.0 m must exceed z0 = 0\.001 m"):
        GdsExtrusion(path=path, layer=5, datatype=2, z0=1e-3, z1=0.0)
    with pytest.raises(SetupError, match="does not exist"):
        GdsExtrusion(path=str(tmp_path / "none.gds"), layer=5, z0=0.0, z1=1.0).bounds()
    two = _library(tmp_path, cells=("A", "B"))
    with pytest.raises(ValidationError, match=r"2 top-level cells .*name one in 'cell'"):
        GdsExtrusion(path=two, layer=7, z0=0.0, z1=1.0)
    g = GdsExtrusion(path=two, cell="B", layer=5, datatype=2, z0=0.0, z1=1e-3, scale=1e6)
    lo, hi = g.bounds()  # 1 um drawn, read in m, scaled by 1e6
    assert np.allclose(lo, (0, 0, 0)) and np.allclose(hi, (1, 1, 1e-3))


def test_relative_path_round_trip(tmp_path, monkeypatch):
    trimesh.creation.box(extents=(0.02, 0.02, 0.02)).export(tmp_path / "b.stl")
    (tmp_path / "s.toml").write_text(SCENARIO.format(path="b.stl", extra=", scale = 0.5"))
    monkeypatch.chdir("/")
    sim = em.load_scenario(tmp_path / "s.toml")
    assert sim.structures[0].geometry.path == str(tmp_path / "b.stl")
    again = em.load_scenario(sim.to_toml())
    assert again == sim and again.structures[0].geometry.volume() == pytest.approx(1e-6)
