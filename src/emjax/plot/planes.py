"""Field planes of grid monitors: DFT planes in dB, snapshots on a symmetric signed
scale (one frame, a small multiple of frames, or a GIF), |H|-type magnitudes.

What makes such a plane readable, done here once for all of them:

* **Source cells masked.** A point source or lumped port drives one Yee edge; the field
  on that edge and its neighbours is tens of dB above anything else (the demo's DFT
  plane: the source cell 0 dB, its neighbours -20 dB, the sphere -40 to -60 dB), so a
  linear or max-normalised scale shows one pixel. Given the scenario, the samples
  within 1.5 cells of a source or port in the plane (in-plane and along the normal)
  are masked (drawn grey, the source marked with a star), and the colour scale comes
  from the rest.
* **Scales.** A complex spectrum (DFT) is drawn as ``20 log10(|E| / max |E|)`` over
  ``db_range`` dB; a real field (snapshot) as its signed value on a diverging map
  (RdBu_r) with symmetric limits at the 99.5th percentile of ``|value|`` (a few
  hot cells saturate instead of setting the scale), so wavefronts show as bands of
  alternating sign.
* **Structures outlined** from the scenario (the exact cross-section of each shape,
  :func:`emjax.preview.section`; a Voxels structure's label boundaries as contours),
  drawn as a black line on a white halo so it shows on any colour.
* **Units.** Axes in m with engineering prefixes (EngFormatter), titles with the same
  formatter.

Artists carry the preview's ``gid`` names: ``structure:<i>``, ``source:<i>``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .common import _figure, _finish, _unit, eng, eng_axes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..results import MonitorData

MASK_CELLS = 1.5
"""Samples within this many cells of a source or port (in-plane and along the normal)
are masked."""


@dataclass(frozen=True)
class Cut:
    """One plane of a grid monitor's component: ``frames`` (n, nu, nv) at in-plane
    sample positions ``u``, ``v`` (m) along axes ``iu``, ``iv``; the plane is axis
    ``k`` (0, 1, 2) = ``value`` (m)."""

    frames: np.ndarray
    k: int
    value: float
    iu: int
    iv: int
    u: np.ndarray
    v: np.ndarray


def cut(md: MonitorData, component: str, axis: str | None = None,
        position: float | None = None) -> Cut:
    """The plane normal to ``axis`` nearest ``position`` (m; default the middle sample).
    ``axis`` None: the monitor's thinnest axis (a plane monitor's normal; z on a tie)."""
    if md.kind not in ("FieldSnapshot", "DFTMonitor"):
        raise ValueError(f"a field plane takes a FieldSnapshot or DFTMonitor; {md.kind} "
                         f"'{md.name}' has no grid")
    a = md.array(component)
    coords = md.axes(component)
    if axis is None:
        k = min((2, 0, 1), key=lambda i: len(coords[i]))
    elif axis in ("x", "y", "z"):
        k = "xyz".index(axis)
    else:
        raise ValueError(f"axis {axis!r} must be 'x', 'y' or 'z'")
    c = coords[k]
    j = len(c) // 2 if position is None else int(np.argmin(np.abs(c - position)))
    iu, iv = (i for i in range(3) if i != k)
    return Cut(np.take(a, j, axis=k + 1), k, float(c[j]), iu, iv, coords[iu], coords[iv])


# ------------------------------------------------------------ scenario
def _spacing3(scenario: Any) -> np.ndarray | None:
    """The grid's (dx, dy, dz) in m, or None (no scenario, or a mesh)."""
    dom = getattr(scenario, "domain", None)
    dom = dom.as_3d() if hasattr(dom, "as_3d") else dom
    spacing = getattr(dom, "spacing3", None)
    return None if spacing is None else np.array(spacing, float)


def _point3(position) -> np.ndarray:
    return np.array([*position, 0.0][:3], float)  # a 2D position lies on z = 0


def in_plane_sources(scenario: Any, c: Cut) -> list[tuple[int, np.ndarray]]:
    """(index, position) of the scenario's point sources and ports within
    :data:`MASK_CELLS` cells of the plane along its normal."""
    d = _spacing3(scenario)
    if d is None or d.size != 3:
        return []
    out = []
    for i, s in enumerate(getattr(scenario, "sources", None) or ()):
        pos = getattr(s, "position", None)
        if pos is not None and abs(_point3(pos)[c.k] - c.value) <= MASK_CELLS * d[c.k]:
            out.append((i, _point3(pos)))
    return out


