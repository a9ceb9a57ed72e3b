"""Results, HDF5 and XDMF files, spectra and peaks, figures. NumPy, h5py, matplotlib; no JAX.

* Round trip: a Results with all four monitor kinds (seeded random data, float32,
  float64, complex64 and complex128 arrays, staggered component axes) and a real scenario
  is saved and loaded; every array must come back with its dtype and bit for bit, the
  scenario equal as a model, the metadata and monitor order unchanged.
* Atomic save: no ``.tmp`` is left behind; a save that fails half-way (h5py made to
  raise on the second dataset) leaves the previous file readable and unchanged.
* Units: every dataset of a saved file (each monitor kind, FDFD's phasors, a 2D run's
  energy in J/m) carries the ``units`` attribute the results docstring gives it.
* Load errors: a missing path, a text file, a foreign HDF5 file and a damaged emjax file
  each raise SetupError naming the path.
* Spectra: the transform of a Gaussian pulse against its closed form
  ``sigma sqrt(2 pi) exp(-2 pi^2 sigma^2 f^2) exp(-i 2 pi f t0)`` (relative error < 1e-6
  where it is above 1e-3 of its peak); ``find_peaks`` on three damped sinusoids
  (1.0, 1.37, 2.11 GHz, decay time 5 ns, 40 ns record padded to 2^16 samples) recovers
  each frequency within 0.1 %, directly and through ``MonitorData.probe_peaks``.
* XDMF: the XML parses, holds a Temporal collection with one entry per frame, and every
  HDF DataItem points at a dataset of the .h5 whose shape is its Dimensions and whose
  values are the (transposed) frame.
* Figures: each plot function returns a Figure and writes a non-empty PNG.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import h5py
import numpy as np
import pytest

from emjax.analysis.spectrum import find_peaks, spectrum
from emjax.errors import SetupError
from emjax.io.xdmf import write_xdmf
from emjax.model import (
    FDTD2D,
    FDTD3D,
    PEC,
    DFTMonitor,
    Domain,
    Domain2D,
    EnergyMonitor,
    FieldSnapshot,
    Probe,
    load_scenario,
)
from emjax.results import KINDS, MonitorData, Results

NT = 64
DT = 1.5e-11


def _axis(n: int, lo: float, staggered: bool) -> np.ndarray:
    return lo + 0.01 * (np.arange(n) + (0.5 if staggered else 0.0))


def make_monitors(seed: int = 0) -> dict[str, MonitorData]:
    rng = np.random.default_rng(seed)
    n = np.arange(NT, dtype=np.float64)
    probe = MonitorData(
        name="probe", kind="Probe",
        data={c: rng.standard_normal((NT, 2)).astype(np.float32) for c in ("Ex", "Ez", "Hy")},
        coords={"t_E": (n + 1) * DT, "t_H": (n + 0.5) * DT,
                "points": np.array([[0.0, 0.0, 0.0], [0.01, 0.0, 0.0]])},
        attrs={"interpolation": "trilinear", "order": 1},
    )
    # Ex on (cell centre, node, node), Ey on (node, cell centre, node): staggered shapes.
    snap = MonitorData(
        name="snap", kind="FieldSnapshot",
        data={"Ex": rng.standard_normal((3, 4, 5, 1)).astype(np.float32),
              "Ey": rng.standard_normal((3, 5, 4, 1)).astype(np.float32)},
        coords={"t": np.array([2.0, 4.0, 6.0]) * DT,
                "x_Ex": _axis(4, -0.02, True), "y_Ex": _axis(5, -0.02, False),
                "z_Ex": np.array([0.0]),
                "x_Ey": _axis(5, -0.02, False), "y_Ey": _axis(4, -0.02, True),
                "z_Ey": np.array([0.0])},
    )
    # Same shapes, axes half a cell apart.
    shape = (2, 4, 4, 1)
    dft = MonitorData(
        name="dft", kind="DFTMonitor",
        data={"Ex": (rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
              .astype(np.complex64),
              "Hz": rng.standard_normal(shape) + 1j * rng.standard_normal(shape)},
        coords={"f": np.array([1e9, 2e9]),
                "x_Ex": _axis(4, -0.02, True), "y_Ex": _axis(4, -0.02, False),
                "z_Ex": np.array([0.0]),
                "x_Hz": _axis(4, -0.02, False), "y_Hz": _axis(4, -0.02, True),
                "z_Hz": np.array([0.0])},
    )
    energy = MonitorData(
        name="energy", kind="EnergyMonitor",
        data={"energy": rng.random(NT)}, coords={"t": n * DT},
    )
    return {m.name: m for m in (probe, snap, dft, energy)}


def make_scenario() -> FDTD3D:
    return FDTD3D(
        domain=Domain(size=(0.1, 0.1, 0.1), spacing=0.01), steps=5, boundary=PEC(),
        monitors=[
            Probe(name="probe", positions=[(0.0, 0.0, 0.0), (0.01, 0.0, 0.0)],
                  components=["Ex", "Ez", "Hy"]),
            FieldSnapshot(name="snap", size=(0.04, 0.04, 0.0), interval=2,
                          components=["Ex", "Ey"]),
            DFTMonitor(name="dft", size=(0.04, 0.04, 0.0), frequencies=[1e9, 2e9],
                       components=["Ex", "Hz"]),
            EnergyMonitor(name="energy"),
        ],
    )


@pytest.fixture
def res() -> Results:
    meta = {"solver": "FDTD3D", "dt": DT, "steps": NT, "shape": (10, 10, 10),
            "device": "cpu:cpu", "versions": {"emjax": "0.1.0", "numpy": np.__version__},
            "wall_time_s": np.float64(0.25), "cells_per_s": 2.56e6}
    return Results(make_scenario(), make_monitors(), meta)


# ------------------------------------------------------------ round trip
def test_round_trip_is_bitwise(res: Results, tmp_path: Path):
    path = res.save(tmp_path / "run.h5")
    back = Results.load(path)
    assert back == res
    assert back.names == ["probe", "snap", "dft", "energy"]
    assert back.scenario == res.scenario
    assert back.metadata == res.metadata
    assert back.metadata["shape"] == [10, 10, 10]
    for name in res:
        a, b = res[name], back[name]
        assert (b.kind, b.attrs, b.components) == (a.kind, a.attrs, a.components)
        for d_a, d_b in ((a.data, b.data), (a.coords, b.coords)):
            assert list(d_b) == list(d_a)
            for key in d_a:
                assert d_b[key].dtype == d_a[key].dtype, (name, key, d_b[key].dtype)
                assert np.array_equal(d_b[key], d_a[key]), (name, key)
    assert back["dft"].data["Ex"].dtype == np.complex64
    assert back["dft"].data["Hz"].dtype == np.complex128
    assert back["probe"].data["Ex"].dtype == np.float32
    with h5py.File(path, "r") as f:
        assert f.attrs["emjax_version"] == "0.1.0"
        assert load_scenario(f.attrs["scenario"]) == res.scenario
        assert json.loads(f.attrs["metadata"])["steps"] == NT
        assert f["dft/data/Ex"].dtype == np.complex64
    # Lossless compression reads back the same.
    assert Results.load(res.save(tmp_path / "z.h5", compression="gzip")) == res


def _dataset_units(path: Path) -> dict[str, str | None]:
    """Every dataset of an HDF5 file -> its ``units`` attribute (None where missing)."""
    found: dict[str, str | None] = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: found.__setitem__(name, obj.attrs.get("units"))
                     if isinstance(obj, h5py.Dataset) else None)
    return found


def test_every_dataset_has_its_units(res: Results, tmp_path: Path):
    """Each monitor kind, FDFD's phasors and a 2D run's energy: every dataset of the
    saved file carries the unit the results module docstring gives it."""
    rng = np.random.default_rng(2)
    spectra = {k: rng.standard_normal((2, 5, 3)) + 0j for k in ("E", "H")}
    n2f = MonitorData("n2f", "NearToFar", {**spectra, "E_inc": np.ones(2, complex)},
                      {"f": np.array([1e9, 2e9]), "points": rng.random((5, 3)),
                       "normals": np.eye(3)[[0, 1, 2, 0, 1]], "weights": np.ones(5)})
    phasors = MonitorData("fdfd", "DFTMonitor", {"Ey": np.ones((1, 2, 1, 1), complex),
                                                 "Hx": np.ones((1, 2, 1, 1), complex)},
                          {"f": np.array([1e9]), "x_Ey": np.zeros(2), "y_Ey": np.zeros(1),
                           "z_Ey": np.zeros(1)},
                          attrs={"quantity": "scattered field phasors (e^{+j w t})"})
    flux = MonitorData("flux", "FluxMonitor", {"flux": np.ones(2)}, {"f": np.array([1e9, 2e9])})
    port = MonitorData("port", "LumpedPort", {k: np.ones(3) for k in ("V", "I", "V_source")},
                       {"t": np.arange(3.0)}, attrs={"impedance": 50.0, "excite": True})
    guide = MonitorData("guide", "WaveguidePort", {k: np.ones(3) for k in ("V", "I", "V_source")},
                        {"t_E": np.arange(3.0), "t_H": np.arange(3.0)}, attrs={"excite": True})
    monitors = {**res.monitors, "n2f": n2f, "fdfd": phasors, "flux": flux, "port": port,
                "guide": guide}
    assert {md.kind for md in monitors.values()} == set(KINDS), "a kind without a unit test"
    found = _dataset_units(Results(None, monitors, {}).save(tmp_path / "u.h5"))
    assert len(found) == sum(len(md.data) + len(md.coords) for md in monitors.values())
    assert all(found.values()), [k for k, v in found.items() if not v]
    expected = {
        "probe/data/Ex": "V/m", "probe/data/Hy": "A/m", "probe/coords/t_H": "s",
        "probe/coords/points": "m", "snap/data/Ey": "V/m", "snap/coords/t": "s",
        "snap/coords/y_Ex": "m", "dft/data/Ex": "V*s/m", "dft/data/Hz": "A*s/m",
        "dft/coords/f": "Hz", "energy/data/energy": "J", "n2f/data/E_inc": "V*s/m",
        "n2f/data/H": "A*s/m", "n2f/coords/normals": "1", "n2f/coords/weights": "m^2",
        "fdfd/data/Ey": "V/m", "fdfd/data/Hx": "A/m", "fdfd/coords/z_Ey": "m",
        "flux/data/flux": "W*s^2", "flux/coords/f": "Hz", "port/data/V": "V",
        "port/data/I": "A", "port/data/V_source": "V", "port/coords/t": "s",
        "guide/data/V": "V", "guide/data/I": "A", "guide/coords/t_H": "s",
    }
    assert {k: found[k] for k in expected} == expected
    # FDTD2D energies are per unit length.
    sim2d = FDTD2D(domain=Domain2D(size=(0.1, 0.1), spacing=0.01), steps=5, boundary=PEC(),
                   monitors=[EnergyMonitor(name="energy")])
    planar = _dataset_units(Results(sim2d, {"energy": res["energy"]}, {}).save(
        tmp_path / "u2d.h5"))
    assert planar == {"energy/data/energy": "J/m", "energy/coords/t": "s"}


def test_equality_sees_a_changed_bit_or_dtype(res: Results):
    mons = make_monitors()
    assert Results(res.scenario, mons, res.metadata) == res
    changed = dict(mons)
    e = mons["energy"].data["energy"].copy()
    e[3] = np.nextafter(e[3], 2.0)
    changed["energy"] = MonitorData("energy", "EnergyMonitor", {"energy": e},
                                    mons["energy"].coords)
    assert Results(res.scenario, changed, res.metadata) != res
    p = mons["probe"]
    changed["energy"] = mons["energy"]
    changed["probe"] = MonitorData("probe", "Probe", {k: v.astype(np.float64)
                                                      for k, v in p.data.items()},
                                   p.coords, p.attrs)
    assert Results(res.scenario, changed, res.metadata) != res


def test_mapping_and_repr(res: Results):
    assert len(res) == 4 and list(res) == res.names and "snap" in res
    assert res["probe"].kind == "Probe"
    with pytest.raises(KeyError, match=r"'nope'.*'probe', 'snap'"):
        res["nope"]
    text = repr(res)
    for piece in ("FDTD3D 'fdtd3d'", "4 monitors", "dt = 1.5e-11 s", "64 steps",
                  "grid 10x10x10", "cpu:cpu", "2.56 Mcells/s",
                  "Ex, Ez, Hy (64, 2) float32", "Ex (3, 4, 5, 1) float32",
                  "Hz (2, 4, 4, 1) complex128", "energy (64,) float64"):
        assert piece in text, (piece, text)
    assert "Probe 'probe'" in repr(res["probe"])
    with pytest.raises(ValueError, match="kind 'Bogus'"):
        MonitorData("m", "Bogus", {}, {})
    with pytest.raises(ValueError, match="named 'probe'"):
        Results(None, {"other": res["probe"]}, {})
    with pytest.raises(TypeError, match=r"metadata: .*object"):
        Results(None, {}, {"bad": object()})


# ------------------------------------------------------------ atomic save
def test_save_is_atomic(res: Results, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "run.h5"
    res.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.h5"]
    before = path.read_bytes()

    other = Results(res.scenario, make_monitors(seed=1), res.metadata)
    real = h5py.Group.create_dataset
    calls = {"n": 0}

    def failing(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full (simulated)")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(h5py.Group, "create_dataset", failing)
    with pytest.raises(OSError, match="simulated"):
        other.save(path, overwrite=True)
    monkeypatch.undo()
    assert calls["n"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.h5"]
    assert path.read_bytes() == before
    assert Results.load(path) == res
    # A good save replaces the file when asked to.
    other.save(path, overwrite=True)
    assert Results.load(path) == other
    assert not path.with_name("run.h5.tmp").exists()


def test_save_targets(res: Results, tmp_path: Path):
    """Folders are created; an existing file, a folder and a path under a regular file
    are refused before anything is written (OutputError naming the path and the fix);
    overwrite=True replaces; a stale temporary of a killed save is cleaned."""
    from emjax.errors import OutputError

    path = res.save(tmp_path / "newdir" / "sub" / "x.h5")
    assert Results.load(path) == res
    before = path.read_bytes()
    other = Results(res.scenario, make_monitors(seed=1), res.metadata)
    with pytest.raises(OutputError, match=r"x\.h5' already exists; pass overwrite=True"):
        other.save(path)
    assert path.read_bytes() == before
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    with pytest.raises(OutputError, match="already exists"):
        other.save(notes)
    assert notes.read_text() == "mine"
    with pytest.raises(OutputError, match="is a folder"):
        other.save(tmp_path / "newdir")
    with pytest.raises(OutputError, match=r"notes\.txt' is a file, not a folder"):
        other.save(notes / "x.h5")
    stale = path.with_name("x.h5.tmp")
    stale.write_bytes(b"left by a kill -9")
    assert other.save(path, overwrite=True) == path
    assert Results.load(path) == other and not stale.exists()


# ------------------------------------------------------------ load errors
def test_load_errors(res: Results, tmp_path: Path):
    missing = tmp_path / "absent.h5"
    with pytest.raises(SetupError, match=re.escape(f"'{missing}' does not exist")):
        Results.load(missing)
    text = tmp_path / "notes.h5"
    text.write_text("not hdf5\n")
    with pytest.raises(SetupError, match=re.escape(f"'{text}' is not an HDF5 file")):
        Results.load(text)
    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as f:
        f["x"] = np.arange(3)
    msg = f"'{foreign}' is an HDF5 file but not an emjax result"
    with pytest.raises(SetupError, match=re.escape(msg)):
        Results.load(foreign)
    damaged = res.save(tmp_path / "damaged.h5")
    with h5py.File(damaged, "a") as f:
        del f["snap"]
    with pytest.raises(SetupError, match=re.escape(f"'{damaged}' is damaged")):
        Results.load(damaged)
    with pytest.raises(SetupError, match="does not exist"):
        Results.load(tmp_path)  # a directory


def test_scenario_none_round_trips(tmp_path: Path):
    r = Results(None, {"energy": make_monitors()["energy"]})
    assert Results.load(r.save(tmp_path / "e.h5")) == r


# ------------------------------------------------------------ spectra
def test_spectrum_of_gaussian_matches_closed_form():
    sigma, t0, dt = 0.2e-9, 2.0e-9, 5e-12
    t = 0.3e-9 + dt * np.arange(1200)  # starts off zero: the phase must refer to t = 0
    x = np.exp(-((t - t0) ** 2) / (2 * sigma**2))
    f, X = spectrum(t, x, pad_to=4096)
    exact = sigma * np.sqrt(2 * np.pi) * np.exp(-2 * (np.pi * sigma * f) ** 2) \
        * np.exp(-2j * np.pi * f * t0)
    assert f[1] == pytest.approx(1 / (4096 * dt), rel=1e-9)
    band = np.abs(exact) > 1e-3 * np.abs(exact).max()
    err = np.max(np.abs(X[band] - exact[band])) / np.abs(exact).max()
    assert err < 1e-6, f"max relative error {err:.2e}, expected < 1e-6"
    with pytest.raises(ValueError, match="uniformly"):
        spectrum(np.array([0.0, 1.0, 3.0]), np.zeros(3))
    with pytest.raises(ValueError, match="pad_to = 10"):
        spectrum(t, x, pad_to=10)


FREQS = np.array([1.0e9, 1.37e9, 2.11e9])


def _damped(t: np.ndarray, tau: float = 5e-9) -> np.ndarray:
    amps, phases = (1.0, 0.6, 0.8), (0.3, 1.1, -0.7)
    return sum(a * np.cos(2 * np.pi * f * t + p) * np.exp(-t / tau)
               for a, f, p in zip(amps, FREQS, phases, strict=True))


def _rel(peaks) -> np.ndarray:
    got = np.sort([p.frequency for p in peaks])
    return np.abs(got - FREQS) / FREQS


def test_find_peaks_recovers_damped_sinusoids():
    dt = 1e-11
    t = dt * np.arange(4000)
    f, X = spectrum(t, _damped(t), pad_to=1 << 16, window="hann")
    peaks = find_peaks(f, np.abs(X), 3, fmin=0.5e9, fmax=3e9)
    assert len(peaks) == 3
    assert peaks[0].amplitude >= peaks[1].amplitude >= peaks[2].amplitude
    rel = _rel(peaks)
    assert np.all(rel < 1e-3), f"relative errors {rel}, expected < 1e-3"
    # Rectangular window: lines 1 / (pi tau) wide overlap and pull each other's maxima
    # (0.4 % at tau = 5 ns); at tau = 20 ns over 100 ns they are narrow enough.
    t2 = 2e-11 * np.arange(5000)
    f2, X2 = spectrum(t2, _damped(t2, tau=20e-9), pad_to=1 << 16)
    rel = _rel(find_peaks(f2, np.abs(X2), 3, fmin=0.5e9, fmax=3e9))
    assert np.all(rel < 1e-3), f"relative errors, rectangular window {rel}, expected < 1e-3"
    # The band excludes peaks; n caps the count; complex input is taken by modulus.
    assert [round(p.frequency / 1e9, 2) for p in find_peaks(f, X, 5, fmin=1.2e9, fmax=1.5e9)] \
        == [1.37]
    assert len(find_peaks(f, np.abs(X), 1)) == 1

    md = MonitorData("p", "Probe", {"Ez": _damped(t)[:, None]},
                     {"t_E": t, "t_H": t - dt / 2, "points": np.zeros((1, 3))})
    rel = _rel(md.probe_peaks("Ez", n=3, nfft=1 << 16, fmin=0.5e9, fmax=3e9))
    assert np.all(rel < 1e-3), f"relative errors via probe_peaks {rel}, expected < 1e-3"
    f3, X3 = md.probe_spectrum("Ez", window=None)
    assert f3.size == 4000 // 2 + 1 and np.array_equal(X3, spectrum(t, _damped(t))[1])
    with pytest.raises(KeyError, match="has no component 'Hx'; it has Ez"):
        md.probe_spectrum("Hx")


def test_probe_time_axes_follow_component(res: Results):
    p = res["probe"]
    assert p.time("Ex") is p.coords["t_E"] and p.time("Hy") is p.coords["t_H"]
    assert res["energy"].time() is res["energy"].coords["t"]
    with pytest.raises(ValueError, match="not a Probe"):
        res["snap"].probe_spectrum("Ex")


# ------------------------------------------------------------ XDMF
def _check_xdmf(xmf: Path, md: MonitorData) -> ET.Element:
    root = ET.parse(xmf).getroot()
    assert root.tag == "Xdmf" and root.get("Version") == "3.0"
    coll = root.find("Domain/Grid")
    assert (coll.get("GridType"), coll.get("CollectionType")) == ("Collection", "Temporal")
    frames = coll.findall("Grid")
    nframes = len(md.coords["t" if md.kind == "FieldSnapshot" else "f"])
    assert len(frames) == nframes
    items = root.iter("DataItem")
    n_items = 0
    with h5py.File(xmf.with_suffix(".h5"), "r") as f:
        for it in items:
            n_items += 1
            assert it.get("Format") == "HDF"
            fname, dset = it.text.strip().split(":")
            assert fname == xmf.with_suffix(".h5").name
            assert dset in f, dset
            dims = tuple(int(d) for d in it.get("Dimensions").split())
            assert f[dset].shape == dims, (dset, f[dset].shape, dims)
            assert int(it.get("Precision")) == f[dset].dtype.itemsize
    for g in root.iter("Grid"):
        if g.get("GridType") == "Uniform":
            assert g.find("Topology").get("TopologyType") == "3DRectMesh"
            assert g.find("Geometry").get("GeometryType") == "VXVYVZ"
            assert all(a.get("Center") == "Node" for a in g.findall("Attribute"))
    assert n_items > 0
    return root


def test_xdmf_snapshot_one_grid_per_staggered_component(res: Results, tmp_path: Path):
    md = res["snap"]
    xmf = write_xdmf(md, tmp_path / "snap.xmf")
    root = _check_xdmf(xmf, md)
    first = root.find("Domain/Grid/Grid")
    assert first.get("CollectionType") == "Spatial"
    assert [g.find("Attribute").get("Name") for g in first.findall("Grid")] == ["Ex", "Ey"]
    assert float(first.find("Time").get("Value")) == md.coords["t"][0]
    with h5py.File(tmp_path / "snap.h5", "r") as f:
        assert np.array_equal(f["fields/Ey/000002"][()], md.data["Ey"][2].T)
        assert np.array_equal(f["coords/Ey/x"][()], md.coords["x_Ey"])


def test_xdmf_dft_abs_re_im(res: Results, tmp_path: Path):
    md = res["dft"]
    # Default: the staggered axes keep one grid per component.
    root = _check_xdmf(write_xdmf(md, tmp_path / "dft.xmf"), md)
    assert root.find("Domain/Grid/Grid").get("CollectionType") == "Spatial"
    # merge=True: shapes agree, so one grid on Ex's axes with all six attributes.
    root = _check_xdmf(write_xdmf(md, tmp_path / "dftm.xdmf", merge=True), md)
    g = root.find("Domain/Grid/Grid")
    assert g.get("GridType") == "Uniform"
    assert [a.get("Name") for a in g.findall("Attribute")] == [
        "Ex_abs", "Ex_re", "Ex_im", "Hz_abs", "Hz_re", "Hz_im"]
    with h5py.File(tmp_path / "dftm.h5", "r") as f:
        assert np.array_equal(f["fields/Hz_abs/000001"][()], np.abs(md.data["Hz"][1]).T)
        assert np.array_equal(f["fields/Ex_im/000000"][()], md.data["Ex"][0].imag.T)
    with pytest.raises(ValueError, match="Probe 'probe' has no grid"):
        write_xdmf(res["probe"], tmp_path / "p.xmf")


# ------------------------------------------------------------ figures
def test_plots_write_png(res: Results, tmp_path: Path):
    from matplotlib.figure import Figure

    from emjax import plot

    cases = {
        "probe": lambda p: plot.plot_probe(res["probe"], "Hy", point=1, path=p),
        "snap": lambda p: plot.plot_slice(res["snap"], "Ey", path=p),
        "dft": lambda p: plot.plot_slice(res["dft"], "Hz", index=1, path=p),
        "energy": lambda p: plot.plot_energy(res["energy"], path=p),
    }
    for name, draw in cases.items():
        path = tmp_path / f"{name}.png"
        fig = draw(path)
        assert isinstance(fig, Figure)
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000, name
    assert isinstance(plot.plot_energy(res["energy"]), Figure)  # no path: nothing written
    # The plane nearest to position: Ex's x samples are -0.015, -0.005, 0.005, 0.015 m.
    fig = plot.plot_slice(res["snap"], "Ex", index=0, axis="x", position=0.004)
    assert fig.axes[0].get_title().endswith("x = 5 mm")
    # The snapshot is flat in z: its plane x = 5 mm is a line along y, drawn as a curve.
    assert (fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()) == ("y", "Ex (V/m)")
    with pytest.raises(ValueError, match="EnergyMonitor"):
        plot.plot_energy(res["probe"])


def test_imports_stay_light():
    code = ("import sys, emjax.results, emjax.plot, emjax.analysis.spectrum; "
            "print(sorted(m for m in ('jax', 'h5py', 'matplotlib', 'pydantic') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]", out.stdout


# ------------------------------------------------------------ output hooks
def test_output_hooks_write_what_applies(res: Results, tmp_path: Path):
    """``write_outputs`` runs every registered hook: a PNG per monitor with a figure and
    an XDMF file per grid monitor beside the results; no FDFD RCS and no MRI maps (the
    metadata and monitors they need are absent); a hook registered by a user runs too."""
    from emjax import outputs

    seen = []

    @outputs.register_output("test-hook", label="note")
    def note(r: Results, directory: Path, stem: str) -> list[Path]:
        seen.append(sorted(r.monitors))
        path = directory / f"{stem}_note.txt"
        path.write_text("ok")
        return [path]

    try:
        written = outputs.write_outputs(res, figures=tmp_path / "fig", results_dir=tmp_path,
                                        stem="r")
    finally:
        del outputs._HOOKS["test-hook"]
    names = [(label, p.relative_to(tmp_path).as_posix()) for label, p in written]
    assert names == [("figure", "fig/r_probe.png"), ("figure", "fig/r_snap.png"),
                     ("figure", "fig/r_dft_1GHz.png"), ("figure", "fig/r_dft_2GHz.png"),
                     ("figure", "fig/r_energy.png"),
                     ("note", "fig/r_note.txt"),
                     ("ParaView", "r_snap.xdmf"), ("ParaView", "r_dft.xdmf")], names
    assert seen == [sorted(res.monitors)]
    for _, p in written:
        assert p.stat().st_size > 0, p


def test_fdfd_rcs_hook_reads_metadata(tmp_path: Path):
    """The FDFD RCS figure comes from metadata alone (no solver import)."""
    from emjax.plot import fdfd_rcs_figure

    th = np.arange(0.0, 181.0, 10.0)
    res = Results(scenario=None, monitors={}, metadata={
        "rcs_theta_deg": th.tolist(), "rcs_E_dBsm": (-10 - th / 20).tolist(),
        "rcs_H_dBsm": (-12 - th / 30).tolist()})
    (path,) = fdfd_rcs_figure(res, tmp_path, "s")
    assert path == tmp_path / "s_rcs.png" and path.read_bytes()[:4] == b"\x89PNG"
    assert fdfd_rcs_figure(Results(scenario=None, monitors={}), tmp_path, "t") == []
