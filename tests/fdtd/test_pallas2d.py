"""The one-pass Pallas TMz kernel (emjax.fdtd.pallas2d) against the XLA two-pass step.

On the CPU the kernel runs in Pallas' interpreter (the run is forced onto it); on a GPU
the test with the GPU mark compares the compiled Triton kernel with the XLA step after
1000 steps. Both paths must agree to float32 rounding with every feature the kernel
takes on: CPML on all sides, lossy and magnetic CIS media (a select, a gather and
shifted codes), an electric line source, probes and DFT monitors.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import emjax as em
from emjax.fdtd import pallas2d, setup2d
from emjax.fdtd.solver2d import FDTD2DSolver

MM = 1e-3


def scene(n: tuple[int, int], steps: int, pol: str = "TMz", **kw) -> em.FDTD2D:
    """n cells of 1 mm, a 6-cell CPML, a lossy disc, a magnetic block and a third
    dielectric (Ez: four media, a gather; Hx, Hy: two, a select), a line source, two
    probes and a DFT monitor."""
    nx, ny = n
    structures = [
        em.Structure2D(geometry=em.Circle(center=(0.1 * nx * MM, -0.05 * ny * MM),
                                          radius=0.22 * nx * MM),
                       medium=em.Medium(eps_r=4.0, sigma=0.05)),
        em.Structure2D(geometry=em.Rectangle(center=(-0.2 * nx * MM, 0.2 * ny * MM),
                                             size=(0.2 * nx * MM, 0.25 * ny * MM)),
                       medium=em.Medium(eps_r=2.0, mu_r=1.7, sigma_m=30.0)),
        em.Structure2D(geometry=em.Rectangle(center=(0.25 * nx * MM, 0.3 * ny * MM),
                                             size=(0.1 * nx * MM, 0.1 * ny * MM)),
                       medium=em.Medium(eps_r=6.0)),
    ]
    sim = em.FDTD2D(
        name="onepass", polarization=pol, domain=em.Domain2D(shape=n, spacing=MM),
        steps=steps, boundary=em.CPML(thickness=6), structures=structures,
        sources=[em.LineSource(position=(-0.1 * nx * MM, -0.1 * ny * MM),
                               polarization="z" if pol == "TMz" else "y",
                               waveform=em.GaussianPulse(f0=40e9, fwidth=30e9))],
        monitors=[em.Probe(name="p", positions=[(0.3 * nx * MM, -0.3 * ny * MM, 0.0),
                                                (-0.3 * nx * MM, 0.1 * ny * MM, 0.0)]),
                  em.DFTMonitor(name="dft", size=(0.5 * nx * MM, 0.5 * ny * MM, 0),
                                frequencies=[30e9, 50e9])])
    return sim.model_copy(update=kw)


def both(sim, monkeypatch, chunk: int = 20):
    """(one-pass results, its solver, XLA results) of ``sim`` on this backend (the
    kernel taken whatever the grid's size)."""
    monkeypatch.setattr(pallas2d, "MIN_CELLS", 0)
    monkeypatch.setattr(setup2d, "one_pass_backend", lambda: True)
    fast = FDTD2DSolver(sim, chunk=chunk, check_memory=False)
    got = fast.run(progress=False)
    monkeypatch.setattr(setup2d, "one_pass_backend", lambda: False)
    ref = FDTD2DSolver(sim, chunk=chunk, check_memory=False).run(progress=False)
    return got, fast, ref


def rel(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / np.abs(b).max())


def assert_agree(got, ref, tol: float) -> None:
    for comp, x in ref["p"].data.items():
        assert np.abs(x).max() > 0, comp
        assert rel(got["p"].data[comp], x) < tol, comp
    for comp, x in ref["dft"].data.items():
        assert rel(got["dft"].data[comp], x) < tol, comp


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the interpreter run is the CPU's")
@pytest.mark.parametrize("n, pol", [((48, 40), "TMz"), ((37, 53), "TEz")])
def test_one_pass_agrees_with_the_xla_step(monkeypatch, n, pol):
    """TMz with the CPML all round; TEz on clipped tiles with a CPML on two faces of
    different thickness (PEC on the others: a slab's missing half adds zeros)."""
    sides = em.Boundaries2D(x=(em.CPML(thickness=6), em.PEC()),
                            y=(em.PEC(), em.CPML(thickness=5)))
    got, fast, ref = both(scene(n, 60, pol, **({"boundary": sides} if pol == "TEz" else {})),
                          monkeypatch)
    assert fast.setup.onepass is not None
    radix = [r for _, r, _ in fast.setup.onepass.digits]  # a gather, selects
    assert radix == ([4, 2, 2] if pol == "TMz" else [4, 4, 2])
    assert got.metadata["kernel"] == "pallas one-pass"
    assert ref.metadata["kernel"] == "xla two-pass"
    assert_agree(got, ref, 2e-5)


def tfsf_scene(n: int, scatterers: bool, pol: str = "TMz") -> em.FDTD2D:
    """An oblique plane wave through a TF/SF box in an n x n grid with a 6-cell CPML;
    probes inside the box (on an Ez or Hz sample) and outside it (the scattered field);
    with ``scatterers``, a lossy disc and a staircased PEC block in the box."""
    sim = scene((n, n), 200, pol, sources=[em.PlaneWave(
        theta=90, phi=30, polarization=0 if pol == "TMz" else 90, box_margin=10,
        waveform=em.GaussianPulse(f0=20e9, fwidth=15e9))])
    o = 0.0 if pol == "TMz" else 0.5 * MM  # Hz sits at cell centres
    probes = em.Probe(name="p", positions=[(2 * MM + o, o, 0.0),
                                           (0.3 * n * MM, -0.3 * n * MM, 0.0)])
    block = em.Structure2D(geometry=em.Rectangle(center=(-0.1 * n * MM, 0.1 * n * MM),
                                                 size=(3 * MM, 5 * MM)), medium=em.PEC())
    structures = [sim.structures[0], block] if scatterers else []
    return sim.model_copy(update={"monitors": [probes, sim.monitors[1]],
                                  "structures": structures, "conformal": False})


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the interpreter run is the CPU's")
@pytest.mark.parametrize("pol", ["TMz", "TEz"])
def test_one_pass_with_a_tfsf_plane_wave(monkeypatch, pol):
    """The H corrections after the kernel and their curl on E: the same fields as the
    XLA step, with scatterers; without them the wave stays in its box (-40 dB)."""
    got, fast, ref = both(tfsf_scene(48, True, pol), monkeypatch)
    assert fast.setup.onepass is not None and fast.setup.planewaves
    assert_agree(got, ref, 2e-5)
    if pol == "TEz":  # (the agreement covers TEz's curl terms; one leakage check is enough)
        return
    monkeypatch.setattr(setup2d, "one_pass_backend", lambda: True)
    got = FDTD2DSolver(tfsf_scene(48, False, pol), chunk=20).run(progress=False)
    comp, scale = ("Ez", 1.0) if pol == "TMz" else ("Hz", 376.730313)  # H = E / eta0
    f = np.abs(got["p"].data[comp]) * scale
    wave = fast.sim.sources[0].waveform
    peak = np.abs(wave(np.linspace(0, 200 * fast.setup.dt, 20001))).max()
    assert abs(f[:, 0].max() / peak - 1) < 0.02  # the incident pulse
    assert 20 * np.log10(f[:, 1].max() / f[:, 0].max()) < -40


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="the interpreter run is the CPU's")
def test_one_pass_keeps_a_vacuum_grid_and_pec_walls(monkeypatch):
    """Vacuum (no codes: every coefficient a scalar) in PEC walls (one launch), and the
    energy monitor (old and new fields beside the step) as the XLA step's."""
    sim = scene((40, 36), 40, boundary=em.PEC(), structures=[])
    sim = sim.model_copy(update={"monitors": [*sim.monitors, em.EnergyMonitor(name="w")]})
    got, fast, ref = both(sim, monkeypatch)
    assert not fast.setup.onepass.has_code and len(fast.setup.onepass.launches) == 1
    assert_agree(got, ref, 2e-5)
    w, w_ref = got["w"].data["energy"], ref["w"].data["energy"]
    assert w_ref.max() > 0 and rel(w, w_ref) < 2e-5


