"""Experiment: node orders of a DGATD mesh, their cost and the kernels' speed on them
(issue 24: reverse Cuthill-McKee took 2.2-3.5 s of the 20.2M-DoF set-up on an H200's
host, the largest host stage left).

    python benchmarks/dga_renumbering.py 20.2e6 > $OUT/renumbering.jsonl

For the seed's ring mesh at the target DoFs (or a ``.vtu`` mesh file): the order as
generated, reverse Cuthill-McKee (``TetMesh.renumbered``, the set-up's), and a Morton
(Z-order) sort of the nodes by their coordinates (tets then by lowest node, as
``renumbered`` does), each with its time to compute and the XLA and Pallas half-steps
(``emjax.bench.dga.measure``).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np


def _spread(v: np.ndarray) -> np.ndarray:
    """21-bit integers with two zero bits inserted after each bit (uint64)."""
    v = v.astype(np.uint64) & np.uint64(0x1FFFFF)
    for shift, mask in ((32, 0x1F00000000FFFF), (16, 0x1F0000FF0000FF), (8, 0x100F00F00F00F00F),
                        (4, 0x10C30C30C30C30C3), (2, 0x1249249249249249)):
        v = (v | (v << np.uint64(shift))) & np.uint64(mask)
    return v


def morton_renumbered(mesh):
    """``mesh`` with its nodes in Morton order of their coordinates and its tets sorted
    by their lowest node (then the next), as ``TetMesh.renumbered`` orders tets."""
    from emjax.dga.mesh import TetMesh

    x = mesh.nodes
    lo, hi = x.min(axis=0), x.max(axis=0)
    q = ((x - lo) / np.maximum(hi - lo, 1e-300) * (2**21 - 1)).astype(np.int64)
    key = _spread(q[:, 0]) | (_spread(q[:, 1]) << np.uint64(1)) | (_spread(q[:, 2]) << np.uint64(2))
    perm = np.argsort(key, kind="stable")
    new_of_old = np.empty(perm.size, np.int64)
    new_of_old[perm] = np.arange(perm.size)
    tets = new_of_old[mesh.tets]
    k = np.sort(tets, axis=1)
    order = np.lexsort((k[:, 1], k[:, 0]))
    return TetMesh.trusted(mesh.nodes[perm], tets[order], mesh.regions[order])


def main() -> None:
    from emjax.bench.dga import measure, rings_for
    from emjax.constants import c0
    from emjax.dga import structured
    from emjax.driver.precision import require_x64

    require_x64()
    target = sys.argv[1] if len(sys.argv) > 1 else "2e5"
    t = time.perf_counter()
    if target.endswith(".vtu"):  # a mesh file (gmsh's cylinder: dga_unstructured.py make)
        from emjax.dga.mesh import mean_edge, read

        mesh = read(target)
        h = mean_edge(mesh.nodes, mesh.tets)
    else:
        r, layers = rings_for(int(float(target)))
        mesh = structured.cylinder(1.0, 0.5, rings=r, layers=layers, renumber=False)
        h = 1.0 / r
    gen = time.perf_counter() - t
    dt = 0.3 * h / c0
    orders = {"generated": (lambda m: m), "rcm": (lambda m: m.renumbered()),
              "morton": morton_renumbered}
    for name, how in orders.items():
        t = time.perf_counter()
        m = how(mesh)
        took = time.perf_counter() - t
        rec = {"order": name, "order_s": took, "mesh_s": gen}
        rec.update(measure(m, dt, sparse=False, random_order=False))
        print(json.dumps(rec, default=float), flush=True)


if __name__ == "__main__":
    main()
