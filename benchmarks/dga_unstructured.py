"""The DGATD kernels on an unstructured (gmsh) tetrahedral mesh: Pallas against XLA.

``emjax bench seed004-cylinder`` times the structured ring mesh, whose edges have 2 to 6
tets and whose nodes have degree 10 or 14. A gmsh mesh of the same cylinder has 1 to 11
tets per edge and node degrees over a wide range, so the sliced edge table's padding,
the node buckets and the tile layout meet other shapes. Here, on a mesh file made where
gmsh exists (GPU machines lack it):

1. the solver runs the same source and probe with ``kernels="xla"`` and with
   ``kernels="pallas"`` (on a CPU in Pallas' interpreter) and the probe traces are
   compared (float32);
2. both kernels (on a GPU; XLA alone elsewhere) are timed as the bench times them
   (half-steps and step inside one jitted loop, unique bytes, fraction of the copy
   bandwidth), with the sparse ("SpMV") formulation beside them.

Usage:
    python benchmarks/dga_unstructured.py make OUT.vtu EDGE     (needs gmsh; EDGE in m)
    python benchmarks/dga_unstructured.py run MESH.vtu [STEPS]   (STEPS 0: timings only)
"""

from __future__ import annotations

import sys
import time

import numpy as np

import emjax as em
from emjax.bench.common import copy_bandwidth, on_gpu
from emjax.bench.dga import measure
from emjax.dga.complex import build
from emjax.dga.edges import EDGE_SLICE, edge_slices
from emjax.dga.mesh import read


def make(out: str, edge: float) -> None:
    from emjax.dga.generate import build_mesh

    t0 = time.perf_counter()
    mesh = build_mesh(em.CylinderMesh(radius=1.0, height=0.5, edge_length=edge,
                                      mesher="gmsh"))
    print(f"{mesh.num_tets} tets in {time.perf_counter() - t0:.0f} s; {mesh.quality()}")
    mesh.write(out)


def run(path: str, steps: int) -> None:
    def sim(kernels: str) -> em.DGATD:
        return em.DGATD(
            name="unstructured", mesh=em.MeshFile(path=path),
            sources=[em.MeshEdgeSource(position=(0.57, 0.18, 0.23),
                                       waveform=em.GaussianPulse(f0=190e6, fwidth=60e6))],
            probes=[em.Probe(name="p", positions=[(-0.58, 0.14, 0.31)], components=["Ez"])],
            steps=steps, kernels=kernels)

    traces, dt = {}, None
    for v in ("xla", "pallas") if steps > 0 else ():
        t0 = time.perf_counter()
        res = sim(v).run(progress=False)
        traces[v] = np.asarray(res["p"].data["Ez"])[:, 0]
        dt = res.metadata.get("dt", dt)
        print(f"solver, {v}: {steps} steps in {time.perf_counter() - t0:.1f} s "
              f"(set-up included)", flush=True)
    if traces:
        a, b = traces.values()
        print(f"probe Ez, Pallas against XLA: max |difference| / max |Ez| = "
              f"{np.abs(a - b).max() / np.abs(a).max():.2e} over {steps} steps "
              f"(peak {np.abs(a).max():.3e} V/m)", flush=True)

    mesh = read(path).renumbered()
    cx = build(mesh)
    counts = cx.tets_per_edge
    widths = edge_slices(counts)[1]
    print(f"{mesh.num_tets} tets; tets per edge {counts.min()}-{counts.max()} (mean "
          f"{counts.mean():.2f}); sliced edge table {widths.sum() * EDGE_SLICE / counts.sum():.3f}"
          f" of the codes, one table of the widest edge {counts.max() / counts.mean():.3f}",
          flush=True)
    bw = copy_bandwidth(1 << 30 if on_gpu() else 1 << 26)
    dt = dt or 1e-12
    m = measure(mesh, dt,
                sparse=cx.num_dofs <= 3e6,  # its NumPy set-up takes minutes beyond
                random_order=False, n=50, repeats=5 if on_gpu() else 2)
    print(f"{m['dofs']} DoFs, copy {bw / 1e12:.2f} TB/s, set-up {m['setup_s']:.0f} s")
    for v, r in m["kernels"].items():
        if "error" in r:
            print(f"  {v}: FAILED {r['error']}")
            continue
        nb = r["bytes"]
        sp = (f", {m['sparse_step_s'] / r['step_s']:.1f}x SpMV" if "sparse_step_s" in m
              else "")
        print(f"  {v}: Faraday {r['faraday_s'] * 1e3:.4f} ms "
              f"({nb['faraday'] / r['faraday_s'] / bw:.3f}), Ampere {r['ampere_s'] * 1e3:.4f} ms "
              f"({nb['ampere'] / r['ampere_s'] / bw:.3f}), step {r['step_s'] * 1e3:.4f} ms{sp}",
              flush=True)
    if "sparse_step_s" in m:
        print(f"  sparse (BCOO SpMV) step {m['sparse_step_s'] * 1e3:.4f} ms")


if __name__ == "__main__":
    verb, *args = sys.argv[1:]
    if verb == "make":
        make(args[0], float(args[1]))
    else:
        run(args[0], int(args[1]) if len(args) > 1 else 2000)
