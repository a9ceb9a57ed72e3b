"""Figures of monitor data (matplotlib, object API on the Agg canvas).

Every function builds a standalone :class:`matplotlib.figure.Figure` on an Agg canvas,
never through pyplot, so it works headless and leaves the user's backend and pyplot's
figure list untouched; matplotlib loads on the first call, not at ``import emjax``.
Each returns the Figure and, given ``path``, also saves it as PNG. In Jupyter, show one
with ``display(fig)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .results import MonitorData

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


__all__ = ["plot_energy", "plot_probe", "plot_slice"]
