"""A z-directed point dipole in a CPML-bounded box (FDTD3D).

Shows a DFT field plane (r Re(Ez) in the x-z plane through the dipole: wavefronts and
the sin(theta) pattern, no radiation along the dipole's axis) and the total energy
against time on a log axis (the pulse radiates, the CPML absorbs it). Physics check: the power the
near-to-far transform carries away equals the Hertzian dipole's
``P = eta0 k^2 |I dl|^2 / (12 pi)`` for the same current spectrum.

    python examples/dipole_box.py [--full] [--out DIR]

Small size: 56^3 cells of 1 mm (15 per wavelength at 20 GHz), about 6 s on a laptop
CPU; ``--full``: 112^3 cells of 0.5 mm (30 per wavelength, 0.22%), about 40 s.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

import emjax as em

NAME = "dipole_box"
LIMIT = 0.03  # relative power error allowed (measured: 0.96% small, float32)


def arguments(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true", help="the full size (slower)")
    p.add_argument("--out", type=Path, default=Path("out/examples"),
                   help="folder for the figure (default out/examples)")
    return p.parse_args(argv)


def scenario(full: bool) -> em.FDTD3D:
    """The dipole at the centre of an n^3 box, 15 (small) or 30 (full) cells per
    wavelength at f0, a DFT plane, a near-to-far box and the energy."""
    n, d = (112, 0.5e-3) if full else (56, 1e-3)
    f0 = em.c0 / 15e-3  # 20 GHz: 15 cells per wavelength at 1 mm (30 full)
    half = (n / 2 - 10) * d  # the DFT plane stops 2 cells short of the 8-cell CPML
    pulse = em.GaussianPulse(f0=f0, fwidth=f0 / 7)  # its -40 dB band within 10 cells/wavelength
    return em.FDTD3D(
        name=NAME,
        domain=em.Domain(shape=(n, n, n), spacing=d),
        boundary=em.CPML(thickness=8),
        sources=[em.PointDipole(position=(0, 0, 0), polarization="z",
                                waveform=pulse)],
        monitors=[
            em.DFTMonitor(name="plane", size=(2 * half, 0, 2 * half), frequencies=[f0],
                          components=["Ez"]),
            em.NearToFar(name="far", frequencies=[f0], margin=2),
            em.EnergyMonitor(name="energy"),
        ],
        duration=2 * pulse.offset * pulse.tau + 6 / f0,  # the pulse, then 6 periods
    )


def dipole_power(sim: em.FDTD3D, f: float) -> float:
    """Hertzian dipole power (W*s^2, the scale of DFT spectra) of the source's current
    moment spectrum, sampled as the FDTD injects it, at (n + 1/2) dt."""
    src = sim.sources[0]
    t = (np.arange(sim.num_steps) + 0.5) * sim.dt
    moment = np.sum(src.amplitude * src.waveform(t) * np.exp(-2j * np.pi * f * t)) * sim.dt
    k = 2 * math.pi * f / em.c0
    return em.eta0 * k**2 * abs(moment) ** 2 / (12 * math.pi)


def figure(sim: em.FDTD3D, res, path: Path) -> None:
    from matplotlib.figure import Figure

    plane = res["plane"]
    ez = plane.array("Ez")[0][:, 0, :]  # complex spectrum (V*s/m) on the plane y = 0
    x, _, z = plane.axes("Ez")
    r = np.hypot(*np.meshgrid(x, z, indexing="ij"))
    # r * Re(Ez): the far field's 1/r taken out, so the sin(theta) pattern and the
    # wavefronts show at every distance; the source's own cells masked.
    img = np.where(r < 2.5 * sim.domain.spacing3[0], np.nan, r * np.real(ez))
    lim = np.nanmax(np.abs(img))

    fig = Figure(figsize=(10, 4), layout="constrained")
    a1, a2 = fig.subplots(1, 2, width_ratios=(1, 1.3))
    im = a1.imshow(img.T / lim, origin="lower", cmap="RdBu_r", vmin=-1, vmax=1,
                   extent=(x[0] * 1e3, x[-1] * 1e3, z[0] * 1e3, z[-1] * 1e3))
    a1.set(xlabel="x (mm)", ylabel="z (mm)",
           title=f"r Re(Ez) at {plane.coords['f'][0] / 1e9:.3g} GHz, plane y = 0")
    fig.colorbar(im, ax=a1, label="r Re(Ez) / max (source cells masked)")
    e = res["energy"]
    a2.semilogy(e.time() * 1e9, e.array("energy"), lw=1.2)
    a2.set(xlabel="time (ns)", ylabel="energy in the box (J)",
           title="total energy: radiated into the CPML")
    a2.grid(True, which="both", alpha=0.3)
    fig.savefig(path, dpi=90)


def main(argv=None) -> dict:
    args = arguments(argv)
    sim = scenario(args.full)
    res = sim.run(progress=False)
    f0 = float(res["far"].coords["f"][0])
    p_fdtd = res["far"].radiated_power(f0)
    p_ref = dipole_power(sim, f0)
    err = abs(p_fdtd / p_ref - 1)
    energy = res["energy"].array("energy")
    decay_db = 10 * np.log10(energy[-1] / energy.max())
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{NAME}.png"
    figure(sim, res, path)
    passed = bool(err < LIMIT and decay_db < -30)
    print(f"{NAME}: radiated power {err:.2%} from the Hertzian dipole (limit {LIMIT:.0%}); "
          f"energy at the end {-decay_db:.0f} dB below its peak; {path}")
    return {"passed": passed, "figures": [path], "power_error": err, "decay_db": decay_db}


if __name__ == "__main__":
    sys.exit(0 if main()["passed"] else 1)
