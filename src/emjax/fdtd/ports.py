"""Point sources and lumped ports lowered onto the Yee grid (host side, NumPy).

Dipoles, edge sources and lumped ports become :class:`SourceEdge` terms of the E
update (one per edge) and, for a :class:`~emjax.model.LumpedPort`, a
:class:`PortPlan` that tells the solver what to record and ``collect`` how to turn it
into V and I (:func:`emjax.fdtd.collect.port_record`).

A voltage source V_s in series with R on an edge of length dl and dual-face area dA
(a voltage EdgeSource, or one edge of a port) is folded into that edge's E update
(semi-implicit: E averaged over the step)

    eps dA dE/dt + (dl / (R dA)) E dA - V_s / (R dA) dA = (curl H) . dA,

which is Ampere's law on the dual face with the branch current (V_s - E dl) / R: R
joins ``media`` as a conductance sigma = dl / (R dA) on the edge and V_s / (R dA) as a
current density.

**Sheet ports.** A LumpedPort with a nonzero ``size`` spans the edges of the box
``position +- size / 2``: along its polarization N_ser edges in series (between the
grid nodes nearest the box's two ends), across it every node inside the box on each
transverse axis, both ends included (one node where the size is zero along that
axis): columns c of N_ser edges. An edge on a PMC wall has only part of its dual face
in the domain (the image half lies beyond): f_c = 1/2 per PMC wall it lies on, 1
elsewhere, and F = sum_c f_c is the number of columns the domain sees. Every edge gets
the same resistor R_e = Z0 F / N_ser and the source V_s / N_ser, so that the F
columns of N_ser edges in parallel are one source V_s in series with Z0. The branch
current of edge e (the part in the domain) is f_e (V_s / N_ser - E_e dl) / R_e; the
port's current I is the mean over the N_ser cross-sections of the total branch current
through each, and its voltage

    V = sum_e w_e E_e,   w_e = dl f_e / F

(the f-weighted mean over the columns of each column's sum of E dl). Summing the branch
currents gives exactly I = (V_s - V) / Z0, as for one edge, so the solver records the
one number V per port per step and I follows on the host; the source's power V_s I is
what the edges' sources deliver. A one-edge port is the sheet with N_ser = 1 and one
column (w = dl on an interior edge).

Checks, raised together before any field array is allocated (:func:`plan_ports`): the
port inside the domain, its edges off the CPML and off walls that hold their E (PEC,
the CPML's backing, Mur planes), a nonzero size along the polarization that snaps to at
least one edge, names unique; after rasterization (:func:`lower_sources`) no edge
inside a PEC structure.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from ..errors import SetupError
from ..model import PEC, EdgeSource, LumpedPort, PlaneWave, PointDipole, WaveguidePort

AXIS = {"x": 0, "y": 1, "z": 2}


@dataclass(frozen=True, eq=False)
class SourceEdge:
    """A point source on one edge: comp 0, 1, 2 (Ex, Ey, Ez; 2D: the component's number
    in ``COMPONENTS``); index; scale: the field increment per unit waveform sample;
    waveform: g(t), a plain function (``Waveform.sampler()``) evaluated on the host into
    the scan inputs (never traced); source: its index in the scenario's ``sources``
    (a sheet port gives several SourceEdges of the same source)."""

    comp: int
    index: tuple[int, int, int]
    scale: float
    waveform: object
    source: int


@dataclass(frozen=True, eq=False)
class PortPlan:
    """What a lumped port measures (``LumpedPort``): name; source: its index in the
    scenario's sources; comp 0, 1, 2 (Ex, Ey, Ez); index: its edges, a tuple of three
    int arrays (n,); weights (n,) in m: the solver records V = sum_e w_e E_e (V) after
    each step; length: the edges' span along ``comp``, N_ser dl, in m; center: the
    edges' centroid in m; extent: the snapped box's size in m (0 across a single column);
    n_series, n_columns: N_ser and the number of columns; impedance: Z0 in ohm;
    voltage: the open-circuit source voltage V_s(t) in V as a plain function of t in s
    (None for a passive port). ``collect`` forms V and I from the record
    (:func:`emjax.fdtd.collect.port_record`)."""

    name: str
    source: int
    comp: int
    index: tuple
    weights: np.ndarray
    length: float
    center: tuple[float, float, float]
    extent: tuple[float, float, float]
    n_series: int
    n_columns: int
    impedance: float
    voltage: object


@dataclass(frozen=True)
class _Sheet:
    """The snapped edges of port ``source``: ranges of node indices per axis (along the
    polarization the edges' own indices), and f per column as an array over the two
    transverse axes' nodes."""

    source: int
    comp: int
    ranges: tuple[range, range, range]
    f: np.ndarray  # (len of the first transverse range, len of the second)


def _what(i: int, s) -> str:
    return f"sources[{i}] {s.type}" + (f" '{s.name}'" if isinstance(s, LumpedPort) else "")


def _limits(face, n: int, low: bool) -> tuple[int, int, str]:
    """(transverse node limit, polarization node limit, why) of one face of an axis of
    n cells: the first (low) or last (high) node a port's edges may use."""
    t = face.thickness
    if face.kind == "pmc":
        return (0, 0, "") if low else (n, n, "")
    if face.kind == "mur":
        why = "the Mur plane updates its own tangential E"
        return (1, 1, why) if low else (n - 2, n - 1, why)
    if face.kind == "pec":
        why = "the PEC wall holds its tangential E at zero"
        return (1, 0, why) if low else (n - 1, n, why)
    why = f"the CPML ({t} cells) absorbs and its PEC backing holds E"
    return (t + 1, t, why) if low else (n - t - 1, n - t, why)


def _snap(u: float) -> int:
    """The nearest node to u (in cells), ties up, as ``YeeGrid.nearest_index``."""
    return int(np.floor(u + 0.5 + 1e-6))


def plan_ports(sim, plan) -> dict[int, _Sheet]:
    """The snapped edges of every LumpedPort of ``sim`` on the lowering's first phase
    ``plan`` (``plan.GridPlan``), keyed by source index; raises SetupError naming every
    misplaced port (outside the domain, in the CPML or on a wall that holds E, a
    nonzero size along the polarization that snaps to no edge, a taken name)."""
    grid, faces = plan.grid, plan.faces
    out, problems = {}, []
    names = {m.name for m in sim.monitors}
    for i, s in enumerate(sim.sources):
        if not isinstance(s, LumpedPort):
            continue
        what, p = _what(i, s), AXIS[s.polarization]
        if s.name in names:
            problems.append(f"{what}: the name '{s.name}' is taken by another port or a "
                            "monitor; port and monitor names key the results, so give each "
                            "its own")
        names.add(s.name)
        ranges, bad = [], False
        for a, ax in enumerate("xyz"):
            n, d, low = grid.cells[a], grid.spacing[a], grid.lower[a]
            c, half = s.position[a], 0.5 * s.size[a]
            top = low + n * d
            if c - half < low - 1e-6 * d or c + half > top + 1e-6 * d:
                problems.append(
                    f"{what}: along {ax} it spans [{c - half:.6g}, {c + half:.6g}] m, outside "
                    f"the domain [{low:.6g}, {top:.6g}] m; move it inside")
                bad = True
                continue
            u0, u1 = (c - half - low) / d, (c + half - low) / d
            if a == p:
                if s.size[a] == 0:
                    k = int(np.clip(_snap(u0 - 0.5), 0, n - 1))
                    r = range(k, k + 1)
                else:
                    r = range(_snap(u0), _snap(u1))
                    if not len(r):
                        problems.append(
                            f"{what}: size {s.size[a]:.6g} m along its polarization {ax} "
                            f"snaps to no edge (both ends on node {r.start}, {ax} = "
                            f"{low + r.start * d:.6g} m); give it at least one cell "
                            f"({d:.6g} m) or 0 for one edge")
                        bad = True
                lo_node, hi_node = r.start, r.stop
            else:
                j0, j1 = int(np.ceil(u0 - 1e-6)), int(np.floor(u1 + 1e-6))
                if s.size[a] == 0 or j1 < j0:  # no node inside: the nearest one
                    j0 = j1 = _snap(0.5 * (u0 + u1))
                r = range(j0, j1 + 1)
                lo_node, hi_node = j0, j1
            if bad:
                continue
            first = _limits(faces[a][0], n, True)
            last = _limits(faces[a][1], n, False)
            lo_ok, hi_ok = (first[1], last[1]) if a == p else (first[0], last[0])
            if lo_node < lo_ok or hi_node > hi_ok:
                why = first[2] if lo_node < lo_ok else last[2]
                kind = "edges span nodes" if a == p else "edges lie on nodes"
                problems.append(
                    f"{what}: along {ax} its {kind} {lo_node}..{hi_node} ({ax} = "
                    f"{low + lo_node * d:.6g} to {low + hi_node * d:.6g} m); they must lie "
                    f"within nodes {lo_ok}..{hi_ok} ({why}); move or shrink the port")
                bad = True
            ranges.append(r)
        if bad:
            continue
        t = [a for a in range(3) if a != p]
        f = np.ones((len(ranges[t[0]]), len(ranges[t[1]])))
        for k, a in enumerate(t):
            for side, node in ((0, 0), (1, grid.cells[a])):
                if faces[a][side].kind == "pmc" and node in ranges[a]:
                    sl = [slice(None), slice(None)]
                    sl[k] = ranges[a].index(node)
                    f[tuple(sl)] *= 0.5  # half its dual face lies beyond the PMC wall
        out[i] = _Sheet(i, p, tuple(ranges), f)
    if problems:
        raise SetupError("; ".join(problems))
    return out


def _edges(sheet: _Sheet) -> tuple[np.ndarray, np.ndarray]:
    """(edges (n, 3) int, f (n,)) of a sheet, column by column: the polarization's
    index varies fastest, so ``reshape(-1, n_ser)`` gives one column per row."""
    p = sheet.comp
    t0, t1 = (a for a in range(3) if a != p)
    r = sheet.ranges
    grids = np.meshgrid(np.arange(r[t0].start, r[t0].stop), np.arange(r[t1].start, r[t1].stop),
                        np.arange(r[p].start, r[p].stop), indexing="ij")
    idx = np.empty((grids[0].size, 3), np.int64)
    for a, g in zip((t0, t1, p), grids, strict=True):
        idx[:, a] = g.reshape(-1)
    return idx, np.repeat(sheet.f.reshape(-1), len(r[p]))


def lower_sources(sim, grid, media: list, index: dict,
                  sheets: dict[int, _Sheet]) -> tuple[list[SourceEdge], list[PortPlan]]:
    """Edges and scales (per unit waveform, before cb) of dipoles, edge sources and
    excited ports, and the ports' :class:`PortPlan` (``sheets``: :func:`plan_ports`).
    Each resistor joins ``media`` as a conductance on its edges (one new medium per
    port and medium it loads) and ``index`` is updated in place (see the module
    docstring). Raises SetupError for a source or port edge inside PEC."""
    sources: list[SourceEdge] = []
    ports: list[PortPlan] = []
    dV = grid.cell_volume
    problems = []
    for i, s in enumerate(sim.sources):
        if isinstance(s, PlaneWave | WaveguidePort):  # fdtd/tfsf.py, fdtd/waveguide.py
            continue
        comp = AXIS[s.polarization]
        name = "E" + s.polarization
        if isinstance(s, LumpedPort):
            edges, f = _edges(sheets[i])
        else:
            edges, f = np.array([grid.nearest_index(name, s.position)]), np.ones(1)
        here = index[name][tuple(edges.T)]
        pec = np.array([isinstance(media[int(m)], PEC) for m in here])
        if pec.any():
            first = tuple(int(v) for v in edges[np.argmax(pec)])
            m = media[int(here[np.argmax(pec)])]
            at = tuple(float(grid.axis_coords(name, a)[first[a]]) for a in range(3))
            count = (f"{int(pec.sum())} of its {len(edges)} edges lie" if len(edges) > 1
                     else "it sits on an edge")
            problems.append(
                f"{_what(i, s)} at {tuple(s.position)} m: {count} inside PEC "
                f"({getattr(m, 'name', None) or 'PEC'}; {name} index {first}, at "
                f"{tuple(round(v, 9) for v in at)} m), which would short it; move it off the "
                "conductor (a port belongs in a gap of the conductor)")
            continue
        dl = grid.spacing[comp]
        dA = dV / dl
        if isinstance(s, PointDipole):
            sources.append(SourceEdge(comp, _int(edges[0]), -s.amplitude / dV,
                                      s.waveform.sampler(), i))
            continue
        if isinstance(s, EdgeSource) and s.kind == "current":
            sources.append(SourceEdge(comp, _int(edges[0]), -s.amplitude / dA,
                                      s.waveform.sampler(), i))
            continue
        port = isinstance(s, LumpedPort)
        n_ser = len(sheets[i].ranges[comp]) if port else 1
        F = float(f.reshape(-1, n_ser)[:, 0].sum())
        R = float(s.impedance if port else s.resistance)
        r_edge = R * F / n_ser if port else R  # F columns of n_ser edges in parallel: R
        _load(media, index, name, edges, here, dl / (r_edge * dA), i)
        driven = not port or s.excite
        if driven:  # V_s / n_ser on each edge
            scale = s.amplitude / (n_ser * r_edge * dA)
            sources += [SourceEdge(comp, _int(e), scale, s.waveform.sampler(), i)
                        for e in edges]
        if port:
            ports.append(_port_plan(s, i, grid, name, edges, f, F, n_ser, dl, driven))
    if problems:
        raise SetupError("; ".join(problems))
    return sources, ports


def _load(media: list, index: dict, name: str, edges, here, sigma: float, i: int) -> None:
    """Add conductance ``sigma`` (S/m) on ``edges`` of component ``name``: one new
    medium per medium found there (``here``: their indices), ``index`` updated."""
    for m in np.unique(here):
        base = media[int(m)]
        media.append(base.model_copy(update={"sigma": base.sigma + sigma, "name": f"port{i}"}))
        if len(media) > 256 and index[name].dtype.itemsize < 2:
            index[name] = index[name].astype(np.uint16)
        on = edges[here == m]
        index[name][tuple(on.T)] = len(media) - 1


def _int(edge) -> tuple[int, int, int]:
    return tuple(int(v) for v in edge)


def _port_plan(s, i, grid, name, edges, f, F, n_ser, dl, driven) -> PortPlan:
    """The :class:`PortPlan` of LumpedPort ``s`` on ``edges`` with column fractions f."""
    pos = np.array([[grid.axis_coords(name, a)[e[a]] for a in range(3)] for e in edges])
    lo, hi = pos.min(axis=0), pos.max(axis=0)
    extent = hi - lo
    extent[AXIS[s.polarization]] = n_ser * dl
    return PortPlan(
        name=s.name, source=i, comp=AXIS[s.polarization],
        index=tuple(np.asarray(edges[:, a], np.int32) for a in range(3)),
        weights=dl * f / F, length=n_ser * dl,
        center=tuple(float(v) for v in 0.5 * (lo + hi)), extent=tuple(float(v) for v in extent),
        n_series=n_ser, n_columns=len(edges) // n_ser, impedance=float(s.impedance),
        voltage=_voltage(s.amplitude, s.waveform.sampler()) if driven else None)


def _voltage(amplitude: float, g) -> object:
    """V_s(t) = amplitude * g(t) in V, a plain (picklable) function of t in s."""
    return partial(_scaled, amplitude=amplitude, g=g)


def _scaled(t: np.ndarray, amplitude: float, g) -> np.ndarray:
    return amplitude * g(t)


__all__ = ["PortPlan", "SourceEdge", "lower_sources", "plan_ports"]
