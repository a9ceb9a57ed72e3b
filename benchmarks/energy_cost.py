"""What the FDTD energy monitor costs per step, and why (found in issue #19's check:
the 512^3 cube with an energy monitor ran at 7.5 Gcells/s against 35.8 without).

Variants of one 512^3 float32 run (10-cell CPML, a dipole, a probe), each timed as the
median of 3 chunks of 100 steps after a compiling chunk, through ``FDTDSolver.advance``:

- ``none``: no energy monitor;
- ``every``: an energy monitor sampled every step (interval 1), as built;
- ``every10``: sampled every 10th step (interval 10: the ``lax.cond`` skips the sum);
- ``nocond``: interval 1 with the ``lax.cond`` of ``driver.monitors.sampled`` replaced
  by a plain call (an experiment, patched here: the question is whether the cond
  around the reduction stops XLA from updating the fields in place);
- ``hnew``: interval 1, the magnetic part from H_new . H_new instead of H_old . H_new
  (not the conserved energy: an experiment on whether keeping H_old alive is the cost);
- ``pec-none`` / ``pec-every``: PEC walls instead of the CPML, without and with the
  monitor (whether the CPML slab corrections are what the monitor slows).

Usage (GPU machine): ``python benchmarks/energy_cost.py --out $OUT/energy.jsonl``
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import jax


def scenario(interval: int | None, n: int, boundary: str = "CPML"):
    from emjax.model import load_scenario

    monitors = [{"type": "Probe", "name": "probe", "positions": [[2e-3, 0.0, 0.0]],
                 "components": ["Ez"]}]
    if interval:
        monitors.append({"type": "EnergyMonitor", "name": "energy", "interval": interval})
    return load_scenario({
        "type": "FDTD3D", "name": "energy-cost", "steps": 400,
        "domain": {"shape": [n, n, n], "spacing": 1e-3},
        "boundary": {"type": "CPML", "thickness": 10} if boundary == "CPML" else {"type": boundary},
        "sources": [{"type": "PointDipole", "position": [0.0, 0.0, 0.0], "polarization": "z",
                     "waveform": {"type": "GaussianPulse", "f0": 10e9, "fwidth": 5e9}}],
        "monitors": monitors})


def timed(sim, chunk: int = 100, repeats: int = 3) -> float:
    """Gcells/s (all cells) of ``repeats`` chunks after a compiling one."""
    from emjax.fdtd.solver import FDTDSolver

    solver = FDTDSolver(sim, chunk=chunk)
    state = solver.init_state()
    state, ys, _ = solver.advance(state, 0, chunk)
    jax.block_until_ready(state)
    times = []
    for r in range(repeats):
        t0 = time.perf_counter()
        state, ys, _ = solver.advance(state, (r + 1) * chunk, chunk)
        jax.block_until_ready((state, ys))
        times.append(time.perf_counter() - t0)
    cells = solver.rate_unit[0]
    return cells * chunk / statistics.median(times) / 1e9


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--n", type=int, default=512)
    a = p.parse_args()
    from emjax.driver import monitors
    from emjax.fdtd import solver as fdtd_solver

    energy = fdtd_solver._energy
    variants = (("none", None, "CPML"), ("every", 1, "CPML"), ("every10", 10, "CPML"),
                ("nocond", 1, "CPML"), ("hnew", 1, "CPML"), ("pec-none", None, "PEC"),
                ("pec-every", 1, "PEC"))
    for variant, interval, boundary in variants:
        if variant == "nocond":
            fdtd_solver.sampled = lambda n, interval, value, dtype: value()
        if variant == "hnew":
            fdtd_solver._energy = lambda E, H_old, H_new, *rest: energy(E, H_new, H_new, *rest)
        rate = timed(scenario(interval, a.n, boundary))
        fdtd_solver.sampled, fdtd_solver._energy = monitors.sampled, energy
        record(a.out, variant, a.n, rate)


def record(out: str, variant: str, n: int, rate: float) -> None:
    """Print one JSON row and append it to ``out``."""
    row = {"variant": variant, "n": n, "gcells_per_s": rate,
           "device": jax.devices()[0].device_kind}
    print(json.dumps(row), flush=True)
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
