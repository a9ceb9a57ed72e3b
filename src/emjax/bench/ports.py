"""Benchmark of batched port excitations (issue 21): an N-port S-matrix from one run.

``emjax bench ports``: the seed-001 MRI coil and phantom (312 x 328 x 325 cells at 4 mm
on a GPU, 24 mm on a CPU) with its eight rungs fed by 50-ohm lumped ports, a pulse
around 128 MHz, the head's DFT box recorded; a fixed number of steps. Timed:

- one run exciting one rung (the others passive): the cost of one column of S the
  way a loop over single runs pays it, compilation included;
- one batched run exciting each rung in turn (``port_excitation = "each"``,
  :mod:`emjax.fdtd.excitations`): all eight columns.

The figure of merit is the batched run's wall time over eight single runs'; the steady
rates (cells x excitations per second, compilation excluded) say how much of the gain
is the shared compilation and how much the batched kernels.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable

from ..records import Measurement
from .common import on_gpu


def coil(spacing: float, steps: int, mode: str):
    """The ported coil on ``spacing`` m cells, ``steps`` steps; ``mode`` "each" (every
    rung excited, batched) or "single" (rung 0 excited, the others passive)."""
    from ..scenarios.mri import mri_coil

    shape = tuple(max(24, round(n * 4e-3 / spacing)) for n in (312, 328, 325))
    sim = mri_coil(shape=shape, spacing=spacing, drive="pulse", port_impedance=50.0,
                   name="coil-ports")
    update: dict = {"duration": None, "steps": steps}
    if mode == "single":
        update["port_excitation"] = "simultaneous"
        update["sources"] = [s.model_copy(update={"excite": k == 0, "waveform": s.waveform
                                                  if k == 0 else None})
                             for k, s in enumerate(sim.sources)]
    return sim.model_copy(update=update)


def _run(sim) -> tuple[float, float]:
    """(wall s incl. compilation, steady cells x excitations per second)."""
    with warnings.catch_warnings():  # a benchmark's short run need not resolve its pulse
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        res = sim.run(progress=False, chunk=max(sim.num_steps // 4, 1))
        wall = time.perf_counter() - t0
    return wall, float(res.metadata["cells_per_s"])


def ports(spacing: float | None = None, steps: int | None = None) -> list[Measurement]:
    """Eight single-excitation runs against one batched run of the coil's 8 ports."""
    spacing = spacing or (4e-3 if on_gpu() else 24e-3)
    steps = steps or (800 if on_gpu() else 80)
    single, batched = coil(spacing, steps, "single"), coil(spacing, steps, "each")
    n = len(batched.sources)
    size = "x".join(map(str, batched.domain.cells))
    t1, r1 = _run(single)
    tb, rb = _run(batched)
    case = "ports"
    return [
        Measurement(case, size, f"one excitation, {steps} steps: wall (incl. compile)", t1,
                    "s"),
        Measurement(case, size, f"{n} single runs: wall (n x one)", n * t1, "s"),
        Measurement(case, size, f"one batched run of {n} excitations: wall", tb, "s"),
        Measurement(case, size, f"batched / {n} single runs: wall", tb / (n * t1), ""),
        Measurement(case, size, "one excitation: steady rate", r1 / 1e6, "Mcells/s"),
        Measurement(case, size, f"batched: steady rate, cells x {n} excitations",
                    rb / 1e6, "Mcells/s"),
    ]


CASES: dict[str, Callable[..., list[Measurement]]] = {"ports": ports}
