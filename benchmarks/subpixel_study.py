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
        got = fdtd(*rest) if kind == "fdtd" else fdfd(*rest)
        rec = {"run": a, "variant": os.environ.get("SUBPIXEL_VARIANT", ""), **got,
               "wall_s": time.perf_counter() - t}
        print(json.dumps(rec), flush=True)
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")


def _variant(name: str) -> None:
    """Experiments (not options of src/): ``meep``, each side's own kappa / 4 (not
    symmetric); ``nooff``, no off-diagonal terms; ``levNNN``, NNN quantisation levels."""
    import functools

    import emjax.grid.subpixel as sp

    if name == "meep":
        def pairs(a, b, kap_a, kap_b, shape_b):
            ps, qs, ws, wts = [], [], [], []
            for da in (0, 1):
                for db in (-1, 0):
                    delta = np.zeros(3, np.int64)
                    delta[a], delta[b] = da, db
                    idx, k = kap_a
                    ps.append(idx), qs.append(idx + delta), ws.append(k / 4)
                    wts.append(np.zeros_like(k))
                    idx, k = kap_b
                    ps.append(idx - delta), qs.append(idx), ws.append(np.zeros_like(k))
                    wts.append(k / 4)
            p, q = np.concatenate(ps), np.concatenate(qs)
            w, wt = np.concatenate(ws), np.concatenate(wts)
            ok = (p >= 0).all(1) & (q >= 0).all(1) & (q < np.asarray(shape_b)).all(1)
            key, inv = np.unique(np.concatenate([p[ok], q[ok]], 1), axis=0, return_inverse=True)
            w = np.bincount(inv.ravel(), weights=w[ok], minlength=key.shape[0])
            wt = np.bincount(inv.ravel(), weights=wt[ok], minlength=key.shape[0])
            return sp.Couplings(a, b, key[:, :3], key[:, 3:], w, wt)
        sp._pairs = pairs
    elif name == "nooff":
        sp._pairs = lambda a, b, *r: sp.Couplings(a, b, np.zeros((0, 3), int),
                                                   np.zeros((0, 3), int), np.zeros(0))
    elif name.startswith("lev"):
        sp.smooth = functools.partial(sp.smooth, levels=int(name[3:]))


if __name__ == "__main__" and os.environ.get("SUBPIXEL_VARIANT"):
    _variant(os.environ["SUBPIXEL_VARIANT"])


if __name__ == "__main__":
    main(sys.argv[1:])