def source_mask(scenario: Any, c: Cut) -> np.ndarray:
    """(nu, nv) True at samples within :data:`MASK_CELLS` cells of a point source or
    lumped port of ``scenario`` near the plane; all False without a scenario."""
    mask = np.zeros((c.u.size, c.v.size), bool)
    d = _spacing3(scenario)
    for _, p in in_plane_sources(scenario, c):
        near_u = np.abs(c.u - p[c.iu]) <= MASK_CELLS * d[c.iu] * (1 + 1e-9)
        near_v = np.abs(c.v - p[c.iv]) <= MASK_CELLS * d[c.iv] * (1 + 1e-9)
        mask |= near_u[:, None] & near_v[None, :]
    return mask


def draw_outlines(ax: Any, scenario: Any, c: Cut) -> list[Any]:
    """Outline every structure of ``scenario`` cut by the plane on ``ax``; returns the
    artists (``gid`` ``structure:<i>``). Sources in the plane are marked with a star."""
    if scenario is None or not hasattr(scenario, "structures"):
        return []
    from matplotlib import patheffects

    from ..preview import Plane, section

    halo = [patheffects.withStroke(linewidth=2.6, foreground="white")]
    dom = scenario.domain.as_3d() if hasattr(scenario.domain, "as_3d") else scenario.domain
    lower, upper = np.array(dom.lower, float), np.array(dom.upper, float)
    if lower.size == 2:  # pragma: no cover - as_3d gives three
        lower, upper = np.append(lower, -np.inf), np.append(upper, np.inf)
    plane = Plane(c.k, c.value, 0.0)
    artists = []
    for i, s in enumerate(scenario.structures):
        g = s.geometry
        if g.type == "Voxels":
            art = _voxel_outline(ax, g, c)
        elif g.type in ("Mesh", "GdsExtrusion"):  # no closed-form section: sampled
            lo, hi = (np.asarray(b, float) for b in g.bounds())
            art = _cad_outline(ax, g, plane, np.maximum(lo, lower), np.minimum(hi, upper))
        else:
            lo, hi = (np.asarray(b, float) for b in g.bounds())
            art = section(g, plane, np.maximum(lo, lower), np.minimum(hi, upper))
            if art is not None:
                art.set(fill=False, edgecolor="black", lw=1.0, ls="--", zorder=4)
                ax.add_patch(art)
        if art is not None:
            art.set_gid(f"structure:{i}")
            art.set_path_effects(halo)
            artists.append(art)
    for i, p in in_plane_sources(scenario, c):
        ax.plot(p[c.iu], p[c.iv], ls="", marker="*", ms=11, color="tab:red", mec="black",
                mew=0.6, gid=f"source:{i}", zorder=6)
    return artists


def _cad_outline(ax: Any, g: Any, p: Any, lo: np.ndarray, hi: np.ndarray,
                 n: int = 200) -> Any:
    """A CAD geometry's section outline (holes included): the 0.5 contour of its inside
    test on an n x n sampling of the plane over its clipped bounds; None off it."""
    if not lo[p.axis] <= p.value <= hi[p.axis] or (hi <= lo)[[p.u, p.w]].any():
        return None
    uu, ww = np.meshgrid(np.linspace(lo[p.u], hi[p.u], n), np.linspace(lo[p.w], hi[p.w], n),
                         indexing="ij")
    xyz = [None, None, None]
    xyz[p.axis], xyz[p.u], xyz[p.w] = np.full_like(uu, p.value), uu, ww
    inside = np.asarray(g.inside(*xyz), float)
    if not inside.any() or inside.all():
        return None
    return ax.contour(uu, ww, inside, levels=[0.5], colors="black", linewidths=1.0,
                      linestyles="--", zorder=4)


def _voxel_outline(ax: Any, g: Any, c: Cut) -> Any:
    """The boundaries between labels of a Voxels structure's slice, as contours."""
    labels = g.label_array()
    o, d = np.array(g.origin, float), np.array(g.spacing, float)
    j = math.floor((c.value - o[c.k]) / d[c.k])
    if not 0 <= j < labels.shape[c.k]:
        return None
    sheet = np.take(labels, j, axis=c.k)
    levels = np.unique(sheet)
    if levels.size < 2:
        return None
    uc = o[c.iu] + (np.arange(sheet.shape[0]) + 0.5) * d[c.iu]
    vc = o[c.iv] + (np.arange(sheet.shape[1]) + 0.5) * d[c.iv]
    return ax.contour(uc, vc, sheet.T.astype(float), levels=0.5 * (levels[1:] + levels[:-1]),
                      colors="black", linewidths=0.6, zorder=4)


