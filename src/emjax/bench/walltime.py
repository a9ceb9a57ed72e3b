"""How long a run will take on the device at hand, before it starts (``emjax run --dry-run``).

The time-domain steps are memory-bound (BENCHMARKS.md: the 3D Yee step moves 72-75 B
per cell at 0.84 of the H100's copy bandwidth, the 2D step 36 B per cell at 0.97, the
DGA step its operators' unique bytes at about 0.5), so a step's time is modelled as

    seconds per step = bytes the step moves / (efficiency x copy bandwidth)

with the copy bandwidth measured on the device at hand (:func:`copy_bandwidth` on a
64 MiB buffer on a CPU, 1 GiB on a GPU: one small jit, about a second) and the efficiency read from
:data:`EFFICIENCY` (GPU: BENCHMARKS.md; CPU: measured
with XLA's CPU backend: the 48^3 cube reached 0.11-0.21 and the 256^2 square 0.035-0.057
of the copy measured beside it, on a shared and loaded 2-core host, so the CPU rows are
rough; DGATD's CPU row is a guess, not a measurement). The wall time
is ``steps x seconds per step``; compilation (seconds), set-up, monitors that touch
much data every step (energy, snapshots) and the host's share of the run are not
counted, so the figure is a rough lower bound for monitor-heavy runs.

FDFD3D is not estimated: its cost is the Krylov iteration count, which depends on the
medium contrast, the frequency and the preconditioner and is not known before the solve.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

EFFICIENCY = {
    ("gpu", "FDTD3D"): 0.84, ("gpu", "FDTD2D"): 0.97, ("gpu", "DGATD"): 0.5,
    ("cpu", "FDTD3D"): 0.15, ("cpu", "FDTD2D"): 0.05, ("cpu", "DGATD"): 0.05,
}
"""Fraction of the measured copy bandwidth each solver's step reaches, by backend
(``jax.default_backend()``: 'gpu' or 'cpu'; other backends use the CPU row)."""


@dataclass(frozen=True)
class WallTime:
    """A wall-time estimate: ``seconds`` (None where not estimated), the number of
    ``steps``, the bytes one step moves on one device, and ``how``: the method and its
    inputs, printed with the figure."""

    seconds: float | None
    steps: int | None
    bytes_per_step: float | None
    how: str

    def line(self) -> str:
        """One line for ``emjax run --dry-run``."""
        if self.seconds is None:
            return f"estimated wall time: not estimated ({self.how})"
        return (f"estimated wall time: {format_duration(self.seconds)} ({self.steps} steps of "
                f"{self.seconds / self.steps:.3g} s; {self.how})")


def format_duration(s: float) -> str:
    """Seconds as '850 ms', '42 s', '7.1 min', '6.9 h' or '3.2 d'."""
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    for limit, unit, scale in ((120, "s", 1), (7200, "min", 60), (172800, "h", 3600)):
        if s < limit:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 86400:.3g} d"


def step_bytes(sim, need: dict[str, int] | None = None) -> float | None:
    """Bytes one time step moves (read plus write), from the scenario's size and
    precision; None for FDFD3D. ``need``: the memory estimate (DGATD needs it; computed
    when None)."""
    kind = getattr(sim, "type", None)
    if kind == "FDTD3D":
        isz = 4 if sim.dtype == "float32" else 8
        # CIS: 6 components read twice and written once plus about 3 B of material
        # indices (BENCHMARKS.md: 72 + 3 B at float32); CAS reads 12 coefficient arrays
        per_cell = isz * (18 + (12 if sim.storage == "arrays" else 0)) + 3
        return float(per_cell * math.prod(sim.domain.cells))
    if kind == "FDTD2D":
        isz = 4 if getattr(sim, "dtype", "float32") == "float32" else 8
        return float((isz * 9 + 2) * math.prod(sim.domain.cells))
    if kind == "DGATD":
        need = sim.estimate() if need is None else need
        # every operator array read once, the fields read and written
        return float(2 * need["fields"] + need["faraday"] + need["ampere"]
                     + need.get("sparse_matrices", 0))
    return None


def measured_bandwidth(nbytes: int | None = None) -> tuple[float, str]:
    """(copy bandwidth in B/s, the device's name) of JAX's first device, timed on a
    buffer of ``nbytes`` (:func:`emjax.bench.common.copy_bandwidth`; default 64 MiB on
    a CPU, 1 GiB on an accelerator, whose 50 MiB L2 cache a smaller buffer would
    flatter or whose launch overhead it would show: 64 MiB measured 1.62 TB/s on an H200,
    a third of what a run's fields stream at)."""
    from .common import copy_bandwidth, device_name, on_gpu

    if nbytes is None:
        nbytes = (1 << 30) if on_gpu() else (64 << 20)
    return copy_bandwidth(nbytes=nbytes, repeats=3, loop=5), device_name()


def steps_of(sim) -> int:
    """The run's number of time steps (a DGATD run given by duration needs its time
    step: the set-up's power iteration runs)."""
    if getattr(sim, "steps", None) is not None:
        return int(sim.steps)
    if hasattr(sim, "num_steps"):
        return int(sim.num_steps)
    from .. import registry

    prepared = registry.prepare(sim)  # DGATD: a DGASolver holding its DGASetup
    return int(getattr(prepared, "setup", prepared).steps)


def estimate_wall_time(sim, need: dict[str, int] | None = None,
                       bandwidth: tuple[float, str] | None = None,
                       devices: int = 1) -> WallTime:
    """The wall time of ``sim`` on JAX's first device (module docstring for the model).

    need: the memory estimate, if already computed; bandwidth: (B/s, device name) to
    use instead of measuring (tests, repeated calls); devices: how many devices share
    the grid (a sharded FDTD3D run: each moves its share; halo exchanges not counted).
    """
    import jax

    kind = getattr(sim, "type", type(sim).__name__)
    moved = step_bytes(sim, need)
    moved = moved / devices if moved is not None else None
    if moved is None:
        return WallTime(None, None, None, f"{kind}: the Krylov iteration count is not known "
                        "before the solve")
    backend = "gpu" if jax.default_backend() == "gpu" else "cpu"
    eff = EFFICIENCY[(backend, kind)]
    t0 = time.perf_counter()
    bw, device = bandwidth if bandwidth is not None else measured_bandwidth()
    took = time.perf_counter() - t0
    steps = steps_of(sim)
    per_step = moved / (eff * bw)
    how = (f"roofline: {moved / 2**20:.4g} MiB moved per step"
           + (f" per device ({devices})" if devices > 1 else "")
           + f" / ({eff:g} x copy bandwidth "
           f"{bw / 1e9:.3g} GB/s measured on {device}"
           + (f" in {took:.2g} s" if bandwidth is None else ", given")
           + "); compilation, set-up and heavy monitors not counted")
    return WallTime(steps * per_step, steps, moved, how)


__all__ = ["EFFICIENCY", "WallTime", "estimate_wall_time", "format_duration", "step_bytes"]
