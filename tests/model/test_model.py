"""The scenario model: exact TOML/JSON round trips, derived quantities, geometry, bad input.

Pure pydantic and NumPy, no JAX: every test runs in well under a second.

* Round trip: one scenario holding every component type is written to TOML and JSON (as
  text and as files) and read back; the loaded model must equal the original exactly
  (``==`` compares every float bit for bit, and the floats are chosen not to be round).
* Derived quantities: ``dt = courant / (c_max sqrt(dx^-2 + dy^-2 + dz^-2))`` with ``c_max``
  from the smallest ``eps_r mu_r`` present, ``num_steps = ceil(duration / dt)``, and the
  domain's cells, extent and corners, against values computed here by hand.
* Geometry: ``inside()`` of each primitive at chosen points in and out, an oblique
  cylinder's ``bounds()`` against its closed form and sampled interior points, and
  ``Voxels.sample`` (labels inside, -1 outside).
* Bad input: one test per case; each asserts the error type and that the message names the
  field (its location) and the offending value.
"""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys

import numpy as np
import pydantic
import pytest

from emjax.constants import c0
from emjax.errors import SetupError
from emjax.model import (
    CPML,
    FDTD3D,
    PEC,
    PMC,
    Boundaries,
    Box,
    ContinuousWave,
    Cylinder,
    DFTMonitor,
    Domain,
    EdgeSource,
    Ellipsoid,
    EnergyMonitor,
    FieldSnapshot,
    GaussianPulse,
    Medium,
    PointDipole,
    Probe,
    RickerWavelet,
    Sphere,
    Structure,
    Voxels,
    load_scenario,
)

# ---------------------------------------------------------------------------------------
# A scenario with every component type
# ---------------------------------------------------------------------------------------

EVERY_TYPE = {
    "FDTD3D", "Domain", "Structure", "Medium", "PEC", "Box", "Sphere", "Cylinder",
    "Ellipsoid", "Voxels", "GaussianPulse", "RickerWavelet", "ContinuousWave", "PointDipole",
    "EdgeSource", "Probe", "FieldSnapshot", "DFTMonitor", "EnergyMonitor", "CPML", "PMC",
    "Boundaries",
}

VOXEL_LABELS = np.array([[[0, 1, 2], [2, 1, 0]], [[1, 1, 0], [0, 2, 7]]], dtype=np.int32)


