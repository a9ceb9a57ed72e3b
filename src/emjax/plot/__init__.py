"""Figures of monitor data (matplotlib, object API on the Agg canvas).

Field planes (DFT planes in dB, snapshots on a symmetric signed scale, a small multiple
of snapshot frames, a GIF; source cells masked and structures outlined given the
scenario) live in :mod:`emjax.plot.planes`; shared helpers (EngFormatter units) in
:mod:`emjax.plot.common`. Their figure functions are re-exported here.

Every function builds a standalone :class:`matplotlib.figure.Figure` on an Agg canvas,
never through pyplot, so it works headless and leaves the user's backend and pyplot's
figure list untouched; matplotlib loads on the first call, not at ``import emjax``.
Each returns the Figure and, given ``path``, also saves it as PNG. In Jupyter, show one
with ``display(fig)``.

Output hooks (:mod:`emjax.outputs`) draw and write what ``emjax run`` writes:
:func:`monitor_figures` (one PNG per monitor), :func:`fdfd_rcs_figure` (the RCS of an
FDFD scattering run); a port run's S-parameter outputs are in :mod:`emjax.port_outputs`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..outputs import on_grid, register_output
from ..results import MonitorData, Results
from .common import _figure, _finish, _unit, eng, eng_axes
from .planes import plot_magnitude, plot_slice, plot_snapshots, save_animation

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def plot_probe(
    md: MonitorData,
    component: str | None = None,
    point: int | None = None,
    path: str | Path | None = None,
    *,
    window: str | None = None,
) -> Figure:
    """Time traces of a probe and their spectra in dB: one row per component (default
    every recorded one), one line per point (default every point) in each panel.

    A spectrum is ``20 log10(|X(f)| / max |X|)`` of the record zero-padded to four
    times its length (rectangular window by default; see ``MonitorData.probe_spectrum``),
    normalised to the largest over the points of its component and shown up to just
    past the highest frequency within 60 dB of it.
    """
    if md.kind != "Probe":
        raise ValueError(f"plot_probe takes a Probe; got {md.kind} '{md.name}'")
    comps = list(md.data) if component is None else [component]
    npts = md.array(comps[0]).reshape(len(md.time(comps[0])), -1).shape[1]
    points = range(npts) if point is None else [point]
    where = md.coords.get("points")
    fig = _figure((9.5, 1.2 + 2.3 * len(comps)))
    axes = np.atleast_2d(fig.subplots(len(comps), 2, squeeze=False))
    fmax = 0.0
    for (ax_t, ax_f), comp in zip(axes, comps, strict=True):
        t = md.time(comp)
        nfft = 1 << int(np.ceil(np.log2(max(4 * len(t), 8))))
        spectra = []
        for p in points:
            label = (f"({', '.join(eng(v, 'm') for v in where[p])})" if where is not None
                     else f"point {p}")
            ax_t.plot(t, md._probe_trace(comp, p), lw=1.0, label=label)
            f, X = md.probe_spectrum(comp, point=p, nfft=nfft, window=window)
            spectra.append((label, np.abs(X)))
        top = max(max(float(m.max()) for _, m in spectra), np.finfo(float).tiny)
        for label, mag in spectra:
            db = 20 * np.log10(np.maximum(mag / top, 1e-15))
            ax_f.plot(f, db, lw=1.0, label=label)
            above = np.nonzero(db > -60)[0]
            if above.size:
                fmax = max(fmax, f[min(int(above[-1] * 1.2) + 1, f.size - 1)])
        ax_t.set_ylabel(f"{comp} ({_unit(comp)})")
        ax_f.set_ylabel(f"|{comp}| (dB re max)")
        ax_f.set_ylim(-80, 5)
        eng_axes(ax_t, "s", None)
        eng_axes(ax_f, "Hz", None)
        for ax in (ax_t, ax_f):
            ax.grid(True, alpha=0.3)
    for ax in axes[:, 1]:
        ax.set_xlim(0, fmax if fmax > 0 else f[-1])
    axes[-1, 0].set_xlabel("time")
    axes[-1, 1].set_xlabel("frequency")
    if len(points) <= 10:
        axes[0, 0].legend(fontsize="small", title="points", title_fontsize="small")
    fig.suptitle(f"Probe '{md.name}': {', '.join(comps)} at {len(points)} "
                 f"point{'s' if len(points) > 1 else ''}", fontsize="medium")
    return _finish(fig, path)


def plot_energy(md: MonitorData, path: str | Path | None = None, *,
                scenario=None) -> Figure:
    """Total electromagnetic energy (J) against time on a log axis, so the decay after
    the sources stop reads as a slope (a floor: the run's rounding; a rise: an
    instability). Given ``scenario``, a dotted line marks the time after which every
    source's waveform stays below 1e-3 of its peak (-60 dB), when it has one."""
    if md.kind != "EnergyMonitor":
        raise ValueError(f"plot_energy takes an EnergyMonitor; got {md.kind} '{md.name}'")
    e = np.asarray(md.array("energy"), float)
    t = md.time()
    fig = _figure((7.0, 4.0))
    ax = fig.subplots()
    positive = e[e > 0]
    ax.semilogy(t, np.where(e > 0, e, np.nan), lw=1.0)
    if positive.size:
        ax.set_ylim(max(positive.min(), positive.max() * 1e-16) / 2, positive.max() * 3)
    off = _sources_off(scenario, t)
    if off is not None:
        ax.axvline(off, color="0.3", ls=":", lw=1.2,
                   label=f"sources below -60 dB after {eng(off, 's', 3)}")
        ax.legend(fontsize="small")
    eng_axes(ax, "s", None)
    ax.set_xlabel("time")
    ax.set_ylabel("energy (J)")
    ax.set_title(f"EnergyMonitor '{md.name}'")
    ax.grid(True, which="both", alpha=0.3)
    return _finish(fig, path)


