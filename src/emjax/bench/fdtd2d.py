"""Benchmarks of the 2D FDTD kernels against seed 002's CUDA table and the copy bandwidth.

Seed 002 times one full 2D TMz step (H update, E update, Berenger split-field PML)
of a naive CUDA kernel and of a shared-memory tiled one (its GPU is not named):

    size        naive     tiled
    512^2       4.2 ms    9.8 ms
    1024^2     20.9 ms   14.5 ms
    2048^2     82.8 ms   57.4 ms

``seed002-tmz`` times our full step the same way (vacuum, 10-cell PML on all four
sides, split-field and CPML; a bare step with PEC walls for reference) at 512^2,
1024^2, 2048^2, 8192^2 and 16384^2 on a GPU (256^2 and 512^2 on a CPU): one warm-up
chunk (compilation), then the median of ``repeats`` chunks, each ended by
``block_until_ready``. Records: ms per step, Gcells/s (all cells), bytes per cell and
the fraction of measured copy bandwidth (``bench.common.copy_bandwidth``), and the
seed's times beside ours.

Bytes per cell per step (float32 TMz, two passes, outside the PML slabs): H pass
reads Ez, Hx, Hy and writes Hx, Hy (20 B); E pass reads Ez, Hx, Hy and writes Ez
(16 B): 36 B, plus 1 B per uint8 material-index array read (none in vacuum). The
PML slabs add their own traffic, which the count leaves out (slab cells / all cells
is 8% at 512^2 and 0.2% at 16384^2). On a CUDA GPU TMz with PEC walls or the CPML runs
the one-pass Pallas kernel (:mod:`emjax.fdtd.pallas2d`): 24 B per cell, +1 B of
material code where the medium varies.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..model import CPML, PEC, GaussianPulse
from ..model.scenario2d import FDTD2D, Domain2D, LineSource, SplitPML
from ..records import Measurement
from .common import STORAGES, copy_bandwidth, on_gpu, storage_records, time_chunks

SEED002_MS = {512: (4.2, 9.8), 1024: (20.9, 14.5), 2048: (82.8, 57.4)}
"""Seed 002's kernel times in ms per step: size -> (naive, shared-memory tiled)."""


def square_scenario(n: int, boundary: str = "split", steps: int = 100,
                    polarization: str = "TMz", storage_dtype: str | None = None) -> FDTD2D:
    """n x n cells of vacuum, a 10-cell PML ('split' or 'cpml') or PEC walls ('pec'), one
    line source; no monitors (the seed times bare steps)."""
    d = 1e-3
    b = {"split": SplitPML(thickness=10), "cpml": CPML(thickness=10), "pec": PEC()}[boundary]
    return FDTD2D(
        name=f"square{n}", polarization=polarization, domain=Domain2D(shape=(n, n), spacing=d),
        boundary=b, steps=steps, storage_dtype=storage_dtype,
        sources=[LineSource(position=(0.1 * d * n / 4, 0.0),
                            polarization="z" if polarization == "TMz" else "x",
                            waveform=GaussianPulse(f0=10e9, fwidth=5e9))])


def time_2d(sim: FDTD2D, steps: int, repeats: int = 3) -> dict:
    """Median seconds per step of the jitted chunk, compile seconds, bytes per cell."""
    from ..fdtd.solver2d import FDTD2DSolver

    solver = FDTD2DSolver(sim, chunk=steps)
    s_per_step, compile_s, _ = time_chunks(solver, steps, repeats)
    c, one = solver.setup.coeffs, solver.setup.onepass
    if one is not None:  # the one-pass kernel: Ez, Hx, Hy read and written once, one code
        return {"s_per_step": s_per_step, "compile_s": compile_s,
                "bytes_per_cell": 24 + int(one.has_code), "kernel": "pallas one-pass"}
    idx_bytes = sum(a.dtype.itemsize for g in ("E", "H") for a in c[g].idx or ())
    fields = 9 * (2 if sim.storage_dtype else np.dtype(sim.dtype).itemsize)
    return {"s_per_step": s_per_step, "compile_s": compile_s,
            "bytes_per_cell": fields + idx_bytes, "kernel": "xla two-pass"}


def seed002_tmz(sizes=None, steps: int | None = None,
                boundaries=("split", "cpml", "pec")) -> list[Measurement]:
    """Seed 002's table: ms per full TMz step against grid size, with Gcells/s and the
    fraction of copy bandwidth; the seed's naive and tiled times where it has them."""
    gpu = on_gpu()
    sizes = sizes or ((512, 1024, 2048, 8192, 16384) if gpu else (256, 512))
    bw = copy_bandwidth(nbytes=(2 << 30) if gpu else (256 << 20))
    recs = [Measurement("seed002-tmz", 0, "copy bandwidth", bw / 1e9, "GB/s")]

    def rec(n: int, metric: str, value: float, unit: str, device: str | None = None) -> None:
        recs.append(Measurement("seed002-tmz", n, metric, value, unit, device))

    for n in sizes:
        if n in SEED002_MS:
            rec(n, "seed 002 naive CUDA kernel", SEED002_MS[n][0], "ms", "seed 002 GPU")
            rec(n, "seed 002 tiled CUDA kernel", SEED002_MS[n][1], "ms", "seed 002 GPU")
        nsteps = steps or (max(20, min(200, int(2e10 // n**2))) if gpu else 10)
        for b in boundaries:
            r = time_2d(square_scenario(n, b, steps=nsteps), nsteps)
            cps = n * n / r["s_per_step"]
            rec(n, f"{b}: time per step", r["s_per_step"] * 1e3, "ms")
            rec(n, f"{b}: all cells", cps / 1e9, "Gcells/s")
            rec(n, f"{b}: bytes per cell per step", r["bytes_per_cell"], "B")
            rec(n, f"{b}: fraction of copy bandwidth", cps * r["bytes_per_cell"] / bw, "")
            rec(n, f"{b}: compile", r["compile_s"], "s")
            rec(n, f"{b}: one-pass Pallas kernel (1) or XLA two-pass (0)",
                float(r["kernel"] == "pallas one-pass"), "")
    return recs


def storage16_2d(n: int | None = None, steps: int | None = None) -> list[Measurement]:
    """TMz with 16-bit field storage against float32: an n x n square (8192^2 on a GPU,
    1024^2 on a CPU) with a 10-cell CPML and with PEC walls, one line source."""
    gpu = on_gpu()
    n = n or (8192 if gpu else 1024)
    steps = steps or (100 if gpu else 10)
    bw = copy_bandwidth(nbytes=(2 << 30) if gpu else (256 << 20))
    recs = [Measurement("storage16-2d", 0, "copy bandwidth", bw / 1e9, "GB/s")]
    for b in ("cpml", "pec"):
        for sd in STORAGES:
            r = time_2d(square_scenario(n, b, steps=steps, storage_dtype=sd), steps)
            recs += storage_records("storage16-2d", n, b, sd, r, n * n, bw)
    return recs


CASES: dict[str, Callable[..., list[Measurement]]] = {
    "storage16-2d": storage16_2d,
    "seed002-tmz": seed002_tmz,
}
