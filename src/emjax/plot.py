"""Figures of monitor data (matplotlib, object API on the Agg canvas).

Every function builds a standalone :class:`matplotlib.figure.Figure` on an Agg canvas,
never through pyplot, so it works headless and leaves the user's backend and pyplot's
figure list untouched; matplotlib loads on the first call, not at ``import emjax``.
Each returns the Figure and, given ``path``, also saves it as PNG. In Jupyter, show one
with ``display(fig)``.

Output hooks (:mod:`emjax.outputs`) draw and write what ``emjax run`` writes:
:func:`monitor_figures` (one PNG per monitor) and :func:`fdfd_rcs_figure` (the RCS of
an FDFD scattering run); a port run's S-parameter outputs are :mod:`emjax.port_outputs`'.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .outputs import on_grid, register_output
from .results import MonitorData, Results

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_PREFIX = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"),
           (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"), (1e-15, "f"))


def plot_probe(
    md: MonitorData,
    component: str,
    point: int = 0,
    path: str | Path | None = None,
    *,
    window: str | None = None,
) -> Figure:
    """Time trace of a probe's ``component`` at ``point`` and its spectrum in dB.

    The spectrum is ``20 log10(|X(f)| / max |X|)`` of the record zero-padded to four
    times its length (rectangular window by default; see ``MonitorData.probe_spectrum``),
    shown up to just past the highest frequency within 60 dB of the maximum.
    """
    x = md._probe_trace(component, point)
    t = md.time(component)
    nfft = 1 << int(np.ceil(np.log2(max(4 * len(t), 8))))
    f, X = md.probe_spectrum(component, point=point, nfft=nfft, window=window)
    mag = np.abs(X)
    db = 20 * np.log10(np.maximum(mag / max(mag.max(), np.finfo(float).tiny), 1e-15))

    fig = _figure((7.0, 6.0))
    ax1, ax2 = fig.subplots(2, 1)
    ts, tl = _scale(t, "s")
    ax1.plot(t * ts, x, lw=1.0)
    ax1.set_xlabel(f"time ({tl})")
    ax1.set_ylabel(f"{component} ({_unit(component)})")
    pt = ", ".join(f"{v:.4g}" for v in md.coords["points"][point]) if "points" in md.coords \
        else str(point)
    ax1.set_title(f"Probe '{md.name}': {component} at ({pt}) m")
    ax1.grid(True, alpha=0.3)
    above = np.nonzero(db > -60)[0]
    fmax = f[min(int(above[-1] * 1.2) + 1, f.size - 1)] if above.size else f[-1]
    fmax = fmax if fmax > 0 else f[-1]
    fs, fl = _scale(np.array([fmax]), "Hz")
    ax2.plot(f * fs, db, lw=1.0)
    ax2.set_xlim(0, fmax * fs)
    ax2.set_ylim(max(db.min(), -120), 5)
    ax2.set_xlabel(f"frequency ({fl})")
    ax2.set_ylabel("|spectrum| (dB re max)")
    ax2.grid(True, alpha=0.3)
    return _finish(fig, path)


def plot_slice(
    md: MonitorData,
    component: str,
    index: int = -1,
    axis: str = "z",
    position: float | None = None,
    path: str | Path | None = None,
) -> Figure:
    """``|component|`` of frame ``index`` (snapshot or frequency) on a plane normal to ``axis``.

    ``position`` (m) picks the sample plane nearest to it; default the middle one. The
    image spans the sample positions in m, each pixel centred on its sample.
    """
    if md.kind not in ("FieldSnapshot", "DFTMonitor"):
        raise ValueError(f"plot_slice takes a FieldSnapshot or DFTMonitor; {md.kind} "
                         f"'{md.name}' has no grid")
    if axis not in ("x", "y", "z"):
        raise ValueError(f"axis {axis!r} must be 'x', 'y' or 'z'")
    a = md.array(component)
    n = a.shape[0]
    if not -n <= index < n:
        raise IndexError(f"{md.kind} '{md.name}': frame {index} does not exist; it has {n} "
                         f"(0..{n - 1})")
    frame = np.abs(a[index])
    coords = md.axes(component)
    k = "xyz".index(axis)
    c = coords[k]
    j = len(c) // 2 if position is None else int(np.argmin(np.abs(c - position)))
    img = np.take(frame, j, axis=k)  # (nu, nv)
    (u_ax, u), (v_ax, v) = [("xyz"[i], coords[i]) for i in range(3) if i != k]
    uv = np.concatenate([u, v])
    ls, ll = _scale(uv if uv.size else np.array([1.0]), "m")

    fig = _figure((6.5, 5.0))
    ax = fig.subplots()
    im = ax.imshow(img.T, origin="lower", extent=(*_span(u, v) * ls, *_span(v, u) * ls),
                   aspect="equal", interpolation="nearest", cmap="viridis")
    ax.set_xlabel(f"{u_ax} ({ll})")
    ax.set_ylabel(f"{v_ax} ({ll})")
    if md.kind == "FieldSnapshot":
        tv = md.time(component)[index]
        ts, tl = _scale(np.array([tv]), "s")
        when, unit = f"t = {tv * ts:.4g} {tl}", _unit(component)
    else:
        fv = md.coords["f"][index]
        fs, fl = _scale(np.array([fv]), "Hz")
        when, unit = f"f = {fv * fs:.4g} {fl}", f"{_unit(component)}·s"
    ax.set_title(f"{md.kind} '{md.name}': |{component}|, {when}, {axis} = {c[j]:.4g} m")
    fig.colorbar(im, ax=ax, label=f"|{component}| ({unit})")
    return _finish(fig, path)


def plot_energy(md: MonitorData, path: str | Path | None = None) -> Figure:
    """Total electromagnetic energy (J) against time."""
    if md.kind != "EnergyMonitor":
        raise ValueError(f"plot_energy takes an EnergyMonitor; got {md.kind} '{md.name}'")
    e = md.array("energy")
    t = md.time()
    fig = _figure((7.0, 4.0))
    ax = fig.subplots()
    ts, tl = _scale(t, "s")
    ax.plot(t * ts, e, lw=1.0)
    ax.set_xlabel(f"time ({tl})")
    ax.set_ylabel("energy (J)")
    ax.set_title(f"EnergyMonitor '{md.name}'")
    ax.grid(True, alpha=0.3)
    return _finish(fig, path)


def plot_rcs(
    md: MonitorData,
    phi=(0.0, 90.0),
    frequency: float | None = None,
    path: str | Path | None = None,
    *,
    polar: bool = False,
    reference: dict | None = None,
    step: float = 1.0,
) -> Figure:
    """Bistatic RCS in dBsm of a NearToFar monitor against theta (0-180 deg), one line
    per azimuth in ``phi`` (deg); Cartesian by default, polar with ``polar=True``.

    ``reference``: optional {label: (theta_deg, dBsm)} curves drawn dashed (e.g. Mie).
    """
    theta = np.arange(0.0, 180.0 + step / 2, step)
    f = float(md.coords["f"][md._frequency_index(frequency)])
    fig = _figure((6.5, 6.0) if polar else (7.0, 4.5))
    ax = fig.add_subplot(projection="polar") if polar else fig.subplots()
    curves = []
    for p in np.atleast_1d(phi):
        curves.append((f"FDTD, phi = {p:g} deg", theta,
                       md.rcs_dbsm(theta, float(p), f, degrees=True), "-"))
    for label, (th_ref, db_ref) in (reference or {}).items():
        curves.append((label, np.asarray(th_ref), np.asarray(db_ref), "--"))
    finite = np.concatenate([c[2][np.isfinite(c[2])] for c in curves])
    # a run too short for any far field gives -inf dB: draw the empty axes
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (-50.0, 0.0)
    for label, th, db, style in curves:
        x = np.radians(th) if polar else th
        ax.plot(x, db, style, lw=1.2, label=label)
    if polar:
        ax.set_thetamin(0)
        ax.set_thetamax(180)
        ax.set_rlim(max(lo, hi - 50), hi + 3)
    else:
        ax.set_xlim(0, 180)
        ax.set_ylim(max(lo, hi - 50) - 2, hi + 3)
        ax.set_xlabel("theta (deg)")
        ax.set_ylabel("RCS (dBsm)")
        ax.grid(True, alpha=0.3)
    fs, fl = _scale(np.array([f]), "Hz")
    ax.set_title(f"NearToFar '{md.name}': bistatic RCS at {f * fs:.4g} {fl}")
    ax.legend(fontsize=8)
    return _finish(fig, path)


def plot_magnitude(
    md: MonitorData,
    components=("Hx", "Hy", "Hz"),
    index: int = 0,
    axis: str = "z",
    position: float | None = None,
    path: str | Path | None = None,
) -> Figure:
    """``sqrt(sum |component|^2)`` of frame ``index`` on a plane normal to ``axis`` (e.g.
    |H| of a DFTMonitor), in dB re its maximum. Components are taken at the sample
    positions of the first one (Yee staggering is ignored: half a cell)."""
    if axis not in ("x", "y", "z"):
        raise ValueError(f"axis {axis!r} must be 'x', 'y' or 'z'")
    k = "xyz".index(axis)
    coords = md.axes(components[0])
    c = coords[k]
    j = len(c) // 2 if position is None else int(np.argmin(np.abs(c - position)))
    imgs = []
    for comp in components:
        a = np.abs(md.array(comp)[index])
        imgs.append(np.take(a, min(j, a.shape[k] - 1), axis=k))
    n0 = min(im.shape[0] for im in imgs)
    n1 = min(im.shape[1] for im in imgs)
    total = sum(im[:n0, :n1] ** 2 for im in imgs)
    mag = np.sqrt(total)
    db = 20 * np.log10(np.maximum(mag / max(mag.max(), 1e-300), 1e-6))
    (u_ax, u), (v_ax, v) = [("xyz"[i], coords[i]) for i in range(3) if i != k]
    u, v = u[: db.shape[0]], v[: db.shape[1]]
    fig = _figure((7.5, 4.5))
    ax = fig.subplots()
    im = ax.imshow(db.T, origin="lower", extent=(*_span(u, v), *_span(v, u)), aspect="equal",
                   interpolation="nearest", cmap="inferno", vmin=-40, vmax=0)
    ax.set_xlabel(f"{u_ax} (m)")
    ax.set_ylabel(f"{v_ax} (m)")
    name = "|" + ",".join(components) + "|"
    ax.set_title(f"{md.kind} '{md.name}': {name}, {axis} = {c[j]:.4g} m")
    fig.colorbar(im, ax=ax, label="dB re max")
    return _finish(fig, path)


def plot_fdfd_rcs(res: Results, path: str | Path | None = None, *,
                  mie: tuple[float, float] | None = None) -> Figure:
    """E- and H-plane bistatic RCS (dBsm) of an FDFD run against the angle from the
    forward direction, from ``res.metadata`` (``rcs_theta_deg``, ``rcs_E_dBsm``,
    ``rcs_H_dBsm``).

    ``mie``: optional (radius m, eps_r) of a sphere, drawn as the Mie reference.
    """
    m = res.metadata
    th = np.asarray(m["rcs_theta_deg"])
    fig = _figure((6.5, 4.5))
    ax = fig.subplots()
    for p, style in (("E", "-"), ("H", "--")):
        ax.plot(th, m[f"rcs_{p}_dBsm"], style, label=f"FDFD {p}-plane")
    if mie is not None:
        from .analysis.mie import mie_rcs_db

        f = res.scenario.frequency
        for p, style in (("E", "k:"), ("H", "k-.")):
            ax.plot(th, mie_rcs_db(mie[0], mie[1], f, np.radians(th), p), style, lw=1,
                    label=f"Mie {p}-plane")
    ax.set_xlabel("angle from forward direction (deg)")
    ax.set_ylabel("bistatic RCS (dBsm)")
    ax.set_xlim(0, 180)
    ax.grid(True, alpha=0.3)
    ax.legend()
    return _finish(fig, path)


def save_fdfd_rcs(res: Results, path: str | Path, *,
                  mie: tuple[float, float] | None = None) -> Path:
    """:func:`plot_fdfd_rcs` saved as PNG at ``path`` (folders made); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    plot_fdfd_rcs(res, path, mie=mie)
    return path


