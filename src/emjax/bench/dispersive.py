"""Benchmark of dispersive media in the 3D FDTD (issue 20): what the poles cost.

``emjax bench dispersive``: seed 001's cube (512^3 on a GPU, 64^3 on a CPU; 10-cell
CPML, a z dipole, a probe) holding

- a sphere filling 5% of the cells, one-pole Debye (water-like: eps_inf 4.9, delta_eps
  74, tau 8.3 ps), against the same sphere non-dispersive (eps_r 4.9): the ratio of
  the two speeds (issue 20 asks >= 0.90);
- the same Debye medium filling the whole grid (a box over the CPML too): its speed
  against its bytes-per-cell model and the copy bandwidth (issue 20: within 10%).

Bytes per cell per step: the plain step's (:func:`emjax.bench.fdtd3d.time_scenario`)
plus, per dispersive cell and E component, the box kernel's reads of the carried
state (one array per Debye or Drude pole, two per Lorentz pole), of E^n and of the
medium row, its writes of the state and of the patch, and the update's read of the
patch (:mod:`emjax.fdtd.dispersive`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..fdtd import dispersive_setup
from ..fdtd.plan import lower_grid
from ..model import load_scenario
from ..records import Measurement
from .common import copy_bandwidth, on_gpu
from .fdtd3d import time_scenario

DEBYE = {"type": "PoleMedium", "eps_inf": 4.9,
         "poles": [{"type": "Debye", "delta_eps": 74.0, "tau": 8.3e-12}]}
"""Water-like, one pole."""


def scenario(n: int, fill: str = "sphere", dispersive: bool = True, steps: int = 100):
    """The cube with a 5% sphere (``fill="sphere"``) or a box over the whole grid
    (``"full"``) of the Debye medium, or of eps_r 4.9 (``dispersive=False``)."""
    size = n * 1e-3
    radius = size * (0.05 * 3 / (4 * math.pi)) ** (1 / 3)
    geometry = ({"type": "Sphere", "center": [0.0, 0.0, 0.0], "radius": radius}
                if fill == "sphere" else
                {"type": "Box", "center": [0.0, 0.0, 0.0], "size": [2 * size] * 3})
    return load_scenario({
        "type": "FDTD3D", "name": f"dispersive-{fill}", "steps": steps,
        "domain": {"shape": [n, n, n], "spacing": 1e-3},
        "boundary": {"type": "CPML", "thickness": 10},
        "structures": [{"geometry": geometry,
                        "medium": DEBYE if dispersive else {"type": "Medium", "eps_r": 4.9}}],
        "sources": [{"type": "PointDipole", "position": [0.0, 0.0, 0.12 * size],
                     "polarization": "z",
                     "waveform": {"type": "GaussianPulse", "f0": 2e9, "fwidth": 1e9}}],
        "monitors": [{"type": "Probe", "name": "probe",
                      "positions": [[0.0, 0.0, 0.13 * size]], "components": ["Ez"]}]})


def pole_bytes(sim) -> float:
    """Bytes per step of the dispersive boxes (the module docstring's model), from the
    lowering's first phase as the memory estimate sizes them (nothing rasterized)."""
    plan = lower_grid(sim, 1)
    item = np.dtype(plan.dtype).itemsize
    row = 1 if len(sim.pole_media) < 256 else 2  # the medium rows' uint8 / uint16
    total = 0
    for b in dispersive_setup.boxes(sim, plan.grid):
        per_cell = 2 * item * (b.n_p + b.n_j) + item + row + 2 * item
        total += per_cell * math.prod(b.shape)
    return float(total)


def _timed(sim, steps: int) -> tuple[float, float]:
    """(cells per second, bytes per cell per step of the model)."""
    import warnings

    with warnings.catch_warnings():  # a benchmark's pulse need not be resolved
        warnings.simplefilter("ignore")
        r = time_scenario(sim, steps)
    n_cells = math.prod(sim.domain.cells)
    return n_cells / r["s_per_step"], r["bytes_per_cell"] + pole_bytes(sim) / n_cells


def dispersive(n: int | None = None, steps: int = 100) -> list[Measurement]:
    """The 5% sphere's speed ratio and the full grid against its bytes model."""
    n = n or (512 if on_gpu() else 64)
    steps = steps if on_gpu() else 20
    bw = copy_bandwidth(nbytes=(2 << 30) if on_gpu() else (256 << 20))
    recs = [Measurement("dispersive", 0, "copy bandwidth", bw / 1e9, "GB/s")]
    plain, _ = _timed(scenario(n, "sphere", False, steps), steps)
    debye, _ = _timed(scenario(n, "sphere", True, steps), steps)
    full, b_full = _timed(scenario(n, "full", True, steps), steps)
    recs += [
        Measurement("dispersive", n, "5% sphere, eps_r 4.9: all cells", plain / 1e6,
                    "Mcells/s"),
        Measurement("dispersive", n, "5% sphere, one Debye pole: all cells", debye / 1e6,
                    "Mcells/s"),
        Measurement("dispersive", n, "5% sphere: dispersive / non-dispersive", debye / plain,
                    ""),
        Measurement("dispersive", n, "Debye everywhere: all cells", full / 1e6, "Mcells/s"),
        Measurement("dispersive", n, "Debye everywhere: bytes per cell per step (model)",
                    b_full, "B"),
        Measurement("dispersive", n, "Debye everywhere: model at the copy bandwidth",
                    bw / b_full / 1e6, "Mcells/s"),
        Measurement("dispersive", n, "Debye everywhere: measured / model",
                    full * b_full / bw, ""),
    ]
    return recs


CASES: dict[str, Callable[..., list[Measurement]]] = {"dispersive": dispersive}
