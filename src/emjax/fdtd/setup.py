"""Turn an FDTD3D scenario into the arrays and static layout the kernels take.

Everything here runs once, on the host, in NumPy: the Yee grid, rasterized media,
coefficient tables (CIS) or arrays (CAS), CPML slabs, source edges and monitor
index sets. Nothing here is traced by JAX.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..constants import eps0, mu0
from ..errors import SetupError
from ..grid.rasterize import rasterize
from ..grid.yee import COMPONENTS, YeeGrid
from ..model import (
    CPML,
    PEC,
    PMC,
    DFTMonitor,
    EdgeSource,
    EnergyMonitor,
    FieldSnapshot,
    Medium,
    PointDipole,
    Probe,
)
from .cpml import build_slabs, slab_coefficients
from .update3d import Layout

AXIS = {"x": 0, "y": 1, "z": 2}


@dataclass
class SourceEdge:
    comp: int  # 0, 1, 2 for Ex, Ey, Ez
    index: tuple[int, int, int]
    scale: float  # multiplies the waveform sample: the E increment per unit waveform
    waveform: object


@dataclass
class FDTDSetup:
    """Host-side description of one FDTD run (NumPy arrays, static layout)."""

    sim: object
    grid: YeeGrid
    layout: Layout
    dtype: np.dtype
    dt: float
    steps: int
    coeffs: dict  # {"E": {...}, "H": {...}} as update3d.coefficient expects
    energy_weights: dict | None  # {"E": 3 arrays or scalars of eps*dV/2, "H": ...}
    pml: dict  # slab key -> {"bE","cE","kE","bH","cH","kH"}
    sources: list[SourceEdge]
    probes: list = field(default_factory=list)
    dfts: list = field(default_factory=list)
    snapshots: list = field(default_factory=list)
    energy: list = field(default_factory=list)


def _e_coefficients(m, dt: float) -> tuple[float, float, float]:
    """(ca, cb, eps) of the semi-implicit E update for medium m."""
    if isinstance(m, PEC):
        return 0.0, 0.0, eps0
    eps = eps0 * m.eps_r
    s = m.sigma * dt / (2 * eps)
    return (1 - s) / (1 + s), (dt / eps) / (1 + s), eps


def _h_coefficients(m, dt: float) -> tuple[float, float, float]:
    """(da, db, mu) of the semi-implicit H update; PEC regions keep vacuum H."""
    if isinstance(m, PEC):
        return 1.0, dt / mu0, mu0
    mu = mu0 * m.mu_r
    s = m.sigma_m * dt / (2 * mu)
    return (1 - s) / (1 + s), (dt / mu) / (1 + s), mu


def _tables(media, index: dict[str, np.ndarray], comps, fn, dt, dtype, storage):
    """Unique coefficient table and remapped per-component indices (or full arrays)."""
    rows = np.array([fn(m, dt) for m in media], dtype=np.float64)
    uniq, inverse = np.unique(rows, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    idx = [inverse[index[c]] for c in comps]
    weights = uniq[:, 2]
    if storage == "arrays":
        coeffs = {
            "a": tuple(uniq[i, 0].astype(dtype) for i in idx),
            "b": tuple(uniq[i, 1].astype(dtype) for i in idx),
        }
    elif len(uniq) == 1:
        coeffs = {"a": uniq[:, 0].astype(dtype), "b": uniq[:, 1].astype(dtype)}
    else:
        itype = np.uint8 if len(uniq) <= 256 else np.uint16
        coeffs = {
            "a": uniq[:, 0].astype(dtype),
            "b": uniq[:, 1].astype(dtype),
            "idx": tuple(i.astype(itype) for i in idx),
        }
    return coeffs, weights, idx


def prepare(sim) -> FDTDSetup:
    """Build the host-side set-up of an FDTD3D scenario."""
    dom = sim.domain
    faces = sim.faces
    extended = tuple(isinstance(hi, PMC) for _, hi in faces)
    grid = YeeGrid(cells=dom.cells, spacing=dom.spacing3, lower=dom.lower, extended=extended)
    dtype = np.dtype(sim.dtype)
    dt = sim.dt
    mat = rasterize(grid, sim.background, sim.structures)
    media = list(mat.media)
    index = {c: v for c, v in mat.index.items()}

    # Sources: edges, scales, and lumped resistors as extra media on their edges.
    sources: list[SourceEdge] = []
    dV = grid.cell_volume
    for i, s in enumerate(sim.sources):
        comp = AXIS[s.polarization]
        name = "E" + s.polarization
        edge = grid.nearest_index(name, s.position)
        here = media[int(index[name][edge])]
        if isinstance(here, PEC):
            raise SetupError(
                f"sources[{i}] {s.type} at {tuple(s.position)} m sits on an edge inside PEC; "
                "move it off the conductor"
            )
        dl = grid.spacing[comp]
        dA = dV / dl
        if isinstance(s, PointDipole):
            j_per_unit = s.amplitude / dV
            sign = -1.0
        elif isinstance(s, EdgeSource) and s.kind == "current":
            j_per_unit = s.amplitude / dA
            sign = -1.0
        else:  # voltage source in series with its resistance: a conductance on the edge
            loaded = Medium(
                eps_r=here.eps_r, mu_r=here.mu_r, sigma_m=here.sigma_m,
                sigma=here.sigma + dl / (s.resistance * dA), name=f"port{i}",
            )
            media.append(loaded)
            index[name] = index[name].astype(np.uint16 if len(media) > 256 else index[name].dtype)
            index[name][edge] = len(media) - 1
            j_per_unit = s.amplitude / (s.resistance * dA)
            sign = +1.0
        sources.append(SourceEdge(comp, edge, sign * j_per_unit, s.waveform))

    cE, wE, idxE = _tables(media, index, COMPONENTS[:3], _e_coefficients, dt, dtype, sim.storage)
    cH, wH, idxH = _tables(media, index, COMPONENTS[3:], _h_coefficients, dt, dtype, sim.storage)
    # Scale each source by its edge's cb: E += cb * (-J).
    cb_table = np.array([_e_coefficients(m, dt)[1] for m in media])
    for src in sources:
        name = COMPONENTS[src.comp]
        src.scale *= cb_table[int(index[name][src.index])]

    pml_cells = sim.pml_cells()
    slabs = build_slabs(grid.shape, pml_cells)
    pml = {}
    for slab in slabs:
        face = faces[slab.axis][0 if slab.side == "low" else 1]
        assert isinstance(face, CPML)
        pml[slab.key] = slab_coefficients(
            slab, face, grid.spacing[slab.axis], dt, sim.background.eps_r,
            sim.background.mu_r, dtype,
        )
    layout = Layout(
        shape=grid.shape,
        inv_d=tuple(1.0 / d for d in grid.spacing),
        slabs=slabs,
        pmc_low=tuple(isinstance(lo, PMC) for lo, _ in faces),
        pmc_high=extended,
        pec_low=tuple(isinstance(lo, PEC | CPML) for lo, _ in faces),
        strategy=sim.cpml_strategy,
    )

    setup = FDTDSetup(
        sim=sim, grid=grid, layout=layout, dtype=dtype, dt=dt, steps=sim.num_steps,
        coeffs={"E": cE, "H": cH}, energy_weights=None, pml=pml, sources=sources,
    )
    for m in sim.monitors:
        if isinstance(m, Probe):
            comps = []
            for comp in m.components:
                idx, w = zip(*(grid.interpolation(comp, p) for p in m.positions), strict=True)
                comps.append((comp, np.concatenate(idx), np.stack(w).astype(dtype)))
            setup.probes.append((m, comps))
        elif isinstance(m, DFTMonitor | FieldSnapshot):
            c, s = np.array(m.center), np.array(m.size)
            lo, hi = c - s / 2, c + s / 2
            regions = [(comp, grid.index_range(comp, lo, hi)) for comp in m.components]
            (setup.dfts if isinstance(m, DFTMonitor) else setup.snapshots).append((m, regions))
        elif isinstance(m, EnergyMonitor):
            setup.energy.append(m)
    if setup.energy:
        # Half of eps dV (and mu dV) per sample, as tables gathered by the indices.
        half = 0.5 * grid.cell_volume
        def weights(w, idx):
            if len(np.unique(w)) == 1:
                return tuple(np.asarray(half * w[0], dtype) for _ in idx)
            return tuple((half * w[i]).astype(dtype) for i in idx)

        setup.energy_weights = {"E": weights(wE, idxE), "H": weights(wH, idxH)}
    return setup


def waveform_samples(sources: list[SourceEdge], t: np.ndarray, dtype) -> np.ndarray:
    """Source samples (len(t), n_sources): scale * waveform(t)."""
    if not sources:
        return np.zeros((len(t), 0), dtype)
    cols = [s.scale * s.waveform(t) for s in sources]
    return np.stack(cols, axis=1).astype(dtype)


def psi_bytes(setup: FDTDSetup) -> int:
    """Bytes the psi arrays of E and H take (the CPML slabs only)."""
    item = np.dtype(setup.dtype).itemsize
    total = 0
    for slab in setup.layout.slabs:
        total += 2 * 2 * math.prod(slab.psi_shape(setup.grid.shape)) * item  # 2 comps, E and H
    return total
