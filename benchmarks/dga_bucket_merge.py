"""Experiment: fewer, wider node buckets for the XLA kernels (issue 24): their step
program's compile time against their step time on a mesh of many node degrees.

    python benchmarks/dga_bucket_merge.py MESH [MIN_SHARE ...] [-- KERNELS ...]

MESH: a mesh file (.vtu, ...) or ``ring:DOFS``. For each ``min_share`` of
:func:`emjax.dga.mass.assemble` (default 0.01, the solver's; larger merges more small
degree groups into the next width, padding their nodes): the buckets, the padded share of
u, and from :func:`emjax.bench.dga.time_kernels` (float32; KERNELS default ``xla``,
``pallas`` on a GPU) the step loop's compile seconds and its ms per step and Ampere
half-step. One JSON line per share and kernels.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from emjax.bench.dga import rings_for, time_kernels
from emjax.constants import c0, eps0, mu0
from emjax.dga import structured
from emjax.dga.complex import build
from emjax.dga.layout import make_layout
from emjax.dga.mass import assemble
from emjax.dga.mesh import read


def mesh_of(arg: str):
    if arg.startswith("ring:"):
        r, L = rings_for(int(float(arg[5:])))
        return structured.cylinder(1.0, 0.5, rings=r, layers=L)
    return read(arg).renumbered()


def main(argv: list[str]) -> None:
    kinds = ["xla"]
    if "--" in argv:
        argv, kinds = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    mesh = mesh_of(argv[0])
    shares = [float(a) for a in argv[1:]] or [0.01, 0.05, 0.1, 0.2]
    cx = build(mesh)
    nt = cx.num_tets
    h = float(np.mean(np.linalg.norm(cx.nodes[cx.edges[:, 1]] - cx.nodes[cx.edges[:, 0]],
                                     axis=1)))
    for share in shares:
        ops = assemble(cx, np.full(nt, eps0), np.full(nt, mu0), None, min_share=share)
        for kind in kinds:
            _one(argv[0], share, kind, ops, cx, h)


def _one(name: str, share: float, kind: str, ops, cx, h: float) -> None:
    lay = make_layout(ops, kind)
    t = time_kernels(ops, lay, 0.2 * h / c0, n=50, repeats=3)
    print(json.dumps({"mesh": name, "min_share": share, "kernels": kind,
                      "widths": [int(b.width) for b in ops.buckets],
                      "padded_share": 1 - 2 * cx.num_edges / ops.nu,
                      "step_compile_s": t["step_compile_s"],
                      "step_ms": t["step_s"] * 1e3, "ampere_ms": t["ampere_s"] * 1e3}),
          flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
