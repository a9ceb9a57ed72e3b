"""Benchmark: seed 001's car, a PEC body of boxes and cylinders lit by a plane wave.

Records ``{"case", "size", "metric", "value", "unit", "device"}``:

- throughput of the full step (TF/SF plane wave, 10-cell CPML, NearToFar box and a
  DFT plane), counting all cells and counting non-PML cells as seed 001 does,
  beside the seed's 287 Mcells/s (first-order Mur ABC, Tesla C1060);
- the same with the TF/SF patches folded (zero-padded) into the fused update instead
  of added in place afterwards (``update3d.Layout.tfsf_fold``, which the lowering
  picks per backend), to check that choice;
- the same scenario without source and monitors, to show what they cost;
- the complete run's wall time, and the backscatter RCS at 600 MHz.

The run saves ``car-rcs-rcs.png`` (bistatic RCS in dBsm in the plane of incidence and
across it) and ``car-rcs-H.png`` (|H| at 600 MHz on a horizontal slice through the
body) in the folder ``figures`` (``emjax bench --figures DIR``; default the working
directory). On a GPU the built-in scenario runs as written (519 x 239 x 159 cells); on
a CPU the same car runs on 3.6 cm cells (173 x 80 x 53) with a 6-cell CPML, so that it
takes well under a minute.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..records import Measurement
from .common import on_gpu, time_chunks

SEED_MCELLS = 287.0
"""Seed 001, car example, Mur ABC on a Tesla C1060 (Mcells/s, non-PML cells)."""


def car_scenario(full: bool | None = None):
    """The ``car-rcs`` built-in scenario, at full size (GPU) or reduced (CPU)."""
    from ..scenarios import load_builtin

    sim = load_builtin("car-rcs")
    full = on_gpu() if full is None else full
    if full:
        return sim
    data = sim.model_dump(mode="json", exclude_none=True)
    data["domain"] = {"shape": [173, 80, 53], "spacing": 0.036}
    data["boundary"] = {"type": "CPML", "thickness": 6}
    data["sources"][0]["box_margin"] = 2
    data["monitors"][0]["margin"] = 1
    data["monitors"][1]["size"] = [5.6, 2.3, 0.0]
    return type(sim).model_validate(data)


def time_scenario(sim, steps: int, repeats: int = 3, tfsf_fold: bool | None = None) -> float:
    """Median seconds per step of the jitted chunk (compilation excluded); ``tfsf_fold``
    overrides the layout's TF/SF choice (None: the lowering's, per backend)."""
    import dataclasses

    from ..fdtd.solver import FDTDSolver

    solver = FDTDSolver(sim, chunk=steps)
    if tfsf_fold is not None:
        lay = dataclasses.replace(solver.setup.layout, tfsf_fold=tfsf_fold)
        solver.setup = dataclasses.replace(solver.setup, layout=lay)
    return time_chunks(solver, steps, repeats)[0]


def car_rcs(full: bool | None = None, steps: int | None = None,
            figures: str | Path = ".") -> list[Measurement]:
    """See the module docstring; figures go into the folder ``figures``."""
    from ..plot import plot_magnitude, plot_rcs

    sim = car_scenario(full)
    steps = steps or (200 if on_gpu() else 20)
    cells = math.prod(sim.domain.cells)
    t = sim.boundary.thickness
    inner = math.prod(n - 2 * t for n in sim.domain.cells)
    size = "x".join(map(str, sim.domain.cells))
    recs = []

    def rec(metric: str, value: float, unit: str) -> None:
        recs.append(Measurement("car-rcs", size, metric, value, unit))

    bare = type(sim).model_validate({**sim.model_dump(mode="json", exclude_none=True),
                                     "sources": [], "monitors": []})
    variants = (("full step (TF/SF added in place + NearToFar + DFT)", sim, False),
                ("full step (TF/SF folded into the update + NearToFar + DFT)", sim, True),
                ("bare step", bare, None))
    for label, s, how in variants:
        sps = time_scenario(s, steps, tfsf_fold=how)
        rec(f"{label}: all cells", cells / sps / 1e6, "Mcells/s")
        rec(f"{label}: non-PML cells", inner / sps / 1e6, "Mcells/s")
    rec("seed 001 (Mur ABC, Tesla C1060): non-PML cells", SEED_MCELLS, "Mcells/s")

    res = sim.run(progress=False)
    rec("complete run: wall time", res.metadata["wall_time_s"], "s")
    rec("complete run: steps", sim.num_steps, "")
    pw = sim.sources[0]
    back_th, back_ph = 180.0 - pw.theta, (pw.phi + 180.0) % 360.0
    rec("backscatter RCS at 600 MHz", float(res["far"].rcs_dbsm(back_th, back_ph, 600e6,
                                                                degrees=True)), "dBsm")
    out = Path(figures)
    out.mkdir(parents=True, exist_ok=True)
    plot_rcs(res["far"], phi=(pw.phi % 360.0, (pw.phi + 90.0) % 360.0), frequency=600e6,
             path=out / "car-rcs-rcs.png")
    plot_magnitude(res["h_slice"], ("Hx", "Hy", "Hz"), axis="z", path=out / "car-rcs-H.png")
    peak = np.nanmax(res["far"].rcs_dbsm(np.arange(0, 181, 2.0)[:, None],
                                         np.arange(0, 360, 4.0)[None, :], 600e6, degrees=True))
    rec("largest bistatic RCS at 600 MHz", peak, "dBsm")
    return recs


CASES: dict[str, Callable[..., list[Measurement]]] = {"car-rcs": car_rcs}
