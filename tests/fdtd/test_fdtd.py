"""Physics and structure tests of the 3D FDTD solver.

- psi memory: the psi arrays hold exactly the CPML slab volumes and do not grow with
  the interior (seed 001's property).
- Strategy and storage agreement: combined vs per-face CPML, indices (CIS) vs arrays
  (CAS) give the same fields to float32 rounding.
- PMC: a PEC cavity with a source on its mid-plane equals the half cavity closed by
  PMC on that plane (image theory), on a low and on a high face, to rounding.
- Loss: a mode in a cavity filled with a conductor decays at sigma / (2 eps) and with
  a magnetic conductor at sigma_m / (2 mu) (1% tolerance), from a matrix pencil fit.
- Instability: a run driven past its stability limit stops with step, field, index.
- The kernel modules import neither pydantic nor the model.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

import emjax as em
from emjax.analysis.modes import matrix_pencil
from emjax.fdtd.solver import FDTDSolver


def _final_fields(sim):
    solver = FDTDSolver(sim, chunk=sim.num_steps)
    state, _, ok = solver.advance(solver.init_state(), 0, sim.num_steps)
    assert bool(ok)
    return [np.asarray(F) for F in (*state.E, *state.H)]


def _cube(n, thickness=4, **kw):
    d = 1e-3
    return em.FDTD3D(
        domain=em.Domain(shape=(n, n, n), spacing=d), boundary=em.CPML(thickness=thickness),
        steps=kw.pop("steps", 60),
        structures=[em.Structure(geometry=em.Sphere(radius=3 * d),
                                 medium=em.Medium(eps_r=3, sigma=0.5))],
        sources=[em.PointDipole(position=(1.3e-3, -0.6e-3, 0.4e-3), polarization="y",
                                waveform=em.GaussianPulse(f0=30e9, fwidth=15e9))],
        **kw,
    )


def test_kernels_import_without_pydantic():
    code = ("import sys, emjax.fdtd.update3d, emjax.fdtd.cpml, emjax.fdtd.mur, emjax.grid.pml;"
            "assert 'pydantic' not in sys.modules, 'pydantic loaded';"
            "assert 'emjax.model' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def _pydantic_inside(obj, path="setup", seen=None) -> list[str]:
    """Paths of pydantic models reachable from ``obj``, through dataclasses, containers,
    ``functools.partial`` (the waveform samplers) and emjax's own objects."""
    import dataclasses
    import functools

    from pydantic import BaseModel

    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, np.ndarray | np.generic | str | int | float):
        return []
    seen.add(id(obj))
    if isinstance(obj, BaseModel):
        return [path]
    if dataclasses.is_dataclass(obj):
        items = [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    elif isinstance(obj, functools.partial):
        items = [("func", obj.func), *enumerate(obj.args), *obj.keywords.items()]
    elif type(obj).__module__.startswith("emjax.") and hasattr(obj, "__dict__"):
        items = list(vars(obj).items())
    elif isinstance(obj, dict):
        items = list(obj.items())
    elif isinstance(obj, list | tuple):
        items = list(enumerate(obj))
    else:
        return []
    return [p for k, v in items for p in _pydantic_inside(v, f"{path}.{k}", seen)]


def test_lowered_setup_holds_no_pydantic_model():
    """What the jitted chunk closes over (the set-up) is plain frozen data: the lowering
    read the scenario once (monitors, plane waves, faces, waveforms as plain samplers)
    and kept no model."""
    from emjax.fdtd.solver2d import FDTD2DSolver

    wave = em.GaussianPulse(f0=30e9, fwidth=15e9)
    sim = _cube(24, steps=2, monitors=[
        em.Probe(name="p", positions=[(0, 0, 0)], components=["Ex"]),
        em.DFTMonitor(name="d", size=(4e-3, 4e-3, 0), frequencies=[30e9]),
        em.FieldSnapshot(name="s", size=(4e-3, 0, 0), interval=2),
        em.EnergyMonitor(name="e"), em.NearToFar(name="far", frequencies=[30e9], margin=1)])
    sim = sim.model_copy(update={"sources": [em.PlaneWave(waveform=wave, box_margin=4)]})
    sim2 = em.FDTD2D(domain=em.Domain2D(shape=(30, 30), spacing=1e-3), steps=2,
                     boundary=em.Boundaries2D(x=em.SplitPML(thickness=4), y=em.CPML(thickness=4)),
                     sources=[em.PlaneWave(theta=90, phi=0, waveform=wave)],
                     monitors=[em.Probe(name="p", positions=[(0, 0, 0)]),
                               em.EnergyMonitor(name="e")])
    for setup in (FDTDSolver(sim).setup, FDTD2DSolver(sim2).setup):
        assert not _pydantic_inside(setup), _pydantic_inside(setup)
        with pytest.raises(AttributeError):
            setup.dt = 0.0  # frozen


def _psi_bytes(state) -> int:
    return sum(a.nbytes for d in (state.psi_E, state.psi_H) for f in d.values()
               for a in f.values())


def test_psi_bytes_equal_slab_volumes():
    n, t = 16, 4
    state = FDTDSolver(_cube(n, t)).init_state()
    # Six slabs of t x n x n samples, each with 2 E and 2 H psi arrays of float32.
    expected = 6 * t * n * n * 4 * 4
    assert _psi_bytes(state) == expected, (_psi_bytes(state), expected)


def test_psi_bytes_do_not_grow_with_interior():
    def x_cpml(nx):
        return em.FDTD3D(
            domain=em.Domain(shape=(nx, 10, 12), spacing=1e-3), steps=1,
            boundary=em.Boundaries(x=em.CPML(thickness=3), y=em.PEC(), z=em.PEC()))

    small, large = (_psi_bytes(FDTDSolver(x_cpml(nx)).init_state()) for nx in (12, 48))
    assert small == large == 2 * 3 * 10 * 12 * 4 * 4


@functools.cache
def _default_fields() -> tuple:
    """The default-variant run both cases compare with: made once per process."""
    return tuple(_final_fields(_cube(20)))


@pytest.mark.parametrize("variant", [{"cpml_strategy": "per_face"},
                                     {"cpml_strategy": "combined"}, {"storage": "arrays"}])
def test_variants_agree_with_default(variant):
    """The default ("auto": on a CPU z slabs folded, x and y in place) against all folded,
    none folded and CAS storage: the same fields to float32 rounding."""
    ref = _default_fields()
    alt = _final_fields(_cube(20, **variant))
    scale = max(np.abs(F).max() for F in ref)
    assert scale > 0
    err = max(np.abs(a - b).max() for a, b in zip(ref, alt, strict=True)) / scale
    assert err < 1e-5, f"{variant}: max relative difference {err:.2e}"


@pytest.mark.parametrize("side", ["high", "low"])
def test_pmc_equals_symmetric_half_of_pec_cavity(side):
    d, (nx, ny, nz) = 1e-3, (16, 10, 8)
    wave = em.GaussianPulse(f0=40e9, fwidth=20e9)
    xm = nx * d  # mid-plane of the full cavity [0, 2 nx d]
    src = (xm, 4.3e-3, 3.6e-3)
    obs = (xm - 5e-3 if side == "high" else xm + 5e-3, 6.1e-3, 2.2e-3)

    def make(shape, origin, boundary):
        return em.FDTD3D(
            domain=em.Domain(shape=shape, spacing=d, origin=origin), boundary=boundary,
            steps=300, dtype="float64",
            sources=[em.PointDipole(position=src, polarization="z", waveform=wave)],
            monitors=[em.Probe(name="p", positions=[obs], components=["Ez", "Hy"])])

    full = make((2 * nx, ny, nz), (0, 0, 0), em.PEC())
    pair = (em.PEC(), em.PMC()) if side == "high" else (em.PMC(), em.PEC())
    half = make((nx, ny, nz), (0 if side == "high" else xm, 0, 0),
                em.Boundaries(x=pair, y=em.PEC(), z=em.PEC()))
    a, b = full.run(progress=False)["p"], half.run(progress=False)["p"]
    for c in ("Ez", "Hy"):
        scale = np.abs(a.data[c]).max()
        assert scale > 0
        err = np.abs(a.data[c] - b.data[c]).max() / scale
        assert err < 1e-10, f"{side} PMC, {c}: relative difference {err:.2e}"


@pytest.mark.parametrize("loss", ["sigma", "sigma_m"])
def test_lossy_cavity_decay_rate(loss):
    size, d = (0.05, 0.04, 0.03), 2.5e-3
    medium = em.Medium(eps_r=2.0, mu_r=1.5, **{loss: 0.02 if loss == "sigma" else 2000.0})
    wave = em.GaussianPulse(f0=4.5e9, fwidth=1e9)
    sim = em.FDTD3D(
        domain=em.Domain(size=size, spacing=d, origin=(0, 0, 0)), boundary=em.PEC(),
        background=medium, duration=15e-9, dtype="float64",
        sources=[em.PointDipole(position=(0.013, 0.011, 0.007), polarization="z", waveform=wave)],
        monitors=[em.Probe(name="p", positions=[(0.031, 0.027, 0.019)], components=["Ez"])])
    p = sim.run(progress=False)["p"]
    t, x = p.coords["t_E"], p.data["Ez"][:, 0]
    start = np.searchsorted(t, 2 * wave.offset * wave.tau)
    modes = matrix_pencil(x[start::4], 4 * sim.dt, order=20)
    strongest = modes[0]
    if loss == "sigma":
        expected = medium.sigma / (2 * em.eps0 * medium.eps_r)
    else:
        expected = medium.sigma_m / (2 * em.mu0 * medium.mu_r)
    rel = abs(strongest.decay - expected) / expected
    assert rel < 0.01, f"decay {strongest.decay:.4e} 1/s vs {expected:.4e} ({rel:.2%})"


def test_instability_reports_step_field_and_index():
    sim = _cube(16, steps=200)
    solver = FDTDSolver(sim, chunk=50)
    # Ten times the stable time step in the E update: the leapfrog must blow up.
    cE = solver.setup.coeffs["E"]
    solver.setup.coeffs["E"] = dataclasses.replace(cE, b=cE.b * 10)
    with pytest.raises(em.InstabilityError) as info:
        solver.run(progress=False)
    err = info.value
    assert err.field in ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz")
    assert 0 < err.step <= 200 and len(err.index) == 3
    assert "unstable between steps" in str(err)


def test_dt_follows_courant_limit():
    sim = _cube(16)
    d = 1e-3
    assert math.isclose(sim.dt, 0.99 * d / (em.c0 * math.sqrt(3)), rel_tol=1e-12)


def test_voltage_source_drives_its_edge_to_the_source_voltage():
    """An unloaded lumped source: far below the RC corner of the edge (R = 50 ohm, C ~
    eps0 dx ~ 1e-14 F), the edge voltage E dl follows the source voltage."""
    d = 1e-3
    wave = em.ContinuousWave(frequency=200e6, ramp=1e-9)
    sim = em.FDTD3D(
        domain=em.Domain(shape=(16, 16, 16), spacing=d, origin=(0, 0, 0)), boundary=em.PEC(),
        duration=4e-9, dtype="float64",
        sources=[em.EdgeSource(position=(8e-3, 8e-3, 8.5e-3), polarization="z", kind="voltage",
                               amplitude=2.0, resistance=50.0, waveform=wave)],
        monitors=[em.Probe(name="p", positions=[(8e-3, 8e-3, 8.5e-3)], components=["Ez"])])
    p = sim.run(progress=False)["p"]
    v_edge = p.data["Ez"][:, 0] * d
    v_src = 2.0 * wave(p.coords["t_E"] - 0.5 * sim.dt)
    late = p.coords["t_E"] > 2e-9
    err = np.abs(v_edge[late] - v_src[late]).max() / np.abs(v_src[late]).max()
    assert err < 0.02, f"edge voltage differs from the source by {err:.2%}"


def test_slab_alignment_changes_layout_not_fields(monkeypatch):
    """Slabs stored thicker than the CPML (aligned) reach into the interior with zero
    coefficients: same fields bit for bit, more psi bytes."""
    from emjax.fdtd import cpml

    sim = em.FDTD3D(domain=em.Domain(shape=(20, 18, 16), spacing=1e-3), steps=25,
                    boundary=em.CPML(thickness=5),
                    sources=[em.PointDipole(position=(0.0, 0.0, 0.0), polarization="z",
                                            waveform=em.GaussianPulse(f0=30e9, fwidth=15e9))])
    runs = []
    for align in ((1, 1, 1), (2, 4, 8)):
        monkeypatch.setattr(cpml, "SLAB_ALIGN", align)
        solver = FDTDSolver(sim, chunk=25)
        state, _, _ = solver.advance(solver.init_state(), 0, 25)
        runs.append(([np.asarray(F) for F in (*state.E, *state.H)], _psi_bytes(state)))
    (fields1, bytes1), (fields2, bytes2) = runs
    assert np.abs(fields1[2]).max() > 0
    for a, b in zip(fields1, fields2, strict=True):
        np.testing.assert_array_equal(a, b)
    assert bytes2 > bytes1


def test_per_face_on_a_grid_no_wider_than_its_slabs():
    """3^3 cells with a 1-cell CPML on every face: each per_face slab correction spans
    the whole grid along two axes and the slab along the third, and on the 3-cell axis
    the corner patches reach the grid's size (found by the fuzz test: the in-place
    update looked for a thin axis that was not there). Both CPML strategies give the
    same probe series to float32 rounding."""
    def run(strategy):
        sim = em.FDTD3D(
            domain=em.Domain(shape=(3, 3, 3), spacing=5e-4), boundary=em.CPML(thickness=1),
            cpml_strategy=strategy, steps=30,
            sources=[em.PointDipole(position=(0, 0, 0), polarization="z",
                                    waveform=em.GaussianPulse(f0=100e9, fwidth=50e9))],
            monitors=[em.Probe(name="p", positions=[(0, 0, 0)], components=["Ez"])])
        return sim.run(progress=False)["p"].data["Ez"]

    combined = run("combined")
    assert np.abs(combined).max() > 0
    for strategy in ("per_face", "auto"):
        other = run(strategy)
        assert np.all(np.isfinite(other))
        err = np.abs(other - combined).max() / np.abs(combined).max()
        assert err < 1e-5, (strategy, err)


def test_energy_weights_beyond_float32_are_refused():
    """Cells so large that half eps dV (or mu dV) overflows float32 (a fuzzed document
    found the overflowing cast): refused in the lowering, naming the domain and the fix,
    and accepted in float64."""
    import emjax as em
    from emjax.errors import SetupError

    def sim(dtype):
        return em.FDTD3D(
            domain=em.Domain(shape=(6, 6, 6), spacing=1e14), boundary=em.PEC(), steps=2,
            dtype=dtype, structures=[em.Structure(geometry=em.Box(center=(0, 0, 0),
                                                                  size=(1e14,) * 3),
                                                  medium=em.Medium(mu_r=1e9))],
            sources=[em.PointDipole(position=(0, 0, 0), polarization="z",
                                    waveform=em.GaussianPulse(f0=1e-6, fwidth=5e-7))],
            monitors=[em.EnergyMonitor(name="w")])

    with pytest.raises(SetupError, match="energy weights beyond float32"):
        sim("float32").run(progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the absurd grid's advice
        res = sim("float64").run(progress=False)
    assert np.all(np.isfinite(res["w"].data["energy"]))
