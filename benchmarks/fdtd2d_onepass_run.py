"""The one-pass TMz kernel through the whole solver (issue 23): a run with monitors.

An n x n TMz run (1 mm cells, 10-cell CPML, a lossy disc, a line source, a probe and a
DFT plane of half the grid) through ``FDTD2DSolver.run`` twice in one process, with the
one-pass Pallas kernel (the GPU default) and with the XLA step (the one-pass path
switched off), reporting each run's own ``cells_per_s``, compile and wall time, and
the largest difference of the probe and DFT results relative to the XLA run's peak.

Usage: python benchmarks/fdtd2d_onepass_run.py [n] [steps] [TMz|TEz] [scan|while]
(GPU; JSON lines). ``while``: every chunk as a while loop of its steps (the driver's
``tail_policy(True)``, which short runs on an accelerator take), 300-step chunks.
"""

from __future__ import annotations

import json
import sys

import numpy as np

import emjax as em
from emjax.driver.monitors import tail_policy
from emjax.fdtd import setup2d
from emjax.fdtd.solver2d import FDTD2DSolver

MM = 1e-3


def scenario(n: int, steps: int, pol: str = "TMz") -> em.FDTD2D:
    return em.FDTD2D(
        name=f"onepass-run-{n}", polarization=pol, domain=em.Domain2D(shape=(n, n),
                                                                     spacing=MM),
        steps=steps, boundary=em.CPML(thickness=10),
        structures=[em.Structure2D(geometry=em.Circle(center=(0.1 * n * MM, 0.0),
                                                      radius=0.2 * n * MM),
                                   medium=em.Medium(eps_r=4.0, sigma=0.05))],
        sources=[em.LineSource(position=(-0.2 * n * MM, 0.0),
                               polarization="z" if pol == "TMz" else "y",
                               waveform=em.GaussianPulse(f0=3e9, fwidth=2e9))],
        monitors=[em.Probe(name="p", positions=[(0.3 * n * MM, 0.1 * n * MM, 0.0)]),
                  em.DFTMonitor(name="dft", size=(0.5 * n * MM, 0.5 * n * MM, 0),
                                frequencies=[3e9],
                                components=["Ez" if pol == "TMz" else "Hz"])])


def main(n: int = 8192, steps: int = 2000, pol: str = "TMz", policy: str = "scan") -> None:
    sim = scenario(n, steps, pol)
    out = {}
    for name, on in (("pallas", True), ("xla", False)):
        setup2d.one_pass_backend = (lambda v: (lambda: v))(on)
        with tail_policy(policy == "while"):  # every chunk a while loop of its steps
            res = FDTD2DSolver(sim, chunk=300).run(progress=False)
        m = res.metadata
        out[name] = res
        print(json.dumps({"n": n, "steps": steps, "pol": pol, "policy": policy,
                          "kernel": m["kernel"],
                          "gcells_s": m["cells_per_s"] / 1e9, "compile_s": m["compile_time_s"],
                          "wall_s": m["wall_time_s"]}), flush=True)
    a, b = out["pallas"], out["xla"]
    err = {f"{mon}.{c}": float(np.abs(a[mon].data[c] - x).max() / np.abs(x).max())
           for mon in ("p", "dft") for c, x in b[mon].data.items()}
    print(json.dumps({"rel_diff_vs_xla": err}), flush=True)


if __name__ == "__main__":
    main(*(int(v) for v in sys.argv[1:3]), *sys.argv[3:5])