# --------------------------------------------------------------- hooks
@register_output("monitor-figures")
def monitor_figures(res: Results, directory: Path, stem: str) -> list[Path]:
    """One PNG per monitor that has a figure, ``<directory>/<stem>_<monitor>.png``: probe
    traces and spectra, slices of grid snapshots (that took a frame), energy, and the
    RCS of a NearToFar monitor that carries an incident spectrum (a plane-wave run).
    A DFT or NearToFar monitor of several frequencies gives one figure per frequency,
    ``<stem>_<monitor>_<f>.png`` with the frequency in the name (``400MHz``)."""
    paths = []
    for name, md in res.monitors.items():
        path = Path(directory) / f"{stem}_{name}.png"
        if md.kind == "Probe":
            plot_probe(md, next(iter(md.data)), path=path)
        elif md.kind == "FieldSnapshot" and on_grid(md):
            first = next(iter(md.data))
            if md.array(first).shape[0] == 0:  # a run too short for its first snapshot
                continue
            plot_slice(md, first, path=path)
        elif md.kind == "EnergyMonitor":
            plot_energy(md, path=path)
        elif md.kind == "DFTMonitor" and on_grid(md):
            first = next(iter(md.data))
            for i, p in enumerate(_per_frequency(path, md.coords["f"])):
                paths.append(p)
                plot_slice(md, first, index=i, path=p)
            continue
        elif md.kind == "NearToFar" and "E_inc" in md.data:  # RCS needs the incident
            for f, p in zip(md.coords["f"], _per_frequency(path, md.coords["f"]), strict=True):
                paths.append(p)
                plot_rcs(md, frequency=float(f), path=p)
            continue
        else:
            continue
        paths.append(path)
    return paths


