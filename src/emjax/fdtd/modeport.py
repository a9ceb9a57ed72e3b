"""The solved mode of a ``WaveguidePort(mode="solved")``: the port plane's rasterized
cross-section, handed to the 2D eigenmode solver (:mod:`emjax.eigenmode`).

The cross-section is read off the FDTD lowering's own per-component media: with the
port's normal a and tangential axes b, c = a+1, a+2 (cyclic), the solver's (x, y, z)
are (b, c, a), and its (Ex, Ey, Ez, Hx, Hy, Hz) the grid's (E_b, E_c, E_a, H_b, H_c,
H_a) on the rectangle (E_a, H_b, H_c half a cell further along a, where the 3D grid
keeps them: in a line uniform along a they see the same media). eps and mu come from
each component's own medium (so a subpixel-averaged edge keeps its average), PEC media
become the section's PEC masks, and the rectangle's rim is PEC (``_check_walls``) or,
where it lies on a PMC domain face, PMC (a symmetry plane; a parallel-plate line's
side walls). The section on the source plane must equal the one on the port plane.

The solver runs at the grid's discrete frequency W / (2 pi), W = (2/dt) sin(w dt/2),
so that its effective index gives the 3D grid's axial wavenumber
(:mod:`emjax.analysis.solvedmode`): at the mode frequency for the profile, and at
:data:`TABLE_POINTS` frequencies across the launched waveform's band for beta(f) and
Z(f), each time taking the mode that overlaps the profile most (mode tracking). Points
where the mode is cut off are left out of the table.

The half-cell offset along a of the solver's Ez, Hx, Hy (the solver gives them at the
z of Ex, Ey, Hz; the 3D grid half a cell further on) is the one the port machinery of
:mod:`emjax.fdtd.waveguide` already handles for every mode: it uses only the
transverse E on the E plane and the transverse H, placed half a cell off, through
``half_cell(f)`` (the mean of two H planes over cos(beta dn/2), the launched current
advanced by exp(j beta dn/2)). Ez and Hz are not needed.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..analysis.solvedmode import SolvedMode
from ..constants import c0, mu0
from ..eigenmode import CrossSection, NoGuidedModeError, operators, solve_modes
from ..eigenmode.section import shapes
from ..errors import EmjaxWarning, SetupError
from ..grid.yee import OFFSETS
from ..model import PEC, Medium, WaveguidePort

TABLE_POINTS = 7
"""Frequencies across the waveform's band at which beta and Z are solved."""


def _centre(w) -> float:
    for attr in ("f0", "fp", "frequency"):
        v = getattr(w, attr, None)
        if v:
            return float(v)
    return float(w.fwidth)


def drive_waveform(sim, s):
    """The port's own waveform, or (passive port) the first excited waveguide port's
    or source's: the band the solved mode must cover."""
    if s.waveform is not None:
        return s.waveform
    for other in sim.sources:
        if isinstance(other, WaveguidePort) and other.excite and other.waveform is not None:
            return other.waveform
    for other in sim.sources:
        if getattr(other, "waveform", None) is not None:
            return other.waveform
    return None


def _media_tables(what: str, media: list, used: np.ndarray):
    """(eps_r, mu_r, is_pec) per medium index, checked lossless and non-dispersive."""
    eps, mu, pec = np.ones(len(media)), np.ones(len(media)), np.zeros(len(media), bool)
    bad = []
    for k in used:
        m = media[int(k)]
        if isinstance(m, PEC):
            pec[k] = True
        elif isinstance(m, Medium) and m.sigma == 0 and m.sigma_m == 0:
            eps[k], mu[k] = m.eps_r, m.mu_r
        else:
            bad.append(getattr(m, "name", None) or m.type)
    if bad:
        raise SetupError(f"{what}: mode = 'solved' needs lossless, non-dispersive media and "
                         f"PEC on its cross-section; found {', '.join(sorted(set(bad)))}; "
                         "move the port to a lossless section of the line")
    return eps, mu, pec


def _plane(grid, arr, comp: str, a: int, b: int, c: int, plane: int, lo, hi, shape):
    """``arr`` (a per-component 3D array) over the rectangle on ``plane`` along a, in
    (b, c) order and the section's ``shape``; upper-face nodes the arrays leave out
    repeat their neighbour (they are wall nodes, masked by the PEC walls)."""
    sl = [slice(None)] * 3
    sl[a] = plane
    for ax in (b, c):
        half = OFFSETS[comp][ax] == 0.5
        sl[ax] = slice(lo[ax], min(hi[ax] + (0 if half else 1), grid.nodes[ax]))
    out = arr[tuple(sl)]
    if b > c:  # after dropping a the remaining axes are in index order: (c, b)
        out = out.T
    pad = [(0, want - got) for want, got in zip(shape, out.shape, strict=True)]
    return np.pad(out, pad, mode="edge") if any(p[1] for p in pad) else out


