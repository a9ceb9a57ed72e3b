"""The FDTD lowering's first phase: a scenario read once into frozen plan objects.

Every boundary parameter of a scenario (the kind of each face, a PML's thickness and
grading, a Mur face's coefficient) is read here and nowhere below: slab building,
slab coefficients, TF/SF and Huygens boxes, the memory estimate and the update
kernels take the plain frozen dataclasses of this module, never a pydantic model.

The first phase is cheap: the Yee grid's shape (z padding included), the face plans,
the CPML slabs, the TF/SF and NearToFar boxes, the DFT/snapshot regions and the
FluxMonitors' faces (:func:`flux_box`, :func:`flux_faces`), all from
1D coordinates; no full-grid array is allocated. :func:`emjax.fdtd.memory.estimate`
sizes a run from it before anything is rasterized; :func:`emjax.fdtd.setup.prepare`
builds the arrays on it. The 2D lowering shares :func:`lower_faces`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..analysis.flux import tangential_pair
from ..constants import c0
from ..driver import advice
from ..errors import SetupError
from ..grid.pml import sigma_optimal
from ..grid.yee import OFFSETS, YeeGrid
from ..model import CPML, PEC, PMC, DFTMonitor, FieldSnapshot, NearToFar, PlaneWave
from ..model.boundaries import Mur
from .cpml import Slab, build_slabs
from .mur import MurFace, mur_coefficient

KINDS = ("pec", "pmc", "cpml", "mur", "split")
"""Face kinds: PEC and PMC walls, CPML (backed by PEC), first-order Mur, and the 2D
split-field (Berenger) PML."""


@dataclass(frozen=True)
class PMLGrading:
    """Polynomial grading of one PML face (``grid.pml.grading``): order m, peak
    conductivity sigma_max in S/m (the optimum already resolved), peak stretch
    kappa_max, peak CFS alpha_max in S/m and its order m_alpha."""

    m: float
    sigma_max: float
    kappa_max: float = 1.0
    alpha_max: float = 0.0
    m_alpha: float = 1.0


@dataclass(frozen=True)
class FacePlan:
    """One face of the domain as the kernels see it.

    kind: one of :data:`KINDS`; thickness: PML cells (0 for walls and Mur); grading:
    the PML's :class:`PMLGrading` (None for walls and Mur); mur: the Mur coefficient
    (c dt - d) / (c dt + d) of a Mur face (None otherwise).
    """

    kind: str
    thickness: int = 0
    grading: PMLGrading | None = None
    mur: float | None = None

    @property
    def pml(self) -> bool:
        return self.kind in ("cpml", "split")


Faces = tuple[tuple[FacePlan, FacePlan], ...]
"""Per axis, the (low, high) face plans."""

MUR_MIN_CELLS = 3
"""Cells an axis with a Mur face needs: the boundary plane, the interior plane it reads,
and one more so that the low and high faces' planes never meet."""


