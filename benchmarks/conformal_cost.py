"""Cost of the 3D conformal PEC (locally implicit cut faces) against staircasing.

An n^3 grid with a 10-cell CPML holding a PEC sphere of radius n/6 cells, a z dipole
and a probe, at courant 0.99, float32; each variant's set-up wall time, then 3 timed
chunks of ``steps`` steps after a warm-up chunk (median). Prints and writes JSON.

    python benchmarks/conformal_cost.py 256 512 --steps 200 --out conformal_cost.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import jax

import emjax as em
from emjax.fdtd.solver import FDTDSolver


def scenario(n: int, conformal: bool) -> em.FDTD3D:
    d = 1e-3
    half = n * d / 2
    return em.FDTD3D(
        domain=em.Domain(shape=(n, n, n), spacing=d, origin=(-half,) * 3),
        structures=[em.Structure(geometry=em.Sphere(center=(0.3 * d, 0.2 * d, 0.1 * d),
                                                    radius=n * d / 6), medium=em.PEC())],
        sources=[em.PointDipole(position=(-0.6 * half, 0.1 * half, 0.0), polarization="z",
                                waveform=em.GaussianPulse(f0=3e10, fwidth=1.5e10))],
        monitors=[em.Probe(name="p", positions=[(0.6 * half, 0.0, 0.0)], components=["Ez"])],
        boundary=em.CPML(thickness=10), steps=1000, conformal_pec=conformal)


def measure(n: int, conformal: bool, steps: int) -> dict:
    t0 = time.perf_counter()
    solver = FDTDSolver(scenario(n, conformal))
    setup_s = time.perf_counter() - t0
    state = solver.init_state()
    state, *_ = solver.advance(state, 0, steps)
    jax.block_until_ready(state.E)
    times = []
    for k in range(3):
        t = time.perf_counter()
        state, *_ = solver.advance(state, (k + 1) * steps, steps)
        jax.block_until_ready(state.E)
        times.append(time.perf_counter() - t)
    per_step = statistics.median(times) / steps
    out = {"n": n, "conformal": conformal, "setup_s": setup_s, "ms_per_step": per_step * 1e3,
           "gcells_per_s": n**3 / per_step / 1e9, "device": jax.devices()[0].device_kind}
    if conformal:
        system = solver.setup.conformal[0]
        out.update(cut_faces=int(system["A"].shape[0]), degree=system["static"]["degree"],
                   bounds=list(system["static"]["bounds"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sizes", type=int, nargs="+")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    rows = []
    for n in a.sizes:
        for conformal in (False, True):
            rows.append(measure(n, conformal, a.steps))
            print(json.dumps(rows[-1]), flush=True)
            if a.out:
                with open(a.out, "w") as f:
                    json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
