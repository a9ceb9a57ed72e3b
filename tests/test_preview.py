"""Scenario previews (emjax.preview, ``sim.plot``, ``emjax plot``): what is drawn is what
the scenario holds in the plane. No solver runs; about 4 s on 2 CPU cores.

The artists are found by their gid (``structure:<i>``, ``source:<i>``,
``monitor:<name>``, ``pml:<axis>-<side>``); the expected set is worked out here from
the scenario's own numbers: a structure is in the plane when its bounds straddle it, a
point (source, probe) or a flat monitor when it lies within half a cell of it.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

import emjax as em
from emjax import cli
from emjax.errors import SetupError
from emjax.preview import Plane
from emjax.preview.mesh import cut_polygons
from emjax.scenarios import builtin_names, load_builtin


def drawn(ax) -> Counter:
    """gid -> number of artists carrying it (structures, sources, monitors, PML)."""
    return Counter(a.get_gid() for a in ax.get_children() if a.get_gid())


def expected(sim, z: float) -> set[str]:
    """What the plane z of a grid scenario must show, from the scenario alone."""
    if sim.type == "FDTD2D":
        tol = math.inf  # everything lies in the plane z = 0
    else:
        tol = 0.5 * sim.domain.spacing3[2]
    out = {f"structure:{i}" for i, s in enumerate(sim.structures)
           if s.geometry.bounds()[0][2] <= z <= s.geometry.bounds()[1][2]}
    if sim.type == "FDFD3D":
        return out | {"source:0"}  # the incident plane wave, drawn as its k
    for i, s in enumerate(sim.sources):
        pos = getattr(s, "position", None)
        if pos is None or len(pos) == 2 or abs(pos[2] - z) <= tol:  # plane waves: the
            out.add(f"source:{i}")  # default TF/SF box spans the interior
    for m in sim.monitors:
        if m.type == "Probe":
            hit = any(abs(p[2] - z) <= tol for p in m.positions)
        elif m.type == "NearToFar":
            hit = True  # its default box spans the interior
        elif m.type == "EnergyMonitor":
            hit = False
        else:
            hit = m.center[2] - m.size[2] / 2 - tol <= z <= m.center[2] + m.size[2] / 2 + tol
        if hit:
            out.add(f"monitor:{m.name}")
    return out


@pytest.mark.parametrize("name", builtin_names())
def test_every_builtin_draws_what_lies_in_the_plane_z0(name):
    sim = load_builtin(name)
    ax = sim.plot(z=0)
    got = drawn(ax)
    if sim.type == "DGATD":  # the cylinder cavity's base: all of it background tets
        assert got["background"] == 1 and not sim.regions
        assert not any(g.startswith(("source:", "monitor:")) for g in got), got
        return
    objects = {g for g in got if g.split(":")[0] in ("structure", "source", "monitor")}
    assert objects == expected(sim, 0.0), (name, sorted(objects))
    assert all(got[g] == 1 for g in objects), got  # one artist each
    legend = {t.get_text() for t in ax.get_legend().get_texts()} if objects else set()
    for i in {int(g.split(":")[1]) for g in objects if g.startswith("structure:")}:
        assert em.preview.medium_label(sim.structures[i].medium) in legend
    pml = sum(1 for g in got if g.startswith("pml:"))
    assert pml == (4 if sim.type != "DGATD" and name != "cavity" else 0), got


def test_a_plane_missing_a_structure_source_and_probes_draws_none_of_them():
    sim = load_builtin("dipole-cube")  # sphere |z| <= 35 mm, dipole and probes at z = 0
    got = drawn(sim.plot(z=0.06))
    assert not any(g.startswith(("structure:", "source:")) for g in got), got
    assert "monitor:probe" not in got
    got = drawn(sim.plot(x=0.05))  # through the sphere's centre, off the dipole
    assert {"structure:0", "monitor:dft_xy", "monitor:snap"} <= set(got)
    assert "source:0" not in got and "monitor:probe" not in got


def test_cross_sections_are_the_shapes_cut_by_the_plane(tmp_path):
    """A sphere's disc, an ellipsoid's ellipse, a cylinder along the plane, Voxels from
    a file and a tilted cylinder, each at its place and size, coloured by medium."""
    labels = np.zeros((4, 4, 4), np.int32)
    labels[1:3, 1:3, :] = 2
    np.save(tmp_path / "v.npy", labels)
    glass = em.Medium(eps_r=2.25, name="glass")
    sim = em.FDTD3D(
        domain=em.Domain(size=(0.4, 0.4, 0.4), spacing=0.01), steps=1,
        structures=[
            em.Structure(geometry=em.Sphere(center=(0.1, 0, 0.03), radius=0.05), medium=glass),
            em.Structure(geometry=em.Ellipsoid(center=(-0.1, 0, 0), semi_axes=(0.04, 0.02,
                                                                                0.05)),
                         medium=em.PEC()),
            em.Structure(geometry=em.Cylinder(center=(0, 0.1, 0), radius=0.02, length=0.2,
                                              axis="x"), medium=glass),
            em.Structure(geometry=em.Voxels(origin=(0, -0.12, -0.02), spacing=(0.01,) * 3,
                                            file=str(tmp_path / "v.npy"),
                                            media={2: em.Medium(eps_r=9, name="ceramic")})),
            em.Structure(geometry=em.Cylinder(center=(0, -0.05, 0), radius=0.01, length=0.05,
                                              axis=(1, 1, 0)), medium=glass),
        ],
        sources=[em.PlaneWave(box_size=(0.3, 0.3, 0.3),
                              waveform=em.GaussianPulse(f0=1e9, fwidth=0.5e9))],
        monitors=[em.FluxMonitor(name="flux", center=(0.08, 0, 0), size=(0.12, 0.12, 0.12),
                                 frequencies=[1e9]),
                  em.DFTMonitor(name="above", center=(0, 0, 0.1), size=(0.2, 0.2, 0),
                                frequencies=[1e9])],
        boundary=em.CPML(thickness=5))
    ax = sim.plot(z=0)
    art = {a.get_gid(): a for a in ax.get_children() if a.get_gid()}
    assert art["source:0"].get_bbox().bounds == pytest.approx((-0.15, -0.15, 0.3, 0.3))
    assert art["monitor:flux"].get_bbox().bounds == pytest.approx((0.02, -0.06, 0.12, 0.12))
    assert "monitor:above" not in art
    assert math.isclose(art["structure:0"].radius, math.sqrt(0.05**2 - 0.03**2))
    assert (art["structure:1"].width, art["structure:1"].height) == pytest.approx((0.08, 0.04))
    assert art["structure:2"].get_bbox().bounds == pytest.approx((-0.1, 0.08, 0.2, 0.04))
    assert art["structure:0"].get_facecolor() == art["structure:2"].get_facecolor()  # glass
    image = art["structure:3"].get_array()
    assert image.shape == (4, 4, 4) and image[1:3, 1:3, 3].min() > 0 and image[0, 0, 3] == 0
    assert art["structure:3"].get_extent() == pytest.approx([0, 0.04, -0.12, -0.08])
    hull = art["structure:4"].get_xy()  # a 5 cm x 2 cm stadium along (1, 1)
    assert np.ptp(hull @ np.array([1, 1]) / math.sqrt(2)) == pytest.approx(0.05, abs=0.005)
    legend = {t.get_text() for t in ax.get_legend().get_texts()}
    assert {"glass", "PEC", "ceramic", "PML"} <= legend
    assert "structure:3" not in drawn(sim.plot(z=0.03))  # above the voxels
    with pytest.raises(SetupError, match="exactly one of x, y or z"):
        sim.plot(x=0, z=0)
    with pytest.raises(SetupError, match=r"z = 0.5 m lies outside the domain"):
        sim.plot(z=0.5)


def _area(polygons) -> float:
    return sum(0.5 * abs(np.dot(p[:, 0], np.roll(p[:, 1], -1))
                         - np.dot(p[:, 1], np.roll(p[:, 0], -1))) for p in polygons)


def test_dgatd_slice_is_the_mesh_cut_by_the_plane():
    """The cut tetrahedra of the cylinder cavity (R = 1 m, h = 0.5 m) tile its cross-
    sections: a disc at mid-height, through a node layer, on the base and on the top;
    a 2 x 0.5 m rectangle through the axis."""
    from emjax.dga.generate import build_mesh

    sim = load_builtin("cylinder-cavity")
    mesh = build_mesh(sim.mesh)
    disc = math.pi * 1.0**2  # the ring-triangulated disc's area is within 1 % of it
    layers = np.unique(mesh.nodes[:, 2])
    for z in (0.25, layers[1], 0.0, 0.5):
        polys, tags = cut_polygons(mesh.nodes, mesh.tets, mesh.regions, Plane(2, z, 0.05))
        assert {len(p) for p in polys} <= {3, 4} and len(tags) == len(polys)
        assert _area(polys) == pytest.approx(disc, rel=0.01), z
    polys, _ = cut_polygons(mesh.nodes, mesh.tets, mesh.regions, Plane(1, 0.0, 0.05))
    assert _area(polys) == pytest.approx(2.0 * 0.5, rel=0.01)
    source_z = sim.sources[0].position[2]
    got = drawn(sim.plot(z=source_z))
    assert got["source:0"] == 1 and "monitor:probe" not in got  # probe 8 cm above


def test_2d_draws_its_plane_and_refuses_another():
    sim = load_builtin("cylinder-2d")
    assert drawn(sim.plot()) == drawn(sim.plot(z=0))
    with pytest.raises(SetupError, match="FDTD2D scenario is the plane z = 0"):
        sim.plot(x=0.1)


def test_cli_writes_the_png_and_keeps_an_existing_one(tmp_path, capsys):
    out = tmp_path / "sub" / "preview.png"
    args = ["plot", "dipole-cube", "--z", "0", "--output", str(out)]
    assert cli.main(args) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out.write_bytes(b"kept")
    assert cli.main(args) == 2
    assert "already exists; pass --overwrite" in capsys.readouterr().err
    assert out.read_bytes() == b"kept"
    assert cli.main([*args, "--overwrite"]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert cli.main(["plot", "dipole-cube", "--z", "1", "--output", str(tmp_path / "b.png")]) == 2
    assert "lies outside the domain" in capsys.readouterr().err
    assert not (tmp_path / "b.png").exists()
