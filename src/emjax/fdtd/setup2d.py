"""Turn an FDTD2D scenario into the arrays and static layout the 2D kernels take.

Host-side NumPy, run once. The plane is a 3D Yee grid one cell thick whose z samples
all sit on z = 0 (:class:`PlaneGrid`), so rasterization, probe interpolation and
monitor regions are those of 3D, and monitor data keep the 3D shapes with one
sample along z. Coefficient tables (CIS) or arrays (CAS) come from the 3D set-up's
helpers; CPML slab coefficients from :mod:`emjax.fdtd.cpml`; the split-field PML's
conductivity from the one grading module :mod:`emjax.grid.pml`. ``subpixel``: the
smoothed diagonal from :func:`emjax.grid.subpixel.average` (planar) in the media
table and, in TEz, the off-diagonal stencils of :mod:`emjax.fdtd.offdiag2d`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..constants import eps0, mu0
from ..driver import backend
from ..driver.stages import Stages
from ..errors import SetupError
from ..grid import subpixel
from ..grid.rasterize import rasterize
from ..grid.yee import COMPONENTS, OFFSETS, YeeGrid
from ..model import PEC, DFTMonitor, EnergyMonitor, FieldSnapshot, PlaneWave, Probe
from ..model.dispersion import PoleMedium
from ..model.scenario2d import LineSource
from . import dispersive_setup
from .conformal2d import conformal_cells
from .cpml import build_slabs, grading_of, slab_coefficients
from .offdiag2d import stencils
from .plan import advise, box_from, lower_faces, monitor_plan, plane_wave_plan, pml_cells
from .setup import (
    FDTDSetup,
    SourceEdge,
    _e_coefficients,
    _energy_weights,
    _h_coefficients,
    _on_accelerator,
    _tables,
    with_storage,
)
from .update2d import POLARIZATIONS, Layout2D, curl_terms
from .update3d import UpdateCoefficients


@dataclass(frozen=True)
class PlaneGrid(YeeGrid):
    """A 3D Yee grid one cell thick whose every component samples the plane z = 0."""

    def axis_coords(self, comp: str, axis: int) -> np.ndarray:
        if axis == 2:
            return np.zeros(1)
        return super().axis_coords(comp, axis)

    @property
    def cell_area(self) -> float:
        return self.spacing[0] * self.spacing[1]


@dataclass(frozen=True, eq=False)
class FDTD2DSetup(FDTDSetup):
    """:class:`FDTDSetup` of a 2D run; ``names`` are the state's components in order
    (E group then H group); ``cut`` the conformal PEC cells (TEz) or None."""

    names: tuple[str, ...] = ()
    cut: object = None  # conformal PEC cells (update2d.conformal_h) or None
    offdiag: object = None  # TEz smoothed eps's off-diagonal terms (update2d.offdiag_e)
    onepass: object = None  # the one-pass GPU kernel's plan (pallas2d.OnePass2D) or None
    onepass_arrays: tuple = ()  # its code and tables (pallas2d.lower), NumPy


one_pass_backend = backend.triton_gpu
"""Whether runs take the one-pass kernel (tests make it True on a CPU: the interpreter)."""


def _one_pass(layout, coeffs, pml, dtype, waves, *, blocked: bool):
    """:func:`emjax.fdtd.pallas2d.lower` on a CUDA GPU where the scenario has nothing it
    leaves out (``blocked``), else (None, ())."""
    if blocked or not one_pass_backend():
        return None, ()
    from .pallas2d import lower  # Pallas' import only where the kernel may run

    out = lower(layout, coeffs, pml, dtype, interpret=not backend.triton_gpu(),
                tfsf_h=[box.terms["H"] for _, box in waves],
                cb_at=lambda pos, ii, jj: _b_at(coeffs["E"], pos, ii, jj))
    return out if out is not None else (None, ())


def plane_grid(sim) -> PlaneGrid:
    d3 = sim.domain.as_3d()
    return PlaneGrid(cells=d3.cells, spacing=d3.spacing3, lower=d3.lower)


def _depth(slab, offset: float) -> np.ndarray:
    """Normalised depth (0 at the inner interface, 1 at the wall) of the slab's samples."""
    T = slab.thickness or slab.length
    i = np.arange(slab.length, dtype=np.float64) + offset
    return (T - i) / T if slab.side == "low" else (i - (slab.length - T)) / T