def lower_faces(sim, spacing, dt: float) -> Faces:
    """Face plans of ``sim.faces`` (3 or 2 axes); ``spacing`` per axis in m, ``dt`` in s.

    The only place a boundary's parameters (a PML's thickness and grading, a Mur face's
    medium) are read. Raises SetupError for a Mur axis too short for it.
    """
    bg = sim.background
    pml = any(not isinstance(f, PEC | PMC | Mur) for pair in sim.faces for f in pair)
    eps_bg, mu_bg = background_grading(sim, dt) if pml else (None, getattr(bg, "mu_r", 1.0))
    out, problems = [], []
    for a, pair in enumerate(sim.faces):
        row = []
        for side, face in enumerate(pair):
            if isinstance(face, PEC):
                row.append(FacePlan("pec"))
            elif isinstance(face, PMC):
                row.append(FacePlan("pmc"))
            elif isinstance(face, Mur):
                n = sim.domain.cells[a]
                if n < MUR_MIN_CELLS:
                    problems.append(
                        f"boundary: Mur on the {('low', 'high')[side]} {'xyz'[a]} face needs "
                        f"at least {MUR_MIN_CELLS} cells along {'xyz'[a]}, the domain has {n}; "
                        "enlarge the domain or use PEC/PMC on that face")
                    row.append(FacePlan("mur", mur=0.0))
                    continue
                eps_r = face.eps_r if face.eps_r is not None else bg.eps_r
                c = c0 / math.sqrt(eps_r * mu_bg)
                row.append(FacePlan("mur", mur=float(mur_coefficient(c * dt, spacing[a]))))
            else:  # CPML or the 2D split-field PML
                sigma_max = face.sigma_max
                if sigma_max is None:
                    sigma_max = sigma_optimal(face.m, spacing[a], eps_bg, mu_bg)
                cpml = isinstance(face, CPML)
                grading = PMLGrading(
                    m=face.m, sigma_max=sigma_max,
                    kappa_max=face.kappa_max if cpml else 1.0,
                    alpha_max=face.alpha_max if cpml else 0.0,
                    m_alpha=face.m_alpha if cpml else 1.0)
                row.append(FacePlan("cpml" if cpml else "split", int(face.thickness), grading))
        out.append(tuple(row))
    if problems:
        raise SetupError("; ".join(problems))
    return tuple(out)


def background_grading(sim, dt: float) -> tuple[float, float]:
    """(eps_r, mu_r) of the background that a PML's optimal sigma_max is graded for.

    A constant background: its own. A dispersive (PoleMedium) background: the least
    Re eps(f) over the sources' band (-40 dB; eps_inf without sources), mu_r = 1. Why:
    the CPML is a coordinate stretch, independent of the medium, so it stays
    reflectionless in theory for the ADE's local constitutive law; what depends on the
    medium is the attenuation a wave of complex index n = sqrt(eps(f)) sees, exp(-Re n
    integral of sigma / (eps0 c0)), and Re n >= sqrt(Re eps). Grading for the least Re eps
    in the band gives every band frequency at least the design attenuation (the PEC
    backing's round trip below exp(-1.6 N) for N cells at the usual optimum); the
    others see a steeper grading, which in a Debye medium (Re eps falling with f, the
    least at the band's top) is where the grid resolves the wave better. eps_inf alone
    would undershoot Drude and Lorentz media, whose Re eps dips below it, and
    over-grade a Debye medium whose band never reaches eps_inf.

    Raises SetupError where Re eps(f) <= 0 in the band: a PML in a medium of negative
    permittivity (a metal, a plasma below its plasma frequency) supports backward
    waves and grows without bound (Becache, Joly and Vinoles, Math. Comp. 87, 2018).
    """
    bg = sim.background
    if not hasattr(bg, "poles"):
        return bg.eps_r, bg.mu_r
    signals = _signals(sim)
    spectra = [None if s.cw is not None else advice.spectrum(s, dt, sim.num_steps)
               for s in signals]
    top = advice.top_frequency(signals, spectra)
    if top is None or not top[0] > 0:
        return bg.eps_inf, 1.0
    lo = max(advice.bottom_frequency(signals, spectra) or 0.0, 1e-3 * top[0])
    band = np.unique(np.append(np.geomspace(lo, top[0], advice.DISPERSIVE_SAMPLES), top[0]))
    re = np.real(bg.eps(band))
    i = int(np.argmin(re))
    if not re[i] > 0:
        name = f" '{bg.name}'" if bg.name else ""
        raise SetupError(
            f"background: the dispersive background{name} has Re eps(f) = {re[i]:.4g} <= 0 at "
            f"f = {band[i]:.4g} Hz, within the band of {top[1]} ({lo:.4g} to {top[0]:.4g} Hz); "
            "a CPML in a medium of negative permittivity (a metal, a plasma below its plasma "
            "frequency) grows without bound; make the metal a Box structure inside a constant "
            "Medium background that stops short of the CPML, close the domain with PEC or "
            "PMC faces, or move the band above the frequencies where Re eps <= 0")
    return float(re[i]), 1.0


