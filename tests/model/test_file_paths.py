"""Files a scenario reads (a mesh file, ``Voxels.file``) are found relative to the
scenario file's folder, whatever the working directory; the model stores the absolute
path (so a saved copy or a checkpoint's scenario still finds them), and every error
about such a file names the path it resolved to (issue #19, item 2)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

import emjax as em
from emjax.errors import MeshError, SetupError

DGATD_TOML = """
type = "DGATD"
name = "rel"
steps = 2
[mesh]
type = "file"
path = "{path}"
"""

VOXELS_TOML = """
name = "vox"
steps = 2
[domain]
size = [4e-3, 4e-3, 4e-3]
spacing = 1e-3
[boundary]
type = "PEC"
[[structures]]
[structures.geometry]
type = "Voxels"
spacing = [1e-3, 1e-3, 1e-3]
file = "{path}"
media = {{ 1 = {{ type = "Medium", eps_r = 4.0 }} }}
"""


def _box_mesh(path: Path) -> None:
    pytest.importorskip("meshio")
    from emjax.dga import structured

    structured.box((0.3, 0.2, 0.2), shape=(3, 2, 2)).write(path)


@pytest.fixture
def elsewhere(tmp_path, monkeypatch) -> Path:
    """A scenario folder tmp_path/sub, and the working directory tmp_path/elsewhere."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    return tmp_path / "sub"


def test_mesh_file_is_read_from_the_scenario_folder(elsewhere):
    _box_mesh(elsewhere / "mesh.msh")
    (elsewhere / "s.toml").write_text(DGATD_TOML.format(path="mesh.msh"))
    sim = em.load_scenario(elsewhere / "s.toml")
    assert sim.mesh.path == str(elsewhere / "mesh.msh")
    from emjax.dga.generate import build_mesh

    assert build_mesh(sim.mesh).num_tets == 72
    # the stored scenario (results, checkpoints) keeps the absolute path: it loads from
    # anywhere, as text, and still finds the mesh
    again = em.load_scenario(sim.model_dump_json())
    assert again.mesh.path == str(elsewhere / "mesh.msh") and again == sim


def test_parent_folder_paths_fold(elsewhere):
    _box_mesh(elsewhere.parent / "shared.vtu")
    (elsewhere / "s.toml").write_text(DGATD_TOML.format(path="../shared.vtu"))
    assert em.load_scenario(elsewhere / "s.toml").mesh.path == str(elsewhere.parent /
                                                                   "shared.vtu")


def test_voxel_file_is_read_from_the_scenario_folder(elsewhere):
    labels = np.zeros((2, 2, 2), np.int32)
    labels[0, 0, 0] = 1
    np.save(elsewhere / "head.npy", labels)
    (elsewhere / "v.toml").write_text(VOXELS_TOML.format(path="head.npy"))
    sim = em.load_scenario(str(elsewhere / "v.toml"))
    vox = sim.structures[0].geometry
    assert vox.file == str(elsewhere / "head.npy")
    np.testing.assert_array_equal(vox.label_array(), labels)
    assert json.loads(sim.model_dump_json())["structures"][0]["geometry"]["file"] == vox.file


@pytest.mark.parametrize("text, name", [(DGATD_TOML, "mesh.msh"), (VOXELS_TOML, "head.npy")])
def test_missing_file_of_a_scenario_file_names_the_resolved_path(elsewhere, text, name):
    (elsewhere / "s.toml").write_text(text.format(path=name))
    with pytest.raises(ValidationError) as err:
        em.load_scenario(elsewhere / "s.toml")
    msg = str(err.value)
    assert f"'{elsewhere / name}' does not exist" in msg, msg
    assert "scenario file's folder" in msg


def test_empty_file_of_a_scenario_file_is_refused_at_loading(elsewhere):
    (elsewhere / "mesh.vtu").write_bytes(b"")
    (elsewhere / "s.toml").write_text(DGATD_TOML.format(path="mesh.vtu"))
    with pytest.raises(ValidationError, match=r"mesh\.vtu' is empty \(0 bytes\)"):
        em.load_scenario(elsewhere / "s.toml")


def test_text_and_dicts_keep_paths_relative_to_the_working_directory(elsewhere):
    """A scenario given as text has no folder of its own: its paths stay as written and
    are read from the working directory; errors name the absolute path."""
    sim = em.load_scenario(DGATD_TOML.format(path="mesh.msh"))
    assert sim.mesh.path == "mesh.msh"
    from emjax.dga.generate import build_mesh

    with pytest.raises(MeshError) as err:
        build_mesh(sim.mesh)
    assert f"'{Path.cwd() / 'mesh.msh'}' does not exist" in str(err.value)
    _box_mesh(Path.cwd() / "mesh.msh")
    assert build_mesh(sim.mesh).num_tets == 72
    vox = em.Voxels(spacing=(1e-3,) * 3, file="nowhere.npy", media={})
    with pytest.raises(SetupError) as err:
        vox.label_array()
    assert f"'{Path.cwd() / 'nowhere.npy'}' does not exist" in str(err.value)


def test_damaged_voxel_files_are_refused_with_their_path(tmp_path):
    for name, content in (("empty.npy", b""), ("junk.npy", bytes(range(256)) * 4),
                          ("cut.npy", None)):
        path = tmp_path / name
        if content is None:
            np.save(path, np.zeros((4, 4, 4), np.int32))
            path.write_bytes(path.read_bytes()[:100])
        else:
            path.write_bytes(content)
        vox = em.Voxels(spacing=(1e-3,) * 3, file=str(path), media={})
        with pytest.raises(SetupError, match=re.escape(str(path))):
            vox.label_array()
    np.savez(tmp_path / "two.npz", a=np.zeros((2, 2, 2), np.int32))
    vox = em.Voxels(spacing=(1e-3,) * 3, file=str(tmp_path / "two.npz"), media={})
    with pytest.raises(SetupError, match="npz archive"):
        vox.label_array()