def _walls(plan, b: int, c: int, lo, hi) -> tuple[str, ...]:
    """The section's (x_low, x_high, y_low, y_high) walls: "pmc" where the rectangle's
    side lies on a PMC domain face, else "pec" (``_check_walls`` has checked it)."""
    grid = plan.grid
    out = []
    for ax in (b, c):
        for side, k in ((0, lo[ax]), (1, hi[ax])):
            on_face = k == (0, grid.cells[ax])[side]
            out.append("pmc" if on_face and plan.faces[ax][side].kind == "pmc" else "pec")
    return tuple(out)


def section(what: str, grid, media: list, index: dict, a: int, plane: int, lo, hi,
            walls: tuple[str, ...] = ("pec",) * 4) -> CrossSection:
    """The port's cross-section on ``plane`` (module docstring); ``walls`` for
    (x_low, x_high, y_low, y_high)."""
    b, c = (a + 1) % 3, (a + 2) % 3
    X = "xyz"
    cells = (hi[b] - lo[b], hi[c] - lo[c])
    want = shapes(cells)
    names = {"Ex": f"E{X[b]}", "Ey": f"E{X[c]}", "Ez": f"E{X[a]}",
             "Hx": f"H{X[b]}", "Hy": f"H{X[c]}", "Hz": f"H{X[a]}"}
    idx = {k: _plane(grid, index[v], v, a, b, c, plane, lo, hi, want[k]).astype(np.int64)
           for k, v in names.items()}
    used = np.unique(np.concatenate([v.ravel() for v in idx.values()]))
    eps, mu, pec = _media_tables(what, media, used)
    xs = CrossSection(
        eps=tuple(eps[idx[k]] for k in ("Ex", "Ey", "Ez")),
        mu=tuple(mu[idx[k]] for k in ("Hx", "Hy", "Hz")),
        pec=tuple(pec[idx[k]] for k in ("Ex", "Ey", "Ez")),
        spacing=(grid.spacing[b], grid.spacing[c]),
        lower=(0.0, 0.0), boundaries=tuple(walls), name=what)
    _check_conductors(what, grid, xs, a, plane, lo)
    return xs


def _check_conductors(what: str, grid, xs: CrossSection, a: int, plane: int, lo) -> None:
    """Every PEC edge's two end nodes must be PEC too. The inside test can drop a node
    that lies exactly on a structure's face (rounding: a strip whose edge is on a grid
    line), and such a line has no (quasi-)TEM mode in the solver; in the FDTD it guides
    a different, slower wave (a microstrip's eps_eff 5% off, measured)."""
    mx, my, mz = operators.e_masks(xs)
    free_x = mx & ~(mz[:-1, :] & mz[1:, :])
    free_y = my & ~(mz[:, :-1] & mz[:, 1:])
    if not (free_x.any() or free_y.any()):
        return
    b, c = (a + 1) % 3, (a + 2) % 3
    along, (i, j) = ((b, np.argwhere(free_x)[0]) if free_x.any()
                     else (c, np.argwhere(free_y)[0]))
    pos = [0.0, 0.0, 0.0]
    pos[a] = grid.lower[a] + plane * grid.spacing[a]
    pos[b] = grid.lower[b] + (lo[b] + i + (0.5 if along == b else 0.0)) * grid.spacing[b]
    pos[c] = grid.lower[c] + (lo[c] + j + (0.5 if along == c else 0.0)) * grid.spacing[c]
    raise SetupError(
        f"{what}: the PEC edge along {'xyz'[along]} at ({pos[0]:.6g}, {pos[1]:.6g}, "
        f"{pos[2]:.6g}) m has an end node that is not PEC (a conductor's face exactly on a "
        "grid plane, dropped by rounding?); its cross-section has no clean TEM mode: widen "
        "the conductor by a small fraction of a cell so that its faces fall inside")


def _same(xs1: CrossSection, xs2: CrossSection) -> bool:
    return all(np.array_equal(p, q) for g in ("eps", "mu", "pec")
               for p, q in zip(getattr(xs1, g), getattr(xs2, g), strict=True))


def _grid_frequency(f: float, dt: float) -> float:
    """W / (2 pi): the frequency at which the continuum-time solver sees the grid's."""
    return math.sin(math.pi * f * dt) / (math.pi * dt)


def _transverse(mode) -> tuple[np.ndarray, ...]:
    """(E_u, E_v, H_u, H_v) of a solved mode, real (a lossless mode's transverse fields
    are real once its phase is fixed)."""
    return tuple(np.real(x) for x in (mode.E[0], mode.E[1], mode.H[0], mode.H[1]))


def _sign(mode) -> float:
    """+-1 making the largest transverse E entry positive, the first in index order
    among entries equal to 1e-6 (a symmetric line's mirror-image peaks tie, and which
    one the solver's rounding favours would flip the sign between two ports of the same
    line, and with it S21)."""
    e = np.concatenate([np.real(mode.E[0]).ravel(), np.real(mode.E[1]).ravel()])
    mag = np.round(np.abs(e) / np.max(np.abs(e)), 6)
    return 1.0 if e[int(np.argmax(mag))] >= 0 else -1.0