def split_coefficients(slab, grading, grid, media, index, comps, electric, dt: float,
                       dtype) -> dict:
    """{comp: {"A", "B", "dA", "dB"}}: slab-shaped coefficients of a split-field PML.

    (A, B) are the semi-implicit coefficients with the medium's loss plus the PML's
    conductivity sigma(depth) (sigma mu / eps on H, the matched condition) of each
    sample's own medium; (dA, dB) their excess over the bulk (a, b) there. ``grading``:
    the face's :class:`emjax.fdtd.plan.PMLGrading` (only m and sigma_max matter).
    """
    out = {}
    for comp in comps:
        if not any(t[2] == slab.axis for t in curl_terms(comp)):
            continue
        name = ("E" if electric else "H") + "xyz"[comp]
        rho = _depth(slab, OFFSETS[name][slab.axis])
        sig, _, _ = grading_of(rho, grading)
        sig = sig[:, None] if slab.axis == 0 else sig[None, :]
        idx = index[name][slab.slices(grid.shape[:2])]
        A = np.zeros(idx.shape)
        B = np.zeros(idx.shape)
        a = np.zeros(idx.shape)
        b = np.zeros(idx.shape)
        for k, m in enumerate(media):
            sel = idx == k
            if not sel.any():
                continue
            if isinstance(m, PoleMedium):  # its split parts would miss the poles' current
                raise SetupError(
                    f"medium {m.name or 'PoleMedium'!r} is dispersive and reaches into the "
                    f"split-field PML on the {slab.side} {'xy'[slab.axis]} face; use a CPML "
                    "there (boundary CPML, which takes dispersive media) or keep the "
                    "structure out of the PML")
            a_k, b_k, _ = (_e_coefficients if electric else _h_coefficients)(m, dt)
            if isinstance(m, PEC):
                if electric:
                    continue  # A = B = a = b = 0: the split part stays zero
                eps, mu, loss = eps0, mu0, 0.0
            else:
                eps, mu = eps0 * m.eps_r, mu0 * m.mu_r
                loss = m.sigma if electric else m.sigma_m
            s = (loss + sig * (1.0 if electric else mu / eps)) * dt / (
                2 * (eps if electric else mu))
            full = np.broadcast_to((1 - s) / (1 + s), idx.shape)
            gain = np.broadcast_to((dt / (eps if electric else mu)) / (1 + s), idx.shape)
            A[sel], B[sel], a[sel], b[sel] = full[sel], gain[sel], a_k, b_k
        out[comp] = {"dA": (A - a).astype(dtype), "dB": (B - b).astype(dtype)}
        if comp == 2:
            out[comp].update(A=A.astype(dtype), B=B.astype(dtype))
    return out


@dataclass(frozen=True, eq=False)
class PlanePlan:
    """The first phase of the 2D lowering: shapes and static choices, no field arrays.

    grid: the plane grid; faces: per-axis (low, high) face plans (x, y); slabs: PML
    slabs (CPML and split-field); dtype; dt in s; steps; comps: (E components, H
    components) of the polarization; regions: {monitor name: ((component, slices),
    ...)} of every DFT monitor and snapshot.
    """

    grid: PlaneGrid
    faces: tuple
    slabs: tuple
    dtype: np.dtype
    dt: float
    steps: int
    comps: tuple
    regions: dict

    @property
    def pml_cells(self) -> tuple[tuple[int, int], ...]:
        return (*pml_cells(self.faces), (0, 0))


def lower_plane(sim) -> PlanePlan:
    """The cheap first phase of the 2D lowering: what :func:`estimate` and
    :func:`prepare` both read; no field-sized array is built."""
    grid = plane_grid(sim)
    dt = sim.dt
    faces = lower_faces(sim, grid.spacing[:2], dt)
    slabs = build_slabs((*grid.shape[:2], 1), (*pml_cells(faces), (0, 0)))
    regions = {}
    for m in sim.monitors:
        if isinstance(m, DFTMonitor | FieldSnapshot):
            c, s = np.array(m.center), np.array(m.size)
            regions[m.name] = tuple((comp, grid.index_range(comp, c - s / 2, c + s / 2))
                                    for comp in sim.monitor_components(m))
    return PlanePlan(grid=grid, faces=faces, slabs=slabs, dtype=np.dtype(sim.dtype), dt=dt,
                     steps=sim.num_steps, comps=POLARIZATIONS[sim.polarization],
                     regions=regions)