def _per_frequency(path: Path, freqs: np.ndarray) -> list[Path]:
    """``path`` for one frequency; ``<stem>_<f>.png`` per frequency for several, the
    frequency written with enough digits to tell every pair apart."""
    freqs = np.atleast_1d(np.asarray(freqs, dtype=float))
    if freqs.size == 1:
        return [path]
    scale, unit = _scale(freqs, "Hz")
    for digits in range(4, 13):
        labels = [f"{f * scale:.{digits}g}" for f in freqs]
        if len(set(labels)) == len(labels):
            break
    return [path.with_name(f"{path.stem}_{lab}{unit}{path.suffix}") for lab in labels]


@register_output("fdfd-rcs")
def fdfd_rcs_figure(res: Results, directory: Path, stem: str) -> list[Path]:
    """``<stem>_rcs.png``, the E- and H-plane RCS, for a run whose metadata carry them
    (an FDFD scattering run)."""
    if "rcs_theta_deg" not in res.metadata:
        return []
    return [save_fdfd_rcs(res, Path(directory) / f"{stem}_rcs.png")]


# ------------------------------------------------------------- helpers
def _figure(size: tuple[float, float]) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _finish(fig: Figure, path: str | Path | None) -> Figure:
    if path is not None:
        fig.savefig(Path(path), format="png", dpi=110)
    return fig


