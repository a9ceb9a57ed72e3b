"""Benchmark of an FDFD3D frequency sweep (issue #24: "compile once per shape").

``fdfd-sweep``: seed 000's sphere (:func:`emjax.scenarios.sphere.sphere_scenario`) at
``n``^3 cells (96 on a GPU, 32 elsewhere; PML 10 cells from 64^3 up, else n / 6),
``count`` frequencies (20) evenly from
0.8 to 1.2 GHz, the default preconditioned COCG to 1e-6, no RCS. Records: the sweep's
total time (set-up of every frequency, one compilation, the solves), its compile and
solve times and compilations; against the budget of the issue, ``count`` x the
single-frequency solve (1 GHz, timed after its compilation) plus one compilation; and
the same sweep warm-started from the previous frequency (``solver.warm_start``), with
its iterations against the cold start's.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable

import numpy as np

from ..records import Measurement
from .common import on_gpu


def _run(sim):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        res = sim.run(progress=False)
        return res.metadata, time.perf_counter() - t


def fdfd_sweep(n: int | None = None, count: int = 20) -> list[Measurement]:
    """Records of the case (module docstring)."""
    import jax

    from ..scenarios.sphere import FREQ, SIZE, sphere_scenario

    n = n or (96 if on_gpu() else 32)
    # the seed's 10-cell PML below 64^3 would reach the sphere
    base = sphere_scenario(SIZE / n, tol=1e-6, thickness=10 if n >= 64 else max(4, n // 6))
    fs = [float(f) for f in np.linspace(0.8 * FREQ, 1.2 * FREQ, count)]
    jax.clear_caches()  # the sweep's one compilation is part of what is timed
    one, _ = _run(base.model_copy(update={"rcs": False}))
    compile_s = one["compile_time_s"]
    single = min(_run(base.model_copy(update={"rcs": False}))[0]["solve_time_s"]
                 for _ in range(3))
    recs = []
    size = f"{n}^3, {count} frequencies"

    def rec(metric, value, unit):
        recs.append(Measurement("fdfd-sweep", size, metric, value, unit))

    rec("single solve at 1 GHz (compiled)", single, "s")
    rec("single run: compile", compile_s, "s")
    rec("single run: set-up", one["setup_time_s"], "s")
    budget = count * single + compile_s
    rec(f"budget: {count} x single solve + one compile", budget, "s")
    for warm in (False, True):
        jax.clear_caches()
        sim = type(base).model_validate({**base.model_dump(), "frequencies": fs,
                                         "frequency": None, "rcs": False,
                                         "solver": {**base.solver.model_dump(),
                                                    "warm_start": warm}})
        m, wall = _run(sim)
        tag = "warm-started sweep" if warm else "sweep"
        rec(f"{tag}: total (set-up, compile, solves)", wall, "s")
        rec(f"{tag}: compile", m["compile_time_s"], "s")
        rec(f"{tag}: compilations after the first frequency",
            sum(p["compiles"] for p in m["per_frequency"][1:]), "")
        rec(f"{tag}: set-up", m["setup_time_s"], "s")
        rec(f"{tag}: solve", m["solve_time_s"], "s")
        rec(f"{tag}: iterations", m["iterations"], "")
        rec(f"{tag}: compile + solve / budget", (m["compile_time_s"] + m["solve_time_s"])
            / budget, "")
        rec(f"{tag}: total / budget", wall / budget, "")
    return recs


CASES: dict[str, Callable[..., list[Measurement]]] = {"fdfd-sweep": fdfd_sweep}
