"""TF/SF plane waves in 3D FDTD and the 1D auxiliary grid behind them.

- 1D grid alone: a Gaussian pulse keeps its peak (lossless, within 1e-3), arrives
  at the group delay of the grid (within 1 step), and the terminating absorber
  returns less than 1e-6 of it.
- Dispersion match: along an axis the 1D spacing is the cell; obliquely the 1D
  grid's wavenumber at the reference frequency equals the 3D grid's (1e-9).
- Leakage (reduced ``fdtd3d-tfsf-leakage``): peak energy in the scattered-field
  region against the total-field region, <= -100 dB along +z (float64, exact up to
  rounding) and <= -50 dB obliquely on a 28^3 grid (the full case: -60 dB at 40^3).
- Total field = incident field: inside the box the wave has the source's peak
  (within 1%) and H = E / eta0 (within 1%).
- Bad boxes raise SetupError naming the problem; a run with a plane wave and a
  NearToFar box resumes from a checkpoint bit for bit.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from emjax.constants import c0, eta0
from emjax.errors import SetupError
from emjax.fdtd import auxgrid
from emjax.model import (
    CPML,
    FDTD3D,
    Box,
    Domain,
    GaussianPulse,
    Medium,
    NearToFar,
    PlaneWave,
    Probe,
    Structure,
)
from emjax.validation.scatter import leakage_scenario, measure_leakage

jax.config.update("jax_enable_x64", True)

D = 1e-3
DT = 0.99 * D / (c0 * math.sqrt(3))


def test_aux_grid_pulse_and_absorber():
    f0 = c0 / (20 * D)
    aux = auxgrid.make_aux_grid((0.0, 0.6, 0.8), (D, D, D), DT, f0, 0.0, 0.03)
    coeffs = aux.device(jnp.float64)
    wave = GaussianPulse(f0=f0, fwidth=f0 / 3, remove_dc=False)
    n = np.arange(1, 1601)
    src = jnp.asarray(wave(n * DT))
    i_obs, w_obs = aux.interpolation(np.array([0.02]), "e")

    def body(state, v):
        state = auxgrid.step(coeffs, state, v)
        return state, (auxgrid.sample(state["e"], i_obs, w_obs)[0], state["e"][5])

    _, (obs, near) = jax.lax.scan(body, auxgrid.init(aux, jnp.float64), src)
    obs, near = np.asarray(obs), np.asarray(near)
    print(f"peak {obs.max():.6f}; absorber return {np.abs(near[1000:]).max():.2e}")
    assert abs(obs.max() - 1.0) <= 1e-3
    k = auxgrid.numerical_wavenumber((0.0, 0.6, 0.8), (D, D, D), DT, f0)
    dw = 1e3
    k2 = auxgrid.numerical_wavenumber((0.0, 0.6, 0.8), (D, D, D), DT, f0 + dw)
    v_group = 2 * math.pi * dw / (k2 - k)
    delay = (0.02 - aux.s0) / v_group
    t_peak = (np.argmax(obs) + 1) * DT
    assert abs(t_peak - (wave.offset * wave.tau + delay)) <= 1.5 * DT
    assert np.abs(near[1000:]).max() <= 1e-6


@pytest.mark.parametrize("k_hat", [(1.0, 0.0, 0.0), (0.6, 0.0, 0.8), (0.48, 0.6, 0.64)])
def test_matched_spacing(k_hat):
    f = c0 / (15 * D)
    ds = auxgrid.matched_spacing(k_hat, (D, D, D), DT, f)
    if k_hat[0] == 1.0:
        assert ds == D
        return
    k3 = auxgrid.numerical_wavenumber(k_hat, (D, D, D), DT, f)
    k1 = auxgrid.numerical_wavenumber((1.0,), (ds,), DT, f)
    print(f"ds {ds:.6e} m; k3 {k3:.9e}, k1 {k1:.9e}, k0 {2 * math.pi * f / c0:.9e}")
    assert abs(k1 / k3 - 1) <= 1e-9
    assert c0 * DT <= ds < D


def test_leakage_axis_aligned():
    db = measure_leakage(leakage_scenario(24, dtype="float64", steps=160, thickness=5,
                                          margin=3))
    print(f"axis-aligned leakage {db:.1f} dB")
    assert db <= -100


def test_leakage_oblique():
    db = measure_leakage(leakage_scenario(28, 40.0, 30.0, 30.0, thickness=6, margin=3))
    print(f"oblique leakage {db:.1f} dB")
    assert db <= -50


def test_total_field_is_incident():
    wave = GaussianPulse(f0=c0 / (25 * D), fwidth=c0 / (75 * D), remove_dc=False)
    sim = FDTD3D(domain=Domain(shape=(24, 24, 24), spacing=D), boundary=CPML(thickness=6),
                 dtype="float64", steps=160,
                 sources=[PlaneWave(theta=0, phi=0, polarization=90, amplitude=2.0,
                                    waveform=wave, box_margin=2)],  # along +z, E along +y
                 # On an Ey sample and on the Hx sample half a cell above it.
                 monitors=[Probe(name="p", positions=[(0.0, 5e-4, 0.0), (0.0, 5e-4, 5e-4)],
                                 components=["Ey", "Hx"])])
    res = sim.run(progress=False)
    Ey, Hx = res["p"].data["Ey"][:, 0], res["p"].data["Hx"][:, 1]
    print(f"peak Ey {Ey.max():.5f} V/m, -Hx eta0 {(-Hx * eta0).max():.5f}")
    assert abs(Ey.max() / 2.0 - 1) <= 0.01
    assert abs((-Hx * eta0).max() / Ey.max() - 1) <= 0.01  # H = k x E / eta: -x for E // y


def test_bad_boxes():
    wave = GaussianPulse(f0=10e9, fwidth=3e9)
    kw = {"domain": Domain(shape=(24, 24, 24), spacing=D), "steps": 2,
          "boundary": CPML(thickness=4)}
    cube = Structure(geometry=Box(size=(0.012, 0.012, 0.012)), medium=Medium(eps_r=2))
    with pytest.raises(SetupError, match="crosses a structure"):
        FDTD3D(**kw, structures=[cube],
               sources=[PlaneWave(waveform=wave, box_size=(0.01, 0.01, 0.01))]).run(
                   progress=False)
    with pytest.raises(SetupError, match="must enclose the TF/SF box"):
        FDTD3D(**kw, sources=[PlaneWave(waveform=wave, box_margin=3)],
               monitors=[NearToFar(name="f", frequencies=[1e10], margin=4)]).run(
                   progress=False)
    with pytest.raises(SetupError, match="must lie within nodes"):
        FDTD3D(**kw, sources=[PlaneWave(waveform=wave, box_size=(0.02, 0.01, 0.01))]).run(
            progress=False)
    with pytest.raises(SetupError, match="needs a 'waveform'"):
        FDTD3D(**kw, sources=[PlaneWave()]).run(progress=False)


def test_resume_bitwise(tmp_path):
    wave = GaussianPulse(f0=c0 / (15 * D), fwidth=c0 / (45 * D))
    sim = FDTD3D(domain=Domain(shape=(20, 20, 20), spacing=D), boundary=CPML(thickness=4),
                 steps=40, sources=[PlaneWave(theta=30, phi=20, waveform=wave, box_margin=4)],
                 monitors=[NearToFar(name="far", frequencies=[c0 / (15 * D)], margin=2)])
    from emjax.fdtd.solver import FDTDSolver

    solver = FDTDSolver(sim, chunk=10)  # one solver: one compilation for all three runs
    full = solver.run(progress=False)
    ck = tmp_path / "c.h5"
    with pytest.raises(KeyboardInterrupt):
        _run_until(solver, ck, 20)
    resumed = solver.run(progress=False, resume=ck)
    a, b = full["far"], resumed["far"]
    for key in ("E", "H", "E_inc"):
        assert np.array_equal(a.data[key], b.data[key]), key
    assert np.abs(a.data["E_inc"]).max() > 0


def _run_until(solver, path, step):
    """Write a checkpoint at ``step`` and stop there."""
    from emjax.driver.checkpoint import save_checkpoint

    state, s = solver.init_state(), 0
    while s < step:  # the driver's (measured) chunk, which run() compiled: no second program
        state, *_ = solver.advance(state, s, 10, measure=True)
        s += 10
    save_checkpoint(solver, path, s, state, solver.empty_record())
    raise KeyboardInterrupt
