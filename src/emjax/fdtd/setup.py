"""Turn an FDTD3D scenario into the arrays and static layout the kernels take.

Everything here runs once, on the host, in NumPy: the Yee grid, rasterized media,
coefficient tables (CIS) or arrays (CAS), CPML slabs, source edges and monitor
index sets. Nothing here is traced by JAX.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..constants import c0, eps0, mu0
from ..errors import SetupError
from ..grid import subpixel
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
    NearToFar,
    PlaneWave,
    PointDipole,
    Probe,
)
from ..model.boundaries import Mur
from . import neartofar, tfsf
from .cpml import build_slabs, slab_coefficients
from .mur import mur_coefficient
from .update3d import Layout

AXIS = {"x": 0, "y": 1, "z": 2}

ACCELERATOR_ALIGN_Z = 4
"""Stored z size of the 3D arrays on an accelerator is rounded up to a multiple of this
(1 on a CPU). XLA's GPU loop fusions handle 4 consecutive elements per thread, and the
x-shifted reads of the curl (offset ny*nz) are vector-aligned only when ny*nz is a
multiple of 4: an H100 stepped (322, 338, 335) at 23.5 Gcells/s and (324, 340, 337) at
39.4. The padding lies beyond the upper z wall and is inert (``grid.yee``)."""


def _on_accelerator() -> bool:
    import jax

    return jax.default_backend() != "cpu"


def align_z() -> int:
    """The backend's z alignment: :data:`ACCELERATOR_ALIGN_Z` on accelerators, 1 on a CPU."""
    return ACCELERATOR_ALIGN_Z if _on_accelerator() else 1


def tfsf_fold() -> bool:
    """The backend's TF/SF choice (``update3d.Layout.tfsf_fold``): folded on accelerators."""
    return _on_accelerator()


def z_padding(faces, nz: int, align: int | None = None) -> int:
    """Trailing z entries to store beyond the physical ``nz`` cells for ``faces``.

    Zero where the upper z face is PMC: its axis is extended, the last stored entry is
    the wall node and the image terms of ``update3d`` read it as the array end. PEC,
    CPML (backed by PEC) and Mur upper faces all have the wall's tangential E zero
    (Mur: the node beyond its last plane is dead), which the padded E update enforces.
    """
    a = align_z() if align is None else max(1, int(align))
    if a == 1 or isinstance(faces[2][1], PMC):
        return 0
    return -nz % a


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
    planewaves: list = field(default_factory=list)  # [(PlaneWave, tfsf.TFSF)]
    n2f: list = field(default_factory=list)  # [(NearToFar, lo, hi, regions)]


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


MUR_MIN_CELLS = 3
"""Cells an axis with a Mur face needs: the boundary plane, the interior plane it reads,
and one more so that the low and high faces' planes never meet."""


def mur_faces(sim, dt: float) -> tuple[tuple[int, int, float], ...]:
    """(axis, side, coefficient) of every Mur face; raises SetupError for an axis too
    short for it. The coefficient uses the face's eps_r, or the background's."""
    out, problems = [], []
    bg = sim.background
    for a, pair in enumerate(sim.faces):
        for side, face in enumerate(pair):
            if not isinstance(face, Mur):
                continue
            n = sim.domain.cells[a]
            if n < MUR_MIN_CELLS:
                problems.append(
                    f"boundary: Mur on the {('low', 'high')[side]} {'xyz'[a]} face needs at "
                    f"least {MUR_MIN_CELLS} cells along {'xyz'[a]}, the domain has {n}; "
                    "enlarge the domain or use PEC/PMC on that face")
                continue
            eps_r = face.eps_r if face.eps_r is not None else bg.eps_r
            c = c0 / math.sqrt(eps_r * bg.mu_r)
            out.append((a, side, float(mur_coefficient(c * dt, sim.domain.spacing3[a]))))
    if problems:
        raise SetupError("; ".join(problems))
    return tuple(out)


