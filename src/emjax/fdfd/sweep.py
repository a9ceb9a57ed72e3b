"""An FDFD3D frequency sweep: every frequency solved by one compiled Krylov loop.

Everything that depends on the frequency (omega, the PML stretch factors, the eps and
mu tables, the right-hand side and the preconditioner's factors) lives in the operands
of the jitted ``init``/``step`` of :mod:`emjax.fdfd.krylov`, never in the compiled code,
and their shapes do not change from one frequency to the next (the coefficient tables
are padded, :func:`emjax.fdfd.solver._padded`): the first frequency compiles, the others
reuse its executables. ``compiles`` in each frequency's metadata counts the backend
compilations during its solve (0 after the first; :func:`compile_counter`).

With ``solver.warm_start`` each solve starts from the previous frequency's scattered
field (:func:`emjax.fdfd.solver.initial_guess`) instead of zero.

The Results hold one ``"scattered"`` entry whose fields have the frequency as leading
axis (F, nx, ny, nz) and ``coords["f"]`` the F frequencies in Hz (a single solve is the
case F = 1), ``frequencies``, summed ``iterations``, ``per_frequency`` (frequency_hz,
iterations, relative_residual, converged, set-up, compile and solve times, compiles,
residual history) and the RCS as (F, angles) lists.
"""

from __future__ import annotations

import time

import numpy as np

from ..driver.compile_cache import cache_report, compile_counter, mark
from ..driver.loop import progress_bar
from ..driver.memory import refuse_if_too_large
from ..errors import SetupError
from . import setup, solver


def run_sweep(sim, *, progress: bool = False, checkpoint_every: int | None = None,
              resume=None):
    """Solve ``sim`` at each of ``sim.frequencies`` in turn; see the module docstring."""
    if checkpoint_every or resume:
        raise SetupError(
            f"FDFD3D '{sim.name}': checkpoint_every/resume (got {checkpoint_every!r}, "
            f"{resume!r}) apply to a single-frequency solve, not to a sweep of "
            f"{len(sim.sweep)} frequencies; leave them out or run one frequency at a time")
    born = mark()
    compile_counter()  # listening from here on
    runs, e_prev = [], None
    bar = progress_bar(len(sim.sweep), progress, unit="freq")
    t_all = time.perf_counter()
    geo = None
    try:
        for i, f in enumerate(sim.sweep):
            one = sim.at(f)
            t_geo = time.perf_counter()
            if geo is None:  # the grid, the rasterized media and the cuts: once
                refuse_if_too_large(sim.name, setup.estimate(one))
                geo = setup.geometry(one)
            t_geo = time.perf_counter() - t_geo
            prep = solver.prepare(one, geo=geo)
            prep.setup_time += t_geo  # the first frequency's set-up holds the geometry's
            if i == 0:
                prep.stages["geometry"] = t_geo
            x0 = None
            if sim.solver.warm_start and e_prev is not None:
                x0 = solver.initial_guess(prep, e_prev)
            n0, c0 = compile_counter()
            t0 = time.perf_counter()
            e, kres = solver.solve(prep, x0=x0)
            e = e.block_until_ready()
            wall = time.perf_counter() - t0
            n1, c1 = compile_counter()
            solver.check_converged(one, prep.krylov, kres, kres.iterations,
                                   at=f" at frequencies[{i}] = {f:.6g} Hz")
            res = solver._results(one, prep, e, kres, kres.history, 0, wall,
                                  rcs=bool(sim.rcs), compile_time_s=min(c1 - c0, wall),
                                  solve_time_s=max(wall - (c1 - c0), 0.0), compiles=n1 - n0)
            runs.append(res)
            e_prev = e
            bar.update(1)
            bar.set_postfix_str(f"{kres.iterations} it")
    finally:
        bar.close()
    return _merge(sim, runs, time.perf_counter() - t_all, cache_report(born))


_PER = ("iterations", "matvecs", "relative_residual", "converged", "setup_time_s",
        "compile_time_s", "solve_time_s", "wall_time_s", "compiles", "residual_history")


def _merge(sim, runs: list, wall: float, cache: dict):
    """One Results of the per-frequency ``runs``: fields stacked on the frequency axis."""
    from ..results import MonitorData, Results

    first = runs[0].monitors["scattered"]
    data = {c: np.concatenate([r.monitors["scattered"].data[c] for r in runs])
            for c in first.data}
    coords = {**first.coords, "f": np.asarray(sim.sweep, dtype=np.float64)}
    md = MonitorData(name="scattered", kind="DFTMonitor", data=data, coords=coords,
                     attrs=dict(first.attrs))
    metas = [r.metadata for r in runs]
    meta = dict(metas[0])
    per = [{"frequency_hz": f, **{k: m[k] for k in _PER}}
           for f, m in zip(sim.sweep, metas, strict=True)]
    meta.update({
        "frequencies": list(sim.sweep), "per_frequency": per,
        "iterations": sum(m["iterations"] for m in metas),
        "matvecs": sum(m["matvecs"] for m in metas),
        "relative_residual": max(m["relative_residual"] for m in metas),
        "converged": all(m["converged"] for m in metas),
        "residual_history": [m["residual_history"] for m in metas],
        "setup_stages": _summed([m["setup_stages"] for m in metas]),
        "wall_time_s": wall, "warm_start": sim.solver.warm_start,
        **{k: sum(m[k] for m in metas) for k in ("setup_time_s", "compile_time_s",
                                                  "solve_time_s", "compiles")},
        **cache,
    })
    if "rcs_E_dBsm" in meta:
        for p in ("E", "H"):
            meta[f"rcs_{p}_dBsm"] = [m[f"rcs_{p}_dBsm"] for m in metas]
    return Results(scenario=sim, monitors={"scattered": md}, metadata=meta)


def _summed(stages: list[dict]) -> dict:
    """Seconds per set-up stage over every frequency."""
    out: dict = {}
    for st in stages:
        for k, v in st.items():
            out[k] = round(out.get(k, 0.0) + v, 4)
    return out


__all__ = ["run_sweep"]