def _signals(sim) -> list:
    """The sources' time functions as :class:`emjax.driver.advice.Signal` objects."""
    return [advice.Signal(f"sources[{i}] {s.type}", s.waveform.sampler(),
                          s.waveform.steady_frequency)
            for i, s in enumerate(sim.sources) if getattr(s, "waveform", None) is not None]


def pml_cells(faces: Faces) -> tuple[tuple[int, int], ...]:
    """PML thickness in cells per face, ((x_lo, x_hi), ...), 0 where there is none."""
    return tuple((lo.thickness, hi.thickness) for lo, hi in faces)


def mur_faces(faces: Faces) -> tuple[MurFace, ...]:
    """(axis, side, coefficient) of every Mur face, side 0 low and 1 high."""
    return tuple((a, side, f.mur) for a, pair in enumerate(faces)
                 for side, f in enumerate(pair) if f.kind == "mur")


def z_padding(faces: Faces, nz: int, align: int) -> int:
    """Trailing z entries to store beyond the physical ``nz`` cells, for alignment ``align``.

    Zero where the upper z face is PMC: its axis is extended, the last stored entry is
    the wall node and the image terms of ``update3d`` read it as the array end. PEC,
    CPML (backed by PEC) and Mur upper faces all have the wall's tangential E zero
    (Mur: the node beyond its last plane is dead), which the padded E update enforces.
    """
    a = max(1, int(align))
    if a == 1 or faces[2][1].kind == "pmc":
        return 0
    return -nz % a


@dataclass(frozen=True, eq=False)
class MonitorPlan:
    """What a run needs of one monitor, read once from the scenario.

    name; kind: the model's type ("Probe", "DFTMonitor", "FieldSnapshot",
    "EnergyMonitor", "NearToFar"); components: field components sampled; positions:
    probe points in m; frequencies: DFT and NearToFar frequencies in Hz; interval:
    steps between snapshot frames or energy samples.
    """

    name: str
    kind: str
    components: tuple[str, ...] = ()
    positions: tuple = ()
    frequencies: tuple[float, ...] = ()
    interval: int = 1


def monitor_plan(m, components=None) -> MonitorPlan:
    """The :class:`MonitorPlan` of a model monitor; ``components`` overrides its own
    (2D: the polarization's)."""
    comps = components if components is not None else getattr(m, "components", ())
    return MonitorPlan(
        name=m.name, kind=m.type, components=tuple(comps),
        positions=tuple(tuple(float(x) for x in p) for p in getattr(m, "positions", ())),
        frequencies=tuple(float(f) for f in getattr(m, "frequencies", ())),
        interval=int(getattr(m, "interval", 1)))


@dataclass(frozen=True, eq=False)
class PlaneWavePlan:
    """What a run needs of a plane wave beyond its TF/SF box: amplitude in V/m; waveform:
    g(t), evaluated on the host into the scan inputs (never traced); k_hat, e_hat,
    h_hat: unit propagation, E and H directions."""

    amplitude: float
    waveform: object
    k_hat: np.ndarray
    e_hat: np.ndarray
    h_hat: np.ndarray


def plane_wave_plan(pw) -> PlaneWavePlan:
    """The :class:`PlaneWavePlan` of a model plane wave."""
    return PlaneWavePlan(amplitude=float(pw.amplitude), waveform=pw.waveform.sampler(),
                         k_hat=np.asarray(pw.k_hat, np.float64),
                         e_hat=np.asarray(pw.e_hat, np.float64),
                         h_hat=np.asarray(pw.h_hat, np.float64))