def test_features_the_kernel_leaves_out_run_the_xla_step(monkeypatch):
    monkeypatch.setattr(setup2d, "one_pass_backend", lambda: True)
    assert setup2d.prepare(scene((48, 40), 4)).onepass is None  # a small grid
    monkeypatch.setattr(pallas2d, "MIN_CELLS", 0)
    base = scene((48, 40), 4)
    wave = em.GaussianPulse(f0=40e9, fwidth=30e9)
    pec = em.Structure2D(geometry=em.Circle(center=(0, 0), radius=5 * MM), medium=em.PEC())
    for update in ({"polarization": "TEz", "structures": [pec], "sources": [em.LineSource(
                        position=(-9 * MM, 0), polarization="x", waveform=wave)]},  # cut cells
                   {"boundary": em.SplitPML(thickness=6)},
                   {"boundary": em.Boundaries2D(x=(em.CPML(thickness=6),
                                                   em.CPML(thickness=8)))},
                   {"storage_dtype": "bfloat16"},
                   {"dtype": "float64"},
                   {"domain": em.Domain2D(shape=(16, 40), spacing=MM), "monitors": [],
                    "structures": []}):  # no interior between the x strips
        s = setup2d.prepare(base.model_copy(update=update))
        assert s.onepass is None, update
    assert setup2d.prepare(base).onepass is not None