def prepare(sim) -> FDTD2DSetup:
    """Build the host-side set-up of an FDTD2D scenario on its :func:`lower_plane`,
    after its advice (warnings: :func:`emjax.fdtd.plan.advise`)."""
    st = Stages()
    plan = lower_plane(sim)
    grid, dtype, dt = plan.grid, plan.dtype, plan.dt
    advise(sim, dt, plan.steps, grid.spacing[:2])  # warnings only: the run goes ahead
    st.lap("grid")
    e_names = tuple("E" + "xyz"[c] for c in plan.comps[0])
    h_names = tuple("H" + "xyz"[c] for c in plan.comps[1])
    mat = rasterize(grid, sim.background, sim.structures)
    media, index3 = list(mat.media), {c: mat.index[c] for c in (*e_names, *h_names)}
    K = None
    if sim.subpixel:  # the polarization's in-plane E samples; H stays staircased
        if sim.polarization == "TEz":
            K = subpixel.off_diagonal(grid, sim.background, sim.structures, media, index3)
        media, index3 = subpixel.average(grid, sim.background, sim.structures, media, index3,
                                         planar=True)
    index = {c: a[:, :, 0] for c, a in index3.items()}
    # no off-diagonal pair through E in PEC or on a cut cell's edge (offdiag2d.stencils)
    fixed = {c: np.array([isinstance(m, PEC) for m in media])[index[c]] for c in ("Ex", "Ey")
             if c in index}

    cut = None
    if sim.polarization == "TEz" and sim.conformal and any(
            isinstance(s.medium, PEC) for s in sim.structures):
        cut = conformal_cells(sim, grid, media, index, dt, dtype)
        for pos, (edges, _) in (cut[2] if cut is not None else {}).items():
            fixed[("Ex", "Ey")[pos]][edges] = True
    offdiag = None if K is None else stencils({c: k[:, :, 0] for c, k in K.items()},
                                              grid.spacing[:2], dt, dtype, fixed)
    st.lap("rasterization")
    cE, wE, idxE = _tables(media, index, e_names, _e_coefficients, dt, dtype, sim.storage)
    cH, wH, idxH = _tables(media, index, h_names, _h_coefficients, dt, dtype, sim.storage)
    pml, split = _pml(plan, media, index)
    layout = Layout2D(shape=grid.shape[:2], inv_d=tuple(1.0 / d for d in grid.spacing[:2]),
                      polarization=sim.polarization, slabs=plan.slabs, split=split,
                      fold=_on_accelerator())
    coeffs = {"E": cE, "H": cH}
    # the poles' boxes on the polarization's E components; energies per unit length
    disp = dispersive_setup.lower(sim, grid, media, index, dt, dtype, grid.cell_area,
                                  comps=plan.comps[0], axes=2)
    st.lap("coefficient tables")
    monitors = _monitors(sim, plan)
    energy_weights = None
    if monitors["energy"]:  # half of eps dx dy (and mu dx dy) per sample: per unit length
        area = grid.cell_area
        energy_weights = {"E": _energy_weights(wE, idxE, area, dtype),
                          "H": _energy_weights(wH, idxH, area, dtype)}
    waves = tuple((plane_wave_plan(s), _tfsf(i, s, sim, plan, layout, coeffs))
                  for i, s in enumerate(sim.sources) if isinstance(s, PlaneWave))
    sources = tuple(_line_sources(sim, grid, media, index, dt))
    onepass, onepass_arrays = _one_pass(
        layout, coeffs, pml, dtype, waves, blocked=bool(disp or sim.storage_dtype) or
        cut is not None or offdiag is not None or any(e.comp >= 3 for e in sources))
    st.lap("monitors and sources")
    setup = FDTD2DSetup(
        grid=grid, layout=layout, dtype=dtype, dt=dt, steps=plan.steps, coeffs=coeffs,
        energy_weights=energy_weights, pml=pml,
        sources=sources, plan=plan, planewaves=waves, dispersive=disp,
        names=(*e_names, *h_names), cut=cut, offdiag=offdiag, onepass=onepass,
        onepass_arrays=onepass_arrays, stages=st, **monitors,
    )
    return with_storage(setup, sim.storage_dtype)


