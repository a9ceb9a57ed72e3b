"""Issue #18's speed check: the renovated tree against an older checkout, same card, same run.

Usage (on the GPU machine, the old tree exported to OLD_SRC, e.g. with
``git archive OLD src | tar x -C old``)::

    python benchmarks/renovation_check.py all --old old/src --new src --out $OUT

Each (tree, case) runs in a fresh interpreter with that tree first on ``sys.path``, old
and new alternating, so that both meet the same card state. The cases reach the
solvers only through names both trees have (``FDTDSolver.advance``,
``DGASolver.advance``, ``fdfd.solver.prepare`` and ``krylov``'s fused loop):

- ``cube``: seed001-cube, 512^3 float32 FDTD3D with a 10-cell CPML, CIS, a dipole,
  a probe and a DFT plane; median of 5 chunks of 100 steps; Gcells/s counting all cells.
- ``cylinder``: seed004-cylinder, the structured ring mesh of the seed's PEC cylinder
  at 20.25M DoFs (rings 71, layers 35: ``bench.dga.rings_for(20e6)``), float32, kernels
  "auto" (Pallas on a GPU), one edge source and one probe; median of 5 chunks of 100
  steps; ms per step.
- ``sphere``: seed000-sphere, FDFD 96^3 default solver (separable storage, COCG with
  the fast-diagonalization preconditioner) to 1e-6, one compiled while-loop; median
  of 5 solves; seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

CASES = ("cube", "cylinder", "sphere")


def _median_advance(solver, steps: int, repeats: int = 5) -> float:
    import jax

    state = solver.init_state()
    state, ys, ok = solver.advance(state, 0, steps)  # compiles
    jax.block_until_ready(state)
    times = []
    for k in range(repeats):
        t = time.perf_counter()
        state, ys, ok = solver.advance(state, (k + 1) * steps, steps)
        jax.block_until_ready((state, ys, ok))
        times.append(time.perf_counter() - t)
    return statistics.median(times) / steps


def cube(n: int = 512) -> dict:
    import emjax as em
    from emjax.fdtd.solver import FDTDSolver

    d, t = 1e-3, 10
    inner = n * d / 2 - t * d
    sim = em.FDTD3D(
        name=f"cube{n}", domain=em.Domain(shape=(n, n, n), spacing=d),
        boundary=em.CPML(thickness=t), steps=600,
        sources=[em.PointDipole(position=(0.1 * inner, 0.2 * inner, 0.0), polarization="z",
                                waveform=em.GaussianPulse(f0=10e9, fwidth=5e9))],
        monitors=[em.Probe(name="probe", positions=[(0.5 * inner, 0.0, 0.0)],
                           components=["Ez"]),
                  em.DFTMonitor(name="dft", center=(0, 0, 0), size=(2 * inner, 2 * inner, 0),
                                frequencies=[10e9], components=["Ez"])])
    s = _median_advance(FDTDSolver(sim, chunk=100), 100)
    return {"case": "cube", "size": f"{n}^3", "s_per_step": s, "Gcells_per_s": n**3 / s / 1e9}


def cylinder(rings: int = 71, layers: int = 35) -> dict:
    import emjax as em
    import emjax.dga.solver as dsolver
    from emjax.dga import structured

    mesh = structured.cylinder(1.0, 0.5, rings=rings, layers=layers).renumbered()
    dsolver.make_mesh = lambda sim: mesh  # the ring mesh in both trees
    sim = em.DGATD(
        name="cyl", mesh=em.CylinderMesh(radius=1.0, height=0.5, edge_length=0.05),
        steps=600,
        sources=[em.MeshEdgeSource(position=(0.3, 0.2, 0.25), direction=(0, 0, 1),
                                   waveform=em.GaussianPulse(f0=2e8, fwidth=1e8))],
        probes=[em.Probe(name="p", positions=[(0.5, 0.1, 0.25)], components=["Ez"])])
    t0 = time.perf_counter()
    solver = dsolver.DGASolver(sim, chunk=100)
    setup_s = time.perf_counter() - t0
    s = _median_advance(solver, 100)
    dofs = solver.setup.cx.num_dofs
    return {"case": "cylinder", "size": f"{dofs} DoFs", "ms_per_step": s * 1e3,
            "setup_s": setup_s, "GDoF_per_s": dofs / s / 1e9}


def sphere(n: int = 96) -> dict:
    import jax
    import jax.numpy as jnp

    import emjax.fdfd.solver as fsolver
    from emjax.fdfd import krylov, precond
    from emjax.validation.fdfd import sphere_scenario

    sim = sphere_scenario(0.32 / n, tol=1e-6)
    prep = fsolver.prepare(sim, storage="separable", preconditioner="fastdiag")
    mv, ops = fsolver._matvec(prep.ops), fsolver._kernel_ops(prep.ops)
    init, step = krylov.MAKERS["cocg"](mv, 20000, None, None, precond.from_ops)
    x0 = jnp.zeros_like(prep.b)
    run = step.lower(ops, init(ops, prep.b, x0, 1e-6), jnp.int32(1)).compile()
    times, its = [], 0
    for _ in range(6):
        s = init(ops, prep.b, x0, 1e-6)
        jax.block_until_ready(s)
        t = time.perf_counter()
        s, _ = run(ops, s, jnp.int32(20000))
        jax.block_until_ready(s)
        times.append(time.perf_counter() - t)
        its = int(s["it"])
    return {"case": "sphere", "size": f"{n}^3", "solve_s": statistics.median(times[1:]),
            "iterations": its}


SMALL = {"cube": (32,), "cylinder": (6, 3), "sphere": (40,)}
"""Sizes of a smoke run on a CPU (``--small``)."""


def _child(case: str, small: bool) -> None:
    import jax

    out = globals()[case](*(SMALL[case] if small else ()))
    out["device"] = jax.devices()[0].device_kind
    print("RESULT " + json.dumps(out), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="+", help=f"{CASES} or all")
    ap.add_argument("--old", required=True, help="src/ of the old tree")
    ap.add_argument("--new", default="src", help="src/ of the new tree")
    ap.add_argument("--out", default=".", help="folder for results.jsonl")
    ap.add_argument("--rounds", type=int, default=1, help="old/new pairs per case")
    ap.add_argument("--small", action="store_true", help="smoke-test sizes")
    a = ap.parse_args()
    cases = CASES if a.cases == ["all"] else a.cases
    out = Path(a.out) / "renovation.jsonl"
    for case in cases:
        for tag, src in (("old", a.old), ("new", a.new)) * a.rounds:
            code = (f"import sys; sys.path.insert(0, {str(Path(src).resolve())!r}); "
                    f"sys.argv = ['x']; import runpy; "
                    f"m = runpy.run_path({__file__!r}); m['_child']({case!r}, {a.small})")
            t = time.perf_counter()
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
            rec = json.loads(line[7:]) if line else {"case": case, "error": p.stderr[-1500:]}
            rec.update(tree=tag, wall_s=time.perf_counter() - t)
            print(json.dumps(rec), flush=True)
            with out.open("a") as f:
                f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