# -------------------------------------------------------------- scales
def db_image(frame: np.ndarray, mask: np.ndarray, db_range: float
             ) -> tuple[np.ndarray, float]:
    """(20 log10(|frame| / peak) with masked samples NaN and a floor at -db_range - 1,
    peak): the peak is the largest unmasked magnitude."""
    mag = np.abs(frame).astype(float)
    rest = mag[~mask]
    peak = float(rest.max()) if rest.size else 0.0
    peak = peak if peak > 0 else 1.0
    db = 20 * np.log10(np.maximum(mag / peak, 10 ** (-(db_range + 1) / 20)))
    return np.where(mask, np.nan, db), peak


def db_floor(img: np.ndarray, db_range: float) -> float:
    """The colour scale's lower end in dB: the data's lowest finite value rounded down
    to 5 dB, but no lower than ``-db_range`` (a plane whose field spans 20 dB gets
    the whole colour map)."""
    finite = img[np.isfinite(img)]
    if not finite.size:
        return -db_range
    return float(max(-db_range, 5 * math.floor(min(float(finite.min()), -5.0) / 5)))


def signed_limit(values: np.ndarray, percentile: float = 98.0) -> float:
    """Symmetric colour limit of a signed field: the 99.5th percentile of |finite
    values| (the largest if that is zero; 1 for an all-zero field)."""
    a = np.abs(values[np.isfinite(values)])
    if not a.size:
        return 1.0
    lim = float(np.percentile(a, percentile))
    lim = lim if lim > 0 else float(a.max())
    return lim if lim > 0 else 1.0


def _span(c: np.ndarray, other: np.ndarray) -> np.ndarray:
    """[lo, hi] edges of pixels centred on ``c``; a lone sample gets the other axis's step."""
    if len(c) > 1:
        d = np.diff(c)
        return np.array([c[0] - d[0] / 2, c[-1] + d[-1] / 2])
    d = float(np.diff(other[:2])[0]) if len(other) > 1 else max(abs(float(c[0])), 1.0) * 1e-3
    return np.array([c[0] - d / 2, c[0] + d / 2])


def show_plane(ax: Any, img: np.ndarray, c: Cut, scenario: Any, cmap: str, vmin: float,
               vmax: float) -> Any:
    """``img`` (nu, nv) on ``ax``, masked (NaN) samples grey, outlines on top, axes in m
    with prefixes; returns the image."""
    import matplotlib as mpl

    im = ax.imshow(img.T, origin="lower", extent=(*_span(c.u, c.v), *_span(c.v, c.u)),
                   aspect="equal", interpolation="nearest", vmin=vmin, vmax=vmax,
                   cmap=mpl.colormaps[cmap].with_extremes(bad="0.7"))
    draw_outlines(ax, scenario, c)
    ax.set_xlim(*_span(c.u, c.v))
    ax.set_ylim(*_span(c.v, c.u))
    ax.set_xlabel("xyz"[c.iu])
    ax.set_ylabel("xyz"[c.iv])
    eng_axes(ax, "m", "m")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(4))  # engineering labels are wide
    return im


def _when(md: MonitorData, component: str, index: int) -> str:
    if md.kind == "FieldSnapshot":
        return f"t = {eng(md.time(component)[index], 's')}"
    return f"f = {eng(md.coords['f'][index], 'Hz')}"


# ------------------------------------------------------------- figures
def plot_slice(
    md: MonitorData,
    component: str,
    index: int = -1,
    axis: str | None = None,
    position: float | None = None,
    path: str | Path | None = None,
    *,
    scenario: Any = None,
    scale: str = "auto",
    db_range: float = 40.0,
) -> Figure:
    """``component`` of frame ``index`` (snapshot or frequency) on a plane normal to
    ``axis`` (default the monitor's normal) at ``position`` (m; default the middle).

    ``scale``: "db" (``20 log10 |E| / max``, ``db_range`` dB shown; the default for a
    complex DFT spectrum), "signed" (the real value, symmetric limits; the default for
    a real snapshot). ``scenario`` (the run's, e.g. ``res.scenario``): structures are
    outlined and the cells at point sources and ports masked (see the module doc).
    """
    c = cut(md, component, axis, position)
    n = c.frames.shape[0]
    if not -n <= index < n:
        raise IndexError(f"{md.kind} '{md.name}': frame {index} does not exist; it has {n} "
                         f"(0..{n - 1})")
    frame = c.frames[index]
    if scale == "auto":
        scale = "db" if np.iscomplexobj(frame) else "signed"
    if scale not in ("db", "signed"):
        raise ValueError(f"scale {scale!r} must be 'auto', 'db' or 'signed'")
    mask = source_mask(scenario, c)
    unit = _unit(component) + ("·s" if md.kind == "DFTMonitor" and
                               md.attrs.get("quantity") is None else "")
    if scale == "db":
        img, peak = db_image(frame, mask, db_range)
        lo, hi, cmap = db_floor(img, db_range), 0.0, "inferno"
        what, label = f"|{component}|", f"|{component}| (dB re {eng(peak, unit, 3)})"
    else:
        img = np.where(mask, np.nan, np.real(frame))
        hi = signed_limit(img)
        lo, cmap = -hi, "RdBu_r"
        what, label = (component if not np.iscomplexobj(frame) else f"Re {component}",
                       f"{component} ({unit})")
    title = (f"{md.kind} '{md.name}': {what}, {_when(md, component, index)}, "
             f"{'xyz'[c.k]} = {eng(c.value, 'm')}")
    if min(img.shape) <= 2 < max(img.shape):  # a line (a 2D contour's side): a curve
        return _finish(_line(img, c, lo, hi, label, title), path)
    fig = _figure((6.5, 5.0))
    ax = fig.subplots()
    im = show_plane(ax, img, c, scenario, cmap, lo, hi)
    ax.set_title(title, fontsize="medium")
    fig.colorbar(im, ax=ax, label=label, extend="both" if scale == "signed" else "min")
    return _finish(fig, path)


