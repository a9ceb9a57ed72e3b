"""The first-order Mur absorbing boundary (seed 001's speed reference).

- Normal incidence: in a guide one cell across (PMC y walls, PEC z walls) a pulse
  meets a Mur wall head on; the spectrum of the reflection, against a long-guide
  reference, equals the discrete reflection coefficient of first-order Mur on the 1D
  Yee grid (derived in :func:`_discrete_reflection`) within 1%, and stays below
  -30 dB over the band.
- A dipole in a box: Mur on all six faces against a larger domain errs by less than
  -20 dB at three probes; CPML of the same interior does at least 30 dB better.
- Late time: with Mur walls the pulse leaves the box (energy below 1e-6 of its peak)
  and the fields stay finite, edges and corners included; the half cell beyond an
  upper Mur plane stays dead (zero).
- The folded plane writes of the update equal the sequential reference ``apply_mur`` bit
  for bit, faces meeting at edges included.
- Resume after a checkpoint is bitwise; bad configurations are refused by name.
"""

from __future__ import annotations

import jax
import numpy as np
import pydantic
import pytest

import emjax as em
from emjax.errors import SetupError
from emjax.fdtd import update3d
from emjax.fdtd.mur import apply_mur, mur_coefficient
from emjax.fdtd.solver import FDTDSolver
from emjax.model import load_scenario
from emjax.model.boundaries import Mur

D = 1e-3


def _discrete_reflection(f, dt: float, d: float, c: float):
    """Reflection coefficient of first-order Mur on the 1D Yee grid at frequencies f,
    wave speed c (m/s).

    With E_i^n = z^n (p^i + R p^-i), z = exp(j w dt), p = exp(j k d) (the incident
    wave travels towards the wall at i = 0) and k from the Yee dispersion relation
    sin(w dt / 2) / (c dt) = sin(k d / 2) / d, the Mur update
    E_0^{n+1} = E_1^n + K (E_1^{n+1} - E_0^n) gives
    R = (p + K z p - K - z) / (z - 1/p - K z / p + K).
    """
    w = 2 * np.pi * np.asarray(f)
    k = 2 / d * np.arcsin(np.sin(w * dt / 2) * d / (c * dt))
    z, p = np.exp(1j * w * dt), np.exp(1j * k * d)
    K = mur_coefficient(c * dt, d)
    return (p + K * z * p - K - z) / (z - 1 / p - K * z / p + K)


def _guide(low: int, high: int, x_boundary, steps: int, probe_x: float, wave, eps_r=1.0):
    """A guide along x from -low to high cells: the TEM wave of one z dipole."""
    return em.FDTD3D(
        background=em.Medium(eps_r=eps_r),
        domain=em.Domain(shape=(low + high, 2, 1), spacing=D, origin=(-low * D, 0, 0)),
        boundary=em.Boundaries(x=x_boundary, y=em.PMC(), z=em.PEC()), steps=steps,
        sources=[em.PointDipole(position=(0, D, 0.5 * D), polarization="z", waveform=wave)],
        monitors=[em.Probe(name="p", positions=[(probe_x, D, 0.5 * D)], components=["Ez"])])


@pytest.mark.parametrize("eps_r", [1.0, 4.0])
def test_normal_incidence_matches_discrete_mur_reflection(eps_r):
    c = em.c0 / np.sqrt(eps_r)
    wave = em.GaussianPulse(f0=15e9 / np.sqrt(eps_r), fwidth=6e9 / np.sqrt(eps_r))
    high, gap = 30, 10  # the Mur plane is the last node, x = (high - 1) d
    probe_x = (high - 1 - gap) * D
    dt = _guide(10, high, Mur(), 1, probe_x, wave, eps_r).dt
    steps = int((10 * wave.tau + 1.2 * (high + gap) * D / c) / dt)
    far = int(steps * dt * c / D) + 10  # no other wall is reached in time
    ref = _guide(far, far, em.PEC(), steps, probe_x, wave, eps_r).run(progress=False)
    mur = _guide(far, high, Mur(), steps, probe_x, wave, eps_r).run(progress=False)
    inc = ref["p"].data["Ez"][:, 0].astype(np.float64)
    refl = mur["p"].data["Ez"][:, 0] - inc
    nf = 8 * steps
    f = np.fft.rfftfreq(nf, dt)
    I, R = np.fft.rfft(inc, nf), np.fft.rfft(refl, nf)
    band = np.abs(I) > 0.3 * np.abs(I).max()
    measured = np.abs(R[band]) / np.abs(I[band])
    expected = np.abs(_discrete_reflection(f[band], dt, D, c))
    dev = np.abs(measured / expected - 1).max()
    assert dev < 0.01, f"reflection differs from the discrete Mur coefficient by {dev:.2%}"
    assert 20 * np.log10(measured.max()) < -30, f"{20 * np.log10(measured.max()):.1f} dB"


