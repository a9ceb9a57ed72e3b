"""Where an FDFD3D frequency sweep's time goes outside the Krylov solves (issue #24).

Seed 000's sphere at ``n``^3 cells (PML 10 from 64^3 up), ``count`` frequencies from
0.8 to 1.2 GHz, preconditioned COCG to 1e-6, no RCS. Runs the sweep twice (the first
compiles) and profiles the second with cProfile: cumulative and own times of the
busiest functions, and the sweep's own split (set-up, compile, solve).

Usage: python benchmarks/fdfd_sweep_profile.py [n] [count]
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
import warnings

import numpy as np

from emjax.scenarios.sphere import FREQ, SIZE, sphere_scenario


def main(n: int = 96, count: int = 20) -> None:
    base = sphere_scenario(SIZE / n, tol=1e-6, thickness=10 if n >= 64 else max(4, n // 6))
    fs = [float(f) for f in np.linspace(0.8 * FREQ, 1.2 * FREQ, count)]
    sim = type(base).model_validate({**base.model_dump(), "frequencies": fs,
                                     "frequency": None, "rcs": False})
    warnings.simplefilter("ignore")
    for label in ("first (compiles)", "second"):
        pr = cProfile.Profile()
        pr.enable()
        t = time.perf_counter()
        m = sim.run(progress=False).metadata
        wall = time.perf_counter() - t
        pr.disable()
        print(f"{label}: wall {wall:.3f} s, set-up {m['setup_time_s']:.3f}, compile "
              f"{m['compile_time_s']:.3f}, solve {m['solve_time_s']:.3f}, "
              f"iterations {m['iterations']}", flush=True)
    st = pstats.Stats(pr)
    st.sort_stats("cumulative").print_stats(40)
    st.sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
