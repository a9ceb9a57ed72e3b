"""Scenario previews: the cross-section a run will see, drawn before anything runs.

:func:`preview` (``sim.plot(x=|y=|z=)``, ``emjax plot SCENARIO``) draws one plane of
a scenario on a matplotlib Axes: structures as the exact cross-sections of their
shapes (patches; a Voxels structure as the label slice read from its array), coloured
by medium with a legend naming it; point sources as markers; plane waves as their
TF/SF box (FDTD) or an arrow along k (FDFD's incident field); monitors as outlines
(DFT, snapshot and flux planes or boxes, near-to-far boxes) or points (probes); the
PML as shaded bands at the domain's edges. Axes are in metres with engineering
prefixes (matplotlib's EngFormatter). FDTD2D draws its plane z = 0; a DGATD mesh is
drawn as the wireframe of its tetrahedra cut by the plane (:mod:`emjax.preview.mesh`;
the mesh is built, NumPy only: about 0.3 s for the built-in cylinder cavity). Nothing
is rasterized on the scenario's grid and no solver runs.

Each artist carries a ``gid`` naming what it shows, so a caller (or a test) can find
it: ``structure:<i>`` (``structures[i]``; DGATD: ``regions[i]``, with ``background``
for untagged tets), ``source:<i>``, ``monitor:<name>``, ``pml:<axis>-<low|high>``.
What a point or a zero-thickness plane counts as "in the plane": within half a cell
(half the mesh's mean edge) of it along the normal. Energy monitors and DGATD
snapshots cover the whole domain and draw nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import SetupError
from .sections import _bounds3, section

if TYPE_CHECKING:
    from matplotlib.axes import Axes

_AXES = "xyz"
_PEC_COLOR = "0.35"
_SOURCE_STYLE = {"PointDipole": ("*", "tab:red"), "EdgeSource": ("D", "tab:orange"),
                 "LumpedPort": ("s", "tab:purple"), "LineSource": ("*", "tab:red"),
                 "MeshEdgeSource": ("*", "tab:red")}
_MONITOR_COLOR = {"DFTMonitor": "tab:blue", "FieldSnapshot": "tab:cyan",
                  "FluxMonitor": "tab:purple", "NearToFar": "tab:green", "Probe": "black"}


@dataclass
class Plane:
    """The drawn plane: ``axis`` (0, 1, 2) = ``value`` (m); ``u``, ``w`` the in-plane axes
    (horizontal, vertical); ``tol`` (m) how far along the normal a point or a
    zero-thickness plane may lie and count as in it."""

    axis: int
    value: float
    tol: float

    @property
    def u(self) -> int:
        return (1, 0, 0)[self.axis]

    @property
    def w(self) -> int:
        return (2, 2, 1)[self.axis]

    def holds(self, point) -> bool:
        return abs(float(point[self.axis]) - self.value) <= self.tol

    def crosses(self, lo, hi) -> bool:
        return lo[self.axis] - self.tol <= self.value <= hi[self.axis] + self.tol


@dataclass
class _Canvas:
    """The Axes, the plane, the domain's in-plane box and the legend being collected."""

    ax: Any
    plane: Plane
    lower: np.ndarray  # (3,) m
    upper: np.ndarray
    legend: dict = field(default_factory=dict)  # label -> proxy artist
    colors: dict = field(default_factory=dict)  # medium JSON -> colour

    def uw(self, point) -> tuple[float, float]:
        return float(point[self.plane.u]), float(point[self.plane.w])

    def clip(self, lo, hi) -> tuple[np.ndarray, np.ndarray]:
        """A box clipped to the domain (inf sizes span it)."""
        return np.maximum(lo, self.lower), np.minimum(hi, self.upper)

    def medium_color(self, medium) -> Any:
        """One colour per distinct medium (PEC grey), its legend entry added."""
        from matplotlib.patches import Patch

        key = medium.model_dump_json()
        if key not in self.colors:
            import matplotlib as mpl

            n = sum(1 for k in self.colors if '"PEC"' not in k)
            self.colors[key] = (_PEC_COLOR if medium.type == "PEC"
                                else mpl.colormaps["Set2"](n % 8))
            self.legend.setdefault(medium_label(medium),
                                   Patch(facecolor=self.colors[key]))
        return self.colors[key]

    def mark(self, label: str, marker: str, color: Any) -> None:
        from matplotlib.lines import Line2D

        self.legend.setdefault(label, Line2D([], [], ls="", marker=marker, color=color))

    def outline(self, label: str, color: Any, ls: str = "-") -> None:
        from matplotlib.patches import Patch

        self.legend.setdefault(label, Patch(fill=False, edgecolor=color, ls=ls))