def _box(n: int, boundary, steps: int, monitors=(), probe: float = 7e-3):
    return em.FDTD3D(
        domain=em.Domain(shape=(n, n, n), spacing=D), boundary=boundary, steps=steps,
        sources=[em.PointDipole(position=(0, 0, 0), polarization="z",
                                waveform=em.GaussianPulse(f0=20e9, fwidth=8e9))],
        monitors=[em.Probe(name="p", components=["Ez"],
                           positions=[(probe, 0, 0), (0, probe, 0),
                                      (0.7 * probe, 0.7 * probe, 0.5 * probe)]),
                  *monitors])


def test_dipole_box_mur_against_large_domain_and_cpml():
    n, steps, probe = 18, 100, 5e-3  # probes 4 cells from the Mur walls
    ref = _box(n + 2 * 4 + 16, em.CPML(thickness=8), steps, probe=probe).run(progress=False)
    mur = _box(n, Mur(), steps, probe=probe).run(progress=False)
    cpml = _box(n + 12, em.CPML(thickness=6), steps, probe=probe).run(progress=False)
    r = ref["p"].data["Ez"]
    peak = np.abs(r).max(axis=0)
    assert peak.min() > 0
    err = {k: 20 * np.log10((np.abs(v["p"].data["Ez"] - r).max(axis=0) / peak).max())
           for k, v in (("mur", mur), ("cpml", cpml))}
    assert err["mur"] < -20, err
    assert err["cpml"] < err["mur"] - 30, err


def test_pulse_leaves_and_fields_stay_finite():
    chunk, chunks = 300, 10
    sim = _box(16, Mur(), chunk * chunks, monitors=[em.EnergyMonitor(name="w", interval=1)],
               probe=4e-3)
    solver = FDTDSolver(sim, chunk=chunk)
    state, w, first = solver.init_state(), [], None
    for k in range(chunks):
        state, ys, ok = solver.advance(state, k * chunk, chunk)
        assert bool(ok), f"not finite after {(k + 1) * chunk} steps"
        w.append(np.asarray(ys["energy"][0]))
        if first is None:
            first = [np.asarray(F) for F in (*state.E, *state.H)]
    w = np.concatenate(w)
    assert w.max() > 0
    assert w[-100:].max() < 1e-6 * w.max(), w[-100:].max() / w.max()
    # The half cell beyond each upper Mur plane is dead.
    E, H = first[:3], first[3:]
    assert np.abs(E[2]).max() > 0
    for a in range(3):
        last = [slice(None)] * 3
        last[a] = -1
        last = tuple(last)
        for c in range(3):
            if c != a:
                assert not H[c][last].any(), f"H{'xyz'[c]} beyond the upper {'xyz'[a]} face"
        assert not E[a][last].any(), f"E{'xyz'[a]} beyond the upper {'xyz'[a]} face"


