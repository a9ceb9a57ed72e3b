"""B1+ and SAR of an 8-rung MRI head coil around a body phantom (FDTD3D, 128 MHz).

The built-in ``mri-coil`` scenario (``emjax.scenarios.mri``: a synthetic phantom of
nested tissue layers, 8 PEC rungs fed by current sources in quadrature) driven by a
pulse, so that every transform of the run is complete. ``emjax.scenarios.mri_maps``
turns the head DFT box into |B1+| and local SAR per watt accepted, drawn here as axial
and coronal cuts. Physics check, the power balance: the power the rungs accept equals
the power the tissue absorbs (sigma |E|^2 / 2 summed on the Yee edges) plus the
Poynting flux out of a closed box around the coil.

    python examples/mri_coil.py [--full] [--out DIR]

Small size: 24 mm cells (52 x 55 x 54), about 10 s on a laptop CPU. ``--full``: the
built-in's 4 mm grid (312 x 328 x 325 cells), a GPU job (about 1 GB of device memory).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from emjax import EmjaxWarning
from emjax.analysis.sar import box_flux, edge_conductivity, yee_absorbed_power
from emjax.scenarios.mri import accepted_power, mri_coil
from emjax.scenarios.mri_maps import coil_maps

NAME = "mri_coil"
LIMIT = 1e-2  # |accepted - absorbed - radiated| / accepted allowed (measured: 3e-5)


def arguments(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true", help="the full size (a GPU job)")
    p.add_argument("--out", type=Path, default=Path("out/examples"),
                   help="folder for the figure (default out/examples)")
    return p.parse_args(argv)


def balance(res, sim) -> tuple[float, float, float]:
    """(accepted, absorbed, radiated) power, in the run's common DFT units (W*s^2)."""
    md = res["balance"]
    mon = next(m for m in sim.monitors if m.name == "balance")
    d = np.asarray(sim.domain.spacing3)
    lo = np.asarray(mon.center) - (np.asarray(mon.size) - d) / 2  # the box's node corners
    hi = np.asarray(mon.center) + (np.asarray(mon.size) - d) / 2
    accepted = float(accepted_power(res, sim, "balance")[0])
    absorbed = yee_absorbed_power(md, edge_conductivity(sim), sim.domain.lower, d, lo, hi)
    return accepted, absorbed, box_flux(md, lo, hi, d)


def figure(maps: dict, path: Path) -> None:
    from matplotlib.figure import Figure

    x, y, z = maps["x"], maps["y"], maps["z"]
    b1 = np.abs(maps["b1plus"]) * 1e6  # µT per sqrt(W)
    sar = maps["sar"]
    tissue = maps["tissue"] >= 0
    iz = int(np.argmax(tissue.sum(axis=(0, 1))))  # the axial cut with the most tissue
    iy = len(y) // 2
    fig = Figure(figsize=(11, 7.2), layout="constrained")
    axes = fig.subplots(2, 2)
    sar_max = float(np.percentile(sar[tissue], 99.5))  # a few skin voxels near the rungs
    for row, (data, label, vmax, cmap) in enumerate((
            (np.where(tissue, b1, np.nan), "|B1+| (µT/√W)", None, "viridis"),
            (np.where(tissue, sar, np.nan), "local SAR (W/kg per W)", sar_max, "inferno"))):
        for col, (img, u, v, lu, lv, title) in enumerate((
                (data[:, :, iz], x, y, "x (m)", "y (m)", f"axial, z = {z[iz]:.3f} m"),
                (data[:, iy, :], x, z, "x (m)", "z (m)", f"coronal, y = {y[iy]:.3f} m"))):
            ax = axes[row, col]
            im = ax.pcolormesh(u, v, img.T, shading="nearest", cmap=cmap, vmin=0, vmax=vmax)
            ax.set_aspect("equal")
            ax.set(xlabel=lu, ylabel=lv, title=title)
            fig.colorbar(im, ax=ax, label=label, shrink=0.9)
    fig.suptitle(f"head coil at {maps['frequency'] / 1e6:.4g} MHz, per watt accepted; "
                 f"head SAR {maps['head_sar_w_per_kg']:.3g} W/kg per W")
    fig.savefig(path, dpi=75)


def main(argv=None) -> dict:
    args = arguments(argv)
    shape, spacing = ((312, 328, 325), 4e-3) if args.full else ((52, 55, 54), 24e-3)
    sim = mri_coil(shape=shape, spacing=spacing, drive="pulse", balance_box=True)
    with warnings.catch_warnings():
        if not args.full:  # 24 mm cells are 5 per wavelength in brain at the pulse's top
            # frequency: emjax warns that the maps are coarse; the power balance holds on
            # any grid, which is what the small size checks.
            warnings.simplefilter("ignore", EmjaxWarning)
        res = sim.run(progress=False)
    accepted, absorbed, radiated = balance(res, sim)
    err = abs(accepted - absorbed - radiated) / accepted
    maps = coil_maps(res, sim)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{NAME}.png"
    figure(maps, path)
    print(f"{NAME}: accepted power = absorbed {absorbed / accepted:.1%} + radiated "
          f"{radiated / accepted:.1%}, off by {err:.1e} (limit {LIMIT:.0e}); |B1+| at the "
          f"head centre {maps['b1plus_centre_ut']:.2f} µT per sqrt(W); {path}")
    return {"passed": err < LIMIT, "figures": [path], "balance_error": err}


if __name__ == "__main__":
    sys.exit(0 if main()["passed"] else 1)