def medium_label(medium) -> str:
    """The legend text of a medium: its name, else its defining numbers."""
    if getattr(medium, "name", ""):
        return medium.name
    if medium.type == "PEC":
        return "PEC"
    if medium.type == "PoleMedium":
        return f"PoleMedium (eps_inf = {medium.eps_inf:g}, {len(medium.poles)} poles)"
    text = f"eps_r = {medium.eps_r:g}"
    if medium.sigma:
        text += f", sigma = {medium.sigma:g} S/m"
    if medium.mu_r != 1:
        text += f", mu_r = {medium.mu_r:g}"
    return text


# ------------------------------------------------------------------ entry
def preview(sim, x: float | None = None, y: float | None = None, z: float | None = None,
            ax: Axes | None = None) -> Axes:
    """Draw the cross-section of ``sim`` at x, y or z = value (m; give one, default the
    plane z through the domain's centre) on ``ax`` (default a new Agg figure's Axes)
    and return the Axes. FDTD2D takes none (or z = 0): its plane is z = 0.

    Raises SetupError for more than one plane, or a plane outside the domain (mesh).
    """
    given = [(a, v) for a, v in enumerate((x, y, z)) if v is not None]
    if len(given) > 1:
        names = ", ".join(f"{_AXES[a]} = {v:g}" for a, v in given)
        raise SetupError(f"planes {names} (m) given to plot; give exactly one of x, y or z")
    if ax is None:
        from ..plot import _figure

        ax = _figure((7.5, 5.5)).add_subplot()
    from .mesh import draw_mesh

    draw = {"FDTD3D": _draw_grid3d, "FDFD3D": _draw_grid3d, "FDTD2D": _draw_grid2d,
            "DGATD": draw_mesh}.get(sim.type)
    if draw is None:
        raise SetupError(f"no preview for a {sim.type} scenario; FDTD3D, FDTD2D, "
                         "FDFD3D and DGATD have one")
    canvas = draw(sim, given[0] if given else None, ax)
    _finish(canvas, sim)
    return ax


def save_preview(sim, path, *, x: float | None = None, y: float | None = None,
                 z: float | None = None, overwrite: bool = False, inputs=(),
                 what: str = "path", flag: str = "overwrite=True") -> Path:
    """Draw :func:`preview` into a PNG at ``path``, checked first
    (:func:`emjax.io.targets.check_output`: an existing file only with ``overwrite``,
    never one of ``inputs``) and written atomically; returns the path. ``what`` and
    ``flag`` name the target and the replacement switch in refusals."""
    from ..io.atomic import atomic_path
    from ..io.targets import check_output

    path = check_output(path, overwrite=overwrite, inputs=inputs, what=what, flag=flag)
    fig = preview(sim, x=x, y=y, z=z).figure
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    return path


def _plane(given, lower, upper, tol: float) -> Plane:
    """The plane asked for (default z through the centre), refused outside [lower, upper]."""
    a, v = given if given is not None else (2, 0.5 * (lower[2] + upper[2]))
    v = float(v)
    if not (math.isfinite(v) and lower[a] - tol <= v <= upper[a] + tol):
        raise SetupError(f"plane {_AXES[a]} = {v:g} m lies outside the domain "
                         f"[{lower[a]:.6g}, {upper[a]:.6g}] m along {_AXES[a]}; give a plane "
                         "inside it")
    return Plane(a, v, tol)


