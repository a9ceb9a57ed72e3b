"""S11 and input impedance of a centre-fed dipole antenna through a lumped port (FDTD3D).

A straight PEC wire of length L along z (a line of Ez edges), cut at its middle by
one edge that holds a 50 ohm ``LumpedPort``; one pulsed run gives, through
``emjax.analysis.sparams``, S11 referred to 50 ohm and the input impedance Z_in = V / I
at any frequency of the pulse's band, written as a Touchstone file (``.s1p``, through
scikit-rf). Physics checks: the power the port accepts, 0.5 Re(V I*), equals the power
radiated through a closed flux box around the antenna (Poynting's theorem, at five
frequencies across the band); and, as thin-wire antenna theory has it, the first
resonance (Im Z_in = 0) falls a little below the half wave, with a radiation resistance
near the 73 ohm of an infinitely thin half-wave dipole (measured: L = 0.449
wavelengths and 72 ohm at 5 mm cells, 0.463 and 72 ohm at 2.5 mm: the wire's
equivalent radius, about 0.135 cells on the Yee grid, and the gap cell's capacitance
shrink with the cells).

    python examples/dipole_antenna_s11.py [--full] [--out DIR]

Writes ``dipole_antenna_s11.png`` and ``dipole_antenna_s11.s1p`` into --out. Small
size: L = 0.2 m on 5 mm cells (40 x 40 x 80), about 8 s on a laptop CPU;
``--full``: 2.5 mm cells.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import emjax as em
from emjax.analysis.sparams import port_waves, s_parameters

NAME = "dipole_antenna_s11"
LENGTH = 0.2  # m, tip to tip
LIMIT = 1e-2  # |P_radiated / P_accepted - 1| allowed (measured: 3.8e-4)
RANGE_L = (0.42, 0.5)  # resonant length in wavelengths allowed (measured: 0.449)
RANGE_R = (55.0, 90.0)  # resistance at resonance allowed, ohm (measured: 72)
FLUX_AT = np.array([0.8, 0.9, 1.0, 1.1, 1.2])  # times f0: where the power balance is checked


def arguments(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true", help="the full size (slower)")
    p.add_argument("--out", type=Path, default=Path("out/examples"),
                   help="folder for the figure and the .s1p (default out/examples)")
    return p.parse_args(argv)


def scenario(d: float) -> em.FDTD3D:
    """The dipole on the node line x = y = 0; the port on the Ez edge from z = 0 to d."""
    clear = 0.06  # m between the wire and the CPML, sideways and beyond the tips
    n_xy = 2 * round(clear / d) + 2 * 8
    n_z = 2 * round((LENGTH / 2 + clear) / d) + 2 * 8
    f0 = 0.48 * em.c0 / LENGTH
    arms = [(-LENGTH / 2 + d / 2, -d / 4), (1.25 * d, LENGTH / 2 + d / 2)]  # z ranges, m
    wire = [em.Structure(geometry=em.Box(center=(0, 0, (lo + hi) / 2),
                                         size=(d / 2, d / 2, hi - lo)), medium=em.PEC())
            for lo, hi in arms]  # thinner than a cell around the node line: its Ez edges
    pulse = em.GaussianPulse(f0=f0, fwidth=0.4 * f0)
    port = em.LumpedPort(name="feed", position=(0, 0, d / 2), polarization="z",
                         impedance=50.0, waveform=pulse)
    box = (2 * clear - 4 * d, 2 * clear - 4 * d, LENGTH + 2 * clear - 4 * d)  # 2 cells in
    flux = em.FluxMonitor(name="radiated", center=(0, 0, d / 2), size=box,
                          frequencies=list(FLUX_AT * f0))
    return em.FDTD3D(name=NAME, domain=em.Domain(shape=(n_xy, n_xy, n_z), spacing=d),
                     boundary=em.CPML(thickness=8), structures=wire, sources=[port],
                     monitors=[flux],
                     duration=2 * pulse.offset * pulse.tau + 10 / f0)  # pulse, ring-down


def resonance(f: np.ndarray, z: np.ndarray) -> tuple[float, float]:
    """(frequency Hz, resistance ohm) where Im Z first crosses zero upwards, interpolated."""
    x = np.imag(z)
    k = int(np.nonzero((x[:-1] < 0) & (x[1:] >= 0))[0][0])
    w = -x[k] / (x[k + 1] - x[k])
    return float(f[k] + w * (f[k + 1] - f[k])), float(np.real(z[k] + w * (z[k + 1] - z[k])))


def main(argv=None) -> dict:
    from matplotlib.figure import Figure

    args = arguments(argv)
    sim = scenario(2.5e-3 if args.full else 5e-3)
    res = sim.run(progress=False)
    f0 = sim.sources[0].waveform.f0
    freqs = np.linspace(0.6 * f0, 1.4 * f0, 161)
    sp = s_parameters(res, freqs)
    s11, z = sp.S[:, 0, 0], sp.z_in[:, 0]
    f_res, r_res = resonance(freqs, z)
    length_wl = LENGTH * f_res / em.c0
    flux = res["radiated"]
    waves = port_waves(res, flux.coords["f"])  # V and I spectra at the flux frequencies
    accepted = 0.5 * np.real(waves.V[:, 0] * np.conj(waves.I[:, 0]))
    balance = float(np.max(np.abs(flux.array("flux") / accepted - 1)))
    args.out.mkdir(parents=True, exist_ok=True)
    s1p = sp.write_touchstone(args.out / f"{NAME}.s1p", overwrite=True)

    fig = Figure(figsize=(11, 4), layout="constrained")
    a0, a1 = fig.subplots(1, 2)
    a0.plot(freqs / 1e6, 20 * np.log10(np.abs(s11)), lw=1.5)
    a0.axvline(f_res / 1e6, color="k", ls="--", lw=0.8,
               label=f"Im Z = 0: {f_res / 1e6:.0f} MHz, L = {length_wl:.3f} wavelengths")
    a0.set(xlabel="frequency (MHz)", ylabel="|S11| (dB re 50 ohm)",
           title=f"dipole, L = {LENGTH * 1e3:g} mm, {sim.domain.spacing3[0] * 1e3:g} mm cells")
    a1.plot(freqs / 1e6, np.real(z), lw=1.5, label="Re Z_in")
    a1.plot(freqs / 1e6, np.imag(z), lw=1.5, label="Im Z_in")
    a1.axhline(73.1, color="0.5", ls=":", lw=1, label="73 ohm (thin half-wave dipole)")
    a1.axvline(f_res / 1e6, color="k", ls="--", lw=0.8)
    a1.set(xlabel="frequency (MHz)", ylabel="ohm", ylim=(-300, 300),
           title=f"input impedance; R = {r_res:.1f} ohm at resonance")
    for ax in (a0, a1):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    path = args.out / f"{NAME}.png"
    fig.savefig(path, dpi=80)
    passed = (balance < LIMIT and RANGE_L[0] <= length_wl <= RANGE_L[1]
              and RANGE_R[0] <= r_res <= RANGE_R[1])
    print(f"{NAME}: radiated = accepted power to {balance:.1e} (limit {LIMIT:.0e}); first "
          f"resonance at {f_res / 1e6:.1f} MHz, L = {length_wl:.3f} wavelengths (allowed "
          f"{RANGE_L[0]}-{RANGE_L[1]}), R = {r_res:.1f} ohm (allowed {RANGE_R[0]:g}-"
          f"{RANGE_R[1]:g}); |S11| min {20 * np.log10(np.abs(s11).min()):.1f} dB; {path}, "
          f"{s1p.name}")
    return {"passed": passed, "figures": [path], "resonance_hz": f_res, "resistance": r_res,
            "balance_error": balance}


if __name__ == "__main__":
    sys.exit(0 if main()["passed"] else 1)