@dataclass(frozen=True, eq=False)
class GridPlan:
    """The first phase of a 3D FDTD lowering: shapes and static choices, no field arrays.

    grid: the Yee grid (stored shape with z padding); faces: per-axis face plans;
    slabs: the CPML slabs; dtype; dt in s; steps; boxes: {("source", i) | ("monitor",
    name): (lo, hi)} E-node corners of TF/SF and Huygens boxes; regions: {monitor name:
    ((component, slices), ...)} of every DFT monitor and snapshot.
    """

    grid: YeeGrid
    faces: Faces
    slabs: tuple[Slab, ...]
    dtype: np.dtype
    dt: float
    steps: int
    boxes: dict
    regions: dict

    @property
    def pml_cells(self) -> tuple[tuple[int, int], ...]:
        return pml_cells(self.faces)

    @property
    def mur(self) -> tuple[MurFace, ...]:
        return mur_faces(self.faces)


def lower_grid(sim, align: int) -> GridPlan:
    """The cheap first phase of the 3D lowering (see the module docstring); ``align``:
    the z alignment of the stored arrays (1: no padding)."""
    dom = sim.domain
    dt = sim.dt
    faces = lower_faces(sim, dom.spacing3, dt)  # before any large allocation
    extended = tuple(hi.kind == "pmc" for _, hi in faces)
    grid = YeeGrid(cells=dom.cells, spacing=dom.spacing3, lower=dom.lower, extended=extended,
                   pad_z=z_padding(faces, dom.cells[2], align))
    slabs = build_slabs(grid.nodes, pml_cells(faces))  # the high slabs end at the wall
    regions = {}
    for m in sim.monitors:
        if isinstance(m, DFTMonitor | FieldSnapshot):
            c, s = np.array(m.center), np.array(m.size)
            lo, hi = c - s / 2, c + s / 2
            regions[m.name] = tuple((comp, grid.index_range(comp, lo, hi))
                                    for comp in m.components)
    return GridPlan(grid=grid, faces=faces, slabs=slabs, dtype=np.dtype(sim.dtype), dt=dt,
                    steps=sim.num_steps, boxes=boxes(sim, grid, faces), regions=regions)


def advise(sim, dt: float, steps: int, spacing) -> list[str]:
    """The run advice of an FDTD scenario, 3D or 2D (:func:`emjax.driver.advice.advise`:
    cut-off pulses, cells per shortest wavelength in the densest medium, dispersive media
    read over the band, monitor frequencies outside the band or above Nyquist): warns,
    returns the messages.
    ``spacing``: the grid's spacings in m; dt in s."""
    signals = _signals(sim)
    monitors = [(f"monitor {m.type} '{m.name}'", m.frequencies)
                for m in sim.monitors if getattr(m, "frequencies", None)]
    eps_mu = max((m.eps_r * m.mu_r for m in sim.media), default=1.0)
    dispersive = [(f"dispersive medium {m.name or i}", m.eps)
                  for i, m in enumerate(getattr(sim, "pole_media", ()))]
    return advice.advise(signals, dt, steps, spacing=spacing, eps_mu=eps_mu,
                         dispersive=dispersive, monitors=monitors)


def box_from(grid, pml, center, size, margin) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """E-node index corners of a box given in m, or of the interior less ``margin``."""
    lo, hi = [], []
    for a in range(len(pml)):
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


def boxes(sim, grid, faces: Faces) -> dict:
    """TF/SF boxes of plane waves and Huygens boxes of NearToFar monitors, as E-node
    index corners; raises SetupError naming every misplaced box."""
    pml = pml_cells(faces)
    out, problems = {}, []
    # A Mur face reads the plane next to it, which must see the scattered field only:
    # a TF/SF box keeps one more cell from it. The upper Mur plane is the last node,
    # not the wall beyond, so default boxes keep their margin from that node.
    mur = [[int(f.kind == "mur") for f in pair] for pair in faces]
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
        lo, hi = box_from(grid, walls, s.box_center, s.box_size, s.box_margin)
        if check(f"sources[{i}] PlaneWave TF/SF", lo, hi, tfsf=True):
            out[("source", i)] = (lo, hi)
    for m in sim.monitors:
        if not isinstance(m, NearToFar):
            continue
        lo, hi = box_from(grid, walls, m.center, m.size, m.margin)
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