def _finish(c: _Canvas, sim) -> None:
    from matplotlib.ticker import EngFormatter, MaxNLocator

    ax, p = c.ax, c.plane
    ax.xaxis.set_major_locator(MaxNLocator(5))  # engineering labels are wide
    ax.set_xlim(c.lower[p.u], c.upper[p.u])
    ax.set_ylim(c.lower[p.w], c.upper[p.w])
    ax.set_aspect("equal")
    ax.xaxis.set_major_formatter(EngFormatter(unit="m"))
    ax.yaxis.set_major_formatter(EngFormatter(unit="m"))
    ax.set_xlabel(_AXES[p.u])
    ax.set_ylabel(_AXES[p.w])
    where = EngFormatter(unit="m")(p.value) if p.value else "0 m"
    ax.set_title(f"{sim.name} ({sim.type}): {_AXES[p.axis]} = {where}")
    if c.legend:
        ax.legend(list(c.legend.values()), list(c.legend), loc="upper left",
                  bbox_to_anchor=(1.02, 1.0), fontsize="small", frameon=False)


# ------------------------------------------------------------- grid kinds
def _draw_grid3d(sim, given, ax) -> _Canvas:
    dom = sim.domain
    d = np.array(dom.spacing3)
    lower, upper = np.array(dom.lower), np.array(dom.upper)
    plane = _plane(given, lower, upper, 0.5 * d[(given or (2,))[0]])
    c = _Canvas(ax, plane, lower, upper)
    pml = (sim.pml_cells() if sim.type == "FDTD3D"
           else ((sim.boundary.thickness,) * 2,) * 3)
    _structures(c, sim.structures)
    _pml(c, pml, d)
    walls = _walls(sim, pml)
    if sim.type == "FDFD3D":  # its result (the scattered field) spans the whole grid
        _incident(c, 0, sim.incident, c.lower + np.array(pml)[:, 0] * d)
        return c
    _sources(c, sim.sources, dom, walls)
    _monitors(c, sim.monitors, dom, walls)
    return c


def _draw_grid2d(sim, given, ax) -> _Canvas:
    if given is not None and given != (2, 0.0):
        a, v = given
        raise SetupError(f"plane {_AXES[a]} = {v:g} m: an FDTD2D scenario is the plane "
                         "z = 0; give no plane (or z = 0)")
    dom = sim.domain.as_3d()
    lower = np.array([*sim.domain.lower, -0.5 * dom.spacing3[2]])
    upper = np.array([*sim.domain.upper, 0.5 * dom.spacing3[2]])
    c = _Canvas(ax, Plane(2, 0.0, math.inf), lower, upper)  # everything lies in the plane
    pml = (*sim.pml_cells(), (0, 0))
    _structures(c, sim.structures)
    _pml(c, pml, np.array(dom.spacing3))
    _sources(c, sim.sources, dom, pml[:2])
    _monitors(c, sim.monitors, dom, pml[:2])
    return c


def _walls(sim, pml) -> tuple:
    """Cells a default TF/SF or near-to-far box keeps its margin from on each face: the
    CPML, and one more above a Mur face (as :func:`emjax.fdtd.plan.boxes` counts)."""
    if sim.type != "FDTD3D":
        return tuple(pml)
    return tuple((lo, hi + int(pair[1].type == "Mur"))
                 for (lo, hi), pair in zip(pml, sim.faces, strict=True))


def _box(dom, walls, center, size, margin) -> tuple[np.ndarray, np.ndarray]:
    """A TF/SF or near-to-far box in m, snapped to nodes as the lowering snaps it
    (:func:`emjax.fdtd.plan.box_from`); in 2D (two walls) it lies on z = 0."""
    from ..fdtd.plan import box_from

    grid = SimpleNamespace(cells=dom.cells, spacing=dom.spacing3, lower=dom.lower)
    ends = box_from(grid, walls, center, size, margin)
    n = len(walls)
    return tuple(np.concatenate([np.array(dom.lower[:n]) + np.array(e) * dom.spacing3[:n],
                                 np.zeros(3 - n)]) for e in ends)