def _pml(plan: PlanePlan, media, index) -> tuple[dict, tuple[str, ...]]:
    """Slab key -> CPML or split-field coefficients; the keys of the split slabs."""
    pml, split = {}, []
    for slab in plan.slabs:
        face = plan.faces[slab.axis][0 if slab.side == "low" else 1]
        if face.kind == "cpml":
            pml[slab.key] = slab_coefficients(slab, face.grading, plan.dt, plan.dtype)
        else:
            split.append(slab.key)
            pml[slab.key] = {
                g: split_coefficients(slab, face.grading, plan.grid, media, index,
                                      plan.comps[k], g == "E", plan.dt, plan.dtype)
                for k, g in enumerate(("E", "H"))}
    return pml, tuple(split)


def _line_sources(sim, grid, media, index, dt: float) -> list[SourceEdge]:
    """Samples and scales of the line sources (electric on E, magnetic on H)."""
    sources: list[SourceEdge] = []
    area = grid.cell_area
    for i, s in enumerate(sim.sources):
        if not isinstance(s, LineSource):
            continue
        name = ("E" if s.current == "electric" else "H") + s.polarization
        edge = grid.nearest_index(name, (*s.position, 0.0))[:2]
        here = media[int(index[name][edge])]
        if isinstance(here, PEC) and s.current == "electric":
            raise SetupError(f"sources[{i}] LineSource at {tuple(s.position)} m sits on a "
                             "sample inside PEC; move it off the conductor")
        fn = _e_coefficients if s.current == "electric" else _h_coefficients
        gain = fn(here, dt)[1]
        wave = s.waveform.sampler()
        if s.current == "magnetic":  # M lives at whole steps; the driver samples (n + 1/2) dt
            wave = _Delayed(wave, 0.5 * dt)
        sources.append(SourceEdge(COMPONENTS.index(name), edge, -gain * s.amplitude / area,
                                  wave, i))
    return sources


def _monitors(sim, plan: PlanePlan) -> dict[str, tuple]:
    """Probe interpolation, DFT/snapshot regions (from the plan) and energy monitors, as
    the ``probes``, ``dfts``, ``snapshots`` and ``energy`` of the set-up."""
    out: dict[str, list] = {"probes": [], "dfts": [], "snapshots": [], "energy": []}
    for m in sim.monitors:
        if isinstance(m, EnergyMonitor):
            out["energy"].append(monitor_plan(m, ()))
            continue
        comps = sim.monitor_components(m)
        mp = monitor_plan(m, comps)
        if isinstance(m, Probe):
            rows = []
            for comp in comps:
                idx, w = zip(*(plan.grid.interpolation(comp, p) for p in m.positions),
                             strict=True)
                rows.append((comp, np.concatenate(idx), np.stack(w).astype(plan.dtype)))
            out["probes"].append((mp, tuple(rows)))
        elif isinstance(m, DFTMonitor | FieldSnapshot):
            kind = "dfts" if isinstance(m, DFTMonitor) else "snapshots"
            out[kind].append((mp, plan.regions[m.name]))
    return {k: tuple(v) for k, v in out.items()}


@dataclass(frozen=True, eq=False)
class TFSF2D:
    """A plane wave's TF/SF set-up: box corners (E-node indices), its 1D grid and the
    correction terms {"H": {pos: (index, weight, aux idx, aux w)}, "E": {...}}."""

    lo: tuple[int, int]
    hi: tuple[int, int]
    aux: object
    terms: dict


