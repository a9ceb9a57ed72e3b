"""Turn an FDTD3D scenario into the arrays and static layout the kernels take.

The second phase of the lowering. The first (:func:`emjax.fdtd.plan.lower_grid`, also
what the memory estimate sizes) read the boundaries, grid shape, slabs, boxes and
monitor regions; :func:`prepare` follows the data on from it, once, on the host, in
NumPy: rasterized media (:func:`_rasterize`), point sources and lumped ports
(:mod:`emjax.fdtd.ports`), coefficient tables (CIS)
or arrays (CAS), CPML slab coefficients (:func:`pml_coefficients`), the static
:func:`layout`, monitors and TF/SF boxes, into a frozen :class:`FDTDSetup` that holds
no pydantic model. Nothing here is traced by JAX. Choices that depend on the backend
(the z alignment, folding TF/SF patches) are made here once and recorded in the
layout, so they are part of what the compiled step depends on.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..constants import eps0, mu0
from ..driver.stages import Stages
from ..errors import SetupError
from ..grid import subpixel
from ..grid.rasterize import rasterize
from ..grid.yee import COMPONENTS, YeeGrid
from ..model import (
    PEC,
    DFTMonitor,
    EnergyMonitor,
    FieldSnapshot,
    FluxMonitor,
    NearToFar,
    PlaneWave,
    Probe,
)
from ..model.dispersion import PoleMedium
from . import anisotropic, dispersive_setup, neartofar, tfsf, waveguide
from .cpml import slab_coefficients
from .fieldstore import AS_COMPUTED, FieldStorage, field_storage
from .plan import (
    GridPlan,
    advise,
    flux_box,
    flux_faces,
    lower_grid,
    monitor_plan,
    plane_wave_plan,
)
from .ports import SourceEdge, lower_sources, plan_ports
from .update3d import Layout, UpdateCoefficients

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


FOLD = {"combined": (True, True, True), "per_face": (False, False, False)}
"""CPML slab terms folded into the fused update, per axis, of each named strategy."""

CPU_FOLD = (False, False, True)
"""``cpml_strategy = "auto"`` on a CPU: z slabs folded, x and y in place. FDTD3D at 128^3
with a 10-cell CPML on 2 cores: 220 Mcells/s all folded, 290 none, 390 this
(BENCHMARKS.md)."""


def cpml_fold(strategy: str) -> tuple[bool, bool, bool]:
    """Per axis, whether the CPML slab terms of ``strategy`` are folded into the fused
    update (``update3d.Layout.fold``); "auto" is the backend's: all on accelerators,
    :data:`CPU_FOLD` on a CPU."""
    if strategy == "auto":
        return FOLD["combined"] if _on_accelerator() else CPU_FOLD
    return FOLD[strategy]


@dataclass(frozen=True, eq=False)
class FDTDSetup:
    """The lowered run: a frozen plan of plain numbers, NumPy arrays and static layout.

    No pydantic model: monitors are :class:`emjax.fdtd.plan.MonitorPlan`, plane waves
    :class:`emjax.fdtd.plan.PlaneWavePlan` (their waveforms, like the point sources',
    are host-side callables sampled into the scan inputs). grid; layout; dtype; dt in
    s; steps; coeffs: {"E": ..., "H": ...} as ``update3d.coefficient`` expects;
    energy_weights: {"E": 3 arrays or scalars of eps dV / 2, "H": ...} or None; pml:
    slab key -> :class:`emjax.fdtd.cpml.SlabCoefficients`; sources; probes: ((monitor,
    ((comp, index, weights), ...)), ...); dfts, snapshots: ((monitor, ((comp, slices),
    ...)), ...); energy: (monitor, ...); planewaves: ((plane wave, tfsf.TFSF), ...);
    n2f: ((monitor, lo, hi, regions), ...); flux: ((monitor, lo, hi, direction, ((k,
    axis, side), ...)), ...): each FluxMonitor's E-node box (lo == hi along a plane's
    normal), its direction (+1.0 or -1.0) and its faces: ``dfts[k]`` holds the face
    normal to ``axis`` with its H half a cell towards ``side`` (DFT entries of kind
    "FluxMonitor", which ``collect`` pairs; :func:`.plan.flux_faces`); plan: the
    lowering's first phase
    (``plan.GridPlan``; 2D: ``setup2d.PlanePlan``); dispersive: the poles' boxes and
    tables (:class:`emjax.fdtd.dispersive_setup.DispersivePlan`) or None; ports: the
    lumped ports' :class:`emjax.fdtd.ports.PortPlan` (each also voltage sources in
    ``sources`` when excited); sheets: the waveguide ports'
    :class:`emjax.fdtd.waveguide.SheetSource`; waveguides: their
    :class:`emjax.fdtd.waveguide.WaveguideMeasure`; fields: the storage of E and H
    between half-steps (:class:`emjax.fdtd.fieldstore.FieldStorage`); stages: seconds
    per stage of :func:`prepare` (:class:`emjax.driver.stages.Stages`).
    """

    grid: YeeGrid
    layout: Layout
    dtype: np.dtype
    dt: float
    steps: int
    coeffs: dict
    energy_weights: dict | None
    pml: dict
    sources: tuple[SourceEdge, ...]
    probes: tuple = ()
    dfts: tuple = ()
    snapshots: tuple = ()
    energy: tuple = ()
    planewaves: tuple = ()
    n2f: tuple = ()
    flux: tuple = ()
    plan: object = None
    dispersive: object = None
    ports: tuple = ()
    sheets: tuple = ()
    waveguides: tuple = ()
    offdiagonal: object = None
    conformal: object = None  # conformal3d.conformal_faces' (terms, edges, ratios) or None
    fields: FieldStorage = AS_COMPUTED  # how E and H are stored (fdtd/fieldstore)
    stages: dict = dataclasses.field(default_factory=dict)  # s per set-up stage


def _e_coefficients(m, dt: float) -> tuple[float, float, float]:
    """(ca, cb, eps) of the semi-implicit E update for medium m."""
    if isinstance(m, PEC):
        return 0.0, 0.0, eps0
    if isinstance(m, PoleMedium):
        return dispersive_setup.e_coefficients(m, dt)
    eps = eps0 * m.eps_r
    return (*e_update(eps, m.sigma, dt), eps)


def e_update(eps, sigma, dt: float):
    """(ca, cb) of the semi-implicit E update (Taflove and Hagness 2005, eq. 3.29) for
    permittivity ``eps`` (F/m) and conductivity ``sigma`` (S/m): floats, NumPy or JAX
    arrays alike (the design regions of :mod:`emjax.fdtd.gradient` trace it)."""
    s = sigma * dt / (2 * eps)
    return (1 - s) / (1 + s), (dt / eps) / (1 + s)


def _h_coefficients(m, dt: float) -> tuple[float, float, float]:
    """(da, db, mu) of the semi-implicit H update; PEC regions keep vacuum H, pole
    media (dispersive on the electric side only) have it."""
    if isinstance(m, PEC | PoleMedium):
        return 1.0, dt / mu0, mu0
    mu = mu0 * m.mu_r
    s = m.sigma_m * dt / (2 * mu)
    return (1 - s) / (1 + s), (dt / mu) / (1 + s), mu


def _tables(media, index: dict[str, np.ndarray], comps, fn, dt, dtype, storage):
    """Unique coefficient table and remapped per-component indices (or full arrays)."""
    rows = np.array([fn(m, dt) for m in media], dtype=np.float64)
    uniq, inverse = np.unique(rows, axis=0, return_inverse=True)
    itype = np.uint8 if len(uniq) <= 256 else np.uint16
    inverse = inverse.reshape(-1).astype(itype)
    # The remap reads and writes every sample: in the index's own small type (int64 made
    # it 2.2 s of car-rcs's 4.9 s set-up on 2 CPU cores), and skipped where it is the
    # identity.
    same = np.array_equal(inverse, np.arange(len(inverse)))
    idx = [index[c].astype(itype) if same else inverse[index[c]] for c in comps]
    weights = uniq[:, 2]
    if storage == "arrays":
        coeffs = UpdateCoefficients(a=tuple(uniq[i, 0].astype(dtype) for i in idx),
                                    b=tuple(uniq[i, 1].astype(dtype) for i in idx))
    elif len(uniq) == 1:
        coeffs = UpdateCoefficients(a=uniq[:, 0].astype(dtype), b=uniq[:, 1].astype(dtype))
    else:
        coeffs = UpdateCoefficients(a=uniq[:, 0].astype(dtype), b=uniq[:, 1].astype(dtype),
                                    idx=tuple(idx))
    return coeffs, weights, idx


def prepare(sim, *, align: int | None = None) -> FDTDSetup:
    """Build the host-side set-up of an FDTD3D scenario: the first phase of the
    lowering (:func:`emjax.fdtd.plan.lower_grid`) and its advice (warnings:
    :func:`emjax.fdtd.plan.advise`), then the arrays on it.

    align: z alignment of the stored arrays (None: the backend's, :func:`align_z`;
    1: no padding).
    """
    st = Stages()
    with st("grid"):
        plan = lower_grid(sim, align_z() if align is None else align)
        grid, dt, dtype = plan.grid, plan.dt, plan.dtype
        advise(sim, dt, plan.steps, grid.spacing)  # warnings only: the run goes ahead
        port_sheets = plan_ports(sim, plan)  # misplaced ports refused before any array
    with st("rasterization"):
        media, index, smoothing = _rasterize(sim, grid)
    with st("conformal faces"):
        cut = _conformal(sim, plan, media, index)
    with st("sources and ports"):
        sources, ports = lower_sources(sim, grid, media, index, port_sheets)
        sheets, guides = waveguide.lower(sim, plan, media, index, waveguide.record_names(sim))
    with st("coefficient tables"):
        cE, wE, idxE = _tables(media, index, COMPONENTS[:3], _e_coefficients, dt, dtype,
                               sim.storage)
        cH, wH, idxH = _tables(media, index, COMPONENTS[3:], _h_coefficients, dt, dtype,
                               sim.storage)
        # Scale each source by its edge's cb: E += cb * (-J).
        cb_table = np.array([_e_coefficients(m, dt)[1] for m in media])
        sources = [dataclasses.replace(
            src, scale=src.scale * cb_table[int(index[COMPONENTS[src.comp]][src.index])])
            for src in sources]
        disp = dispersive_setup.lower(sim, grid, media, index, dt, dtype, grid.cell_volume)
        pml = pml_coefficients(plan)
        offdiagonal = _offdiagonal(smoothing, plan, cut)
    with st("monitors and plane waves"):
        energy_weights = None
        monitors = _monitors(sim, plan)
        if monitors["energy"]:
            energy_weights = {"E": _energy_weights(wE, idxE, grid.cell_volume, dtype),
                              "H": _energy_weights(wH, idxH, grid.cell_volume, dtype)}
            if cut is not None:
                from .conformal3d import energy_weights as conformal_weights
                energy_weights = conformal_weights(energy_weights, cut, grid.shape)
        planewaves = _plane_waves(sim, plan, index, media)
    setup = FDTDSetup(
        grid=grid, layout=layout(plan, sim.cpml_strategy), dtype=dtype, dt=dt,
        steps=plan.steps, coeffs={"E": cE, "H": cH}, energy_weights=energy_weights,
        pml=pml, sources=tuple(sources), plan=plan, planewaves=planewaves, dispersive=disp,
        ports=tuple(ports), sheets=tuple(sheets), waveguides=tuple(guides),
        offdiagonal=offdiagonal, conformal=cut, stages=st, **monitors,
    )
    return with_storage(setup, getattr(sim, "storage_dtype", None))


def with_storage(setup: FDTDSetup, storage_dtype: str | None) -> FDTDSetup:
    """``setup`` whose E and H are stored in ``storage_dtype`` (None: as computed;
    :func:`emjax.fdtd.fieldstore.field_storage`, float16 scaled by the run's drive)."""
    if storage_dtype is None:
        return setup
    drive = peak_drive(setup) if storage_dtype == "float16" else 0.0  # only float16 scales
    return dataclasses.replace(setup, fields=field_storage(storage_dtype, setup.dtype, drive))


def _conformal(sim, plan: GridPlan, media: list, index: dict):
    """The Dey-Mittra cut faces (:func:`emjax.fdtd.conformal3d.conformal_faces`) when
    ``sim.conformal_pec`` asks, else None; edges with a free part get their free medium
    in ``index`` (``media`` may grow)."""
    if not getattr(sim, "conformal_pec", False):
        return None
    from .conformal3d import conformal_faces  # it reads this module's coefficients

    return conformal_faces(sim, plan, media, index, plan.dt, plan.dtype)


def layout(plan: GridPlan, strategy: str) -> Layout:
    """The static layout of the update, from the lowering's first phase; the TF/SF
    choice is the backend's (:func:`tfsf_fold`)."""
    faces = plan.faces
    return Layout(
        shape=plan.grid.shape,
        pad_z=plan.grid.pad_z,
        inv_d=tuple(1.0 / d for d in plan.grid.spacing),
        slabs=plan.slabs,
        pmc_low=tuple(lo.kind == "pmc" for lo, _ in faces),
        pmc_high=tuple(hi.kind == "pmc" for _, hi in faces),
        pec_low=tuple(lo.kind in ("pec", "cpml") for lo, _ in faces),
        fold=cpml_fold(strategy),
        starts_as_data=_on_accelerator(),
        mur=plan.mur,
        tfsf_fold=tfsf_fold(),
    )


def pml_coefficients(plan: GridPlan) -> dict:
    """Slab key -> :class:`emjax.fdtd.cpml.SlabCoefficients`, with the slab's first
    index as data, for in-place per_face corrections (``update3d``)."""
    pml = {}
    for slab in plan.slabs:
        face = plan.faces[slab.axis][0 if slab.side == "low" else 1]
        pml[slab.key] = dataclasses.replace(
            slab_coefficients(slab, face.grading, plan.dt, plan.dtype),
            start=np.int32(slab.start))
    return pml


def _rasterize(sim, grid) -> tuple[list, dict[str, np.ndarray], object]:
    """Media, per-component material indices and the sub-pixel smoothing (when asked:
    :class:`emjax.grid.subpixel.Smoothing`, else None)."""
    mat = rasterize(grid, sim.background, sim.structures)
    media = list(mat.media)
    index = {c: v for c, v in mat.index.items()}
    if getattr(sim, "subpixel", False):
        sm = subpixel.smooth(grid, sim.background, sim.structures, media, index)
        _check_stable(sim, sm)
        return sm.media, sm.index, sm
    return media, index, None


def _check_stable(sim, sm) -> None:
    """Refuse a smoothing whose D-to-E map would make the leapfrog unstable at the
    scenario's Courant number (:func:`emjax.grid.subpixel.largest_inverse_eps`)."""
    eps_min = min([m.eps_r * m.mu_r for m in sim.media] + [m.eps_inf for m in sim.pole_media])
    limit = 1.0 / (sim.courant**2 * eps_min)
    lam = subpixel.largest_inverse_eps(sm, enough=limit)
    if lam > limit:
        raise SetupError(
            f"subpixel: the smoothed permittivity's largest inverse eigenvalue {lam:.6f} "
            f"exceeds 1 / (courant^2 eps_min) = {limit:.6f} at courant = {sim.courant}: the "
            f"run would grow without bound; set courant <= "
            f"{math.floor(1e4 / math.sqrt(lam * eps_min)) / 1e4} or subpixel = false")


def _offdiagonal(sm, plan: GridPlan, cut=None):
    """The off-diagonal smoothing correction (:mod:`emjax.fdtd.anisotropic`) on the
    samples outside the CPML slabs and the wall planes, and off the conformal cut faces'
    edges (``cut``; their E weighs its free length in the energy, and the cut faces'
    implicit solve knows the plain E update only), or None."""
    if sm is None:
        return None
    if cut is not None:
        sm = subpixel.without(sm, _cut_edges(cut[0], plan.grid.shape))
    grid = plan.grid
    lo, hi = [1, 1, 1], [n - 1 for n in grid.nodes]
    for slab in plan.slabs:
        if slab.side == "low":
            lo[slab.axis] = max(lo[slab.axis], slab.start + slab.length)
        else:
            hi[slab.axis] = min(hi[slab.axis], slab.start)
    return anisotropic.lower(sm.couplings, sm.residual, grid.shape, [1.0 / d for d in grid.spacing],
                             list(zip(lo, hi, strict=True)), plan.dt, plan.dtype)


def _cut_edges(system, shape) -> list[np.ndarray]:
    """Per E component, a bool array of ``shape``: the conformal cut faces' edges."""
    out = [np.zeros(shape, bool) for _ in range(3)]
    for (ax, _), idx in zip(system["static"]["edges"], system["arrays"]["e_index"],
                            strict=True):
        out[ax][idx] = True
    return out


def _monitors(sim, plan: GridPlan) -> dict[str, tuple]:
    """Probe interpolation, DFT/snapshot regions, energy, NearToFar and flux boxes, as
    the ``probes``, ``dfts``, ``snapshots``, ``energy``, ``n2f`` and ``flux`` of
    :class:`FDTDSetup` (a FluxMonitor's faces join ``dfts``)."""
    grid, dtype = plan.grid, plan.dtype
    out: dict[str, list] = {"probes": [], "dfts": [], "snapshots": [], "energy": [], "n2f": [],
                            "flux": []}
    for m in sim.monitors:
        mp = monitor_plan(m)
        if isinstance(m, Probe):
            comps = []
            for comp in m.components:
                idx, w = zip(*(grid.interpolation(comp, p) for p in m.positions), strict=True)
                comps.append((comp, np.concatenate(idx), np.stack(w).astype(dtype)))
            out["probes"].append((mp, tuple(comps)))
        elif isinstance(m, DFTMonitor | FieldSnapshot):
            kind = "dfts" if isinstance(m, DFTMonitor) else "snapshots"
            out[kind].append((mp, plan.regions[m.name]))
        elif isinstance(m, EnergyMonitor):
            out["energy"].append(mp)
        elif isinstance(m, NearToFar):
            lo, hi = plan.boxes[("monitor", m.name)]
            out["n2f"].append((mp, lo, hi, neartofar.regions(lo, hi)))
        elif isinstance(m, FluxMonitor):
            lo, hi = flux_box(m, plan)
            faces = []
            for axis, _, side, regions in flux_faces(m, lo, hi):
                faces.append((len(out["dfts"]), axis, side))
                out["dfts"].append((monitor_plan(m, [c for c, _ in regions]), regions))
            direction = 1.0 if m.direction == "+" else -1.0
            out["flux"].append((mp, lo, hi, direction, tuple(faces)))
    return {k: tuple(v) for k, v in out.items()}


def _plane_waves(sim, plan: GridPlan, index, media) -> tuple:
    """(plane wave plan, TF/SF box) of every plane wave, the box checked to lie in the
    background."""
    grid = plan.grid
    bg = sim.background
    out = []
    for i, s in enumerate(sim.sources):
        if isinstance(s, PlaneWave):
            lo, hi = plan.boxes[("source", i)]
            box = tfsf.build(
                grid.nodes, grid.spacing, grid.lower, lo, hi, s.k_hat, s.e_hat, s.h_hat,
                plan.dt, s.reference_frequency or _centre_frequency(s.waveform),
                eps_r=bg.eps_r, mu_r=bg.mu_r, dtype=plan.dtype)
            _check_homogeneous(i, box, index, media)
            out.append((plane_wave_plan(s), box))
    return tuple(out)


def _energy_weights(w, idx, cell_volume: float, dtype) -> tuple:
    """Half of eps dV (or mu dV) per sample, per component, as gathered tables."""
    half = 0.5 * cell_volume
    table = half * np.asarray(w, np.float64)
    if not np.all(np.abs(table) <= np.finfo(dtype).max):
        raise SetupError(f"domain: a cell of {cell_volume:.3g} m^3 (2D: m^2) holding eps or "
                         f"mu up to {np.max(np.abs(w)):.3g} gives energy weights beyond "
                         f"{np.dtype(dtype).name}'s range; use smaller cells or "
                         "dtype = 'float64'")
    if len(np.unique(w)) == 1:
        return tuple(np.asarray(table[0], dtype) for _ in idx)
    return tuple(table[i].astype(dtype) for i in idx)


def _centre_frequency(w) -> float:
    """The frequency (Hz) at which a waveform's spectrum is centred."""
    for attr in ("f0", "fp", "frequency"):
        v = getattr(w, attr, None)
        if v:
            return float(v)
    return float(w.fwidth)


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
    with np.errstate(over="ignore"):  # past float32's range: the run's guard names it
        return np.stack(cols, axis=1).astype(dtype)


def drive(setup: FDTDSetup, step0: int, length: int) -> np.ndarray:
    """The largest |source sample| of each step from ``step0`` (V/m, the field increments
    of point sources and the plane waves' amplitudes), float64, shape (length,)."""
    n = np.arange(step0, step0 + length, dtype=np.float64)
    cols = [np.abs(waveform_samples(list(setup.sources), (n + 0.5) * setup.dt, np.float64))]
    cols += [np.abs(pw.amplitude * pw.waveform((n + 1) * setup.dt))[:, None]
             for pw, _ in setup.planewaves]
    if setup.sheets:  # the largest increment of each waveguide port's sheets
        peak = np.array([np.max(np.abs(sh.profile)) for sh in setup.sheets])
        cols.append(np.abs(waveguide.sheet_samples(setup.sheets, n, setup.dt, np.float64))
                    * peak)
    return np.max(np.concatenate(cols, axis=1), axis=1, initial=0.0)


def peak_drive(setup: FDTDSetup, block: int = 1 << 16) -> float:
    """The largest |source sample| of the whole run (V/m), in blocks of steps."""
    return max((float(np.max(drive(setup, k, min(block, setup.steps - k)), initial=0.0))
                for k in range(0, setup.steps, block)), default=0.0)


def psi_bytes(setup: FDTDSetup) -> int:
    """Bytes the psi arrays of E and H take (the CPML slabs only)."""
    item = np.dtype(setup.dtype).itemsize
    total = 0
    for slab in setup.layout.slabs:
        total += 2 * 2 * math.prod(slab.psi_shape(setup.grid.shape)) * item  # 2 comps, E and H
    return total