def _norm(pu, pv, dA: float) -> float:
    return math.sqrt((np.sum(pu**2) + np.sum(pv**2)) * dA)


def solved_mode(what: str, sim, s, plan, media, index, a: int, planes, lo, hi) -> SolvedMode:
    """The port's :class:`SolvedMode` (module docstring); ``planes`` = (port plane,
    source plane). Raises SetupError naming the port for a section that changes
    between the planes, no guided mode at the mode frequency, or too few modes."""
    grid, dt = plan.grid, plan.dt
    b, c = (a + 1) % 3, (a + 2) % 3
    walls = _walls(plan, b, c, lo, hi)
    xs = section(what, grid, media, index, a, planes[0], lo, hi, walls)
    if not _same(xs, section(what, grid, media, index, a, planes[1], lo, hi, walls)):
        raise SetupError(f"{what}: its cross-section differs between the port plane and the "
                         "source plane behind it; mode = 'solved' needs a line uniform over "
                         "those cells: move the port into a uniform section")
    wave = drive_waveform(sim, s)
    if wave is None and s.mode_frequency is None:
        raise SetupError(f"{what}: no waveform in the scenario to take the mode frequency "
                         "from; give mode_frequency")
    f0 = float(s.mode_frequency or _centre(wave))
    du, dv, dn = grid.spacing[b], grid.spacing[c], grid.spacing[a]
    dA = du * dv
    modes = _solve(xs, f0, dt, s.mode_index + 1)
    if len(modes) <= s.mode_index:
        raise SetupError(f"{what}: mode_index {s.mode_index} asked, but the cross-section has "
                         f"{len(modes)} guided mode(s) at {f0:.6g} Hz (indices 0.."
                         f"{len(modes) - 1}); pick a lower mode_index or raise mode_frequency")
    eu, ev, hu, hv = (x * _sign(modes[s.mode_index]) for x in _transverse(modes[s.mode_index]))
    ne, nh = _norm(eu, ev, dA), _norm(hu, hv, dA)
    e = (eu / ne, ev / ne)
    h = (hu / nh, hv / nh)
    n_max2 = max(float(np.max(x[~m], initial=1.0)) for x, m in zip(xs.eps, xs.pec, strict=True)
                 ) * max(float(np.max(x)) for x in xs.mu)
    if wave is not None:
        top = float(wave.fmax)
        bottom = max(2 * _centre(wave) - top, 0.02 * top)
        freqs = sorted({*np.linspace(bottom, top, TABLE_POINTS).tolist(), f0})
    else:
        freqs = [f0]
    table = [row for f in freqs if (row := _row(what, xs, f, dt, s.mode_index, e, h, dA,
                                                 n_max2)) is not None]
    tf, tx, tz, overlap = (tuple(float(r[k]) for r in table) for k in range(4))
    info = {"n_eff": float(np.real(modes[s.mode_index].n_eff)),
            "profile_drift": float(1 - min(overlap)), "solved_at": list(tf)}
    return SolvedMode(e_u=e[0], e_v=e[1], h_u=h[0], h_v=h[1], grid=(du, dv, dn, dt),
                      table_f=tf, table_x=tx, table_zeta=tz, n_max2=n_max2, frequency=f0,
                      index=s.mode_index, info=info)


def _solve(xs: CrossSection, f: float, dt: float, num: int) -> tuple:
    """The ``num`` modes of ``xs`` at the grid frequency of f (fewer: no warning);
    NoGuidedModeError names the port (``xs.name``)."""
    with warnings.catch_warnings():  # the section is named after the port: its errors too
        warnings.filterwarnings("ignore", category=EmjaxWarning)
        return solve_modes(xs, _grid_frequency(f, dt), num)


def _row(what, xs, f, dt, index, e, h, dA, n_max2):
    """(f, X, zeta, overlap) of the mode at f that overlaps the profile most; None
    where no guided mode exists (below cut-off)."""
    try:
        modes = _solve(xs, f, dt, index + 2)
    except NoGuidedModeError:
        return None
    best, score = None, -1.0
    for m in modes:
        eu, ev, hu, hv = _transverse(m)
        ov = abs(np.sum(eu * e[0]) + np.sum(ev * e[1])) * dA / max(_norm(eu, ev, dA), 1e-300)
        if ov > score:
            best, score = (m, eu, ev, hu, hv), ov
    if score < 0.5:
        return None
    m, eu, ev, hu, hv = best
    w = 2 * math.pi * _grid_frequency(f, dt)
    K = w / c0 * float(np.real(m.n_eff))
    Z = (np.sum(eu * e[0]) + np.sum(ev * e[1])) / (np.sum(hu * h[0]) + np.sum(hv * h[1]))
    x = K**2 - (w / c0) ** 2 * n_max2
    # a TEM line's X is zero to rounding: make it so, lest the held table end give a
    # spurious cut-off far below the band
    x = 0.0 if abs(x) < 1e-8 * (w / c0) ** 2 * n_max2 else x
    return f, x, float(Z) * K / (w * mu0), score


__all__ = ["TABLE_POINTS", "drive_waveform", "section", "solved_mode"]