def every_component(tmp_path, boundary=None) -> FDTD3D:
    """A scenario using every model class; floats are deliberately not round."""
    npy = tmp_path / "labels.npy"
    np.save(npy, VOXEL_LABELS)
    lossy = Medium(
        eps_r=2.123456789, mu_r=1.0987654321, sigma=0.123456789e-3, sigma_m=3.21987654e-2,
        name="lossy",
    )
    metal = PEC(name="metal")
    if boundary is None:
        boundary = Boundaries(
            x=CPML(thickness=7, m=3.25, sigma_max=12.3456789, kappa_max=2.71828,
                   alpha_max=0.0123456789, m_alpha=1.1),
            y=(PEC(), PMC()),
            z=(CPML(thickness=5), PEC(name="ground")),
        )
    return FDTD3D(
        name="every-component",
        domain=Domain(
            size=(31.2345678e-3, 29.8765432e-3, 27.6543219e-3),
            spacing=(0.987654321e-3, 1.01234567e-3, 0.999999991e-3),
            origin=(-15.6172839e-3, -14.9382716e-3, -13.8271609e-3),
        ),
        background=Medium(eps_r=1.000589, name="air"),
        structures=[
            Structure(geometry=Box(center=(0.123456789e-3, -0.2e-3, 0.3e-3),
                                   size=(2.3456789e-3, math.inf, 0.0)), medium=lossy),
            Structure(geometry=Sphere(center=(1.1e-3, 2.2e-3, -3.3e-3), radius=1.23456789e-3),
                      medium=metal),
            Structure(geometry=Cylinder(center=(0.1e-3, 0.2e-3, 0.3e-3), radius=0.54321e-3,
                                        length=3.3333333e-3, axis=(1.0, 1.0, 0.123456789)),
                      medium=lossy),
            Structure(geometry=Cylinder(radius=0.4e-3, length=2.2e-3, axis="y"), medium=metal),
            Structure(geometry=Ellipsoid(center=(-1e-3, 0.0, 1e-3),
                                         semi_axes=(1.1111e-3, 2.2222e-3, 3.3333e-3)),
                      medium=Medium(eps_r=7.77777, name="ceramic")),
            Structure(geometry=Voxels(origin=(-0.98765e-3, 0.0, 0.5e-3),
                                      spacing=(0.5e-3, 0.6543e-3, 0.7e-3),
                                      labels=VOXEL_LABELS.tolist(),
                                      media={1: lossy, 2: PEC()})),
            Structure(geometry=Voxels(spacing=(0.333e-3, 0.444e-3, 0.555e-3), file=str(npy),
                                      media={1: Medium(eps_r=3.14159, sigma=0.271828)})),
        ],
        sources=[
            PointDipole(position=(0.123456789e-3, -0.987654321e-3, 0.5e-3), polarization="z",
                        amplitude=1.23456789e-9,
                        waveform=GaussianPulse(f0=1.23456789e9, fwidth=0.456789e9,
                                               offset=4.5678, phase=0.314159)),
            PointDipole(position=(0.0, 0.0, 0.0), polarization="x",
                        waveform=RickerWavelet(fp=2.3456789e9, delay=0.87654321e-9)),
            EdgeSource(position=(1e-3, -1e-3, 0.0), polarization="y", kind="current",
                       amplitude=0.0123456789, waveform=RickerWavelet(fp=1.9876543e9)),
            EdgeSource(position=(-1e-3, 1e-3, 0.0), polarization="z", kind="voltage",
                       amplitude=1.23456789, resistance=73.123456,
                       waveform=ContinuousWave(frequency=0.987654321e9, ramp=1.23456789e-9,
                                               phase=-0.5)),
        ],
        monitors=[
            Probe(name="probe", positions=[(0.0, 0.0, 0.0), (1.23456789e-3, -2.3456789e-3, 0.0)],
                  components=["Ez", "Hx"]),
            FieldSnapshot(name="snap.z0", center=(0.1e-3, 0.0, 0.0),
                          size=(5.4321e-3, 6.789e-3, 0.0), components=["Ex", "Ey"], interval=3),
            DFTMonitor(name="dft_box", size=(2.3456e-3, 0.0, 3.4567e-3),
                       frequencies=[0.987654321e9, 1.23456789e9]),
            EnergyMonitor(name="energy", interval=2),
        ],
        boundary=boundary,
        courant=0.987654321,
        duration=1.23456789e-9,
        dtype="float64",
        storage="arrays",
        cpml_strategy="per_face",
    )


