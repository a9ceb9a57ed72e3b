"""Block and warp counts of the Pallas DGATD kernels (:mod:`emjax.dga.pallas`), timed on
one mesh beside the XLA kernels, each half-step inside one jitted loop.

Usage: python benchmarks/dga_pallas_sweep.py [DOFS]   (default 20e6 on a GPU, 2e5 on a CPU)
"""

from __future__ import annotations

import sys

import numpy as np

from emjax.bench.common import copy_bandwidth, on_gpu
from emjax.bench.dga import rings_for, time_kernels
from emjax.constants import c0, eps0, mu0
from emjax.dga import pallas, structured
from emjax.dga.arrays import half_step_bytes, kernel_arrays
from emjax.dga.complex import build
from emjax.dga.layout import make_layout
from emjax.dga.mass import assemble

CONFIGS = [  # (faraday, edges, nodes): (elements per program, warps); the sliced edge
    ((256, 8), (256, 8), (128, 4)),  # kernel's programs hold EDGE_SLICE edges whatever
    ((256, 8), (256, 4), (128, 4)),  # the first number
]
"""Measured before (H100, 2026-11-23, 20.2M DoFs, ``-dam-p``, Faraday / Ampere ms; record
``benchmarks/results/2026-11-23d-h100-dga-pallas-sweeps.txt``): all (256, 8) 0.173 /
0.276; all (128, 4) 0.177 / 0.291; all (64, 2) 0.177 / 0.292; (512, 4) (512, 4) (256, 4)
0.297 / 0.442; (1024, 8) (1024, 8) (128, 4) 0.276 / 0.399; evict-first hints on the
streamed loads 0.178 / 0.692. XLA default in the same run 0.245 / 0.350."""

RUNS = [  # (kernels, configs); the first is timed again last, for the spread
    ("pallas", CONFIGS),
    ("pallas", CONFIGS[:1]),
]
"""Runs of the Pallas layouts before the others were removed (H100, 2026-11-25, 20.2M
DoFs, record ``benchmarks/results/2026-11-25-h100-dga-pallas-sweep.txt``), Ampere ms: -dam-p 0.2738
and 0.2730, -dams-p 0.3101, -dams-pe 0.2814, tile -dams-p 0.2962, tile -dams-pe 0.2748;
ncu: one edge table 59.6 us against 89 us for the four bucket launches; the w = 14 node
kernel 155.6 us node-major, 183.2 us slot-major. Second run (record
``2026-11-25-h100-dga-pallas-sweep2.txt``), Ampere ms, configs all (256, 8) / all (128, 4):
-dam-pe 0.2438 / 0.2524, tile -dam-pe 0.2447 / 0.2299; -dam-p 0.2688 and 0.2723; the
slot-major node arrays (``-dams``, since removed) 0.2728. Third run (record
``2026-11-25-h100-dga-pallas-sweep3.txt``): tile -dam-pe at nodes (128, 4) 0.2281 (the
new pallas.TUNING). Fourth (``...-sweep4-tiled-nodes.txt``): node arrays in u's tiles as
well, 0.2401-0.2820 against 0.2303; reverted. Until then ``-pe`` read one table as wide
as the widest edge; now the sliced table (``edges.edge_slices``). The node-major
``-dam-p`` (bucketed edge launches) left ``src/`` with the other dominated layouts
(BENCHMARKS.md); ``pallas`` is the former ``tets-tile-sym-dam-pe``."""


def main(dofs: float):
    rings, layers = rings_for(int(dofs))
    cx = build(structured.cylinder(1.0, 0.5, rings=rings, layers=layers))
    ops = assemble(cx, np.full(cx.num_tets, eps0), np.full(cx.num_tets, mu0))
    dt = 0.3 / rings / c0
    bw = copy_bandwidth(1 << 30 if on_gpu() else 1 << 26)
    print(f"{cx.num_dofs} DoFs, copy {bw / 1e12:.2f} TB/s", flush=True)

    def show(name, lay, K):
        nb = half_step_bytes(ops, lay)
        t = time_kernels(ops, lay, dt, K=K)
        print(f"  {name}: Faraday {t['faraday_s'] * 1e3:.4f} ms "
              f"({nb['faraday'] / t['faraday_s'] / bw:.3f}), Ampere "
              f"{t['ampere_s'] * 1e3:.4f} ms ({nb['ampere'] / t['ampere_s'] / bw:.3f}), "
              f"step {t['step_s'] * 1e3:.4f} ms", flush=True)

    lay = make_layout(ops, "xla")
    show("xla", lay, kernel_arrays(ops, lay, dt, np.float32))
    for v, configs in RUNS:
        lay = make_layout(ops, v)
        K = kernel_arrays(ops, lay, dt, np.float32)
        for far, edges, nodes in configs:
            pallas.TUNING.update(faraday=far, edges=edges, nodes=nodes)
            show(f"{v} faraday {far} edges {edges} nodes {nodes}", lay, K)
        del K


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else (20e6 if on_gpu() else 2e5))
