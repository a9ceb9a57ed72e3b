"""B1+ and SAR maps of an ``mri-coil`` run (:mod:`emjax.scenarios.mri`), per watt accepted.

:func:`coil_maps` turns the head DFT monitor and the port probe of a run into |B1+|,
local and 10 g SAR on the cell centres, normalised to 1 W of accepted power, at one
of the monitor's frequencies; :func:`write_coil_outputs` writes them as PNG slices and
one HDF5 file per frequency. A pulsed run with a ``body`` monitor
(``mri-coil-dispersive``) also gets whole-body and peak 10 g SAR at every frequency
(:func:`broadband_coil_sar`, written as ``<stem>_broadband_sar.h5``). The output hook
:func:`coil_outputs` (registered with :mod:`emjax.outputs`) does so for every run that
has what the maps need, so ``emjax run mri-coil`` writes them without the command line
knowing the scenario.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..outputs import register_output
from .mri import (
    TISSUES_128MHZ,
    accepted_power,
    accepted_power_cw,
    current_dft,
    port_field,
    port_power,
)

if TYPE_CHECKING:
    from ..model import FDTD3D
    from ..results import MonitorData, Results

_MAP_KEYS = ("x", "y", "z", "b1plus", "sar", "sar10g", "sigma", "rho", "tissue")
_SCALAR_KEYS = ("frequency", "accepted_power_w", "head_sar_w_per_kg", "absorbed_in_box_w",
                "peak10g_w_per_kg", "b1plus_centre_ut")


def tissue_maps(sim: FDTD3D, axes: tuple[np.ndarray, np.ndarray, np.ndarray],
                frequency: float = 128e6) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sigma S/m at ``frequency`` Hz, density kg/m³, tissue id) at the points of a grid
    ``axes`` (m), painted from the scenario's structures in order (later ones win, as
    rasterization does); id -1 is air or PEC, otherwise an index into
    :data:`TISSUES_128MHZ`. sigma is each structure's own medium's (a dispersive
    tissue's sigma_eff at ``frequency``)."""
    from ..analysis.sar import medium_conductivity
    from ..analysis.sar_broadband import structure_map

    names = list(TISSUES_128MHZ)
    media = [st.medium for st in sim.structures]
    tissue = [names.index(m.name) if getattr(m, "name", None) in names else -1
              for m in media]
    where = structure_map(sim, axes)
    ident = np.array([*tissue, -1], np.int16)[where]
    sig = np.array([medium_conductivity(m, frequency) if t >= 0 else 0.0
                    for m, t in zip(media, tissue, strict=True)] + [0.0])
    rho = np.array([TISSUES_128MHZ[names[t]][2] if t >= 0 else 0.0 for t in tissue] + [0.0])
    return sig[where], rho[where], ident


def _normalisation(res: Results, sim: FDTD3D, md: MonitorData, frequency_index: int = 0
                   ) -> tuple[complex, float, float]:
    """(phasor scale per sqrt(W) of the DFT fields, accepted power in the run's DFT units,
    accepted power in W for 1 A rungs) at one frequency of ``md``; see :func:`coil_maps`."""
    from ..model import ContinuousWave

    dt = float(res.metadata.get("dt", sim.dt))
    steps = int(res.metadata.get("steps", sim.num_steps))
    frequency = float(np.atleast_1d(md.coords["f"])[frequency_index])
    i_dft = current_dft(sim.sources, dt, steps, frequency)
    if all(isinstance(s.waveform, ContinuousWave) for s in sim.sources):
        power = accepted_power_cw(res, sim)
        phasor = np.array([s.amplitude * np.exp(1j * (s.waveform.phase - np.pi / 2))
                           for s in sim.sources])
        scale = complex(np.mean(i_dft / phasor))
        watts = power
    else:
        e_port = port_field(md, sim.sources, frequency_index)
        power = port_power(i_dft, e_port, sim.domain.spacing3[2])
        scale = 1.0
        # per 1 A rung currents at this frequency: divide by the squared current spectrum
        amp = np.array([s.amplitude for s in sim.sources])
        watts = power / float(np.mean(np.abs(i_dft) / amp)) ** 2
    if not power > 0:
        raise ValueError(f"accepted power {power:.4g} W is not positive: the run did not "
                         "reach a usable state (too few steps?)")
    return 1.0 / (scale * np.sqrt(power)), power, watts


