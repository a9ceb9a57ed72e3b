"""Broadband SAR: SAR maps at any list of frequencies from one pulsed run (issue 20).

A pulsed run whose DFT monitor holds E at frequencies f_1 ... f_n knows the field of
every one of them. At each f, the absorbed power density is formed on the Yee edges,
``0.5 sigma(f) |E(f)|²`` with each edge's own conductivity at that frequency
(:func:`emjax.analysis.sar.medium_conductivity`: a
:class:`~emjax.model.dispersion.PoleMedium`'s ``sigma_eff(f) = sigma + omega eps0
Im(-eps(f))``, the constant sigma of a plain medium), moved to the cell centres
(:func:`~emjax.analysis.sar.edge_power_density`) and divided by the density there. The
DFT carries the source spectrum as a common scale; dividing by the accepted power at
the same frequency, in the same units (for instance port power from the DFTs of the
feed voltages and currents), gives SAR per watt accepted at each frequency:

- ``whole_sar``: the absorbed power in all the tissue the monitor holds over its
  mass (W/kg per W), the whole-body SAR of the part of the body inside the monitor;
- ``peak10g``: the peak 10 g average (:func:`~emjax.analysis.sar.peak_average_sar`),
  W/kg per W; ``absorbed``: the fraction of the accepted power absorbed there.

For transforms of signals that have died out this is the frequency-domain answer at
each f: the same as a run of constant media holding each medium's eps' and sigma_eff
at f (``emjax validate dispersive-sar`` checks it). Densities come per medium name;
points are painted from the scenario's structures (later ones win, as rasterization
does), so a geometry must offer ``inside`` (shapes; not Voxels).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .sar import (
    cell_centres,
    edge_conductivity,
    edge_media,
    edge_power_density,
    peak_average_sar,
)


def structure_map(sim, axes: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """Index into ``sim.structures`` of the structure holding each point of the grid
    ``axes`` (m), the last one where several overlap; -1 where none (background)."""
    X, Y, Z = np.meshgrid(*axes, indexing="ij")
    out = np.full(X.shape, -1, np.int32)
    for i, st in enumerate(sim.structures):
        out[st.geometry.inside(X, Y, Z)] = i
    return out


def density_map(sim, axes: tuple[np.ndarray, np.ndarray, np.ndarray],
                densities: Mapping[str, float]) -> np.ndarray:
    """Mass density in kg/m³ at the points of ``axes``: ``densities`` by the name of
    the medium painted there; 0 for unnamed or unlisted media (air, PEC)."""
    table = np.array([float(densities.get(getattr(st.medium, "name", "") or "", 0.0))
                      for st in sim.structures] + [0.0])
    return table[structure_map(sim, axes)]  # index -1 picks the trailing 0


@dataclass(frozen=True)
class BroadbandSar:
    """SAR per watt accepted at each frequency of one run (see the module docstring).

    Arrays: x, y, z (m) cell centres; rho (nx, ny, nz) kg/m³; per frequency (leading
    axis nf): sar and sar10g (W/kg per W; sar10g NaN where no 10 g cube fits), and the
    scalars accepted (W times the DFT scale squared), absorbed (W per W accepted),
    whole_sar and peak10g (W/kg per W).
    """

    frequencies: np.ndarray
    x: np.ndarray
    y: np.ndarray
    z: np.ndarray
    rho: np.ndarray
    accepted: np.ndarray
    absorbed: np.ndarray
    whole_sar: np.ndarray
    peak10g: np.ndarray
    sar: np.ndarray
    sar10g: np.ndarray


def broadband_sar(md, sim, densities: Mapping[str, float], accepted: Sequence[float],
                  mass: float = 0.010) -> BroadbandSar:
    """SAR maps per watt accepted at every frequency of the DFT monitor ``md``.

    md: a DFTMonitor's data with Ex, Ey, Ez (nf frequencies); sim: its FDTD3D
    scenario; densities: kg/m³ by medium name (see :func:`density_map`); accepted:
    the accepted power at each frequency, in W times the same DFT scale squared as
    the fields (nf values, each > 0); mass: averaging mass in kg (10 g).
    """
    freqs = np.atleast_1d(np.asarray(md.coords["f"], float))
    accepted = np.asarray(accepted, float)
    if accepted.shape != freqs.shape or not np.all(accepted > 0):
        raise ValueError(f"accepted = {accepted}: need one positive power per frequency "
                         f"of monitor '{md.name}' ({freqs.size})")
    axes = {c: md.axes(c) for c in ("Ex", "Ey", "Ez")}
    target = cell_centres(axes)
    rho = density_map(sim, target, densities)
    tissue = rho > 0
    dv = float(np.prod(sim.domain.spacing3))
    mat = edge_media(sim)  # rasterized once, conductivities per frequency
    out = {k: [] for k in ("absorbed", "whole_sar", "peak10g", "sar", "sar10g")}
    for i, f in enumerate(freqs):
        sigma = edge_conductivity(sim, float(f), materials=mat)
        p = edge_power_density(md, sigma, sim.domain.lower, sim.domain.spacing3, target,
                               frequency_index=i) / accepted[i]
        sar = np.where(tissue, p / np.where(tissue, rho, 1.0), 0.0)
        try:
            peak, sar10 = peak_average_sar(sar, rho, dv, mass)
        except ValueError:  # too little tissue or too coarse a grid for the cube
            peak, sar10 = float("nan"), np.full(sar.shape, np.nan)
        out["absorbed"].append(float(np.sum(p[tissue]) * dv))
        out["whole_sar"].append(float(np.sum(p[tissue]) / np.sum(rho[tissue]))
                                if tissue.any() else 0.0)
        out["peak10g"].append(peak)
        out["sar"].append(sar)
        out["sar10g"].append(sar10)
    return BroadbandSar(freqs, *target, rho, accepted,
                        **{k: np.asarray(v) for k, v in out.items()})


__all__ = ["BroadbandSar", "broadband_sar", "density_map", "structure_map"]
