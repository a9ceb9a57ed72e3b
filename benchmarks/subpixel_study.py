"""Convergence study of sub-pixel smoothing on seed 000's sphere (FDTD3D, and FDFD).

Each argument is a run: ``fdtd:SPACING_MM:SMOOTH:DURATION_NS:DTYPE`` or
``fdfd:CELLS:SMOOTH``; one JSON line per run (RMS and max dB error per plane against
Mie, wall time) is printed and appended to ``$OUT/subpixel_study.jsonl``. Issue #25.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings

import numpy as np


def fdtd(spacing_mm: str, smooth: str, duration_ns: str, dtype: str) -> dict:
    from emjax.validation.scatter import rcs_errors, sphere_scenario

    sim = sphere_scenario(float(spacing_mm) * 1e-3, subpixel=smooth == "1",
                          duration=float(duration_ns) * 1e-9, dtype=dtype)
    res = sim.run(progress=False)
    return {p: {"rms": v[0], "max": v[1]} for p, v in rcs_errors(res, 0.072, 4.0).items()}


def fdfd(cells: str, smooth: str) -> dict:
    from emjax.scenarios.sphere import sphere_scenario
    from emjax.validation.fdfd import rcs_errors

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sphere_scenario(0.32 / int(cells), subpixel=smooth == "1").run()
    return {p: {"rms": float(np.sqrt(np.mean(e**2))), "max": float(e.max())}
            for p, e in rcs_errors(res).items()}


def main(args: list[str]) -> None:
    out = os.path.join(os.environ.get("OUT", "/tmp"), "subpixel_study.jsonl")
    for a in args:
        kind, *rest = a.split(":")
        t = time.perf_counter()
        rec = {"run": a, **(fdtd(*rest) if kind == "fdtd" else fdfd(*rest)),
               "wall_s": time.perf_counter() - t}
        print(json.dumps(rec), flush=True)
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