def coil_maps(res: Results, sim: FDTD3D, monitor: str = "head", frequency_index: int = 0
              ) -> dict[str, Any]:
    """B1+ and SAR maps of an ``mri-coil`` run, normalised to 1 W of accepted power, at
    the monitor's frequency ``frequency_index`` (``frequency`` in the result, Hz).

    Fields of the DFT ``monitor`` are moved to cell centres; accepted power comes from
    the ports (CW: steady-state phasors, :func:`~emjax.scenarios.mri.accepted_power_cw`;
    pulse: DFTs, :func:`~emjax.scenarios.mri.port_power` with
    :func:`~emjax.scenarios.mri.current_dft`), and the DFT scale of a CW run is the
    current's DFT over its phasor. Returns arrays x, y, z (m), b1plus (complex,
    T/sqrt(W)), sar (local, W/kg per W), sar10g (10 g average, W/kg per W, NaN where
    undefined), sigma, rho, tissue; and scalars accepted_power_w (for the 1 A rungs),
    head_sar_w_per_kg (mass average over the tissue in the monitor), absorbed_in_box_w
    (W absorbed there per W accepted: at most 1), peak10g_w_per_kg (per W),
    b1plus_centre_ut (µT/sqrt(W)).

    Local SAR is formed on the Yee edges with their own conductivities
    (:func:`~emjax.analysis.sar.edge_power_density`). Interpolating E to the cell
    centres first carries the air's E (65 times the skin's normal to the skin) into the
    surface cells: at 16 mm cells it gave a head-average SAR 21 times too high, more
    power absorbed in the head than the coil accepted.
    """
    from ..analysis.sar import (
        b1_plus,
        cell_centres,
        edge_conductivity,
        edge_power_density,
        peak_average_sar,
        to_common_grid,
    )

    md = res[monitor]
    comps = ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz")
    axes = {c: md.axes(c) for c in comps}
    target = cell_centres(axes)
    i = frequency_index
    frequency = float(np.atleast_1d(md.coords["f"])[i])
    f = to_common_grid({c: md.array(c)[i] for c in comps}, axes, target)
    norm, _, watts = _normalisation(res, sim, md, i)  # phasors per sqrt(W)
    b1 = b1_plus(f["Hx"] * norm, f["Hy"] * norm)
    sigma, rho, ident = tissue_maps(sim, target, frequency)
    # Loss formed on the Yee edges with their own conductivities, then moved to the
    # cell centres (edge_power_density says why not E first).
    p = edge_power_density(md, edge_conductivity(sim, frequency), sim.domain.lower,
                           sim.domain.spacing3, target, frequency_index=i) * abs(norm) ** 2
    sar = np.where(rho > 0, p / np.where(rho > 0, rho, 1.0), 0.0)
    dv = float(np.prod(sim.domain.spacing3))
    head = ident >= 0
    try:
        peak, sar10 = peak_average_sar(sar, rho, dv)
    except ValueError:  # too coarse a grid for a 10 g cube
        peak, sar10 = float("nan"), np.full(sar.shape, np.nan)
    centre = tuple(int(np.argmin(np.abs(t - c))) for t, c in zip(target, md.attrs.get(
        "center", sim.monitors[0].center), strict=True))
    return {"x": target[0], "y": target[1], "z": target[2], "b1plus": b1, "sar": sar,
            "sar10g": sar10, "sigma": sigma, "rho": rho, "tissue": ident,
            "frequency": frequency, "accepted_power_w": watts,
            "head_sar_w_per_kg": (float(np.sum(p[head]) / np.sum(rho[head]))
                                  if head.any() else 0.0),
            "absorbed_in_box_w": float(np.sum(p[head]) * dv),
            "peak10g_w_per_kg": peak,
            "b1plus_centre_ut": float(abs(b1[centre]) * 1e6)}


