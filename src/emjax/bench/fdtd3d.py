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
from ..records import Measurement
from .common import STORAGES, copy_bandwidth, on_gpu, storage_records, time_chunks


def cube_scenario(n: int, *, thickness: int = 10, strategy: str = "auto",
                  storage: str = "indices", sphere: bool = False, monitors: bool = True,
                  steps: int = 100, storage_dtype: str | None = None) -> FDTD3D:
    """Seed 001's cubic domain: n^3 cells, vacuum (or a dielectric sphere), CPML on all
    faces (thickness 0: PEC walls), a dipole, one probe and one DFT plane."""
    d = 1e-3
    half = n * d / 2
    inner = half - thickness * d
    return FDTD3D(
        name=f"cube{n}", domain=Domain(shape=(n, n, n), spacing=d),
        boundary=CPML(thickness=thickness) if thickness else PEC(), steps=steps,
        cpml_strategy=strategy, storage=storage, storage_dtype=storage_dtype,
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
    idx_bytes = sum(a.dtype.itemsize for c in (solver.setup.coeffs["E"], solver.setup.coeffs["H"])
                    for a in c.idx or ())
    cas = 0 if sim.storage == "indices" else 4 * 2 * 6
    fields = 18 * (2 if sim.storage_dtype else np.dtype(sim.dtype).itemsize)
    return {"s_per_step": s_per_step, "compile_s": compile_s,
            "bytes_per_cell": fields + idx_bytes + cas}


def seed001_cube(sizes=None, steps: int = 100,
                 strategies=("combined", "per_face")) -> list[Measurement]:
    """Seed 001 Figure 7: speed against cube size with a 10-cell CPML, both strategies.

    Default sizes: 64^3 to 512^3 on a GPU, 32^3 to 64^3 on a CPU."""
    sizes = sizes or ((64, 128, 256, 384, 512) if on_gpu() else (32, 48, 64))
    steps = steps if on_gpu() else 20
    bw = copy_bandwidth(nbytes=(2 << 30) if on_gpu() else (256 << 20))
    recs = [Measurement("seed001-cube", 0, "copy bandwidth", bw / 1e9, "GB/s")]
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
                recs.append(Measurement("seed001-cube", n, metric, value, unit))
    return recs


def roofline(n: int | None = None, steps: int = 100) -> list[Measurement]:
    """Bare step (PEC walls, no monitors) and CIS against CAS with a dielectric sphere,
    at 512^3 on a GPU (64^3 on a CPU)."""
    n = n or (512 if on_gpu() else 64)
    steps = steps if on_gpu() else 20
    bw = copy_bandwidth(nbytes=(2 << 30) if on_gpu() else (256 << 20))
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
            Measurement("roofline", n, f"{name}: all cells", cps / 1e6, "Mcells/s"),
            Measurement("roofline", n, f"{name}: bytes per cell per step",
                        r["bytes_per_cell"], "B"),
            Measurement("roofline", n, f"{name}: fraction of copy bandwidth",
                        cps * r["bytes_per_cell"] / bw, ""),
        ]
    return recs


def cpu_gpu_agreement(n: int = 48, steps: int = 500) -> list[Measurement]:
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
                                           for F in (*state.E, *state.H)])
    a, b = out["cpu"], out[jax.default_backend()]
    rel = float(np.linalg.norm(a - b) / np.linalg.norm(a))
    return [Measurement("cpu-gpu", n, f"relative L2 after {steps} steps", rel, "")]


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


@dataclasses.dataclass
class _PmlRun:
    """What the parts of :func:`seed001_pml_thickness` share: its settings, its records
    and the reference timings (Mur; the PEC-walled bare step) the later rows divide by."""

    steps: int
    repeats: int
    bw: float
    n_int: int
    recs: list[Measurement]
    mur_s: float | None = None
    bare_s: float | None = None
    bare_bytes: int | None = None
    growth: dict[str, list[tuple[float, float]]] = dataclasses.field(default_factory=dict)

    def rec(self, t: int, metric: str, value: float, unit: str) -> None:
        self.recs.append(Measurement("seed001-pml-thickness", t, metric, value, unit))

    def timed(self, solver) -> tuple[float, float]:
        """(median s per step, compile s) of ``solver``'s chunk."""
        s_step, compile_s, state = time_chunks(solver, self.steps, self.repeats)
        del state
        return s_step, compile_s

    def speeds(self, t: int, label: str, n_tot: int, s_step: float, compile_s: float,
               fraction: float | None = None) -> None:
        """The rows every timed variant gets (``fraction``: of copy bandwidth)."""
        self.rec(t, f"{label}: all cells", n_tot / s_step / 1e9, "Gcells/s")
        self.rec(t, f"{label}: non-PML cells", self.n_int / s_step / 1e9, "Gcells/s")
        self.rec(t, f"{label}: ms per step", s_step * 1e3, "ms")
        if fraction is not None:
            self.rec(t, f"{label}: fraction of copy bandwidth", fraction, "")
        self.rec(t, f"{label}: vs seed's Mur", self.n_int / s_step / 1e6 / SEED001_MRI_MUR,
                 "x")
        self.rec(t, f"{label}: compile", compile_s, "s")


