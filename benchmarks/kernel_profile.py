"""Per-kernel times and DRAM bytes of one solver step, for Nsight Compute (GPU only).

Builds one case, runs it once to compile and warm up, then runs it again between
cudaProfilerStart/Stop so that ``ncu --profile-from-start off`` profiles exactly the
kernels of that call. Without ncu it prints the wall time of the call. The optimized
HLO of the call goes to ``$OUT/<case>.hlo.txt`` so kernel names map to fusions.

Usage:
  ncu --profile-from-start off --clock-control none --csv \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
      python benchmarks/kernel_profile.py fdtd-mri 5 [ALIGN or AX,AY,AZ]
  ... kernel_profile.py cocg 96          (separable stencil COCG, 5 iterations)
  ... kernel_profile.py fastdiag 96      (one fastdiag preconditioner application)
  ... kernel_profile.py dga 20e6         (one DGATD step, default layout)
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np


def _cudart():
    names = ["libcudart.so.12", "libcudart.so.13", "libcudart.so"]
    for root in sys.path:
        names += glob.glob(os.path.join(root, "nvidia", "cu*", "lib", "libcudart.so*"))
        names += glob.glob(os.path.join(root, "nvidia", "cuda_runtime", "lib", "libcudart.so*"))
    for n in names:
        try:
            return ctypes.CDLL(n)
        except OSError:
            continue
    return None


def profiled(fn, make_args):
    """Warm ``fn(*make_args())`` up, then run it once inside the profiler range (fresh
    arguments each call: the solvers donate their state)."""
    jax.block_until_ready(fn(*make_args()))
    args = jax.block_until_ready(make_args())
    rt = _cudart()
    if rt is not None:
        rt.cudaProfilerStart()
    t = time.perf_counter()
    out = jax.block_until_ready(fn(*args))
    wall = time.perf_counter() - t
    if rt is not None:
        rt.cudaProfilerStop()
    print(f"profiled call: {wall * 1e3:.3f} ms (cudart {'found' if rt else 'missing'})",
          flush=True)
    return out


def dump(name, compiled):
    out = os.environ.get("OUT", "/tmp")
    with open(os.path.join(out, f"{name}.hlo.txt"), "w") as fh:
        fh.write(compiled.as_text())


def _mri_coil(t: int, align, strategy: str = "combined"):
    """(mri-coil with CPML t around the seed's interior, the interior's shape); slabs
    stored a multiple of ``align`` (3 ints) cells thick, or the module's default (None).
    On a CPU (a smoke run of this script) the interior is cut to 52 x 55 x 54."""
    from emjax.bench.fdtd3d import SEED001_MRI_INTERIOR
    from emjax.fdtd import cpml
    from emjax.scenarios.mri import mri_coil

    if align is not None:
        cpml.SLAB_ALIGN = tuple(align)
    small = jax.default_backend() == "cpu"
    interior, d = ((52, 55, 54), 24e-3) if small else (SEED001_MRI_INTERIOR, 4e-3)
    sim = mri_coil(shape=tuple(n + 2 * t for n in interior), spacing=d, pml=t,
                   strategy=strategy)
    return sim, interior


def fdtd_mri_time(t: int, align=None, steps: int = 50):
    """Gcells/s (non-PML cells, as the seed counts) of mri-coil with CPML t (strategy from
    EMJAX_CPML_STRATEGY)."""
    from emjax.bench.common import time_chunks
    from emjax.fdtd import cpml
    from emjax.fdtd.solver import FDTDSolver

    sim, interior = _mri_coil(t, align, os.environ.get("EMJAX_CPML_STRATEGY", "combined"))
    s_step, _, _ = time_chunks(FDTDSolver(sim, chunk=steps), steps, 3)
    print(f"mri-coil CPML {t} {sim.cpml_strategy} align {cpml.SLAB_ALIGN} grid {sim.domain.cells}: "
          f"{np.prod(interior) / s_step / 1e9:.2f} Gcells/s non-PML", flush=True)


def fdtd_mri(t: int, align=None, steps: int = 2):
    """Profile one chunk of ``steps`` steps (strategy from EMJAX_CPML_STRATEGY)."""
    from emjax.fdtd.solver import FDTDSolver

    sim, _ = _mri_coil(t, align, os.environ.get("EMJAX_CPML_STRATEGY", "combined"))
    solver = FDTDSolver(sim, chunk=steps)
    fn = solver._compile(steps)

    def make_args():
        return solver.chunk_args(solver.init_state(), 0, steps)

    dump(f"fdtd-mri-{t}-{sim.cpml_strategy}", fn.lower(*make_args()).compile())
    profiled(fn, make_args)


def cocg(n: int, iters: int = 5):
    from emjax.bench.fdfd import _quiet, sphere_scenario
    from emjax.fdfd import krylov, operator
    from emjax.fdfd import solver as fsolver

    sim = sphere_scenario(0.32 / n)
    prep = _quiet(fsolver.prepare, sim, storage="separable")
    ops = fsolver._kernel_ops(prep.ops)
    init, step = krylov.make_cocg(operator.matvec_sep_stencil, 1000)
    s = init(ops, prep.b, jnp.zeros_like(prep.b), 1e-12)
    run = step.lower(ops, s, jnp.int32(iters)).compile()
    dump(f"cocg-{n}", run)
    profiled(run, lambda: (ops, s, jnp.int32(iters)))


def fastdiag(n: int):
    """One application of the fastdiag preconditioner at n^3 (the sphere's operands)."""
    from emjax.bench.fdfd import _quiet, sphere_scenario
    from emjax.fdfd import precond
    from emjax.fdfd import solver as fsolver

    prep = _quiet(fsolver.prepare, sphere_scenario(0.32 / n), storage="separable",
                  preconditioner="fastdiag")
    ops = fsolver._kernel_ops(prep.ops)
    fn = jax.jit(precond.from_ops)
    dump(f"fastdiag-{n}", fn.lower(ops, prep.b).compile())
    profiled(fn, lambda: (ops, prep.b))


def cocg_time(n: int):
    """Seconds and iterations of separable-stencil COCG to 1e-6 and 1e-3 at n^3 (compile
    excluded), as ``emjax bench seed000-sphere`` times its fastest candidate."""
    from emjax.bench.fdfd import _quiet, sphere_scenario, timed_solve
    from emjax.fdfd import operator
    from emjax.fdfd import solver as fsolver

    prep = _quiet(fsolver.prepare, sphere_scenario(0.32 / n), storage="separable")
    out, _, xla = timed_solve(prep, tols=(1e-6, 1e-3),
                              matvec=operator.matvec_sep_stencil)
    for tol, (sec, its, ok, _) in zip((1e-6, 1e-3), out, strict=True):
        print(f"cocg {n}^3 to {tol:g}: {sec:.3f} s, {its} iterations, "
              f"{sec / its * 1e3:.3f} ms/iter, converged {ok}; XLA bytes/iter {xla / 1e9:.2f} GB",
              flush=True)


def dga(dofs: float):
    from emjax.bench.dga import rings_for
    from emjax.constants import c0, eps0, mu0
    from emjax.dga import step as kern
    from emjax.dga import structured
    from emjax.dga.complex import build
    from emjax.dga.layout import DEFAULT_VARIANT, kernel_arrays, make_layout
    from emjax.dga.mass import assemble

    rings, layers = rings_for(int(dofs))
    cx = build(structured.cylinder(1.0, 0.5, rings=rings, layers=layers))
    ops = assemble(cx, np.full(cx.num_tets, eps0), np.full(cx.num_tets, mu0))
    lay = make_layout(ops, os.environ.get("EMJAX_DGA_VARIANT", DEFAULT_VARIANT))
    K = kernel_arrays(ops, lay, 0.3 / rings / c0, np.float32)
    K.pop("gpos", None)
    K = jax.device_put(K)
    spec = lay.spec
    rng = np.random.default_rng(0)
    u = jnp.asarray(lay.u_from_canonical(rng.standard_normal(ops.nu).astype(np.float32)))
    f = jnp.asarray(lay.f_from_canonical(
        rng.standard_normal((4, cx.num_tets)).astype(np.float32)))

    @jax.jit
    def step(u, f, K):
        f2 = kern.faraday(u, f, K, spec)
        return kern.ampere(u, f2, K, spec), f2

    dump(f"dga-{cx.num_dofs}", step.lower(u, f, K).compile())
    print(f"dga: {cx.num_dofs} DoFs, {cx.num_tets} tets, variant {spec}", flush=True)
    profiled(step, lambda: (u, f, K))


if __name__ == "__main__":
    case, *rest = sys.argv[1:]
    if case in ("fdtd-mri-time", "fdtd-mri"):
        al = tuple(int(a) for a in rest[1].split(",")) if len(rest) > 1 else None
        al = al * 3 if al is not None and len(al) == 1 else al
        (fdtd_mri_time if case == "fdtd-mri-time" else fdtd_mri)(int(rest[0]), al)
    elif case == "cocg-time":
        cocg_time(int(rest[0]))
    elif case == "cocg":
        cocg(int(rest[0]))
    elif case == "fastdiag":
        fastdiag(int(rest[0]))
    elif case == "dga":
        dga(float(rest[0]))
    else:
        raise SystemExit(f"unknown case {case!r}: fdtd-mri, fdtd-mri-time, cocg, cocg-time, "
                         "fastdiag or dga")