def _structures(c: _Canvas, structures) -> None:
    from ..model.geometry import Voxels

    for i, s in enumerate(structures):
        gid, z = f"structure:{i}", 1.0 + 1e-3 * i  # later structures win: drawn on top
        if isinstance(s.geometry, Voxels):
            _voxels(c, s.geometry, gid, z)
            continue
        if s.geometry.type in ("Mesh", "GdsExtrusion"):
            _sampled_section(c, s.geometry, gid, z, c.medium_color(s.medium))
            continue
        patch = section(s.geometry, c.plane, *c.clip(*_bounds3(s.geometry)))
        if patch is None:
            continue
        color = c.medium_color(s.medium)
        # Opaque, later on top: what the rasterization does (later structures win).
        patch.set(facecolor=color, edgecolor="0.2", lw=0.5, gid=gid, zorder=z)
        c.ax.add_patch(patch)


def _sampled_section(c: _Canvas, g, gid: str, z: float, color, n: int = 240) -> None:
    """A CAD geometry's section (any shape, holes included): its inside test on an
    n x n sampling of the plane over its clipped bounds, filled by contourf."""
    p = c.plane
    lo, hi = c.clip(*_bounds3(g))
    if not lo[p.axis] <= p.value <= hi[p.axis] or (hi <= lo)[[p.u, p.w]].any():
        return
    su, sw = np.linspace(lo[p.u], hi[p.u], n), np.linspace(lo[p.w], hi[p.w], n)
    uu, ww = np.meshgrid(su, sw, indexing="ij")
    xyz = [None, None, None]
    xyz[p.axis], xyz[p.u], xyz[p.w] = np.full_like(uu, p.value), uu, ww
    inside = np.asarray(g.inside(*xyz), float)
    if inside.any():
        cs = c.ax.contourf(uu, ww, inside, levels=[0.5, 1.5], colors=[color], zorder=z)
        cs.set_gid(gid)


def _voxels(c: _Canvas, g, gid: str, z: float) -> None:
    """The label slice under the plane as an image, each label in its medium's colour."""
    from matplotlib.colors import to_rgba

    p = c.plane
    labels = g.label_array()
    o, d = np.array(g.origin), np.array(g.spacing)
    k = math.floor((p.value - o[p.axis]) / d[p.axis])
    if not 0 <= k < labels.shape[p.axis]:
        return
    sheet = np.take(labels, k, axis=p.axis)  # (n_u, n_w)
    rgba = np.zeros((*sheet.shape, 4))
    for label, medium in g.media.items():
        hit = sheet == label
        if hit.any():
            rgba[hit] = to_rgba(c.medium_color(medium))
    n = np.array(labels.shape)
    extent = (o[p.u], o[p.u] + n[p.u] * d[p.u], o[p.w], o[p.w] + n[p.w] * d[p.w])
    c.ax.imshow(rgba.transpose(1, 0, 2), origin="lower", extent=extent,
                interpolation="nearest", gid=gid, zorder=z)


def _pml(c: _Canvas, pml, d) -> None:
    """Shaded bands of the absorbing layers at the in-plane faces."""
    from matplotlib.patches import Patch, Rectangle

    p = c.plane
    for b, other in ((p.u, p.w), (p.w, p.u)):
        for side, cells in zip(("low", "high"), pml[b], strict=True):
            if not cells:
                continue
            t = cells * d[b]
            start = c.lower[b] if side == "low" else c.upper[b] - t
            corner, size = {b: start, other: c.lower[other]}, {b: t, other: c.upper[other]
                                                               - c.lower[other]}
            c.ax.add_patch(Rectangle((corner[p.u], corner[p.w]), size[p.u], size[p.w],
                                     facecolor="0.5", alpha=0.25, lw=0, hatch="//",
                                     gid=f"pml:{_AXES[b]}-{side}", zorder=3))
            c.legend.setdefault("PML", Patch(facecolor="0.5", alpha=0.25, hatch="//"))


# ---------------------------------------------------- sources and monitors
def _point3(position) -> np.ndarray:  # a 2D position lies on z = 0
    return np.array([*position, 0.0][:3], float)