def _scale(values: np.ndarray, unit: str) -> tuple[float, str]:
    """(factor, 'prefix+unit') so that ``values * factor`` reads in ~[1, 1000)."""
    m = float(np.max(np.abs(values))) if np.size(values) else 0.0
    if m == 0 or not np.isfinite(m):
        return 1.0, unit
    for p, name in _PREFIX:
        if m >= p:
            return 1.0 / p, name + unit
    return 1.0 / _PREFIX[-1][0], _PREFIX[-1][1] + unit


def _span(c: np.ndarray, other: np.ndarray) -> np.ndarray:
    """[lo, hi] edges of pixels centred on ``c``; a lone sample gets the other axis's step."""
    if len(c) > 1:
        d = np.diff(c)
        return np.array([c[0] - d[0] / 2, c[-1] + d[-1] / 2])
    d = float(np.diff(other[:2])[0]) if len(other) > 1 else max(abs(float(c[0])), 1.0) * 1e-3
    return np.array([c[0] - d / 2, c[0] + d / 2])


def _unit(component: str) -> str:
    return {"E": "V/m", "H": "A/m"}.get(component[:1], "")


__all__ = ["fdfd_rcs_figure", "monitor_figures", "plot_energy", "plot_fdfd_rcs",
           "plot_magnitude", "plot_probe", "plot_rcs", "plot_slice", "save_fdfd_rcs"]
