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

import copy
import dataclasses
import math
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
from .common import copy_bandwidth, device_name, on_gpu, time_chunks


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
    s_per_step, compile_s, _ = time_chunks(solver, steps, repeats)
    idx_bytes = sum(a.dtype.itemsize for a in solver.setup.coeffs["E"].get("idx", ())) + sum(
        a.dtype.itemsize for a in solver.setup.coeffs["H"].get("idx", ()))
    cas = 0 if sim.storage == "indices" else 4 * 2 * 6
    return {"s_per_step": s_per_step, "compile_s": compile_s,
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


SEED001_MRI_INTERIOR = (312, 328, 325)
"""Seed 001's MRI grid in cells (33.4 M cells quoted), the non-PML cells it counts."""
SEED001_MRI_MUR = 500.0
"""Seed 001 (sec. 4.2): the MRI model ran at 500 Mcells/s with the first-order Mur ABC
on a Tesla C1060. Figure 9's CPML bars are not given as numbers in the text; it says
only that the GPU ran 21.0 to 36.6 times faster than its CPU code with PMLs."""
SEED001_TARGET_FACTOR = 60
"""Issue #9: Mur on an H100 at least 60 times the seed's Mur figure (30 Gcells/s)."""


def psi_traffic_per_slab_cell(itemsize: int, strategy: str = "combined") -> int:
    """Bytes one CPML slab cell adds to a step (the slab-volume model), for the two E
    and two H components tangential to the slab, per component:

    * combined: psi read and written, the slab of the source field read, the slab term
      written and read back by the bulk update: 5 values, 20 in all;
    * per_face: the psi pass as above without the slab term (3), then the correction
      pass reads the field's slab, the source field's slab and the new psi, and writes
      the field's slab (4): 7 values, 28 in all (counted from the fusions' operands in
      the optimized HLO)."""
    per_component = {"combined": 5, "per_face": 7}
    if strategy not in per_component:
        raise ValueError(f"strategy = {strategy!r}: use 'combined' or 'per_face'")
    return 4 * per_component[strategy] * itemsize


def _mri_variant(sim: FDTD3D, **fields) -> FDTD3D:
    """``sim`` with some fields replaced, validated again."""
    return FDTD3D.model_validate({**sim.model_dump(), **fields})


def _sibling(solver, sim: FDTD3D, **layout):
    """A solver sharing ``solver``'s set-up and device constants, with some fields of
    its layout replaced (the phantom is rasterised once per grid, not per variant)."""
    other = copy.copy(solver)
    lay = dataclasses.replace(solver.setup.layout, **layout)
    other.setup = dataclasses.replace(solver.setup, layout=lay)
    other.sim = sim
    other._compiled = {}
    return other


def seed001_pml_thickness(thicknesses=None, steps: int | None = None,
                          strategies=("combined", "per_face")) -> list[dict]:
    """Seed 001 Figure 9: ``mri-coil`` speed against CPML thickness on all six faces.

    As in the seed, the PML cells are added around a fixed interior (312 x 328 x 325
    cells at 4 mm on a GPU; 52 x 55 x 54 at 24 mm on a CPU) and only the interior
    (non-PML) cells are counted; thickness 0 is the first-order Mur ABC on the
    interior's own faces (and, for comparison, PEC walls, which absorb nothing).
    ``size`` in the records is the thickness in cells.

    Records per thickness and strategy: all-cells and non-PML Gcells/s, ms per step,
    psi MiB, and the step's cost relative to the PEC-walled interior (a bare step),
    measured and predicted by the slab-volume model (every cell at the bare step's
    bytes per cell, plus :func:`psi_traffic_per_slab_cell` of the strategy per psi
    cell), with the deviation in %, and the deviation of the growth with thickness (the
    least-squares slope of measured against predicted cost over the thicknesses, which
    leaves out a strategy's fixed per-step cost); and the cost relative to Mur (its
    planes folded into the update, the one way src/ writes them).
    """
    from ..fdtd.setup import psi_bytes
    from ..fdtd.solver import FDTDSolver
    from ..model.boundaries import Mur
    from ..scenarios.mri import mri_coil

    gpu = on_gpu()
    interior, spacing = (SEED001_MRI_INTERIOR, 4e-3) if gpu else ((52, 55, 54), 24e-3)
    thicknesses = thicknesses or ((0, 5, 10, 15, 20) if gpu else (0, 5, 10))
    steps = steps or (100 if gpu else 5)
    repeats = 3 if gpu else 2
    dev, bw = device_name(), copy_bandwidth(nbytes=(2 << 30) if gpu else (64 << 20))
    n_int = math.prod(interior)
    case = "seed001-pml-thickness"
    recs = [
        {"case": case, "size": 0, "metric": "copy bandwidth", "value": bw / 1e9,
         "unit": "GB/s", "device": dev},
        {"case": case, "size": 0, "metric": "seed Figure 9 (Tesla C1060): Mur, non-PML",
         "value": SEED001_MRI_MUR, "unit": "Mcells/s", "device": dev},
        {"case": case, "size": 0, "metric": "non-PML cells", "value": float(n_int),
         "unit": "cells", "device": dev},
    ] + [
        {"case": case, "size": 0, "metric": f"{strategy}: traffic per slab cell (model)",
         "value": float(psi_traffic_per_slab_cell(4, strategy)), "unit": "B",  # float32
         "device": dev} for strategy in strategies
    ]

    def rec(t, metric, value, unit):
        recs.append({"case": case, "size": t, "metric": metric, "value": float(value),
                     "unit": unit, "device": dev})

    def timed(solver):
        from .common import time_chunks

        s_step, compile_s, state = time_chunks(solver, steps, repeats)
        del state
        return s_step, compile_s

    mur_s = bare_s = bare_bytes = None
    growth: dict[str, list[tuple[float, float]]] = {}
    for t in sorted(set(thicknesses)):
        tc = max(t, 1)
        base = mri_coil(shape=tuple(n + 2 * tc for n in interior), spacing=spacing, pml=tc,
                        strategy=strategies[0])
        if t == 0:  # the same interior and contents, Mur on its faces
            base = _mri_variant(base, domain={"shape": interior, "spacing": spacing},
                                boundary=Mur().model_dump())
        first = FDTDSolver(base, chunk=steps)
        n_tot = first.setup.grid.num_cells
        b_cell = 72 + sum(a.dtype.itemsize for c in first.setup.coeffs.values()
                          for a in c.get("idx", ()))
        psi = psi_bytes(first.setup)
        item = np.dtype(base.dtype).itemsize
        psi_cells = psi // (4 * item)
        rec(t, "all cells", n_tot, "cells")
        if t == 0:
            pec = _mri_variant(base, boundary=PEC().model_dump())
            variants = (
                ("Mur", _sibling(first, base)),
                ("PEC walls", _sibling(first, pec, mur=(), pec_low=(True,) * 3)),
            )
            for label, solver in variants:
                s_step, compile_s = timed(solver)
                rec(t, f"{label}: all cells", n_tot / s_step / 1e9, "Gcells/s")
                rec(t, f"{label}: non-PML cells", n_int / s_step / 1e9, "Gcells/s")
                rec(t, f"{label}: ms per step", s_step * 1e3, "ms")
                rec(t, f"{label}: fraction of copy bandwidth",
                    n_tot / s_step * b_cell / bw, "")
                rec(t, f"{label}: vs seed's Mur", n_int / s_step / 1e6 / SEED001_MRI_MUR,
                    "x")
                rec(t, f"{label}: compile", compile_s, "s")
                if label == "Mur":
                    mur_s = s_step
                elif label == "PEC walls":
                    bare_s, bare_bytes = s_step, n_tot * b_cell
            rec(t, f"Mur: target ({SEED001_TARGET_FACTOR}x the seed's Mur)",
                SEED001_TARGET_FACTOR * SEED001_MRI_MUR / 1e3, "Gcells/s")
            continue
        rec(t, "psi", psi / 2**20, "MiB")
        for strategy in strategies:
            sim = _mri_variant(base, cpml_strategy=strategy)
            s_step, compile_s = timed(_sibling(first, sim, strategy=strategy))
            rec(t, f"{strategy}: all cells", n_tot / s_step / 1e9, "Gcells/s")
            rec(t, f"{strategy}: non-PML cells", n_int / s_step / 1e9, "Gcells/s")
            rec(t, f"{strategy}: ms per step", s_step * 1e3, "ms")
            rec(t, f"{strategy}: vs seed's Mur", n_int / s_step / 1e6 / SEED001_MRI_MUR, "x")
            rec(t, f"{strategy}: compile", compile_s, "s")
            if mur_s is not None:
                rec(t, f"{strategy}: cost vs Mur, measured", s_step / mur_s, "x")
            if bare_s is not None:
                predicted = (n_tot * b_cell + psi_cells * psi_traffic_per_slab_cell(
                    item, strategy)) / bare_bytes
                measured = s_step / bare_s
                rec(t, f"{strategy}: cost vs bare interior, slab-volume prediction",
                    predicted, "x")
                rec(t, f"{strategy}: cost vs bare interior, measured", measured, "x")
                rec(t, f"{strategy}: measured against prediction",
                    100 * (measured / predicted - 1), "%")
                growth.setdefault(strategy, []).append((predicted, measured))
        del first
    for strategy, pts in growth.items():
        if len(pts) >= 2:
            # what thickness adds, free of the strategy's fixed per-step cost (kernel
            # launches): the least-squares slope of measured against predicted cost
            pred, meas = np.array(pts).T
            slope = np.polyfit(pred, meas, 1)[0]
            rec(max(thicknesses), f"{strategy}: growth with thickness, measured against "
                "prediction (fitted slope)", 100 * (slope - 1), "%")
    return recs


CASES: dict[str, Callable[[], list[dict]]] = {
    "seed001-cube": seed001_cube,
    "seed001-pml-thickness": seed001_pml_thickness,
    "roofline": roofline,
    "cpu-gpu": cpu_gpu_agreement,
}


