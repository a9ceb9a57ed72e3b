"""Issue #20's speed experiments (``emjax bench dispersive`` is the record), 512^3
float32 FDTD3D (10-cell CPML, a z dipole, a probe):

- ``--fill sphere``: a sphere filling 5% of the cells, one-pole Debye (water-like:
  eps_inf 4.9, delta_eps 74, tau 8.3 ps), against the same sphere non-dispersive (eps_r
  4.9). Target: the dispersive run at >= 90% of the other's Gcells/s.
- ``--fill full``: the same Debye medium filling the whole grid (a box structure over
  the CPML too), against its bytes-per-cell model and the measured copy bandwidth
  (target: within 10%).

Variants: ``plain`` (the non-dispersive medium), ``debye`` (the tree's dispersive step,
box patches folded or in place as the layout says), ``debye-inplace`` (an experiment:
the box patches added after the update in place, with a run-time start as the CPML
slabs' per_face corrections, instead of folded into the update). Timing as in
``energy_cost.timed`` (``FDTDSolver.advance``, median of 3 chunks of 100 steps after a
compiling one). ``--hlo DIR`` writes the optimized HLO of a 2-step chunk;
``--profile`` runs one 2-step chunk for Nsight Compute instead of timing::

    ncu --profile-from-start off --clock-control none --csv --metrics \
        gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
        python benchmarks/dispersive_speed.py --out x --variants debye --profile

Usage (GPU machine): ``python benchmarks/dispersive_speed.py --out $OUT/disp.jsonl``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from energy_cost import record, timed


def scenario(dispersive: bool, n: int, fill: str = "sphere"):
    """``emjax bench dispersive``'s scenario (:mod:`emjax.bench.dispersive`), 400 steps."""
    from emjax.bench.dispersive import scenario as bench_scenario

    return bench_scenario(n, fill, dispersive, steps=400)


def use_inplace() -> None:
    """Patch the solver's step: box patches added in place after the update."""
    import jax
    import jax.numpy as jnp

    from emjax.constants import eps0
    from emjax.fdtd import dispersive
    from emjax.fdtd import solver as fs
    from emjax.fdtd.update3d import _add_patches, update_E, update_H

    def step(carry, consts, x, setup):
        lay = setup.layout
        E, H = carry.E, carry.H
        H_new, psi_H = update_H(E, H, consts["cH"], consts["pml"], carry.psi_H, lay, None)
        patches, disp = ([], [], []), []
        for aux, c, b in zip(carry.disp, consts["disp"], setup.dispersive.boxes,
                             strict=True):
            E_box = E[b.comp][b.slices]
            ps, js = dispersive._split(aux, c, b, E_box)
            g = dispersive.currents(ps, js, c)
            patches[b.comp].append((b.start, dispersive.patch(g, eps0 / setup.dt)))
            disp.append(dispersive.carried(ps, js, g, c, E_box))
        arrays = [[v for _, v in ps_] for ps_ in patches]
        arrays, disp, E = jax.lax.optimization_barrier((arrays, disp, E))
        patches = [[(st, v) for (st, _), v in zip(ps_, vs, strict=True)]
                   for ps_, vs in zip(patches, arrays, strict=True)]
        E_new, psi_E = update_E(E, H_new, consts["cE"], consts["pml"], carry.psi_E, lay, None)
        E_new = list(E_new)
        r = jnp.minimum(carry.n, 0)  # a traced zero: the start stays run-time data
        for comp in range(3):
            if patches[comp]:
                starts = [r + st[0] for st, _ in patches[comp]]
                E_new[comp] = _add_patches(E_new[comp], patches[comp], consts["cE"], comp,
                                           1.0, runtime=starts)
        E_new = tuple(E_new)
        if consts["src"]:
            E_new = fs.inject(E_new, consts["src"], x["src"])
        assert not setup.planewaves, "the experiment has no plane waves"
        return E_new, H_new, psi_E, psi_H, carry.aux, tuple(disp)

    fs._step3d = step


def hlo(sim, path: str) -> None:

    from emjax.fdtd.solver import FDTDSolver

    solver = FDTDSolver(sim, chunk=2)
    fn = solver._compile(2)
    text = fn.lower(*solver.chunk_args(solver.init_state(), 0, 2)).compile().as_text()
    Path(path).write_text(text)


def profile(sim) -> None:
    """One 2-step chunk inside cudaProfilerStart/Stop (``ncu --profile-from-start off``)."""
    from kernel_profile import profiled

    from emjax.fdtd.solver import FDTDSolver

    solver = FDTDSolver(sim, chunk=2)
    fn = solver._compile(2)
    profiled(fn, lambda: solver.chunk_args(solver.init_state(), 0, 2))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--n", type=int, default=512)
    p.add_argument("--fill", default="sphere", choices=("sphere", "full"))
    p.add_argument("--variants", default="plain,debye,plain,debye")
    p.add_argument("--hlo", default=None)
    p.add_argument("--profile", action="store_true", help="profile one chunk, no timing")
    a = p.parse_args()
    for variant in a.variants.split(","):
        if variant == "debye-inplace":
            use_inplace()
        sim = scenario(variant != "plain", a.n, a.fill)
        if a.hlo:
            hlo(sim, f"{a.hlo}/{variant}-{a.fill}-{a.n}.hlo.txt")
        if a.profile:
            profile(sim)
            continue
        record(a.out, f"{variant}-{a.fill}", a.n, timed(sim))


if __name__ == "__main__":
    main()