def _slices_png(maps: dict[str, Any], key: str, label: str, data: np.ndarray, stem: str,
                path: Path) -> Path:
    """Axial, coronal and sagittal cuts of ``data`` through the maps' centre, as PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    x, y, z = maps["x"], maps["y"], maps["z"]
    c = [len(x) // 2, len(y) // 2, len(z) // 2]
    fig = Figure(figsize=(12, 4), layout="constrained")
    FigureCanvasAgg(fig)
    cuts = ((data[:, :, c[2]], x, y, "x (m)", "y (m)", f"axial z = {z[c[2]]:.3f} m"),
            (data[:, c[1], :], x, z, "x (m)", "z (m)", f"coronal y = {y[c[1]]:.3f} m"),
            (data[c[0], :, :], y, z, "y (m)", "z (m)", f"sagittal x = {x[c[0]]:.3f} m"))
    # SAR peaks in a few voxels (skin near the rungs): clip the scale at the 99.5th
    # percentile of the tissue values so that the head's pattern shows.
    tissue = maps["tissue"] >= 0
    vmax = float(np.nanpercentile(data[tissue], 99.5)
                 if key == "sar" and tissue.any() else np.nanmax(data))
    vmax = vmax or 1.0
    for k, (a, u, v, lu, lv, title) in enumerate(cuts):
        ax = fig.add_subplot(1, 3, k + 1)
        im = ax.pcolormesh(u, v, a.T, shading="nearest", vmin=0, vmax=vmax, cmap="inferno")
        ax.set_aspect("equal")
        ax.set(xlabel=lu, ylabel=lv, title=title)
    fig.colorbar(im, ax=fig.axes, label=label, shrink=0.8)
    fig.suptitle(f"{stem}: {label} at {maps['frequency'] / 1e6:.4g} MHz; accepted power "
                 f"{maps['accepted_power_w']:.3g} W for 1 A rungs")
    fig.savefig(path, format="png", dpi=110)
    return path


def _maps_h5(maps: dict[str, Any], path: Path) -> Path:
    """The maps and their scalars in one HDF5 file (arrays gzip-compressed)."""
    import h5py

    with h5py.File(path, "w") as h:
        for key in _MAP_KEYS:
            h.create_dataset(key, data=maps[key], compression="gzip" if maps[key].ndim == 3
                             else None)
        h["b1plus"].attrs["unit"] = "T/sqrt(W)"
        h["sar"].attrs["unit"] = h["sar10g"].attrs["unit"] = "W/kg per W accepted"
        h["tissue"].attrs["names"] = ",".join(TISSUES_128MHZ)
        for key in _SCALAR_KEYS:
            h.attrs[key] = maps[key]
    return path


def broadband_coil_sar(res: Results, sim: FDTD3D, monitor: str = "body"):
    """Whole-body and peak 10 g SAR per watt accepted at every frequency of a pulsed
    coil run (:func:`emjax.analysis.sar_broadband.broadband_sar` on the DFT ``monitor``,
    accepted power from the ports at the same frequencies,
    :func:`~emjax.scenarios.mri.accepted_power`, read on the head box)."""
    from ..analysis.sar_broadband import broadband_sar

    md = res[monitor]
    if not np.allclose(np.atleast_1d(md.coords["f"]), np.atleast_1d(res["head"].coords["f"])):
        raise ValueError(f"monitors '{monitor}' and 'head' hold different frequencies; "
                         "give both the same list")
    densities = {name: v[2] for name, v in TISSUES_128MHZ.items()}
    return broadband_sar(md, sim, densities, accepted_power(res, sim, "head"))


def _broadband_h5(sar, path: Path) -> Path:
    """A :class:`~emjax.analysis.sar_broadband.BroadbandSar` in one HDF5 file."""
    import dataclasses

    import h5py

    with h5py.File(path, "w") as h:
        for key, value in dataclasses.asdict(sar).items():
            h.create_dataset(key, data=value,
                             compression="gzip" if np.ndim(value) >= 3 else None)
        h["frequencies"].attrs["unit"] = "Hz"
        for key in ("sar", "sar10g", "whole_sar", "peak10g"):
            h[key].attrs["unit"] = "W/kg per W accepted"
    return path


def write_coil_outputs(res: Results, sim: FDTD3D, directory: str | Path,
                       stem: str = "mri-coil") -> list[Path]:
    """PNG slices of |B1+| and local SAR, and an HDF5 file of both, per 1 W accepted.

    Writes ``<stem>_b1plus.png``, ``<stem>_sar.png`` (axial, coronal and sagittal cuts
    through the head monitor's centre) and ``<stem>_b1_sar.h5`` into ``directory``;
    with several frequencies, one set per frequency, ``<stem>_<f>MHz_...``. A pulsed run
    with a ``body`` monitor adds ``<stem>_broadband_sar.h5``
    (:func:`broadband_coil_sar`). Returns the paths.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    freqs = np.atleast_1d(res["head"].coords["f"])
    paths = []
    for i, f in enumerate(freqs):
        maps = coil_maps(res, sim, frequency_index=i)
        name = stem if freqs.size == 1 else f"{stem}_{f / 1e6:.4g}MHz"
        paths += [_slices_png(maps, key, label, data, name, out / f"{name}_{key}.png")
                  for key, label, data in (
                      ("b1plus", "|B1+| (µT/√W)", np.abs(maps["b1plus"]) * 1e6),
                      ("sar", "local SAR (W/kg per W accepted)", maps["sar"]))]
        paths.append(_maps_h5(maps, out / f"{name}_b1_sar.h5"))
    if "body" in res and not all(getattr(s.waveform, "steady_frequency", None)
                                 for s in sim.sources):
        sar = broadband_coil_sar(res, sim)
        paths.append(_broadband_h5(sar, out / f"{stem}_broadband_sar.h5"))
    return paths


def is_coil_run(res: Results) -> bool:
    """Whether ``res`` has what :func:`coil_maps` needs: its scenario drives edge sources
    (the rungs), has media named after :data:`TISSUES_128MHZ`, and the run kept the
    ``head`` DFT monitor (with Hx, Hy) and the ``ports`` probe."""
    sim = res.scenario
    if sim is None or "head" not in res or "ports" not in res:
        return False
    head, ports = res["head"], res["ports"]
    sources = getattr(sim, "sources", ())
    tissues = {getattr(st.medium, "name", None) for st in getattr(sim, "structures", ())}
    return (head.kind == "DFTMonitor" and {"Hx", "Hy"} <= set(head.data)
            and ports.kind == "Probe" and bool(sources)
            and all(getattr(s, "type", "") == "EdgeSource" for s in sources)
            and bool(tissues & set(TISSUES_128MHZ)))


@register_output("mri-coil-maps")
def coil_outputs(res: Results, directory: Path, stem: str) -> list[Path]:
    """The output hook: :func:`write_coil_outputs` for a run :func:`is_coil_run` accepts."""
    if not is_coil_run(res):
        return []
    return write_coil_outputs(res, res.scenario, directory, stem=stem)


__all__ = ["broadband_coil_sar", "coil_maps", "coil_outputs", "is_coil_run", "tissue_maps",
           "write_coil_outputs"]
