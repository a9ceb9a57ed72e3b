"""Dispersive media (PoleMedium) in the 3D FDTD: the ADE update of fdtd/dispersive.py.

- ``emjax validate debye-halfspace`` passes: a water-like Debye half-space's reflection
  against Fresnel within 0.005 in |r| and 1 degree over 0.5-20 GHz at three cell sizes,
  the error falling at about second order (the case's docstring has the set-up).
- ``emjax validate lorentz-slab`` passes: a 3 mm Lorentz slab's transmission (magnitude
  and phase, the resonance at 10 GHz inside 0.5-20 GHz) against the transfer matrix of
  the discrete thickness within 0.005 and 1 degree at 0.1 and 0.05 mm, second order.
- Every pole kind against Fresnel: Lorentz (resonance in the band) and Drude (plasma
  frequency in the band) half-spaces, and the Debye one in float32, at 0.1 mm, same
  limits.
- Stability: a closed PEC cavity holding each pole kind (the lossless Drude and Lorentz
  included), float32, 3000 steps: after the source ends the discrete energy (fields
  plus polarization) never rises by more than rounding (2e-5 of itself), and the
  lossless poles keep it within 1e-3.
- Storage: CIS and CAS coefficients, and the TF/SF-style patch folded into the fused
  update (the accelerators' layout) or added in place (the CPU's), agree to rounding.
- Memory: the estimate's ``polarization`` equals the bytes of the state's p and j
  arrays (box cells x poles x components x dtype size x arrays per pole) and does not
  grow with the non-dispersive volume.
- Checkpoints: a resumed dispersive run equals the whole run bit for bit.
- FDFD takes a PoleMedium as its eps(f) at the solve frequency: the same eps arrays as a
  constant medium of that complex eps; a PoleMedium background is refused (FDTD2D:
  tests/fdtd/test_dispersive2d.py).
"""

from __future__ import annotations

import jax
import numpy as np
import pydantic
import pytest

import emjax as em
from emjax.fdtd import memory
from emjax.fdtd.solver import FDTDSolver
from emjax.validation.dispersion import debye_halfspace, halfspace_reflection, lorentz_slab

WATER = em.PoleMedium(eps_inf=4.9, poles=[em.DebyePole(delta_eps=74.0, tau=8.3e-12)])
TWO_PI = 2 * np.pi
POLES = {
    "debye": WATER,
    "drude": em.PoleMedium(poles=[em.DrudePole(omega_p=TWO_PI * 15e9, gamma=0.0)]),
    "lorentz": em.PoleMedium(eps_inf=2.0, poles=[em.LorentzPole(
        delta_eps=3.0, omega_0=TWO_PI * 30e9, delta=0.0)]),
}


def test_debye_halfspace_case_passes():
    checks = debye_halfspace()
    for c in checks:
        print(c.metric, c.value)
    assert all(c.passed for c in checks), [(c.metric, c.value) for c in checks if not c.passed]


def test_lorentz_slab_case_passes():
    checks = lorentz_slab()
    for c in checks:
        print(c.metric, c.value)
    assert len(checks) == 5 and checks[0].extra["min_abs_t"] < 0.2  # the resonance is in
    assert all(c.passed for c in checks), [(c.metric, c.value) for c in checks if not c.passed]


@pytest.mark.parametrize("medium, dtype, window", [
    # the resonance rings for 1 / delta = 160 ps, and above it (Re eps < 0) the CPML
    # reflects: a longer window and 10 mm of medium before the CPML
    (em.PoleMedium(eps_inf=2.0, poles=[em.LorentzPole(delta_eps=3.0, omega_0=TWO_PI * 10e9,
                                                     delta=TWO_PI * 1e9)]), "float64",
     {"duration": 1.5e-9, "depth": 10e-3}),
    # the Drude current relaxes as exp(-gamma t): the window must hold it
    (em.PoleMedium(eps_inf=1.0, sigma=0.5, poles=[em.DrudePole(omega_p=TWO_PI * 12e9,
                                                               gamma=TWO_PI * 2e9)]), "float64",
     {"duration": 1.2e-9, "depth": 10e-3}),
    (WATER, "float32", {}),
], ids=["lorentz", "drude", "debye-float32"])
def test_each_pole_kind_reflects_as_fresnel(medium, dtype, window):
    f, r, r_ref = halfspace_reflection(medium, 1e-4, dtype=dtype, **window)
    err_mag = np.max(np.abs(np.abs(r) - np.abs(r_ref)))
    err_deg = np.max(np.abs(np.degrees(np.angle(r / r_ref))))
    print(f"{len(f)} frequencies: |r| error {err_mag:.2e}, phase error {err_deg:.3f} deg")
    assert len(f) >= 50
    assert err_mag <= 0.005 and err_deg <= 1.0, (err_mag, err_deg)