def _line(img: np.ndarray, c: Cut, lo: float, hi: float, label: str, title: str) -> Figure:
    """A plane one or two samples thick as curves along its long axis, one per sample
    across it (labelled with its position)."""
    along = 0 if img.shape[0] > img.shape[1] else 1
    (pos, name), (across, other) = ((c.u, c.iu), (c.v, c.iv))[::1 if along == 0 else -1]
    fig = _figure((7.0, 4.0))
    ax = fig.subplots()
    for i, q in enumerate(across):
        ax.plot(pos, np.take(img, i, axis=1 - along), lw=1.0,
                label=f"{'xyz'[other]} = {eng(q, 'm')}")
    ax.set_ylim(lo, hi + (1.0 if lo < 0 and hi == 0 else 0.0))
    ax.set_xlabel("xyz"[name])
    ax.set_ylabel(label)
    eng_axes(ax, "m", None)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(title, fontsize="medium")
    return fig


def active_frames(frames: np.ndarray, mask: np.ndarray, count: int = 6,
                  level: float = 0.1) -> np.ndarray:
    """Up to ``count`` frame indices evenly spread from the first to the last frame
    whose size (the 99.5th percentile of its unmasked ``|value|``: a stray hot cell
    does not count) is at least ``level`` times the largest, where the field is."""
    keep = ~mask
    size = np.array([np.percentile(np.abs(f[keep]), 99.5) if keep.any() else 0.0
                     for f in frames])
    on = np.nonzero(size >= level * size.max())[0] if size.max() > 0 else \
        np.arange(len(frames))
    first, last = int(on[0]), int(on[-1])
    return np.unique(np.round(np.linspace(first, last, min(count, last - first + 1)))
                     .astype(int))


