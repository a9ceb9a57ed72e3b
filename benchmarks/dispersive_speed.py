"""Issue #20's speed check: a 512^3 float32 FDTD3D run (10-cell CPML, a z dipole, a
probe) holding a sphere that fills 5% of the cells, one-pole Debye (water-like: eps_inf
4.9, delta_eps 74, tau 8.3 ps) against the same sphere non-dispersive (eps_r 4.9).
Target: the dispersive run at >= 90% of the other's Gcells/s. Timing as in
``energy_cost.timed`` (``FDTDSolver.advance``, median of 3 chunks of 100 steps after a
compiling one).

Usage (GPU machine): ``python benchmarks/dispersive_speed.py --out $OUT/disp.jsonl``
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from energy_cost import record, timed


def scenario(dispersive: bool, n: int):
    from emjax.model import load_scenario

    size = n * 1e-3
    radius = size * (0.05 * 3 / (4 * math.pi)) ** (1 / 3)  # 5% of the cells
    medium = ({"type": "PoleMedium", "eps_inf": 4.9,
               "poles": [{"type": "Debye", "delta_eps": 74.0, "tau": 8.3e-12}]}
              if dispersive else {"type": "Medium", "eps_r": 4.9})
    return load_scenario({
        "type": "FDTD3D", "name": "dispersive-speed", "steps": 400,
        "domain": {"shape": [n, n, n], "spacing": 1e-3},
        "boundary": {"type": "CPML", "thickness": 10},
        "structures": [{"geometry": {"type": "Sphere", "center": [0.0, 0.0, 0.0],
                                     "radius": radius}, "medium": medium}],
        "sources": [{"type": "PointDipole", "position": [0.0, 0.0, 1.2 * radius],
                     "polarization": "z",
                     "waveform": {"type": "GaussianPulse", "f0": 2e9, "fwidth": 1e9}}],
        "monitors": [{"type": "Probe", "name": "probe",
                      "positions": [[0.0, 0.0, 1.3 * radius]], "components": ["Ez"]}]})


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--n", type=int, default=512)
    a = p.parse_args()
    for variant in ("plain", "debye", "plain", "debye"):
        record(a.out, variant, a.n, timed(scenario(variant == "debye", a.n)))


if __name__ == "__main__":
    main()