def _sources_off(scenario, t: np.ndarray) -> float | None:
    """The time (s) after which every source waveform of ``scenario`` stays below 1e-3
    of its peak over ``t``; None without one, or for a source that never stops."""
    waves = [s.waveform for s in getattr(scenario, "sources", None) or ()
             if hasattr(s, "waveform")]
    if not waves or t.size < 2:
        return None
    env = np.zeros_like(t, dtype=float)
    for w in waves:
        a = np.abs(np.asarray(w(t), float))
        env = np.maximum(env, a / a.max() if a.max() > 0 else a)
    on = np.nonzero(env >= 1e-3)[0]
    if not on.size or on[-1] >= t.size - 2:  # still on at the end (continuous wave)
        return None
    return float(t[on[-1]])


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
    ax.set_title(f"NearToFar '{md.name}': bistatic RCS at {eng(f, 'Hz')}")
    ax.legend(fontsize=8)
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
    sweep = np.ndim(m["rcs_E_dBsm"]) == 2  # a frequency sweep: one curve per frequency
    fs = m.get("frequencies") or [m.get("frequency") or getattr(res.scenario, "frequency", None)]
    for p, style in (("E", "-"), ("H", "--")):
        rows = m[f"rcs_{p}_dBsm"] if sweep else [m[f"rcs_{p}_dBsm"]]
        for i, (f, row) in enumerate(zip(fs, rows, strict=True)):
            at = f" {eng(f, 'Hz')}" if sweep and f is not None else ""
            ax.plot(th, row, style, color=f"C{i % 10}", label=f"FDFD {p}-plane{at}")
    if mie is not None:
        from ..analysis.mie import mie_rcs_db

        f = fs[0]
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
    traces and spectra (every component and point), grid snapshots (a small multiple of
    up to six frames where the field is, signed; one frame alone as a slice), energy on
    a log axis, and the RCS of a NearToFar monitor that carries an incident spectrum (a
    plane-wave run). Field planes mask the source cells and outline the structures of
    ``res.scenario``. A DFT or NearToFar monitor of several frequencies gives one
    figure per frequency, ``<stem>_<monitor>_<f>.png`` with the frequency in the name
    (``400MHz``)."""
    paths = []
    sim = res.scenario
    for name, md in res.monitors.items():
        path = Path(directory) / f"{stem}_{name}.png"
        if md.kind == "Probe":
            plot_probe(md, path=path)
        elif md.kind == "FieldSnapshot" and on_grid(md):
            first = next(iter(md.data))
            n = md.array(first).shape[0]
            if n == 0:  # a run too short for its first snapshot
                continue
            if n == 1:
                plot_slice(md, first, path=path, scenario=sim)
            else:
                plot_snapshots(md, first, path=path, scenario=sim)
        elif md.kind == "EnergyMonitor":
            plot_energy(md, path=path, scenario=sim)
        elif md.kind == "DFTMonitor" and on_grid(md):
            first = next(iter(md.data))
            for i, p in enumerate(_per_frequency(path, md.coords["f"])):
                paths.append(p)
                plot_slice(md, first, index=i, path=p, scenario=sim)
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
    frequency written with an engineering prefix (EngFormatter: ``400MHz``) and with
    enough digits to tell every pair apart."""
    freqs = np.atleast_1d(np.asarray(freqs, dtype=float))
    if freqs.size == 1:
        return [path]
    for digits in range(4, 13):
        labels = [eng(f, "Hz", digits, sep="", places=None if digits <= 6 else digits - 3)
                  for f in freqs]
        if len(set(labels)) == len(labels):
            break
    return [path.with_name(f"{path.stem}_{lab}{path.suffix}") for lab in labels]


@register_output("fdfd-rcs")
def fdfd_rcs_figure(res: Results, directory: Path, stem: str) -> list[Path]:
    """``<stem>_rcs.png``, the E- and H-plane RCS, for a run whose metadata carry them
    (an FDFD scattering run)."""
    if "rcs_theta_deg" not in res.metadata:
        return []
    return [save_fdfd_rcs(res, Path(directory) / f"{stem}_rcs.png")]


__all__ = ["eng", "fdfd_rcs_figure", "monitor_figures", "plot_energy", "plot_fdfd_rcs",
           "plot_magnitude", "plot_probe", "plot_rcs", "plot_slice", "plot_snapshots",
           "save_animation", "save_fdfd_rcs"]