def _sources(c: _Canvas, sources, dom, walls) -> None:
    for i, s in enumerate(sources):
        if s.type == "PlaneWave":
            lo, hi = _box(dom, walls, s.box_center, s.box_size, s.box_margin)
            if c.plane.crosses(lo, hi):
                _rectangle(c, lo, hi, "tab:red", "--", f"source:{i}", "plane wave TF/SF box")
                _k_arrow(c, s, 0.5 * (lo + hi), 0.25 * (hi - lo))
            continue
        if s.type == "WaveguidePort":  # its rectangle, where the plane cuts it
            lo, hi = (np.array(x) for x in s.corners)
            if c.plane.crosses(lo, hi):
                _rectangle(c, lo, hi, "tab:red", "-", f"source:{i}", "waveguide port")
        else:
            _point_source(c, i, s)


def _point_source(c: _Canvas, i: int, s) -> None:
    pos = _point3(s.position)
    if not c.plane.holds(pos):
        return
    marker, color = _SOURCE_STYLE[s.type]
    c.ax.plot(*c.uw(pos), ls="", marker=marker, ms=12, color=color, mec="black", mew=0.6,
              gid=f"source:{i}", zorder=6)
    c.mark(s.type, marker, color)


def _incident(c: _Canvas, i: int, pw, corner) -> None:
    """FDFD's incident plane wave fills the domain: an arrow along k's in-plane part."""
    span = c.upper - c.lower
    start = corner + 0.12 * span
    _k_arrow(c, pw, start, 0.15 * span, gid=f"source:{i}")


def _k_arrow(c: _Canvas, pw, start, length, gid: str | None = None) -> None:
    """An arrow along the plane wave's k projected on the plane; a circled dot (k out of
    the plane along +normal) or cross (along -normal) when k is nearly normal to it."""
    p, k = c.plane, pw.k_hat
    label = "plane wave, k = ({:.2g}, {:.2g}, {:.2g})".format(*(np.round(k, 3) + 0.0))
    ku, kw = k[p.u], k[p.w]
    if math.hypot(ku, kw) < 0.2:
        marker = r"$\odot$" if k[p.axis] > 0 else r"$\otimes$"
        c.ax.plot(*c.uw(start), ls="", marker=marker, ms=16, color="tab:red", gid=gid,
                  zorder=6)
        c.mark(label, marker, "tab:red")
        return
    end = (start[p.u] + ku * length[p.u], start[p.w] + kw * length[p.w])
    c.ax.annotate("", xy=end, xytext=c.uw(start), gid=gid, zorder=6,
                  arrowprops={"arrowstyle": "-|>", "color": "tab:red", "lw": 2})
    c.mark(label, r"$\rightarrow$", "tab:red")


def _monitors(c: _Canvas, monitors, dom, walls) -> None:
    for m in monitors:
        gid, color = f"monitor:{m.name}", _MONITOR_COLOR.get(m.type)
        if m.type == "Probe":
            pts = [c.uw(q) for q in map(_point3, m.positions) if c.plane.holds(q)]
            if pts:
                c.ax.plot(*np.array(pts).T, ls="", marker="x", ms=8, mew=2, color=color,
                          gid=gid, zorder=6)
                c.mark("probe", "x", color)
            continue
        if m.type == "NearToFar":
            lo, hi = _box(dom, walls, m.center, m.size, m.margin)
            ls = ":"
        elif m.type in ("DFTMonitor", "FieldSnapshot", "FluxMonitor"):
            ctr, size = np.array(m.center, float), np.array(m.size, float)
            lo, hi = c.clip(ctr - size / 2, ctr + size / 2)
            ls = "-"
        else:  # EnergyMonitor: the whole domain, no place to draw
            continue
        if c.plane.crosses(lo, hi):
            _rectangle(c, lo, hi, color, ls, gid, m.type)


def _rectangle(c: _Canvas, lo, hi, color, ls: str, gid: str, label: str) -> None:
    """An outlined box's in-plane extent (a line where it is flat in the plane)."""
    from matplotlib.patches import Rectangle

    u, w = c.plane.u, c.plane.w
    c.ax.add_patch(Rectangle((lo[u], lo[w]), hi[u] - lo[u], hi[w] - lo[w], fill=False,
                             edgecolor=color, ls=ls, lw=1.6, gid=gid, zorder=5))
    c.outline(label, color, ls)


__all__ = ["Plane", "medium_label", "preview", "save_preview", "section"]
