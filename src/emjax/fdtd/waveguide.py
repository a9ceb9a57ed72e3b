"""Waveguide ports of FDTD3D: sheet sources that launch a mode one way, and the plane
that measures its forward and backward waves.

A :class:`~emjax.model.WaveguidePort` is lowered, on the host, into

- four :class:`SheetSource` (fewer where a profile vanishes): a total-field /
  scattered-field plane for the mode. The plane's E_t nodes (the *source plane*, two
  cells behind the measuring plane) belong to the launched (total) side, the H_t half
  a cell behind to the other. Each H update behind the plane loses the incident E_t it
  would read across it, and each E update on it gains the incident H_t, which are the
  equivalent surface currents M = -n x E_inc and J = n x H_inc:

      dH_b = -s (dt/mu)/dn e_c V(t),   dH_c = +s (dt/mu)/dn e_b V(t)       (t = n dt)
      dE_b = (dt/eps)/dn e_b I(t),     dE_c = (dt/eps)/dn e_c I(t)   (t = (n + 1/2) dt)

  for normal axis a (n = s a_hat), tangential axes b, c = a+1, a+2 (cyclic), the mode's
  profile e (``analysis.waveguide``), V(t) = amplitude * g(t) the launched modal
  voltage on the plane, and I(t) the current of the same wave half a cell upstream:
  ``I(f) = V(f) exp(j beta dn/2) / Z(f)``, with beta and Z the *Yee grid's* own
  (``RectangularMode.on_grid``). One of them is the waveform, the other formed from it
  by FFT on the host (the waveform is known for the whole run; :func:`launch`), so the
  wave impedance's frequency dependence (TE: Z = W mu / K) is honoured at every
  frequency, not at one: the incident field then obeys the discrete Maxwell equations
  exactly, and nothing leaks behind the plane but rounding and the FFT's truncation
  (measured by ``tests/fdtd/test_waveguide_port.py``);
- a measuring plan (:class:`WaveguideMeasure`): V = sum E_t . e dA on the measuring
  plane and I = sum H_t . h dA of the mean of H half a cell either side, recorded every
  step; ``analysis.waveguide.modal_waves`` splits them into a and b after the run.

Each sheet keeps the index of the scenario source it comes from (``source``), so a
batched run can switch a port's sheets on and off per excitation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np

from ..analysis.waveguide import RectangularMode
from ..constants import eps0, mu0
from ..errors import SetupError
from ..grid.yee import OFFSETS
from ..model import PEC, LumpedPort, WaveguidePort
from ..model.dispersion import PoleMedium
from . import modeport

SOURCE_CELLS = 2
"""Cells between the source plane and the measuring plane (the source plane lies
behind it, away from the device)."""

_PAD = 4
"""The FFT that forms I(t) spans this many times the run, zero-padded, so that its
circular wrap cannot reach the run's samples."""


@dataclass(frozen=True, eq=False)
class SheetSource:
    """A field increment on a plane of samples, added every step: field "E" (after
    the E update; waveform sampled at (n + 1/2) dt) or "H" (after the H update;
    sampled at n dt); comp 0, 1, 2; slices of the component's array; profile: the
    increment per unit waveform sample (V/m or A/m), the slices' shape; waveform: g(t),
    a plain function of t in s; source: the index in the scenario's sources."""

    field: str
    comp: int
    slices: tuple[slice, slice, slice]
    profile: np.ndarray
    waveform: object
    source: int


@dataclass(frozen=True, eq=False)
class WaveguideMeasure:
    """What a waveguide port records each step: V (E terms) and I (H terms), each a
    tuple of (comp, slices, weights) with weights in m (e dA, h dA, the H terms halved:
    the mean of two planes); name; source index; attrs of its record; voltage: the
    launched modal voltage V(t) in V (None for a passive port)."""

    name: str
    source: int
    e_terms: tuple
    h_terms: tuple
    attrs: dict
    voltage: object


def _region(grid, comp: str, a: int, plane: int, lo, hi) -> tuple[slice, ...]:
    """Slices of ``comp`` on plane index ``plane`` along a, over the node range
    lo..hi (inclusive) of the two other axes: nodes for whole offsets, the cells
    between for half ones; an upper domain face's node, which the arrays leave out
    (an implicit zero, ``grid.yee``), left out."""
    sl = []
    for ax in range(3):
        if ax == a:
            sl.append(slice(plane, plane + 1))
        else:
            half = OFFSETS[comp][ax] == 0.5
            sl.append(slice(lo[ax], min(hi[ax] + (0 if half else 1), grid.nodes[ax])))
    return tuple(sl)