def _tfsf(i: int, pw, sim, plan: PlanePlan, layout, coeffs) -> TFSF2D:
    """TF/SF corrections of plane wave ``pw`` (sources[i]) on the box it names.

    A sample is in the total-field region when it lies in the closed box; the update of
    a sample whose curl stencil reaches across the box's edge uses the other side's
    field plus (into the total field) or minus (into the scattered field) the incident
    one there (Taflove and Hagness 2005, sec. 5.6). The incident field comes from a
    dispersion-matched 1D grid (:mod:`emjax.fdtd.auxgrid`).
    """

    grid, dt, dtype = plan.grid, plan.dt, plan.dtype
    pml = plan.pml_cells
    lo, hi = (tuple(v[:2]) for v in box_from(grid, pml, pw.box_center, pw.box_size,
                                               pw.box_margin))
    for a, ax in enumerate("xy"):
        n = grid.cells[a]
        first, last = pml[a][0] + 1, n - pml[a][1] - 2
        if not (first <= lo[a] < hi[a] <= last):
            raise SetupError(
                f"sources[{i}] PlaneWave: TF/SF box along {ax} spans nodes {lo[a]}..{hi[a]}; "
                f"it must lie within nodes {first}..{last} (inside the PML and walls); "
                "shrink the box or enlarge the domain")
    d = grid.spacing[:2]
    box_lo = np.array([grid.lower[a] + lo[a] * d[a] for a in range(2)])
    box_hi = np.array([grid.lower[a] + hi[a] * d[a] for a in range(2)])
    tol = 1e-6 * min(d)
    shape = layout.shape

    def pos(name, ii, jj):
        return (grid.lower[0] + (ii + OFFSETS[name][0]) * d[0],
                grid.lower[1] + (jj + OFFSETS[name][1]) * d[1])

    def inside(name, ii, jj):
        x, y = pos(name, ii, jj)
        return ((x >= box_lo[0] - tol) & (x <= box_hi[0] + tol)
                & (y >= box_lo[1] - tol) & (y <= box_hi[1] + tol))

    ii, jj = np.meshgrid(np.arange(max(lo[0] - 2, 0), min(hi[0] + 3, shape[0])),
                         np.arange(max(lo[1] - 2, 0), min(hi[1] + 3, shape[1])), indexing="ij")
    ii, jj = ii.ravel(), jj.ravel()
    raw = {}
    for electric in (False, True):
        f_comps = layout.comps[0 if electric else 1]
        sign = 1.0 if electric else -1.0
        hat = pw.h_hat if electric else pw.e_hat  # direction of the driving field G
        for p_, comp in enumerate(f_comps):
            fname = ("E" if electric else "H") + "xyz"[comp]
            b = _b_at(coeffs["E" if electric else "H"], p_, ii, jj)
            rows = []
            for s_, src, ax in curl_terms(comp):
                gname = ("H" if electric else "E") + "xyz"[src]
                step = (ax == 0, ax == 1)
                pairs = ((+1, 0), (-1, -1)) if electric else ((+1, 1), (-1, 0))
                for kappa, off in pairs:
                    qi, qj = ii + off * step[0], jj + off * step[1]
                    ok = (qi >= 0) & (qi < shape[0]) & (qj >= 0) & (qj < shape[1])
                    in_f, in_g = inside(fname, ii, jj), inside(gname, qi, qj)
                    sel = ok & (in_f != in_g) & (abs(hat[src]) > 1e-12)
                    delta = np.where(in_f, 1.0, -1.0)
                    w = sign * b * s_ * (1.0 / d[ax]) * kappa * delta * hat[src]
                    xq, yq = pos(gname, qi, qj)
                    rows.append((ii[sel], jj[sel], w[sel], np.stack([xq[sel], yq[sel]], 1)))
            raw[("E" if electric else "H", p_)] = rows
    aux, terms = _aux_terms(i, pw, sim, raw, d, dt, dtype)
    return TFSF2D(lo=lo, hi=hi, aux=aux, terms=terms)


def _aux_terms(i: int, pw, sim, raw: dict, d, dt: float, dtype):
    """The 1D grid of plane wave ``pw`` (sources[i]) covering every coupling point of
    ``raw`` ({(group, position): rows of (ii, jj, weight, points)}), and the terms
    {"H": {pos: (index, weight, aux idx, aux w)}, "E": {...}} sampling it."""
    from .auxgrid import make_aux_grid, project
    from .setup import _centre_frequency

    pts = np.concatenate([r[3] for rows in raw.values() for r in rows] or [np.zeros((0, 2))])
    if pts.shape[0] == 0:
        raise SetupError(f"sources[{i}] PlaneWave: the TF/SF box couples to no field of "
                         f"{sim.polarization}")
    k2 = pw.k_hat[:2] / np.linalg.norm(pw.k_hat[:2])
    s_all = project(pts, k2, (0.0, 0.0))
    f_ref = pw.reference_frequency or _centre_frequency(pw.waveform)
    aux = make_aux_grid(k2, d, dt, f_ref, float(s_all.min()), float(s_all.max()),
                        eps_r=sim.background.eps_r, mu_r=sim.background.mu_r)
    terms = {"H": {}, "E": {}}
    for (group, p_), rows in raw.items():
        ii_, jj_, w_, xy = (np.concatenate([r[k] for r in rows]) for k in range(4))
        if ii_.size == 0:
            continue
        # E updates read the incident H (h nodes), H updates the incident E (e nodes).
        idx, wt = aux.interpolation(project(xy, k2, (0.0, 0.0)), "h" if group == "E" else "e")
        terms[group][p_] = ((ii_.astype(np.int32), jj_.astype(np.int32)), w_.astype(dtype),
                            idx, wt.astype(dtype))
    return aux, terms