def seed001_pml_thickness(thicknesses=None, steps: int | None = None,
                          strategies=("combined", "per_face")) -> list[Measurement]:
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
    bw = copy_bandwidth(nbytes=(2 << 30) if gpu else (64 << 20))
    n_int = math.prod(interior)
    case = "seed001-pml-thickness"
    run = _PmlRun(steps or (100 if gpu else 5), 3 if gpu else 2, bw, n_int, [
        Measurement(case, 0, "copy bandwidth", bw / 1e9, "GB/s"),
        Measurement(case, 0, "seed Figure 9 (Tesla C1060): Mur, non-PML", SEED001_MRI_MUR,
                    "Mcells/s"),
        Measurement(case, 0, "non-PML cells", n_int, "cells"),
    ] + [
        Measurement(case, 0, f"{strategy}: traffic per slab cell (model)",
                    psi_traffic_per_slab_cell(4, strategy), "B")  # float32
        for strategy in strategies
    ])
    for t in sorted(set(thicknesses)):
        tc = max(t, 1)
        base = mri_coil(shape=tuple(n + 2 * tc for n in interior), spacing=spacing, pml=tc,
                        strategy=strategies[0])
        if t == 0:  # the same interior and contents, Mur on its faces
            base = _mri_variant(base, domain={"shape": interior, "spacing": spacing},
                                boundary=Mur().model_dump())
        first = FDTDSolver(base, chunk=run.steps)
        n_tot = first.setup.grid.num_cells
        b_cell = 72 + sum(a.dtype.itemsize for c in first.setup.coeffs.values()
                          for a in c.idx or ())
        run.rec(t, "all cells", n_tot, "cells")
        if t == 0:
            _pml_references(run, first, base, n_tot, b_cell)
        else:
            psi = psi_bytes(first.setup)
            run.rec(t, "psi", psi / 2**20, "MiB")
            _pml_strategies(run, t, first, base, strategies, n_tot, b_cell,
                            psi // (4 * np.dtype(base.dtype).itemsize))
        del first
    _pml_growth(run, max(thicknesses))
    return run.recs


def _pml_references(run: _PmlRun, first, base: FDTD3D, n_tot: int, b_cell: int) -> None:
    """Thickness 0: Mur (the reference) and PEC walls (the bare interior)."""
    pec = _mri_variant(base, boundary=PEC().model_dump())
    variants = (
        ("Mur", _sibling(first, base)),
        ("PEC walls", _sibling(first, pec, mur=(), pec_low=(True,) * 3)),
    )
    for label, solver in variants:
        s_step, compile_s = run.timed(solver)
        run.speeds(0, label, n_tot, s_step, compile_s, n_tot / s_step * b_cell / run.bw)
        if label == "Mur":
            run.mur_s = s_step
        else:
            run.bare_s, run.bare_bytes = s_step, n_tot * b_cell
    run.rec(0, f"Mur: target ({SEED001_TARGET_FACTOR}x the seed's Mur)",
            SEED001_TARGET_FACTOR * SEED001_MRI_MUR / 1e3, "Gcells/s")


def _pml_strategies(run: _PmlRun, t: int, first, base: FDTD3D, strategies, n_tot: int,
                    b_cell: int, psi_cells: int) -> None:
    """Thickness ``t`` > 0: each CPML strategy timed, against Mur and the bare step."""
    item = np.dtype(base.dtype).itemsize
    for strategy in strategies:
        sim = _mri_variant(base, cpml_strategy=strategy)
        s_step, compile_s = run.timed(_sibling(first, sim, strategy=strategy))
        run.speeds(t, strategy, n_tot, s_step, compile_s)
        if run.mur_s is not None:
            run.rec(t, f"{strategy}: cost vs Mur, measured", s_step / run.mur_s, "x")
        if run.bare_s is not None:
            predicted = (n_tot * b_cell + psi_cells * psi_traffic_per_slab_cell(
                item, strategy)) / run.bare_bytes
            measured = s_step / run.bare_s
            run.rec(t, f"{strategy}: cost vs bare interior, slab-volume prediction",
                    predicted, "x")
            run.rec(t, f"{strategy}: cost vs bare interior, measured", measured, "x")
            run.rec(t, f"{strategy}: measured against prediction",
                    100 * (measured / predicted - 1), "%")
            run.growth.setdefault(strategy, []).append((predicted, measured))


def _pml_growth(run: _PmlRun, t_max: int) -> None:
    """What thickness adds, free of a strategy's fixed per-step cost (kernel launches):
    the least-squares slope of measured against predicted cost over the thicknesses."""
    for strategy, pts in run.growth.items():
        if len(pts) >= 2:
            pred, meas = np.array(pts).T
            slope = np.polyfit(pred, meas, 1)[0]
            run.rec(t_max, f"{strategy}: growth with thickness, measured against "
                    "prediction (fitted slope)", 100 * (slope - 1), "%")


def storage16(sizes=None, steps: int = 100) -> list[Measurement]:
    """16-bit field storage (``storage_dtype``) against float32: seed 001's cube (10-cell
    CPML, dipole, probe, DFT plane) and the bare step (PEC walls, no monitors), all
    cells; 256^3 and 512^3 on a GPU, 64^3 on a CPU."""
    sizes = sizes or ((256, 512) if on_gpu() else (64,))
    steps = steps if on_gpu() else 20
    bw = copy_bandwidth(nbytes=(2 << 30) if on_gpu() else (256 << 20))
    recs = [Measurement("storage16", 0, "copy bandwidth", bw / 1e9, "GB/s")]
    for n in sizes:
        for label, kw in (("cube", {}), ("bare", {"thickness": 0, "monitors": False})):
            for sd in STORAGES:
                r = time_scenario(cube_scenario(n, steps=steps, storage_dtype=sd, **kw), steps)
                recs += storage_records("storage16", n, label, sd, r, n**3, bw)
    return recs


CASES: dict[str, Callable[..., list[Measurement]]] = {
    "storage16": storage16,
    "seed001-cube": seed001_cube,
    "seed001-pml-thickness": seed001_pml_thickness,
    "roofline": roofline,
    "cpu-gpu": cpu_gpu_agreement,
}