def test_plane_writes_equal_sequential_reference():
    shape = (7, 6, 5)
    rng = np.random.default_rng(1)
    E = tuple(rng.standard_normal(shape) for _ in range(3))
    H = tuple(rng.standard_normal(shape) for _ in range(3))
    faces = ((0, 0, -0.3), (0, 1, -0.31), (1, 0, -0.32), (1, 1, -0.33), (2, 0, -0.34),
             (2, 1, -0.35))
    c = update3d.UpdateCoefficients(a=np.array([0.9]), b=np.array([0.1]))
    bare = update3d.Layout(shape=shape, inv_d=(1.0, 1.0, 1.0))
    lay = update3d.Layout(shape=shape, inv_d=(1.0, 1.0, 1.0), mur=faces)
    plain = jax.jit(lambda E, H: update3d.update_E(E, H, c, {}, {}, bare)[0])(E, H)
    ref = jax.jit(lambda E, P: apply_mur(E, P, faces))(E, plain)
    got = jax.jit(lambda E, H: update3d.update_E(E, H, c, {}, {}, lay)[0])(E, H)
    for comp in range(3):
        assert np.array_equal(np.asarray(ref[comp]), np.asarray(got[comp])), comp
        assert not np.array_equal(np.asarray(plain[comp]), np.asarray(got[comp])), comp


def _mixed(steps=40):
    return em.FDTD3D(
        name="mur-ckpt", domain=em.Domain(shape=(14, 12, 10), spacing=D), steps=steps,
        boundary=em.Boundaries(x=(Mur(), em.CPML(thickness=3)), y=Mur(), z=(em.PEC(), Mur())),
        sources=[em.PointDipole(position=(0.4e-3, -0.3e-3, 0.2e-3), polarization="x",
                                waveform=em.GaussianPulse(f0=60e9, fwidth=30e9))],
        monitors=[em.Probe(name="p", positions=[(1e-3, 1e-3, -1e-3)], components=["Ex", "Hy"]),
                  em.DFTMonitor(name="dft", center=(0, 0, 0), size=(4e-3, 4e-3, 0),
                                frequencies=[50e9], components=["Ex", "Hz"])])


def test_resume_is_bitwise_exact(tmp_path):
    sim = _mixed()
    assert load_scenario(sim.to_toml()) == sim  # Mur faces survive a TOML round trip
    solver = FDTDSolver(sim, chunk=20)  # one compiled chunk serves the three runs
    whole = solver.run(progress=False)
    ck = tmp_path / "mur.ckpt.h5"
    solver.run(progress=False, checkpoint_every=20, checkpoint_path=ck)
    resumed = solver.run(progress=False, resume=ck)
    for name in whole.names:
        for comp, x in whole[name].data.items():
            assert np.abs(x).max() > 0, (name, comp)
            assert np.array_equal(x, resumed[name].data[comp]), f"{name}/{comp} differs"


def test_bad_configurations_are_refused():
    with pytest.raises(ValueError, match=r"Mur along z needs at least 3 cells, the domain has 2"):
        FDTDSolver(em.FDTD3D(domain=em.Domain(shape=(8, 8, 2), spacing=D), steps=1,
                             boundary=em.Boundaries(x=em.PEC(), y=em.PEC(), z=Mur())))
    # A TF/SF box one cell from a Mur face would feed it the incident field.
    def tfsf(boundary):
        wave = em.PlaneWave(theta=90, waveform=em.GaussianPulse(f0=20e9, fwidth=8e9),
                            box_center=(-D, 0, 0), box_size=(12 * D, 8 * D, 8 * D))
        return em.FDTD3D(domain=em.Domain(shape=(16, 16, 16), spacing=D), steps=1,
                         boundary=boundary, sources=[wave])

    FDTDSolver(tfsf(em.PEC()))  # nodes 1..13 along x: fine one cell from a PEC wall
    with pytest.raises(SetupError, match=r"nodes 1\.\.13.*within nodes 2\.\.13.*Mur"):
        FDTDSolver(tfsf(Mur()))
    with pytest.raises(pydantic.ValidationError, match="eps_r"):
        Mur(eps_r=0.5)
    with pytest.raises(pydantic.ValidationError, match="thickness"):
        Mur(thickness=5)
    with pytest.raises(pydantic.ValidationError, match="Mur"):
        em.FDTD2D.model_validate({"domain": {"shape": (8, 8), "spacing": D}, "steps": 1,
                                  "boundary": {"type": "Mur"}})
