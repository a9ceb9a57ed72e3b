"""Long-run stability of the dispersive ADE update (issue 20's stability acceptance).

Set-up: a closed PEC cavity of 6^3 cells of 1 mm holding a 3.5 mm cube of one pole
medium, a y dipole (Gaussian pulse 25 +- 10 GHz, over after 200 steps), 100,000 steps
(dt 1.9 ps, 190 ns), the energy monitor (fields plus polarization, the discrete energy
conserved by the trapezoidal ADE, fdtd/dispersive.py) every 100 steps, in float32 and
float64. Poles: Debye (tau 100 ns, lossy by nature), lossless and lossy Drude and
Lorentz (damping 2 pi 10 MHz).

Metric: after the source, the largest rise of the energy between any two samples,
relative to the earlier one, ``max_{i<j} (W_j - W_i) / W_i``. Limits, from the
measurement (CPU):

- float64: 1e-11, about eps per step over 1e5 steps: the lossless Drude's energy drifts
  up by 3.3e-12, linearly in time (a fixed rounding bias per step, as rounded update
  coefficients give; an instability would grow exponentially); the others only fall.
- float32: 2e-6, the rounding of the energy sum itself (measured 5.8e-7, one sample of
  the lossless Drude; its energy falls by 1e-4 over the run, the Lorentz's by 2.4e-3:
  float32 rounding dissipates here).

No growth at the end: the last sample is not above the first after the source (within
the same limit), and the lossless media keep their energy (float64 within 1e-10,
float32 within 1%). About 1.2 s per run on the CPU (chunks of 25,000 steps).
"""

from __future__ import annotations

import numpy as np
import pytest

import emjax as em
from emjax.fdtd.solver import FDTDSolver

TWO_PI = 2 * np.pi
POLES = {
    "debye": em.PoleMedium(eps_inf=2.0, poles=[em.DebyePole(delta_eps=3.0, tau=1e-7)]),
    "drude": em.PoleMedium(poles=[em.DrudePole(omega_p=TWO_PI * 15e9, gamma=0.0)]),
    "drude-lossy": em.PoleMedium(poles=[em.DrudePole(omega_p=TWO_PI * 15e9,
                                                     gamma=TWO_PI * 1e7)]),
    "lorentz": em.PoleMedium(eps_inf=2.0, poles=[em.LorentzPole(
        delta_eps=3.0, omega_0=TWO_PI * 30e9, delta=0.0)]),
    "lorentz-lossy": em.PoleMedium(eps_inf=2.0, poles=[em.LorentzPole(
        delta_eps=3.0, omega_0=TWO_PI * 30e9, delta=TWO_PI * 1e7)]),
}
RISE = {"float32": 2e-6, "float64": 1e-11}
KEPT = {"float32": 1e-2, "float64": 1e-10}
STEPS, INTERVAL = 100_000, 100
# 6 cells across on purpose (a small, cheap cavity): the resolution advice is for users
pytestmark = pytest.mark.filterwarnings("ignore:.*cells per shortest wavelength")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", list(POLES))
def test_energy_never_rises_in_100k_steps(kind, dtype):
    sim = em.FDTD3D(
        domain=em.Domain(shape=(6, 6, 6), spacing=1e-3), boundary=em.PEC(), steps=STEPS,
        dtype=dtype,
        structures=[em.Structure(medium=POLES[kind], geometry=em.Box(
            center=(0.5e-3, 0, 0), size=(3.5e-3, 3.5e-3, 3.5e-3)))],
        sources=[em.PointDipole(position=(-2e-3, 1e-3, 0.5e-3), polarization="y",
                                waveform=em.GaussianPulse(f0=25e9, fwidth=10e9))],
        monitors=[em.EnergyMonitor(name="w", interval=INTERVAL)])
    W = FDTDSolver(sim, chunk=25_000).run(progress=False)["w"].data["energy"]
    W = W.astype(np.float64)
    wave = sim.sources[0].waveform
    first = int(2 * wave.offset * wave.tau / sim.dt / INTERVAL) + 2  # the source is over
    after = W[first:]
    later_max = np.maximum.accumulate(after[::-1])[::-1]
    rise = np.max((later_max[1:] - after[:-1]) / after[:-1])
    change = after[-1] / after[0] - 1
    print(f"{kind} {dtype}: {len(W)} samples, energy {after[0]:.4g} -> {after[-1]:.4g} J "
          f"({change:+.2e}), largest rise {rise:.2e} (limit {RISE[dtype]:g})")
    assert len(W) == STEPS // INTERVAL and np.all(np.isfinite(W)) and after[0] > 0
    assert rise <= RISE[dtype]
    assert change <= RISE[dtype]
    if "lossy" in kind or kind == "debye":
        assert change < -1e-3  # the loss shows: a test of the metric, not only of rounding
    else:
        assert abs(change) <= KEPT[dtype]