def _type_names(obj) -> set[str]:
    """Class names of every model object nested in ``obj``."""
    out: set[str] = set()
    if isinstance(obj, pydantic.BaseModel):
        out.add(type(obj).__name__)
        for name in type(obj).model_fields:
            out |= _type_names(getattr(obj, name))
    elif isinstance(obj, list | tuple):
        for x in obj:
            out |= _type_names(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            out |= _type_names(x)
    return out


def test_scenario_uses_every_component_type(tmp_path):
    sim = every_component(tmp_path)
    missing = EVERY_TYPE - _type_names(sim)
    assert not missing, f"the round-trip scenario lacks {sorted(missing)}"


def test_round_trip_toml_text(tmp_path):
    sim = every_component(tmp_path)
    text = sim.to_toml()
    loaded = load_scenario(text)
    assert loaded == sim
    assert loaded.to_toml() == text


def test_round_trip_json_text(tmp_path):
    sim = every_component(tmp_path)
    text = sim.to_json()
    loaded = load_scenario(text)
    assert loaded == sim
    assert loaded.to_json() == text


def test_round_trip_one_line_json(tmp_path):
    # A one-line JSON string longer than any file name is text, not a path.
    sim = every_component(tmp_path)
    text = sim.to_json(indent=None)
    assert "\n" not in text and len(text) > 1000
    assert load_scenario(text) == sim


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_round_trip_file(tmp_path, suffix):
    sim = every_component(tmp_path)
    path = sim.save(tmp_path / f"scenario{suffix}")
    text = path.read_text()
    assert text.lstrip().startswith("{") == (suffix == ".json")
    loaded = load_scenario(path)
    assert loaded == sim
    assert load_scenario(str(path)) == sim
    # The voxel file is still found and read.
    np.testing.assert_array_equal(loaded.structures[-1].geometry.label_array(), VOXEL_LABELS)


@pytest.mark.parametrize(
    "boundary",
    [CPML(thickness=3, sigma_max=0.123456789, kappa_max=1.5), PEC(), PMC()],
    ids=["cpml", "pec", "pmc"],
)
def test_round_trip_single_boundary(tmp_path, boundary):
    sim = every_component(tmp_path, boundary=boundary)
    assert load_scenario(sim.to_toml()) == sim
    assert load_scenario(sim.to_json()) == sim


def test_round_trip_keeps_exact_floats(tmp_path):
    sim = every_component(tmp_path)
    for text in (sim.to_toml(), sim.to_json()):
        loaded = load_scenario(text)
        assert loaded.structures[0].medium.sigma == 0.123456789e-3
        assert loaded.domain.spacing == (0.987654321e-3, 1.01234567e-3, 0.999999991e-3)
        assert loaded.structures[0].geometry.size[1] == math.inf
        assert loaded.dt == sim.dt
        assert loaded.num_steps == sim.num_steps


# ---------------------------------------------------------------------------------------
# Derived quantities
# ---------------------------------------------------------------------------------------

DX, DY, DZ = 0.987654321e-3, 1.23456789e-3, 0.345678912e-3


def _uniform_sim(*structures, courant=0.9, **kw) -> FDTD3D:
    kw.setdefault("duration", 1.23456789e-10)
    return FDTD3D(
        domain=Domain(size=(10.3e-3, 20.1e-3, 3.1e-3), spacing=(DX, DY, DZ)),
        boundary=PEC(), structures=list(structures), courant=courant, **kw,
    )


def test_domain_cells_extent_lower_centred():
    dom = Domain(size=(10.3e-3, 20.1e-3, 3.1e-3), spacing=(DX, DY, DZ))
    # 10.3/0.98765 = 10.43, 20.1/1.23457 = 16.28, 3.1/0.34568 = 8.97
    assert dom.cells == (10, 16, 9)
    assert dom.extent == pytest.approx((10 * DX, 16 * DY, 9 * DZ), rel=1e-15)
    assert dom.lower == pytest.approx((-5 * DX, -8 * DY, -4.5 * DZ), rel=1e-15)
    assert dom.upper == pytest.approx((5 * DX, 8 * DY, 4.5 * DZ), rel=1e-15)


def test_domain_lower_at_origin():
    origin = (-1.23456789e-3, 2.3456789e-3, 0.0)
    dom = Domain(size=(10.3e-3, 20.1e-3, 3.1e-3), spacing=(DX, DY, DZ), origin=origin)
    assert dom.lower == origin
    assert dom.upper == pytest.approx(
        (origin[0] + 10 * DX, origin[1] + 16 * DY, origin[2] + 9 * DZ), rel=1e-15
    )


def test_domain_from_shape_and_scalar_spacing():
    dom = Domain(shape=(7, 1, 12), spacing=0.123456789e-3)
    assert dom.cells == (7, 1, 12)
    assert dom.spacing3 == (0.123456789e-3,) * 3
    assert dom.extent == pytest.approx((7 * 0.123456789e-3, 0.123456789e-3, 12 * 0.123456789e-3))


def test_dt_vacuum_non_uniform_spacing():
    sim = _uniform_sim()
    expected = 0.9 / (c0 * math.sqrt(DX**-2 + DY**-2 + DZ**-2))
    assert sim.dt == pytest.approx(expected, rel=1e-14)


def test_dt_uses_fastest_medium():
    slow = Structure(geometry=Sphere(radius=1e-3), medium=Medium(eps_r=4.0, mu_r=2.0))
    fast = Structure(geometry=Box(size=(1e-3, 1e-3, 1e-3)), medium=Medium(eps_r=0.5))
    metal = Structure(geometry=Box(size=(1e-3, 1e-3, 1e-3)), medium=PEC())
    ref = _uniform_sim().dt
    assert _uniform_sim(slow, metal).dt == pytest.approx(ref, rel=1e-14)
    assert _uniform_sim(slow, fast, metal).dt == pytest.approx(ref * math.sqrt(0.5), rel=1e-14)


def test_dt_uses_product_eps_mu_and_voxel_media():
    vox = Voxels(spacing=(1e-3, 1e-3, 1e-3), labels=[[[1, 2]]],
                 media={1: Medium(eps_r=0.8, mu_r=0.5), 2: PEC()})
    ref = _uniform_sim().dt
    assert _uniform_sim(Structure(geometry=vox)).dt == pytest.approx(
        ref * math.sqrt(0.4), rel=1e-14
    )


def test_num_steps_from_duration():
    sim = _uniform_sim(duration=1.23456789e-10)
    n = sim.num_steps
    assert n == math.ceil(sim.duration / sim.dt)
    assert (n - 1) * sim.dt < sim.duration <= n * sim.dt


def test_num_steps_given():
    sim = _uniform_sim(duration=None, steps=17)
    assert sim.num_steps == 17


def test_pml_cells_per_face(tmp_path):
    sim = every_component(tmp_path)
    assert sim.pml_cells() == ((7, 7), (0, 0), (5, 0))


# ---------------------------------------------------------------------------------------
# Geometry membership
# ---------------------------------------------------------------------------------------


def _pts(*points):
    """Coordinate arrays (x, y, z) of a list of points."""
    a = np.asarray(points, dtype=np.float64)
    return a[:, 0], a[:, 1], a[:, 2]


def test_box_inside():
    box = Box(center=(1e-3, -2e-3, 0.5e-3), size=(2e-3, 4e-3, 1e-3))
    ins = _pts((1e-3, -2e-3, 0.5e-3), (1.99e-3, -0.01e-3, 0.01e-3), (0.01e-3, -3.99e-3, 0.99e-3))
    out = _pts((2.01e-3, -2e-3, 0.5e-3), (1e-3, 0.01e-3, 0.5e-3), (1e-3, -2e-3, -0.01e-3))
    assert box.inside(*ins).all()
    assert not box.inside(*out).any()


def test_box_flat_and_infinite():
    plane = Box(center=(0.0, 0.0, 1e-3), size=(math.inf, 2e-3, 0.0))
    assert plane.inside(*_pts((123.0, 0.5e-3, 1e-3))).all()
    assert not plane.inside(*_pts((0.0, 0.0, 1.01e-3), (0.0, 1.01e-3, 1e-3))).any()


def test_sphere_inside():
    s = Sphere(center=(1e-3, 2e-3, 3e-3), radius=1.5e-3)
    ins = _pts((1e-3, 2e-3, 3e-3), (2.49e-3, 2e-3, 3e-3), (1e-3, 2e-3 - 1.0e-3, 3e-3 + 1.1e-3))
    out = _pts((2.51e-3, 2e-3, 3e-3), (1e-3 + 1.1e-3, 2e-3 + 1.1e-3, 3e-3))
    assert s.inside(*ins).all()
    assert not s.inside(*out).any()


def test_ellipsoid_inside():
    e = Ellipsoid(center=(0.0, 1e-3, 0.0), semi_axes=(1e-3, 2e-3, 3e-3))
    ins = _pts((0.99e-3, 1e-3, 0.0), (0.0, 2.99e-3, 0.0), (0.0, 1e-3, -2.99e-3))
    out = _pts((1.01e-3, 1e-3, 0.0), (0.0, 3.01e-3, 0.0), (0.8e-3, 1e-3, 2.0e-3))
    assert e.inside(*ins).all()
    assert not e.inside(*out).any()


def test_cylinder_named_axis_inside():
    c = Cylinder(center=(0.0, 0.0, 1e-3), radius=1e-3, length=4e-3, axis="x")
    ins = _pts((1.99e-3, 0.0, 1e-3), (-1.99e-3, 0.7e-3, 1.7e-3))
    out = _pts((2.01e-3, 0.0, 1e-3), (0.0, 0.0, 2.01e-3), (0.0, 0.75e-3, 1.75e-3))
    assert c.inside(*ins).all()
    assert not c.inside(*out).any()


OBLIQUE = Cylinder(center=(1e-3, -2e-3, 0.5e-3), radius=0.3e-3, length=2e-3, axis=(1.0, 1.0, 0.0))
U = np.array([1.0, 1.0, 0.0]) / math.sqrt(2)  # the unit axis
N1 = np.array([1.0, -1.0, 0.0]) / math.sqrt(2)  # two unit normals to it
N2 = np.array([0.0, 0.0, 1.0])


def test_cylinder_oblique_axis_inside():
    c, h, r = np.array(OBLIQUE.center), OBLIQUE.length / 2, OBLIQUE.radius
    np.testing.assert_allclose(OBLIQUE.unit_axis(), U, rtol=1e-15)
    ins = _pts(
        c,
        c + 0.99 * h * U,
        c - 0.99 * h * U,
        c + 0.99 * r * N1,
        c + 0.6 * h * U + 0.6 * r * N2,
        c - 0.5 * h * U - 0.7 * r * N1,
    )
    out = _pts(
        c + 1.01 * h * U,  # beyond the end cap
        c + 1.01 * r * N1,  # beyond the side
        c + 1.01 * r * N2,
        c + np.array([0.9 * h, 0.0, 0.0]),  # inside an x-aligned cylinder, not this one
    )
    assert OBLIQUE.inside(*ins).all()
    assert not OBLIQUE.inside(*out).any()


def test_cylinder_oblique_bounds():
    c, h, r = np.array(OBLIQUE.center), OBLIQUE.length / 2, OBLIQUE.radius
    lo, hi = OBLIQUE.bounds()
    half = np.array([h / math.sqrt(2) + r / math.sqrt(2)] * 2 + [r])
    np.testing.assert_allclose(lo, c - half, rtol=1e-12)
    np.testing.assert_allclose(hi, c + half, rtol=1e-12)
    # Points sampled inside lie inside the bounds; the rim of the end caps reaches them.
    rng = np.random.default_rng(7)
    n = 2000
    along = rng.uniform(-h, h, n)
    rho = r * np.sqrt(rng.uniform(0, 1, n))
    phi = rng.uniform(0, 2 * np.pi, n)
    radial = (rho * np.cos(phi))[:, None] * N1 + (rho * np.sin(phi))[:, None] * N2
    p = c + along[:, None] * U + radial
    assert OBLIQUE.inside(p[:, 0], p[:, 1], p[:, 2]).all()
    assert (p >= lo - 1e-15).all() and (p <= hi + 1e-15).all()
    rim = c + h * U + r * N1 * np.sign(N1[0])  # the end-cap rim point with the largest x
    assert rim[0] == pytest.approx(hi[0], rel=1e-12)


def test_cylinder_zero_axis_rejected():
    with pytest.raises(pydantic.ValidationError, match=r"axis[\s\S]*\(0\.0, 0\.0, 0\.0\)"):
        Cylinder(radius=1e-3, length=1e-3, axis=(0.0, 0.0, 0.0))


VOX = Voxels(origin=(-1e-3, 0.0, 2e-3), spacing=(0.5e-3, 1e-3, 2e-3),
             labels=[[[3], [4], [5]], [[6], [0], [8]]], media={3: PEC()})


def test_voxels_sample_inside_and_outside():
    lab = np.array(VOX.labels)
    # Voxel centres return their labels.
    i, j, k = np.meshgrid(np.arange(2), np.arange(3), np.arange(1), indexing="ij")
    x, y, z = (-1e-3 + (i + 0.5) * 0.5e-3, (j + 0.5) * 1e-3, 2e-3 + (k + 0.5) * 2e-3)
    np.testing.assert_array_equal(VOX.sample(x, y, z), lab)
    out = _pts((-1.01e-3, 0.5e-3, 3e-3), (-0.01e-3 + 0.02e-3, 0.5e-3, 3e-3),
               (-0.5e-3, -0.01e-3, 3e-3), (-0.5e-3, 3.01e-3, 3e-3),
               (-0.5e-3, 0.5e-3, 1.99e-3), (-0.5e-3, 0.5e-3, 4.01e-3))
    np.testing.assert_array_equal(VOX.sample(*out), [-1] * 6)
    lo, hi = VOX.bounds()
    np.testing.assert_allclose(lo, (-1e-3, 0.0, 2e-3))
    np.testing.assert_allclose(hi, (0.0, 3e-3, 4e-3))


def test_voxels_sample_broadcasts_axes(tmp_path):
    npy = tmp_path / "v.npy"
    np.save(npy, np.array(VOX.labels, dtype=np.int16))
    from_file = VOX.model_copy(update={"labels": None, "file": str(npy)})
    x = (-1e-3 + (np.arange(2) + 0.5) * 0.5e-3)[:, None, None]
    y = ((np.arange(3) + 0.5) * 1e-3)[None, :, None]
    z = np.array([3e-3])[None, None, :]
    for v in (VOX, from_file):
        np.testing.assert_array_equal(v.sample(x, y, z), np.array(VOX.labels))


# ---------------------------------------------------------------------------------------
# Bad input: one test per case, each checking the field and the value in the message
# ---------------------------------------------------------------------------------------

BASE = {
    "domain": {"size": [0.02, 0.02, 0.02], "spacing": 1e-3},  # 20 cells along each axis
    "steps": 10,
    "boundary": {"type": "CPML", "thickness": 4},  # interior [-6, 6] mm
    "sources": [{"type": "PointDipole", "position": [0, 0, 0], "polarization": "z",
                 "waveform": {"type": "GaussianPulse", "f0": 1e9, "fwidth": 1e9}}],
    "monitors": [{"type": "Probe", "name": "p", "positions": [[0, 0, 0]]}],
}

BASE_TOML = """\
steps = 10

[domain]
size = [0.02, 0.02, 0.02]
spacing = 1e-3

[boundary]
type = "CPML"
thickness = 4
"""


def _with(**changes) -> dict:
    d = copy.deepcopy(BASE)
    d.update(copy.deepcopy(changes))
    return d


def _fails(data, *fragments, error=pydantic.ValidationError) -> str:
    """Load ``data``, expect ``error``, and check that every fragment is in its message."""
    with pytest.raises(error) as info:
        load_scenario(data)
    msg = str(info.value)
    for f in fragments:
        assert f in msg, f"{f!r} not in message:\n{msg}"
    return msg


def test_base_scenario_is_valid():
    sim = load_scenario(copy.deepcopy(BASE))
    assert sim.domain.cells == (20, 20, 20)
    assert load_scenario(BASE_TOML).domain.cells == (20, 20, 20)


def test_bad_spacing_zero():
    _fails(_with(domain={"size": [0.02] * 3, "spacing": 0}), "domain.spacing", "spacing 0.0 m",
           "> 0")


def test_bad_spacing_negative():
    _fails(_with(domain={"size": [0.02] * 3, "spacing": [1e-3, -1e-3, 1e-3]}),
           "domain.spacing", "-0.001", "> 0")


def test_bad_size_nonpositive():
    _fails(_with(domain={"size": [0.02, 0.0, 0.02], "spacing": 1e-3}), "domain.size",
           "size (0.02, 0.0, 0.02) m", "> 0")


def test_bad_eps_r():
    _fails(_with(background={"eps_r": -2.5}), "background.eps_r = -2.5",
           "greater than or equal to 0.000001")
    _fails(_with(background={"eps_r": 1e12}), "background.eps_r = 1000000000000.0",
           "less than or equal to 1000000000")


def test_bad_mu_r():
    _fails(_with(background={"mu_r": 0.0}), "background.mu_r = 0.0",
           "greater than or equal to 0.000001")
    # a denormal mu_r made mu0 mu_r / 2 underflow to zero in the lowering (fuzz)
    _fails(_with(background={"mu_r": 5e-324}), "background.mu_r = 5e-324", "0.000001")


def test_bad_amplitude_beyond_the_dtype():
    src = {**BASE["sources"][0], "amplitude": -1e39}  # its samples would be inf in float32
    _fails(_with(sources=[src]), "sources[0].amplitude = -1e+39", "float32 (3.4e+38)",
           "float64")
    assert load_scenario(_with(sources=[src], dtype="float64")).sources[0].amplitude == -1e39
    src2d = {"type": "LineSource", "position": [0, 0], "waveform": src["waveform"],
             "amplitude": 4e38}
    d2 = {"type": "FDTD2D", "domain": {"size": [0.02, 0.02], "spacing": 1e-3}, "steps": 10,
          "sources": [src2d]}
    _fails(d2, "sources[0].amplitude = 4e+38")
    from emjax.scenarios import load_builtin

    dga = load_builtin("cylinder-cavity").model_dump(mode="json")
    dga["sources"][0]["amplitude"] = 1e300
    _fails(dga, "sources[0].amplitude = 1e+300", "float32")


def test_bad_sigma():
    _fails(_with(background={"sigma": -0.25}), "background.sigma = -0.25:",
           "greater than or equal to 0")


def test_bad_sigma_m():
    _fails(_with(background={"sigma_m": -0.75}), "background.sigma_m = -0.75",
           "greater than or equal")


def test_bad_medium_in_structure():
    geo = {"type": "Sphere", "radius": 1e-3}
    _fails(_with(structures=[{"geometry": geo, "medium": {"type": "Medium", "eps_r": 0}}]),
           "structures[0].medium.eps_r = 0:")


def test_bad_cpml_thicker_than_a_third():
    boundary = {"type": "Boundaries", "x": {"type": "PEC"}, "y": {"type": "PEC"},
                "z": [{"type": "CPML", "thickness": 4}, {"type": "CPML", "thickness": 7}]}
    msg = _fails(_with(boundary=boundary, sources=[], monitors=[]),
                 "boundary: the CPML is 7 cells thick on the high z face", "20 cells along z",
                 "thin the CPML")
    assert "low z" not in msg


def test_bad_source_outside_domain():
    src = copy.deepcopy(BASE["sources"][0]) | {"position": [0.0123, 0, 0]}
    _fails(_with(sources=[src]), "sources[0] PointDipole", "position (0.0123, 0, 0) m",
           "x = 0.0123 m is outside the domain [-0.01, 0.01] m")


def test_bad_source_in_cpml():
    src = copy.deepcopy(BASE["sources"][0]) | {"position": [0, 0, -0.0087]}
    _fails(_with(sources=[src]), "sources[0] PointDipole", "z = -0.0087 m lies inside the CPML",
           "[-0.006, 0.006] m", "move it inward")


def test_bad_probe_outside_domain():
    probe = {"type": "Probe", "name": "far", "positions": [[0, 0, 0], [0, 0.0311, 0]]}
    _fails(_with(monitors=[probe]), "monitors[0] Probe 'far'", "point (0, 0.0311, 0) m",
           "y = 0.0311 m is outside the domain")


def test_bad_dft_box_corner_in_cpml():
    dft = {"type": "DFTMonitor", "name": "flux", "center": [0.009, 0, 0],
           "size": [0.004, 0.001, 0], "frequencies": [1e9]}
    _fails(_with(monitors=[dft]), "monitors[0] DFTMonitor 'flux'", "point (0.007, -0.0005, 0) m",
           "x = 0.007 m lies inside the CPML")


def test_bad_dft_box_corner_outside_domain():
    dft = {"type": "DFTMonitor", "name": "flux", "size": [0.001, 0.001, 0.0234],
           "frequencies": [1e9]}
    _fails(_with(monitors=[dft]), "monitors[0] DFTMonitor 'flux'", "z = -0.0117 m is outside")


def test_bad_courant_above_one():
    _fails(_with(courant=1.25), "courant = 1.25:", "less than or equal to 1")


def test_bad_courant_nonpositive():
    _fails(_with(courant=0.0), "courant = 0.0:", "greater than 0")


def test_bad_toml_unknown_key():
    _fails(BASE_TOML + "\n[background]\nepsr = 2\n", "background.epsr = 2:",
           "unknown key; did you mean 'eps_r'?")


def test_bad_toml_wrong_type():
    _fails(BASE_TOML.replace("spacing = 1e-3", 'spacing = "abc"'), "domain.spacing = 'abc':",
           "valid number")


def test_bad_toml_syntax():
    _fails(BASE_TOML + "\n[background\n", "not valid TOML", "line 11", error=SetupError)


def test_bad_json_wrong_type():
    _fails(json.dumps(_with(steps="many")), "steps = 'many':", "valid integer")


def test_bad_json_syntax():
    _fails(json.dumps(BASE)[:-5], "not valid JSON", error=SetupError)


def test_bad_missing_file(tmp_path):
    _fails(tmp_path / "nowhere.toml", "nowhere.toml", "does not exist", error=SetupError)


def test_bad_duration_and_steps():
    _fails(_with(duration=1.5e-9), "duration = 1.5e-09 s and steps = 10 are both given",
           "give exactly one")


def test_bad_neither_duration_nor_steps():
    d = _with()
    del d["steps"]
    _fails(d, "neither 'duration' (s) nor 'steps' is given", "give exactly one")


def test_bad_duplicate_monitor_names():
    monitors = BASE["monitors"] + [{"type": "EnergyMonitor", "name": "p"}]
    _fails(_with(monitors=monitors), "monitors: names must be unique", "['p']")


def test_bad_unknown_source_type():
    src = copy.deepcopy(BASE["sources"][0]) | {"type": "Dipole"}
    _fails(_with(sources=[src]), "sources[0].type = 'Dipole': unknown type",
           "did you mean 'PointDipole'?", "PointDipole, EdgeSource")


def test_bad_probe_component():
    probe = {"type": "Probe", "name": "p", "positions": [[0, 0, 0]], "components": ["Ex", "Ew"]}
    _fails(_with(monitors=[probe]), "monitors[0].components[1] = 'Ew':",
           "Ex|Ey|Ez|Hx|Hy|Hz")


def test_bad_structure_without_medium():
    _fails(_with(structures=[{"geometry": {"type": "Sphere", "radius": 1e-3}}]),
           "structures[0]", "a Sphere structure needs a 'medium' and none is given")


def test_bad_voxels_with_medium():
    vox = {"type": "Voxels", "spacing": [1e-3] * 3, "labels": [[[1]]], "media": {}}
    _fails(_with(structures=[{"geometry": vox, "medium": {"type": "PEC"}}]), "structures[0]",
           "'medium' is given (PEC)", "drop 'medium'")


def test_bad_voxels_labels_and_file():
    vox = {"type": "Voxels", "spacing": [1e-3] * 3, "labels": [[[1]]], "file": "head.npy",
           "media": {}}
    _fails(_with(structures=[{"geometry": vox}]), "structures[0].geometry:",
           "both 'labels' (inline array) and file = 'head.npy' are given")


def test_bad_voxels_neither_labels_nor_file():
    vox = {"type": "Voxels", "spacing": [1e-3] * 3, "media": {}}
    _fails(_with(structures=[{"geometry": vox}]), "structures[0].geometry:",
           "neither 'labels' (inline array) nor 'file'")


def test_bad_voxels_ragged_labels():
    vox = {"type": "Voxels", "spacing": [1e-3] * 3, "labels": [[[1, 2], [3]]], "media": {}}
    _fails(_with(structures=[{"geometry": vox}]), "structures[0].geometry:",
           "labels must be a non-empty 3D array")


# ---------------------------------------------------------------------------------------
# Frozen models, and no JAX
# ---------------------------------------------------------------------------------------


def test_frozen(tmp_path):
    sim = every_component(tmp_path)
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        sim.courant = 0.5
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        sim.domain.spacing = 1e-3
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        sim.structures[0].medium.eps_r = 3.0
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        sim.sources[0].waveform.f0 = 2e9
    assert sim == every_component(tmp_path)


def test_model_imports_no_jax():
    code = "import sys, emjax.model; assert 'jax' not in sys.modules, 'model imported jax'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("f0", [0.0, 0.7e9, 3e9])
def test_gaussian_pulse_without_dc_has_zero_mean(f0):
    w = GaussianPulse(f0=f0, fwidth=0.5e9)
    t = np.linspace(0, 2 * (w.offset + 8) * w.tau, 400_001)
    x = w(t)
    assert abs(np.trapezoid(x, t)) < 1e-5 * np.trapezoid(np.abs(x), t)
    if f0 < 2 * w.fwidth:  # the plain pulse has a DC part worth removing
        plain = GaussianPulse(f0=f0, fwidth=0.5e9, remove_dc=False)(t)
        assert np.trapezoid(plain, t) > 1e-3 * np.trapezoid(np.abs(plain), t)


def test_huge_radii_cover_everything_without_overflow():
    """A radius of 1e300 squares past float64 (a Python float raised OverflowError in
    the rasterizer, found by the fuzz): the shape now covers every point."""
    import numpy as np

    from emjax.model import Cylinder, Sphere
    from emjax.model.scenario2d import Circle

    x = np.linspace(-1.0, 1.0, 5)
    for shape in (Sphere(radius=1e300), Cylinder(radius=1e300, length=1e300, axis="z")):
        assert shape.inside(x, x, x).all()
    assert Circle(radius=1e300).inside(x, x, None).all()
    assert not Sphere(radius=0.5).inside(x, x, x).all()
