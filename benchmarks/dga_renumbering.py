"""Experiment: node orders of a DGATD mesh, their cost and the kernels' speed on them
(issue 24: reverse Cuthill-McKee took 2.2-3.5 s of the 20.2M-DoF set-up on an H200's
host, the largest host stage left).

    python benchmarks/dga_renumbering.py 20.2e6 > $OUT/renumbering.jsonl

For the seed's ring mesh at the target DoFs (or a ``.vtu`` mesh file): the order as
generated, reverse Cuthill-McKee (``TetMesh.renumbered``, the set-up's), and a Morton
(Z-order) sort of the nodes by their coordinates (``TetMesh.renumbered("morton")``; a
copy of that function in this script when first measured, 2026-11-29), each with its
time to compute and the XLA and Pallas half-steps
(``emjax.bench.dga.measure``).
"""

from __future__ import annotations

import json
import sys
import time


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
    orders = {"generated": (lambda m: m), "rcm": (lambda m: m.renumbered("rcm")),
              "morton": (lambda m: m.renumbered("morton"))}
    for name, how in orders.items():
        t = time.perf_counter()
        m = how(mesh)
        took = time.perf_counter() - t
        rec = {"order": name, "order_s": took, "mesh_s": gen}
        rec.update(measure(m, dt, sparse=False, random_order=False))
        print(json.dumps(rec, default=float), flush=True)


if __name__ == "__main__":
    main()