def _b_at(c: UpdateCoefficients, pos: int, ii, jj) -> np.ndarray:
    """The update coefficient b of group position ``pos`` at samples (ii, jj)."""
    if c.idx is not None:
        return np.asarray(c.b, np.float64)[np.asarray(c.idx[pos])[ii, jj]]
    if isinstance(c.b, tuple):
        return np.asarray(c.b[pos], np.float64)[ii, jj]
    return np.full(ii.shape, float(c.b[0]))


class _Delayed:
    """``waveform(t - delay)``: a magnetic source sampled on the electric time grid."""

    def __init__(self, waveform, delay: float):
        self.waveform, self.delay = waveform, delay

    def __call__(self, t):
        return self.waveform(np.asarray(t, dtype=np.float64) - self.delay)


def estimate(sim, chunk: int | None = None) -> dict[str, int]:
    """Device bytes of a 2D run by item, and their ``total``: shapes from
    :func:`lower_plane` (no allocation); ``polarization``: the dispersive boxes' p and j
    (box cells x arrays per pole x poles x E components x dtype size)."""
    from ..driver.loop import default_chunk as _default_chunk

    plan = lower_plane(sim)
    item = plan.dtype.itemsize
    nx, ny = plan.grid.shape[:2]
    N = nx * ny
    chunk = chunk or _default_chunk(plan.steps)
    out = {"fields": 3 * N * (2 if sim.storage_dtype else item)}
    n_media = len(sim.media) + len(sim.pole_media) + sum(
        isinstance(s.medium, PEC) for s in sim.structures if s.medium is not None)
    out["coefficients"] = (6 * N * item if sim.storage == "arrays"
                           else (3 * N if n_media > 1 else 0))
    # Dispersive boxes: p and j per slot and cell (the state), one medium row per cell
    bxs = dispersive_setup.boxes(sim, plan.grid, plan.comps[0], axes=2)
    polarization = dispersive_setup.aux_bytes(bxs, plan.dtype)
    if bxs:
        out["polarization"] = polarization
        out["coefficients"] += sum(math.prod(b.shape) for b in bxs) * (1 if n_media <= 256
                                                                         else 2)
    slab = 0
    for s in plan.slabs:
        face = plan.faces[s.axis][0 if s.side == "low" else 1]
        # CPML: 2 psi arrays; split: the split part and 4-6 coefficient arrays
        slab += s.length * (N // (nx, ny)[s.axis]) * item * (2 if face.kind == "cpml" else 7)
    out["pml"] = slab
    mon = 0
    for m in sim.monitors:
        if isinstance(m, DFTMonitor | FieldSnapshot):
            per = len(m.frequencies) * 2 if isinstance(m, DFTMonitor) else (
                chunk // m.interval + 1)
            mon += sum(per * math.prod(x.stop - x.start for x in sl) * item
                       for _, sl in plan.regions[m.name])
        elif isinstance(m, Probe):
            mon += len(sim.monitor_components(m)) * len(m.positions) * chunk * item
        elif isinstance(m, EnergyMonitor):
            mon += chunk * item + 3 * N * item * int(n_media > 1)
    out["monitors"] = mon
    out["workspace"] = (slab + polarization) // 2  # the p, j update is double-buffered
    if one_pass_backend() and not sim.storage_dtype:
        # the one-pass kernel's scratch fields and psi, and its material codes
        out["workspace"] += 3 * N * item + slab // 2 + N
    out["total"] = sum(out.values())
    return out


__all__ = ["FDTD2DSetup", "PlaneGrid", "PlanePlan", "estimate", "lower_plane", "plane_grid",
           "prepare"]