def _cavity(medium, steps=3000, dtype="float32", storage="indices", **kw):
    return em.FDTD3D(
        domain=em.Domain(shape=(8, 9, 10), spacing=1e-3), boundary=em.PEC(), steps=steps,
        dtype=dtype, storage=storage, **kw,
        structures=[em.Structure(medium=medium, geometry=em.Box(
            center=(0.5e-3, 0, 0), size=(4.5e-3, 5.5e-3, 6.5e-3)))],
        sources=[em.PointDipole(position=(-2e-3, 1e-3, 0.5e-3), polarization="y",
                                waveform=em.GaussianPulse(f0=25e9, fwidth=10e9))],
        monitors=[em.EnergyMonitor(name="w"),
                  em.Probe(name="p", positions=[(1e-3, 0, 0)], components=["Ex", "Ey", "Ez"])])


@pytest.mark.parametrize("kind", list(POLES))
def test_closed_cavity_energy_never_rises(kind):
    sim = _cavity(POLES[kind])
    W = sim.run(progress=False)["w"].data["energy"].astype(np.float64)
    wave = sim.sources[0].waveform
    n0 = int(2 * wave.offset * wave.tau / sim.dt) + 1  # the source is over
    after = W[n0:]
    rise = np.max(np.maximum.accumulate(after[::-1])[::-1][1:] - after[:-1]) / after[0]
    print(f"{kind}: energy {after[0]:.4g} -> {after[-1]:.4g} J, largest rise {rise:.2e}")
    assert after[0] > 0 and np.all(np.isfinite(W))
    assert rise <= 2e-5
    if kind != "debye":  # lossless poles: conserved
        assert abs(after[-1] / after[0] - 1) <= 1e-3
    else:
        assert after[-1] < 0.5 * after[0]


def test_storages_and_patch_folding_agree(monkeypatch):
    kinds = {k: m for k, m in POLES.items()}
    mixed = em.PoleMedium(eps_inf=1.5, sigma=0.1, poles=[*kinds["debye"].poles,
                                                         *kinds["lorentz"].poles,
                                                         *kinds["drude"].poles])
    ref = _cavity(mixed, steps=200, dtype="float64").run(progress=False)["p"].data
    cas = _cavity(mixed, steps=200, dtype="float64", storage="arrays").run(progress=False)
    monkeypatch.setattr("emjax.fdtd.setup.tfsf_fold", lambda: True)
    folded = _cavity(mixed, steps=200, dtype="float64").run(progress=False)["p"].data
    for c in ("Ex", "Ey", "Ez"):
        scale = np.abs(ref[c]).max()
        assert scale > 0
        for other in (cas["p"].data, folded):
            assert np.max(np.abs(other[c] - ref[c])) <= 1e-12 * scale, c


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polarization_bytes_counted_and_box_only(dtype):
    mixed = em.PoleMedium(poles=[em.LorentzPole(delta_eps=1.0, omega_0=1e11, delta=1e9),
                                 em.DebyePole(delta_eps=2.0, tau=1e-11),
                                 em.DrudePole(omega_p=1e11, gamma=1e9)])
    small = _cavity(mixed, steps=5, dtype=dtype)
    big = small.model_copy(update={"domain": em.Domain(shape=(20, 25, 30), spacing=1e-3)})
    solver = FDTDSolver(small)
    state = solver.init_state()
    actual = sum(a.nbytes for a in jax.tree_util.tree_leaves(state.disp))
    boxes = solver.setup.dispersive.boxes
    cells = sum(np.prod(b.shape) for b in boxes)
    # Lorentz: P and J; Debye: P; Drude: J -> 4 arrays per cell and component
    assert actual == cells * 4 * np.dtype(dtype).itemsize
    assert memory.estimate(small)["polarization"] == actual
    assert memory.estimate(big)["polarization"] == actual
    assert "polarization" not in memory.estimate(_cavity(em.Medium(eps_r=2), steps=5))


def test_resume_is_bitwise_exact(resumed_equals_whole):
    whole = resumed_equals_whole(FDTDSolver, _cavity(POLES["lorentz"], steps=60))
    assert np.abs(whole["p"].data["Ez"]).max() > 0


def test_fdfd_evaluates_eps_at_its_frequency():
    from emjax.fdfd.setup import build

    f = 3e9
    eps = complex(WATER.eps(f))
    const = em.Medium(eps_r=eps.real, sigma=-TWO_PI * f * em.eps0 * eps.imag)

    def sim(m):
        return em.FDFD3D(domain=em.Domain(shape=(32, 32, 32), spacing=2e-3), frequency=f,
                         structures=[em.Structure(geometry=em.Sphere(radius=5e-3), medium=m)])

    a, b = build(sim(WATER)), build(sim(const))
    assert np.abs(a.eps).max() > 40 * em.eps0
    np.testing.assert_allclose(a.eps, b.eps, rtol=1e-12)
    np.testing.assert_array_equal(a.mu, b.mu)


def test_unsupported_places_are_refused():
    # a PoleMedium background runs in FDTD3D (tests/fdtd/test_dispersive_background.py),
    # FDTD2D's stays a constant Medium
    from emjax.model.scenario2d import FDTD2D

    with pytest.raises(pydantic.ValidationError, match="background"):
        FDTD2D.model_validate({
            "domain": {"shape": (10, 10), "spacing": 1e-3}, "steps": 5,
            "boundary": {"type": "PEC"}, "background": WATER.model_dump()})