def plot_snapshots(
    md: MonitorData,
    component: str | None = None,
    frames=None,
    axis: str | None = None,
    position: float | None = None,
    path: str | Path | None = None,
    *,
    scenario: Any = None,
    count: int = 6,
) -> Figure:
    """A small multiple of a FieldSnapshot's frames: the signed ``component`` (default
    the first recorded) on one symmetric colour scale (99.5th percentile of the frames
    shown), structures outlined and source cells masked given ``scenario``.

    ``frames``: the indices to draw; default up to ``count`` spread evenly over the
    frames where the field is (:func:`active_frames`: unmasked peak within 20 dB of
    the largest), so a record that ends long after the pulse left is not all blank.
    """
    if md.kind != "FieldSnapshot":
        raise ValueError(f"plot_snapshots takes a FieldSnapshot; got {md.kind} '{md.name}'")
    component = component or next(iter(md.data))
    c = cut(md, component, axis, position)
    n = c.frames.shape[0]
    if n == 0:
        raise ValueError(f"FieldSnapshot '{md.name}' holds no frame")
    mask = source_mask(scenario, c)
    idx = active_frames(c.frames, mask, count) if frames is None else np.asarray(frames, int)
    if idx.size == 0 or idx.min() < -n or idx.max() >= n:
        raise IndexError(f"FieldSnapshot '{md.name}': frames {idx.tolist()} must lie in "
                         f"0..{n - 1}")
    imgs = np.where(mask, np.nan, c.frames[idx].real)
    lim = signed_limit(imgs)
    ncol = min(3, idx.size)
    nrow = -(-idx.size // ncol)
    fig = _figure((2.9 * ncol + 1.2, 2.7 * nrow + 0.5))
    axes = np.atleast_1d(fig.subplots(nrow, ncol, sharex=True, sharey=True)).ravel()
    for ax, i, img in zip(axes, idx, imgs, strict=False):
        im = show_plane(ax, img, c, scenario, "RdBu_r", -lim, lim)
        ax.set_title(_when(md, component, int(i)), fontsize="medium")
        ax.label_outer()
    for ax in axes[idx.size:]:
        ax.remove()
    fig.colorbar(im, ax=list(axes[:idx.size]), label=f"{component} ({_unit(component)})",
                 extend="both", shrink=0.9)
    fig.suptitle(f"FieldSnapshot '{md.name}': {component}, {'xyz'[c.k]} = "
                 f"{eng(c.value, 'm')} ({idx.size} of {n} frames)", fontsize="medium")
    return _finish(fig, path)


def save_animation(md: MonitorData, path: str | Path, component: str | None = None,
                   axis: str | None = None, position: float | None = None, *,
                   scenario: Any = None, fps: float = 5.0, most: int = 40) -> Path:
    """Every frame of a FieldSnapshot (at most ``most``, evenly subsampled) as a GIF at
    ``path`` (matplotlib's PillowWriter): the signed ``component`` on one symmetric
    scale, as :func:`plot_snapshots`; returns the path."""
    from matplotlib.animation import FuncAnimation, PillowWriter

    component = component or next(iter(md.data))
    c = cut(md, component, axis, position)
    n = c.frames.shape[0]
    if n == 0:
        raise ValueError(f"FieldSnapshot '{md.name}' holds no frame")
    idx = np.unique(np.round(np.linspace(0, n - 1, min(n, most))).astype(int))
    imgs = np.where(source_mask(scenario, c), np.nan, c.frames[idx].real)
    lim = signed_limit(imgs)
    fig = _figure((5.0, 4.0))
    ax = fig.subplots()
    im = show_plane(ax, imgs[0], c, scenario, "RdBu_r", -lim, lim)
    fig.colorbar(im, ax=ax, label=f"{component} ({_unit(component)})", extend="both")
    ax.set_title(" ", fontsize="medium")
    fig.canvas.draw()
    fig.set_layout_engine("none")  # laid out once: each frame then only redraws

    def frame(m: int):
        im.set_data(imgs[m].T)
        ax.set_title(f"'{md.name}': {component}, {_when(md, component, int(idx[m]))}",
                     fontsize="medium")
        return (im,)

    path = Path(path)
    FuncAnimation(fig, frame, frames=len(idx), blit=False).save(
        path, writer=PillowWriter(fps=fps), dpi=80)
    return path


def plot_magnitude(
    md: MonitorData,
    components=("Hx", "Hy", "Hz"),
    index: int = 0,
    axis: str | None = None,
    position: float | None = None,
    path: str | Path | None = None,
    *,
    scenario: Any = None,
    db_range: float = 40.0,
) -> Figure:
    """``sqrt(sum |component|^2)`` of frame ``index`` on a plane normal to ``axis`` (e.g.
    |H| of a DFTMonitor), in dB re its maximum outside the masked source cells (given
    ``scenario``, which also outlines the structures). Components are taken at the
    sample positions of the first one (Yee staggering is ignored: half a cell)."""
    c0 = cut(md, components[0], axis, position)
    cuts = [cut(md, comp, "xyz"[c0.k], c0.value) for comp in components]
    n0 = min(x.frames.shape[1] for x in cuts)
    n1 = min(x.frames.shape[2] for x in cuts)
    mag = np.sqrt(sum(np.abs(x.frames[index, :n0, :n1]) ** 2 for x in cuts))
    c = Cut(c0.frames[:, :n0, :n1], c0.k, c0.value, c0.iu, c0.iv, c0.u[:n0], c0.v[:n1])
    img, _ = db_image(mag, source_mask(scenario, c), db_range)
    fig = _figure((7.5, 4.5))
    ax = fig.subplots()
    im = show_plane(ax, img, c, scenario, "inferno", db_floor(img, db_range), 0.0)
    name = "|" + ",".join(components) + "|"
    ax.set_title(f"{md.kind} '{md.name}': {name}, {'xyz'[c.k]} = {eng(c.value, 'm')}")
    fig.colorbar(im, ax=ax, label="dB re max", extend="min")
    return _finish(fig, path)


__all__ = ["Cut", "active_frames", "cut", "db_image", "draw_outlines", "plot_magnitude",
           "plot_slice", "plot_snapshots", "save_animation", "signed_limit", "source_mask"]