def _local(grid, comp: str, sl, b: int, c: int, lo) -> tuple[np.ndarray, np.ndarray]:
    """(u, v) in m of ``comp``'s samples in ``sl`` from the rectangle's lower corner,
    broadcast to the region's shape."""
    xs = []
    for ax in (b, c):
        x = grid.axis_coords(comp, ax)[sl[ax]] - (grid.lower[ax] + lo[ax] * grid.spacing[ax])
        shape = [1, 1, 1]
        shape[ax] = len(x)
        xs.append(x.reshape(shape))
    shape = tuple(s.stop - s.start for s in sl)
    return np.broadcast_to(xs[0], shape), np.broadcast_to(xs[1], shape)


def lower(sim, plan, media: list, index: dict, names: set) -> tuple[list, list]:
    """(sheets, measures) of every WaveguidePort of ``sim`` on the lowering's first
    phase ``plan`` (``plan.GridPlan``), rasterized ``media`` and ``index``; ``names``
    (monitor and lumped-port names) are extended with the ports'. Raises SetupError
    naming the port for a plane in the CPML or off the grid planes, a cross-section
    that is not one lossless medium inside PEC walls, or a mode cut off over the
    whole band."""
    sheets: list[SheetSource] = []
    measures: list[WaveguideMeasure] = []
    grid, dt = plan.grid, plan.dt
    for i, s in enumerate(sim.sources):
        if not isinstance(s, WaveguidePort):
            continue
        what = f"sources[{i}] WaveguidePort '{s.name}'"
        if s.name in names:
            raise SetupError(f"{what}: the name '{s.name}' is taken by another port or a "
                             "monitor; port and monitor names key the results, so give each "
                             "its own")
        names.add(s.name)
        a = s.normal
        b, c = (a + 1) % 3, (a + 2) % 3
        sgn = 1 if s.direction == "+" else -1
        d = grid.spacing
        lo, hi = _rectangle(what, grid, s, b, c)
        p_m = round((s.center[a] - grid.lower[a]) / d[a])
        p_s = p_m - sgn * SOURCE_CELLS
        _check_planes(what, plan, a, p_m, p_s)
        lo[a] = hi[a] = p_m
        _check_walls(what, plan, media, index, a, p_m, lo, hi, b, c, pmc=s.mode == "solved")
        if s.mode == "solved":
            mode = modeport.solved_mode(what, sim, s, plan, media, index, a, (p_m, p_s), lo, hi)
            label = f"solved mode {s.mode_index}"
        else:
            medium = _medium(what, grid, media, index, a, (p_m, p_s), lo, hi, b, c)
            mode = RectangularMode(s.mode, s.m, s.n, (hi[b] - lo[b]) * d[b],
                                   (hi[c] - lo[c]) * d[c], medium.eps_r, medium.mu_r
                                   ).on_grid(d[b], d[c], d[a], dt)
            label = f"mode {s.mode}{s.m}{s.n}"
        g = s.waveform.sampler() if s.excite else None
        if s.excite:
            fc, top = mode.cutoff_frequency, float(s.waveform.fmax)
            if top <= fc:
                raise SetupError(
                    f"{what}: its {label} is cut off below {fc:.6g} Hz in this guide, above "
                    f"the whole band of its waveform (up to {top:.6g} Hz); raise the "
                    "waveform's frequency or pick a lower mode")
            v_t, i_t = launch(mode, s.amplitude, g, _centre(s.waveform), dt, plan.steps)
            sheets += _sheets(grid, mode, i, a, b, c, sgn, p_s, lo, hi, (media, index), dt,
                              v_t, i_t)
        measures.append(_measure(grid, mode, i, s, a, b, c, sgn, p_m, lo, hi,
                                 v_t if s.excite else None))
    return sheets, measures


