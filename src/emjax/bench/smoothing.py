"""Benchmark of sub-pixel smoothing in the 3D FDTD (issue 25): what it costs.

``emjax bench subpixel``: seed 001's cube (512^3 on a GPU, 64^3 on a CPU; 10-cell
CPML, a z dipole, a probe) holding a dielectric sphere (eps_r 4.9) filling 5% of the
cells, staircased and smoothed (:mod:`emjax.grid.subpixel`: the diagonal in the media
table, the off-diagonal couplings and the diagonal's quantisation residual as the sparse
correction of :mod:`emjax.fdtd.anisotropic`). Reported: both speeds and their ratio
(issue 25 asks the smoothed run within 10% of the staircased one), the number of
corrected samples and coupled pairs, and the host-side set-up time of each (the fill
fractions, normals and couplings are computed once, vectorised, in the lowering).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable

from ..records import Measurement
from .common import on_gpu
from .dispersive import scenario
from .fdtd3d import time_scenario


def _setup_s(sim) -> tuple[float, object]:
    from ..fdtd.setup import prepare

    t = time.perf_counter()
    st = prepare(sim)
    return time.perf_counter() - t, st


def subpixel(n: int | None = None, steps: int = 100) -> list[Measurement]:
    """Speed and set-up time of the 5% sphere, staircased and smoothed."""
    n = n or (512 if on_gpu() else 64)
    steps = steps if on_gpu() else 20
    stair = scenario(n, "sphere", False, steps)
    smooth = stair.model_copy(update={"subpixel": True})
    recs = []
    speeds = {}
    with warnings.catch_warnings():  # a benchmark's pulse need not be resolved
        warnings.simplefilter("ignore")
        for label, sim in (("staircased", stair), ("smoothed", smooth)):
            setup_s, st = _setup_s(sim)
            del st
            r = time_scenario(sim, steps)
            speeds[label] = math.prod(sim.domain.cells) / r["s_per_step"]
            recs += [Measurement("subpixel", n, f"5% sphere, {label}: all cells",
                                 speeds[label] / 1e6, "Mcells/s"),
                     Measurement("subpixel", n, f"5% sphere, {label}: set-up", setup_s, "s")]
        _, st = _setup_s(smooth)
        od = st.offdiagonal
        recs += [
            Measurement("subpixel", n, "smoothed / staircased speed",
                        speeds["smoothed"] / speeds["staircased"], ""),
            Measurement("subpixel", n, "corrected E samples (sparse sites)",
                        float(sum(s.size for s in od.sites)), ""),
            Measurement("subpixel", n, "off-diagonal pairs",
                        float(sum(p[0].size for p in od.pairs)), ""),
        ]
    return recs


CASES: dict[str, Callable[..., list[Measurement]]] = {"subpixel": subpixel}
