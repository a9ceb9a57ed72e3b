"""Benchmarks: throughput of the kernels against the device's copy bandwidth.

Each case returns records ``{"case", "size", "metric", "value", "unit", "device"}``.
Timings exclude compilation: one warm-up chunk, then the median of ``repeats``
timed chunks, each ended by ``block_until_ready``. Throughput is reported in cells
per second counting every cell, and counting only non-PML cells as seed 001 does;
the roofline fraction is (cells/s x bytes moved per cell per step) / copy bandwidth.

Bytes per cell per step of the bulk two-pass update (float32): the H pass reads
E and H and writes H (9 arrays), the E pass likewise (9 arrays), 72 B; each
material index array read adds 1 B (uint8) per component.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import jax
import numpy as np

from ..model import (
    CPML,
    FDTD3D,
    PEC,
    DFTMonitor,
    Domain,
    GaussianPulse,
    Medium,
    PointDipole,
    Probe,
    Sphere,
    Structure,
)
from .common import copy_bandwidth, device_name, on_gpu


def cube_scenario(n: int, *, thickness: int = 10, strategy: str = "combined",
                  storage: str = "indices", sphere: bool = False, monitors: bool = True,
                  steps: int = 100) -> FDTD3D:
    """Seed 001's cubic domain: n^3 cells, vacuum (or a dielectric sphere), CPML on all
    faces (thickness 0: PEC walls), a dipole, one probe and one DFT plane."""
    d = 1e-3
    half = n * d / 2
    inner = half - thickness * d
    return FDTD3D(
        name=f"cube{n}", domain=Domain(shape=(n, n, n), spacing=d),
        boundary=CPML(thickness=thickness) if thickness else PEC(), steps=steps,
        cpml_strategy=strategy, storage=storage,
        structures=[Structure(geometry=Sphere(radius=0.5 * inner),
                              medium=Medium(eps_r=4, sigma=0.01))] if sphere else [],
        sources=[PointDipole(position=(0.1 * inner, 0.2 * inner, 0.0), polarization="z",
                             waveform=GaussianPulse(f0=10e9, fwidth=5e9))],
        monitors=[
            Probe(name="probe", positions=[(0.5 * inner, 0.0, 0.0)], components=["Ez"]),
            DFTMonitor(name="dft", center=(0, 0, 0), size=(2 * inner, 2 * inner, 0),
                       frequencies=[10e9], components=["Ez"]),
        ] if monitors else [],
    )


def time_scenario(sim: FDTD3D, steps: int, repeats: int = 3) -> dict:
    """Median seconds per step of the jitted chunk, and compile seconds."""
    from ..fdtd.solver import FDTDSolver

    solver = FDTDSolver(sim, chunk=steps)
    state = solver.init_state()
    t = time.perf_counter()
    state, _ys, ok = solver.advance(state, 0, steps)
    jax.block_until_ready(state)
    compile_s = time.perf_counter() - t
    times = []
    for r in range(repeats):
        t = time.perf_counter()
        state, _, ok = solver.advance(state, (r + 1) * steps, steps)
        jax.block_until_ready(state)
        times.append(time.perf_counter() - t)
    if not bool(ok):
        raise FloatingPointError(f"{sim.name}: fields not finite during the benchmark")
    idx_bytes = sum(a.dtype.itemsize for a in solver.setup.coeffs["E"].get("idx", ())) + sum(
        a.dtype.itemsize for a in solver.setup.coeffs["H"].get("idx", ()))
    cas = 0 if sim.storage == "indices" else 4 * 2 * 6
    return {"s_per_step": statistics.median(times) / steps, "compile_s": compile_s,
            "bytes_per_cell": 72 + idx_bytes + cas}


def seed001_cube(sizes=None, steps: int = 100,
                 strategies=("combined", "per_face")) -> list[dict]:
    """Seed 001 Figure 7: speed against cube size with a 10-cell CPML, both strategies.

    Default sizes: 64^3 to 512^3 on a GPU, 32^3 to 64^3 on a CPU."""
    sizes = sizes or ((64, 128, 256, 384, 512) if on_gpu() else (32, 48, 64))
    steps = steps if on_gpu() else 20
    dev, bw = device_name(), copy_bandwidth(nbytes=(2 << 30) if on_gpu() else (256 << 20))
    recs = [{"case": "seed001-cube", "size": 0, "metric": "copy bandwidth",
             "value": bw / 1e9, "unit": "GB/s", "device": dev}]
    for n in sizes:
        for strategy in strategies:
            r = time_scenario(cube_scenario(n, strategy=strategy, steps=steps), steps)
            all_cells = n**3 / r["s_per_step"]
            inner = (n - 20) ** 3 / r["s_per_step"]
            for metric, value, unit in (
                (f"{strategy}: all cells", all_cells / 1e6, "Mcells/s"),
                (f"{strategy}: non-PML cells", inner / 1e6, "Mcells/s"),
                (f"{strategy}: fraction of copy bandwidth",
                 all_cells * r["bytes_per_cell"] / bw, ""),
                (f"{strategy}: compile", r["compile_s"], "s"),
            ):
                recs.append({"case": "seed001-cube", "size": n, "metric": metric,
                             "value": float(value), "unit": unit, "device": dev})
    return recs


def roofline(n: int | None = None, steps: int = 100) -> list[dict]:
    """Bare step (PEC walls, no monitors) and CIS against CAS with a dielectric sphere,
    at 512^3 on a GPU (64^3 on a CPU)."""
    n = n or (512 if on_gpu() else 64)
    steps = steps if on_gpu() else 20
    dev, bw = device_name(), copy_bandwidth(nbytes=(2 << 30) if on_gpu() else (256 << 20))
    recs = []
    variants = {
        "bare (PEC, no monitors)": cube_scenario(n, thickness=0, monitors=False, steps=steps),
        "CPML + sphere, indices (CIS)": cube_scenario(n, sphere=True, steps=steps),
        "CPML + sphere, arrays (CAS)": cube_scenario(n, sphere=True, storage="arrays",
                                                     steps=steps),
    }
    for name, sim in variants.items():
        r = time_scenario(sim, steps)
        cps = n**3 / r["s_per_step"]
        recs += [
            {"case": "roofline", "size": n, "metric": f"{name}: all cells",
             "value": cps / 1e6, "unit": "Mcells/s", "device": dev},
            {"case": "roofline", "size": n, "metric": f"{name}: bytes per cell per step",
             "value": float(r["bytes_per_cell"]), "unit": "B", "device": dev},
            {"case": "roofline", "size": n, "metric": f"{name}: fraction of copy bandwidth",
             "value": cps * r["bytes_per_cell"] / bw, "unit": "", "device": dev},
        ]
    return recs


def cpu_gpu_agreement(n: int = 48, steps: int = 500) -> list[dict]:
    """Relative L2 difference of all fields after ``steps`` between this device and the
    CPU (float32, CPML, a dielectric sphere)."""
    from ..fdtd.solver import FDTDSolver

    sim = cube_scenario(n, sphere=True, steps=steps, thickness=8)
    out = {}
    for backend in ("cpu", jax.default_backend()):
        with jax.default_device(jax.devices(backend)[0]):
            solver = FDTDSolver(sim, chunk=steps)
            state, _, _ = solver.advance(solver.init_state(), 0, steps)
            out[backend] = np.concatenate([np.asarray(F).ravel()
                                           for F in (*state["E"], *state["H"])])
    a, b = out["cpu"], out[jax.default_backend()]
    rel = float(np.linalg.norm(a - b) / np.linalg.norm(a))
    return [{"case": "cpu-gpu", "size": n, "metric": f"relative L2 after {steps} steps",
             "value": rel, "unit": "", "device": device_name()}]


CASES: dict[str, Callable[[], list[dict]]] = {
    "seed001-cube": seed001_cube,
    "roofline": roofline,
    "cpu-gpu": cpu_gpu_agreement,
}