def _rectangle(what: str, grid, s, b: int, c: int) -> tuple[list[int], list[int]]:
    """Node index corners of the port rectangle, checked to lie on grid planes."""
    lo, hi = [0, 0, 0], [0, 0, 0]
    for ax in (b, c):
        d, x0 = grid.spacing[ax], grid.lower[ax]
        half = s.size[ax] / 2
        for side, x in ((lo, s.center[ax] - half), (hi, s.center[ax] + half)):
            k = round((x - x0) / d)
            if abs(x - (x0 + k * d)) > 1e-3 * d:
                raise SetupError(
                    f"{what}: its edge {'xyz'[ax]} = {x:.6g} m is not on a grid plane (nearest "
                    f"{x0 + k * d:.6g} m); the guide's PEC walls and the port's edges must lie "
                    "on grid planes: adjust the size, centre or domain")
            side[ax] = k
        if hi[ax] - lo[ax] < 1:
            raise SetupError(f"{what}: its extent along {'xyz'[ax]} is under one cell; give "
                             "the guide's inner width and height")
    return lo, hi


def _check_planes(what: str, plan, a: int, p_m: int, p_s: int) -> None:
    """The measuring and source planes, and the H half a cell either side, must lie
    outside the CPML (and off the walls)."""
    n = plan.grid.cells[a]
    pml = plan.pml_cells[a]
    first, last = pml[0] + 1, n - pml[1] - 1
    for label, p in (("measuring", p_m), ("source", p_s)):
        if not first <= p <= last:
            x = plan.grid.lower[a] + p * plan.grid.spacing[a]
            raise SetupError(
                f"{what}: its {label} plane {'xyz'[a]} = {x:.6g} m (node {p}) must lie within "
                f"nodes {first}..{last}, outside the CPML and the walls (the source plane "
                f"sits {SOURCE_CELLS} cells behind the port plane, away from the device); move "
                "the port towards the device or thin the CPML")


def _medium(what, grid, media, index, a, planes, lo, hi, b, c):
    """The one lossless, non-dispersive medium inside the rectangle on ``planes``."""
    found = set()
    for comp in (f"E{'xyz'[b]}", f"E{'xyz'[c]}"):
        for p in planes:
            sl = list(_region(grid, comp, a, p, lo, hi))
            for ax in (b, c):  # strictly inside: the rim is the walls
                if OFFSETS[comp][ax] == 0.0:
                    sl[ax] = slice(lo[ax] + 1, hi[ax])
            found |= {int(k) for k in np.unique(index[comp][tuple(sl)])}
    kinds = [media[k] for k in sorted(found)]
    if len(kinds) != 1 or isinstance(kinds[0], PEC | PoleMedium) or kinds[0].sigma != 0 \
            or kinds[0].sigma_m != 0:
        names = ", ".join(getattr(m, "name", None) or m.type for m in kinds)
        raise SetupError(
            f"{what}: its cross-section must be filled with one lossless, non-dispersive "
            f"medium on the source and port planes, found: {names}; the analytic TE/TM modes "
            "need a uniformly filled guide there: move the port into a uniform section")
    return kinds[0]


def _check_walls(what, plan, media, index, a, p, lo, hi, b, c, pmc: bool = False) -> None:
    """The rectangle's rim must be PEC: the tangential E along each edge is a PEC
    domain face or rasterized as PEC; with ``pmc`` (a solved mode) a PMC domain face
    is a wall too."""
    grid = plan.grid
    for ax, other in ((b, c), (c, b)):  # walls normal to ax: E along `other` on them
        comp = f"E{'xyz'[other]}"
        for side, k in ((0, lo[ax]), (1, hi[ax])):
            face = plan.faces[ax][side].kind
            on_face = k == (0, grid.cells[ax])[side]
            if on_face and (face == "pec" or (pmc and face == "pmc")):
                continue
            sl = list(_region(grid, comp, a, p, lo, hi))
            sl[ax] = slice(k, k + 1)
            if not all(isinstance(media[int(j)], PEC) for j in np.unique(index[comp][tuple(sl)])):
                x = grid.lower[ax] + k * grid.spacing[ax]
                raise SetupError(
                    f"{what}: its edge {'xyz'[ax]} = {x:.6g} m is not a PEC wall (neither a PEC "
                    "domain face nor a PEC structure there; a solved mode also takes a PMC "
                    "domain face); the port's rectangle must be the inside of a PEC guide")


def _profile(grid, mode, field, comp, sl, b, c, lo, ax_local: str) -> np.ndarray:
    u, v = _local(grid, comp, sl, b, c, lo)
    return np.asarray(mode.profile(field, ax_local, u, v), np.float64)