def prepare(sim, *, align: int | None = None) -> FDTDSetup:
    """Build the host-side set-up of an FDTD3D scenario.

    align: z alignment of the stored arrays (None: the backend's, :func:`align_z`;
    1: no padding).
    """
    dom = sim.domain
    faces = sim.faces
    mur = mur_faces(sim, sim.dt)  # before any large allocation
    extended = tuple(isinstance(hi, PMC) for _, hi in faces)
    grid = YeeGrid(cells=dom.cells, spacing=dom.spacing3, lower=dom.lower, extended=extended,
                   pad_z=z_padding(faces, dom.cells[2], align))
    dtype = np.dtype(sim.dtype)
    dt = sim.dt
    boxes = _boxes(sim, grid)  # TF/SF and Huygens boxes, checked before any large work
    mat = rasterize(grid, sim.background, sim.structures)
    media = list(mat.media)
    index = {c: v for c, v in mat.index.items()}
    if getattr(sim, "subpixel", False):
        media, index = subpixel.average(grid, sim.background, sim.structures, media, index)

    # Sources: edges, scales, and lumped resistors as extra media on their edges.
    sources: list[SourceEdge] = []
    dV = grid.cell_volume
    for i, s in enumerate(sim.sources):
        if isinstance(s, PlaneWave):
            continue
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
    slabs = build_slabs(grid.nodes, pml_cells)  # the high slabs end at the wall
    pml = {}
    for slab in slabs:
        face = faces[slab.axis][0 if slab.side == "low" else 1]
        assert isinstance(face, CPML)
        pml[slab.key] = slab_coefficients(
            slab, face, grid.spacing[slab.axis], dt, sim.background.eps_r,
            sim.background.mu_r, dtype,
        )
        # the slab's first index as data, for in-place per_face corrections (update3d)
        pml[slab.key]["start"] = np.int32(slab.start)
    layout = Layout(
        shape=grid.shape,
        pad_z=grid.pad_z,
        inv_d=tuple(1.0 / d for d in grid.spacing),
        slabs=slabs,
        pmc_low=tuple(isinstance(lo, PMC) for lo, _ in faces),
        pmc_high=extended,
        pec_low=tuple(isinstance(lo, PEC | CPML) for lo, _ in faces),
        strategy=sim.cpml_strategy,
        mur=mur,
        tfsf_fold=tfsf_fold(),
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
        elif isinstance(m, NearToFar):
            lo, hi = boxes[("monitor", m.name)]
            setup.n2f.append((m, lo, hi, neartofar.regions(lo, hi)))
    for i, s in enumerate(sim.sources):
        if isinstance(s, PlaneWave):
            lo, hi = boxes[("source", i)]
            box = tfsf.build(
                grid.nodes, grid.spacing, grid.lower, lo, hi, s.k_hat, s.e_hat, s.h_hat, dt,
                s.reference_frequency or _centre_frequency(s.waveform),
                eps_r=sim.background.eps_r, mu_r=sim.background.mu_r, dtype=dtype)
            _check_homogeneous(i, box, index, media)
            setup.planewaves.append((s, box))
    if setup.energy:
        # Half of eps dV (and mu dV) per sample, as tables gathered by the indices.
        half = 0.5 * grid.cell_volume
        def weights(w, idx):
            if len(np.unique(w)) == 1:
                return tuple(np.asarray(half * w[0], dtype) for _ in idx)
            return tuple((half * w[i]).astype(dtype) for i in idx)

        setup.energy_weights = {"E": weights(wE, idxE), "H": weights(wH, idxH)}
    return setup


def _centre_frequency(w) -> float:
    """The frequency (Hz) at which a waveform's spectrum is centred."""
    for attr in ("f0", "fp", "frequency"):
        v = getattr(w, attr, None)
        if v:
            return float(v)
    return float(w.fwidth)


def _box_from(grid, pml, center, size, margin) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """E-node index corners of a box given in m, or of the interior less ``margin``."""
    lo, hi = [], []
    for a in range(3):
        n, d, low = grid.cells[a], grid.spacing[a], grid.lower[a]
        if size is None:
            i0, i1 = pml[a][0] + margin, n - pml[a][1] - margin
            if center is not None:
                shift = round((center[a] - (low + 0.5 * (i0 + i1) * d)) / d)
                i0, i1 = i0 + shift, i1 + shift
        else:
            c = (0.5 * (grid.lower[a] * 2 + n * d)) if center is None else center[a]
            i0 = int(np.floor((c - size[a] / 2 - low) / d + 0.5 + 1e-9))
            i1 = int(np.floor((c + size[a] / 2 - low) / d + 0.5 + 1e-9))
        lo.append(i0)
        hi.append(i1)
    return tuple(lo), tuple(hi)


def _boxes(sim, grid) -> dict:
    """TF/SF boxes of plane waves and Huygens boxes of NearToFar monitors, as E-node
    index corners; raises SetupError naming every misplaced box."""
    pml = sim.pml_cells()
    out, problems = {}, []
    # A Mur face reads the plane next to it, which must see the scattered field only:
    # a TF/SF box keeps one more cell from it. The upper Mur plane is the last node,
    # not the wall beyond, so default boxes keep their margin from that node.
    mur = [[int(isinstance(f, Mur)) for f in pair] for pair in sim.faces]
    walls = tuple((lo, hi + m_hi) for (lo, hi), (_, m_hi) in zip(pml, mur, strict=True))

    def check(what, lo, hi, tfsf=False):
        for a, ax in enumerate("xyz"):
            n = grid.cells[a]
            first = pml[a][0] + 1 + (mur[a][0] if tfsf else 0)
            last = n - max(pml[a][1], 1) - 1 - (mur[a][1] if tfsf else 0)
            if not (first <= lo[a] < hi[a] <= last):
                x = grid.lower[a] + np.array([lo[a], hi[a]]) * grid.spacing[a]
                problems.append(
                    f"{what}: box along {ax} spans nodes {lo[a]}..{hi[a]} "
                    f"([{x[0]:.6g}, {x[1]:.6g}] m); it must lie within nodes {first}..{last}, "
                    "at least one cell inside the CPML or wall (a TF/SF box two inside a Mur "
                    "face), and be at least one cell thick; shrink the box or enlarge the "
                    "domain")
                return False
        return True

    waves = [(i, s) for i, s in enumerate(sim.sources) if isinstance(s, PlaneWave)]
    for i, s in waves:
        if s.waveform is None:
            problems.append(f"sources[{i}] PlaneWave: FDTD needs a 'waveform'; add one")
        lo, hi = _box_from(grid, walls, s.box_center, s.box_size, s.box_margin)
        if check(f"sources[{i}] PlaneWave TF/SF", lo, hi, tfsf=True):
            out[("source", i)] = (lo, hi)
    for m in sim.monitors:
        if not isinstance(m, NearToFar):
            continue
        lo, hi = _box_from(grid, walls, m.center, m.size, m.margin)
        what = f"monitor NearToFar '{m.name}'"
        if not check(what, lo, hi):
            continue
        out[("monitor", m.name)] = (lo, hi)
        for i, _ in waves:
            if ("source", i) not in out:
                continue
            tlo, thi = out[("source", i)]
            if not all(lo[a] < tlo[a] and hi[a] > thi[a] for a in range(3)):
                problems.append(
                    f"{what}: its box (nodes {lo}..{hi}) must enclose the TF/SF box of "
                    f"sources[{i}] (nodes {tlo}..{thi}) with at least one cell to spare on "
                    "every side, so that it sees only the scattered field; enlarge it (or "
                    "lower its margin) or shrink the plane wave's box")
    if problems:
        raise SetupError("; ".join(problems))
    return out


def _check_homogeneous(i: int, box, index, media) -> None:
    """The TF/SF surface must lie in the background medium (index 0)."""
    for t in box.terms:
        comp = COMPONENTS[t.comp + (0 if t.field == "E" else 3)]
        sl = tuple(slice(s, s + n) for s, n in zip(t.start, t.shape, strict=True))
        bad = index[comp][sl] != 0
        if bad.any():
            j = tuple(int(v) + s for v, s in zip(np.argwhere(bad)[0], t.start, strict=True))
            m = media[int(index[comp][sl][tuple(np.argwhere(bad)[0])])]
            raise SetupError(
                f"sources[{i}] PlaneWave: the TF/SF box surface crosses a structure "
                f"({getattr(m, 'name', None) or m.type}) at {comp} index {j}; the surface must "
                "lie in the background medium: enlarge the box (box_size) or move it")


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
