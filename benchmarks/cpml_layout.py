"""Which CPML slabs slow the fused update down? Faces on/off and minor-axis alignment.

Usage: python benchmarks/cpml_layout.py [n]
"""

from __future__ import annotations

import sys

import jax

import emjax.fdtd.cpml as cpml
from emjax.bench import time_scenario
from emjax.model import CPML, FDTD3D, PEC, Boundaries, Domain


def scenario(n: int, x: bool, y: bool, z: bool) -> FDTD3D:
    pick = lambda on: CPML(thickness=10) if on else PEC()  # noqa: E731
    return FDTD3D(domain=Domain(shape=(n, n, n), spacing=1e-3), steps=100,
                  boundary=Boundaries(x=pick(x), y=pick(y), z=pick(z)))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 512
    for name, faces, align in (
        ("none (bare)", (0, 0, 0), 1), ("x only", (1, 0, 0), 1), ("y only", (0, 1, 0), 1),
        ("z only", (0, 0, 1), 1), ("x and y", (1, 1, 0), 1), ("all", (1, 1, 1), 1),
        ("z only, align 4", (0, 0, 1), 4), ("all, align 4", (1, 1, 1), 4),
        ("all, align 16", (1, 1, 1), 16),
    ):
        cpml.SLAB_ALIGN = (1, 1, align)
        r = time_scenario(scenario(n, *faces), 100)
        print(f"{name:20s} {n**3 / r['s_per_step'] / 1e9:7.2f} Gcells/s", flush=True)
        jax.clear_caches()


if __name__ == "__main__":
    main()