def _material(media, index, name: str, sl) -> np.ndarray:
    """eps (E) or mu (H) in F/m or H/m at ``name``'s samples in ``sl``; infinite on PEC
    (a sheet adds nothing there)."""
    electric = name[0] == "E"
    table = np.array([np.inf if isinstance(m, PEC) else
                      (eps0 * getattr(m, "eps_r", getattr(m, "eps_inf", 1.0)) if electric
                       else mu0 * getattr(m, "mu_r", 1.0)) for m in media])
    return table[index[name][sl]]


def _sheets(grid, mode, i, a, b, c, sgn, p_s, lo, hi, materials, dt, v_t, i_t):
    """The four sheets of a port's TF/SF plane (module docstring), zero ones left out;
    v_t, i_t: the launched modal voltage on the plane and current half a cell behind;
    ``materials`` = (media, index) for each sample's own eps and mu. The H sheets carry
    M = -n x E_inc (the E profile), the E sheets J = n x H_inc, written through the H
    profile (-n x h: h_v along b, -h_u along c), which for an analytic mode, h = n x
    e, is e itself; a solved mode's h need not be (a microstrip)."""
    d = grid.spacing[a]
    h_plane = p_s - 1 if sgn > 0 else p_s  # H half a cell behind the source plane
    X = "xyz"
    specs = (("H", b, h_plane, "E", "v", -sgn, v_t),
             ("H", c, h_plane, "E", "u", sgn, v_t),
             ("E", b, p_s, "H", "v", 1, i_t),
             ("E", c, p_s, "H", "u", -1, i_t))
    out = []
    for field, comp, plane, prof_field, ax_local, sign, wave in specs:
        name = f"{field}{X[comp]}"
        sl = _region(grid, name, a, plane, lo, hi)
        scale = sign * dt / (_material(*materials, name, sl) * d)
        prof = scale * _profile(grid, mode, prof_field, name, sl, b, c, lo, ax_local)
        if np.any(prof != 0):
            out.append(SheetSource(field, comp, sl, prof, wave, i))
    return out


def _measure(grid, mode, i, s, a, b, c, sgn, p_m, lo, hi, voltage) -> WaveguideMeasure:
    """V and I terms on the measuring plane, and the record's attrs."""
    dA = grid.spacing[b] * grid.spacing[c]
    X = "xyz"
    e_terms, h_terms = [], []
    for comp, ax_local in ((b, "u"), (c, "v")):
        name = f"E{X[comp]}"
        sl = _region(grid, name, a, p_m, lo, hi)
        w = _profile(grid, mode, "E", name, sl, b, c, lo, ax_local) * dA
        if np.any(w != 0):
            e_terms.append((comp, sl, w))
        name = f"H{X[comp]}"
        for plane in (p_m - 1, p_m):
            sl = _region(grid, name, a, plane, lo, hi)
            w = sgn * 0.5 * dA * _profile(grid, mode, "H", name, sl, b, c, lo, ax_local)
            if np.any(w != 0):
                h_terms.append((comp, sl, w))
    x_m = grid.lower[a] + p_m * grid.spacing[a]
    attrs = {"mode": mode.attrs(), "normal": X[a], "direction": s.direction,
             "center": [float(v) for v in s.center], "excite": bool(s.excite),
             "plane": float(x_m), "amplitude": float(s.amplitude),
             "reference_shift": float(s.reference_offset + sgn * (s.center[a] - x_m)),
             "source_plane": float(x_m - sgn * SOURCE_CELLS * grid.spacing[a])}
    return WaveguideMeasure(s.name, i, tuple(e_terms), tuple(h_terms), attrs, voltage)


def _scaled(t: np.ndarray, amplitude: float, g) -> np.ndarray:
    return amplitude * g(t)


@dataclass(frozen=True, eq=False)
class SampledSignal:
    """A signal known at times k * step (s), k = 0, 1, ...: linear interpolation in
    between, zero outside (a picklable plain function of t)."""

    step: float
    values: np.ndarray

    def __call__(self, t) -> np.ndarray:
        k = np.asarray(t, np.float64) / self.step
        return np.interp(k, np.arange(len(self.values)), self.values, left=0.0, right=0.0)