def flux_box(m, plan: GridPlan) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """E-node index corners of FluxMonitor ``m`` (lo == hi along a plane's normal),
    checked to keep its H samples, half a cell off each face, out of the CPML (as a
    NearToFar box: nodes pml + 1 .. n - pml - 1) and to be at least one cell wide
    along every other axis; raises SetupError naming the monitor otherwise."""
    grid, pml = plan.grid, plan.pml_cells
    lo, hi = box_from(grid, pml, m.center, m.size, 0)
    what = "plane" if m.normal is not None else "box"
    for a, ax in enumerate("xyz"):
        first, last = pml[a][0] + 1, grid.cells[a] - max(pml[a][1], 1) - 1
        x = grid.lower[a] + np.array([lo[a], hi[a]]) * grid.spacing[a]
        if not first <= lo[a] <= hi[a] <= last:
            raise SetupError(
                f"monitor FluxMonitor '{m.name}': its {what} along {ax} spans nodes "
                f"{lo[a]}..{hi[a]} ([{x[0]:.6g}, {x[1]:.6g}] m); it must lie within nodes "
                f"{first}..{last}, at least one cell inside the CPML or wall, since each face "
                "pairs E with H half a cell beyond it; shrink it or enlarge the domain")
        if lo[a] == hi[a] and a != m.normal:
            raise SetupError(
                f"monitor FluxMonitor '{m.name}': size {m.size[a]:.6g} m along {ax} is "
                f"thinner than a cell ({grid.spacing[a]:.6g} m) once snapped to the grid "
                f"nodes; give it at least one cell, or 0 to make a plane normal to {ax}")
    return lo, hi


def flux_faces(m, lo, hi) -> list[tuple[int, int, float, tuple]]:
    """(axis, E-node plane index, side, regions) of each face of FluxMonitor ``m``: a
    plane's one face, or a box's six, whose tangential E lie on the plane (``regions``:
    ((component, slices), ...) of E_b, E_c, H_b, H_c, :func:`emjax.analysis.flux.
    tangential_pair`) and whose tangential H lie half a cell towards ``side``: the
    plane's direction (+1 or -1), each box face's outward side."""
    if m.normal is not None:
        planes = [(m.normal, lo[m.normal], 1.0 if m.direction == "+" else -1.0)]
    else:
        planes = [(a, p, side) for a in range(3) for side, p in ((-1.0, lo[a]), (1.0, hi[a]))]
    out = []
    for a, p, side in planes:
        b, c = tangential_pair(a)
        regions = []
        for comp in (f"E{'xyz'[b]}", f"E{'xyz'[c]}", f"H{'xyz'[b]}", f"H{'xyz'[c]}"):
            sl = []
            for ax in range(3):
                half = OFFSETS[comp][ax] == 0.5  # sits between nodes along ax
                if ax == a:  # E on the plane, H half a cell towards side
                    i = p - 1 if half and side < 0 else p
                    sl.append(slice(i, i + 1))
                else:  # the tangential samples within the closed face, rim included
                    sl.append(slice(lo[ax], hi[ax] + (0 if half else 1)))
            regions.append((comp, tuple(sl)))
        out.append((a, p, side, tuple(regions)))
    return out


__all__ = ["KINDS", "FacePlan", "Faces", "GridPlan", "MonitorPlan", "PMLGrading",
           "PlaneWavePlan", "advise", "background_grading", "box_from", "boxes", "lower_faces",
           "lower_grid", "monitor_plan", "mur_faces", "plane_wave_plan", "pml_cells", "z_padding"]
