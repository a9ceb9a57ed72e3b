"""Resonances of a PEC box cavity on an unstructured gmsh mesh (DGATD) against theory.

The discrete geometric approach on tetrahedra: a 1 x 0.5 x 0.75 m air-filled PEC box
meshed by gmsh, rung by a short edge current; the ringing at a probe after the pulse
goes through the matrix pencil (``emjax.analysis.modes``, what Meep users know as
Harminv) and its resonances are matched to ``f = c/2 sqrt((m/a)^2 + (n/b)^2 +
(p/c)^2)``. Physics check: the four lowest distinct modes within 2% (the error is
second order in the edge length: 1.2% at 0.1 m, 0.6% at 0.07 m).

    python examples/dgatd_cavity.py [--full] [--out DIR]

Needs gmsh (``pip install -e '.[mesh]'``). Small size: edges of 0.1 m (about 4,200
tetrahedra), about 8 s on a laptop CPU; ``--full``: 0.04 m.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from pathlib import Path

import numpy as np

import emjax as em
from emjax.analysis.modes import match_modes, matrix_pencil
from emjax.analysis.spectrum import spectrum

NAME = "dgatd_cavity"
SIZE = (1.0, 0.5, 0.75)  # m
LIMIT = 0.02  # relative frequency error allowed (measured: 1.2% at edge 0.1 m)
COUNT = 4  # distinct modes checked


def arguments(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true", help="the full size (slower)")
    p.add_argument("--out", type=Path, default=Path("out/examples"),
                   help="folder for the figure (default out/examples)")
    return p.parse_args(argv)


def box_modes(size, count: int) -> list[tuple[str, float]]:
    """The ``count`` lowest distinct resonances (label, Hz) of a PEC box: (m, n, p) with
    at least two indices non-zero (one zero: one mode; none: a TE and a TM pair)."""
    a, b, c = size
    found = {}
    for m, n, p in itertools.product(range(4), repeat=3):
        if (m > 0) + (n > 0) + (p > 0) >= 2:
            f = em.c0 / 2 * math.sqrt((m / a) ** 2 + (n / b) ** 2 + (p / c) ** 2)
            found.setdefault(round(f, 3), f"{m}{n}{p}")
    return [(label, f) for f, label in sorted(found.items())[:count]]


def scenario(edge: float, modes) -> em.DGATD:
    """The box, an edge current off every symmetry plane (it rings all the modes), a
    probe of the three E components elsewhere."""
    fmax = modes[-1][1]
    f0 = 0.5 * (modes[0][1] + fmax)
    pulse = em.GaussianPulse(f0=f0, fwidth=0.5 * (fmax - modes[0][1]) + 40e6)
    return em.DGATD(
        name=NAME,
        mesh=em.BoxMesh(size=SIZE, edge_length=edge, mesher="gmsh"),
        sources=[em.MeshEdgeSource(position=(0.31, 0.17, 0.22), direction=(1, 1, 1),
                                   waveform=pulse)],
        probes=[em.Probe(name="probe", positions=[(0.72, 0.36, 0.53)],
                         components=["Ex", "Ey", "Ez"])],
        duration=2 * pulse.offset * pulse.tau + 40 / modes[0][1],  # the pulse, 40 periods
    )


def ringing(res, sim) -> tuple[np.ndarray, np.ndarray]:
    """(t, signal) after the pulse: the sum of the three probed components."""
    p = res["probe"]
    x = sum(p.array(c)[:, 0].astype(np.float64) for c in ("Ex", "Ey", "Ez"))
    t = p.time("Ex")
    w = sim.sources[0].waveform
    start = int(np.searchsorted(t, 2 * w.offset * w.tau))
    return t[start:], x[start:]


def main(argv=None) -> dict:
    from matplotlib.figure import Figure

    args = arguments(argv)
    modes = box_modes(SIZE, COUNT)
    sim = scenario(0.04 if args.full else 0.1, modes)
    res = sim.run(progress=False)
    t, x = ringing(res, sim)
    dec = max(1, int(1 / (8 * modes[-1][1] * (t[1] - t[0]))))  # 8 samples per period
    found = match_modes(matrix_pencil(x[::dec], (t[1] - t[0]) * dec, order=40),
                        [f for _, f in modes], rel_tol=0.03)
    errs = [abs(m.frequency - f) / f if m else math.inf
            for m, (_, f) in zip(found, modes, strict=True)]

    f_ax, X = spectrum(t, x, pad_to=8 * x.size, window="hamming")
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    a0, a1 = fig.subplots(1, 2, width_ratios=(1, 1.5))
    sim.plot(y=0.25, ax=a0)
    sel = (f_ax > 0.8 * modes[0][1]) & (f_ax < 1.3 * modes[-1][1])
    db = 20 * np.log10(np.abs(X[sel]) / np.abs(X[sel]).max())
    a1.plot(f_ax[sel] / 1e6, db, lw=1.2)  # Hamming window
    for (label, f), m in zip(modes, found, strict=True):
        a1.axvline(f / 1e6, color="k", ls="--", lw=0.8)
        a1.text(f / 1e6, 3, f" {label}", rotation=90, ha="center", va="bottom", fontsize=8)
        if m:
            a1.plot(m.frequency / 1e6, -50, "r^")
    a1.set(xlabel="frequency (MHz)", ylabel="dB re max", ylim=(-60, 16),
           title=f"PEC box {SIZE[0]:g} x {SIZE[1]:g} x {SIZE[2]:g} m: worst mode "
           f"{max(errs):.2%} off\nline: probe spectrum after the pulse\ndashed: theory (m n p); "
           "triangles: matrix pencil")
    a1.title.set_fontsize(9)
    a1.grid(True, alpha=0.3)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{NAME}.png"
    fig.savefig(path, dpi=72)
    print(f"{NAME}: {COUNT} lowest modes ("
          + ", ".join(f"{lab} {f / 1e6:.1f} MHz" for lab, f in modes)
          + f") within {max(errs):.2%} of theory (limit {LIMIT:.0%}); {path}")
    return {"passed": max(errs) < LIMIT, "figures": [path], "errors": errs}


if __name__ == "__main__":
    sys.exit(0 if main()["passed"] else 1)