@pytest.mark.skipif(jax.default_backend() != "gpu", reason="needs a GPU")
def test_triton_kernel_agrees_with_the_xla_step_after_1000_steps(monkeypatch):
    got, fast, ref = both(scene((640, 512), 1000), monkeypatch, chunk=100)
    assert fast.setup.onepass is not None and not fast.setup.onepass.interpret
    assert_agree(got, ref, 1e-4)
    for pol in ("TMz", "TEz"):
        sim = tfsf_scene(512, True, pol).model_copy(update={"steps": 1000})
        got, fast, ref = both(sim, monkeypatch, chunk=100)
        assert fast.setup.onepass is not None and fast.setup.planewaves
        assert_agree(got, ref, 1e-4)
    got, fast, ref = both(scene((512, 640), 1000, "TEz"), monkeypatch, chunk=100)
    assert fast.setup.onepass.polarization == "TEz"
    assert_agree(got, ref, 1e-4)


def test_one_pass_resume_is_bitwise(monkeypatch, tmp_path):
    """Checkpointed at step 30 and resumed (through the checkpoint's conversion to the
    XLA step's layout and back) the one-pass run equals the whole run bitwise; its
    checkpoint resumes with the XLA step too. (One solver resumes its own checkpoint:
    the interpreter's compilations are the test's cost.)"""
    monkeypatch.setattr(pallas2d, "MIN_CELLS", 0)
    monkeypatch.setattr(setup2d, "one_pass_backend", lambda: True)
    sim = scene((40, 40), 50)
    sim = sim.model_copy(update={"monitors": [*sim.monitors, em.FieldSnapshot(
        name="snap", size=(8 * MM, 2 * MM, 0), interval=7, components=["Ez"])]})
    solver, ck = FDTD2DSolver(sim, chunk=10), tmp_path / "run.ckpt.h5"
    whole = solver.run(progress=False)
    assert whole.metadata["kernel"] == "pallas one-pass"
    solver.run(progress=False, checkpoint_every=30, checkpoint_path=ck)
    resumed = solver.run(progress=False, resume=ck)
    for name in whole.names:
        for comp, x in whole[name].data.items():
            assert np.array_equal(x, resumed[name].data[comp]), (name, comp)
    monkeypatch.setattr(setup2d, "one_pass_backend", lambda: False)
    other = FDTD2DSolver(sim, chunk=10).run(progress=False, resume=ck)
    assert other.metadata["kernel"] == "xla two-pass"
    assert_agree(other, whole, 2e-5)