def _centre(w) -> float:
    """The frequency (Hz) a waveform's spectrum is centred on."""
    for attr in ("f0", "fp", "frequency"):
        v = getattr(w, attr, None)
        if v:
            return float(v)
    return float(w.fwidth)


def launch(mode, amplitude: float, g, centre: float, dt: float, steps: int) -> tuple:
    """(v_t, i_t): the launched wave's modal voltage on the source plane and its modal
    current half a cell upstream, related by ``I(f) = V(f) exp(j beta dn/2) / Z(f)``
    (the grid mode's beta and Z). TE: V = amplitude * g(t) and I is filtered; TM, whose
    admittance is infinite at cut-off (a singular filter rings at f_c), the other way:
    I = amplitude * g(t) / |Z(f_0)| (f_0 the waveform's centre, at least 1.1 f_c) and V
    = I Z exp(-j beta dn/2), whose Z vanishes there instead; V is then amplitude * g
    at f_0 only. The filtered one is formed by FFT (:func:`filtered`)."""
    if mode.kind != "TM":  # TE and solved modes: voltage-driven
        v_t = partial(_scaled, amplitude=amplitude, g=g)
        return v_t, filtered(mode, v_t, dt, steps, lambda adv, z: adv / z)
    f0 = max(centre, 1.1 * mode.cutoff_frequency)
    i_t = partial(_scaled, amplitude=amplitude / abs(complex(mode.impedance(f0))), g=g)
    return filtered(mode, i_t, dt, steps, lambda adv, z: z / adv), i_t


def filtered(mode, signal, dt: float, steps: int, response) -> SampledSignal:
    """``signal`` (a function of t in s) filtered by ``response(exp(j beta dn/2),
    Z)`` of the grid mode at each frequency, sampled every half step over the run (the
    E and H sample times are among them). Frequencies where the grid carries no wave
    (DC, where a TE admittance or TM impedance is infinite, or |K dn/2| >= 1) are left
    out: a waveform has nothing there that matters."""
    half = dt / 2
    n = 2 * (steps + 2)
    size = 1 << math.ceil(math.log2(_PAD * n))
    t = np.arange(size) * half
    x = np.zeros(size)
    x[:n] = signal(t[:n])
    f = np.fft.rfftfreq(size, half)
    with np.errstate(divide="ignore", invalid="ignore"):
        _, advance = mode.half_cell(f)
        r = response(advance, mode.impedance(f))
        beta = mode.beta(f)  # complex past the grid's range: left out below
        beyond = np.abs(beta.real) * mode.grid[2] / 2 >= math.pi / 2 - 1e-6
        bad = (f == 0) | ~np.isfinite(r) | beyond
    r = np.where(bad, 0.0, r)
    return SampledSignal(half, np.fft.irfft(np.fft.rfft(x) * r, size)[:n])


def record_names(sim) -> set:
    """Names a waveguide port may not take: monitors' and lumped ports'."""
    return {m.name for m in sim.monitors} | {s.name for s in sim.sources
                                             if isinstance(s, LumpedPort)}




def add_sheets(F: tuple, sheets, profiles, g, field: str) -> tuple:
    """The fields ``F`` (E or H, 3 arrays) with each ``field`` sheet's profile times
    its waveform sample of this step (``g[k]`` for sheet k) added on its plane
    (:class:`emjax.fdtd.waveguide.SheetSource`)."""
    F = list(F)
    for k, (sh, prof) in enumerate(zip(sheets, profiles, strict=True)):
        if sh.field == field:
            F[sh.comp] = F[sh.comp].at[sh.slices].add(prof * g[k])
    return tuple(F)


def sheet_samples(sheets, n: np.ndarray, dt: float, dtype) -> np.ndarray:
    """Waveform samples (len(n), n_sheets) of sheet sources at steps n: H sheets at
    n dt (the E their update reads), E sheets at (n + 1/2) dt (the H theirs reads)."""
    cols = [sh.waveform((n + (0.5 if sh.field == "E" else 0.0)) * dt) for sh in sheets]
    return np.stack(cols, axis=1).astype(dtype) if cols else np.zeros((len(n), 0), dtype)


__all__ = ["SOURCE_CELLS", "SampledSignal", "SheetSource", "WaveguideMeasure", "add_sheets",
           "filtered", "launch", "lower", "record_names", "sheet_samples"]
