"""FDFD benchmarks (seed 000): Krylov solve time, iterations and coefficient memory.

- ``seed000-sphere``: the seed's dielectric sphere at 64^3, 80^3, 96^3 (on the CPU only
  64^3). For each storage (CAS "arrays", CIS "indices", and the "separable" product
  with no 3D curl coefficients), COCG on the symmetrized system to relative residuals
  1e-6 and 1e-3: solve time (compile excluded: one warm-up of the jitted loop on the
  same shapes), iterations, ms per iteration, coefficient memory. Beside them the
  seed's Table 1 (Xeon E5405 CPU 337 / 851 / 1901 s; Tesla C1060 CAS 22 / 49 / 115 s,
  CIS 21 / 42 / 99 s) as ``seed_*`` records. At every size also: BiCGSTAB on the seed
  system (no symmetrization) and on the symmetrized one, COCG with Jacobi scaling,
  complex64 storage with complex128 reductions, and complex64-inner iterative
  refinement, each to 1e-6 (iterations, products, time, converged).
- ``seed000-head``: the synthetic head at 900 MHz (160 x 160 x 93; on the CPU the same
  head on cells twice as large, 80 x 80 x 47), COCG to 1e-6 with CIS and separable
  storage: time, iterations, memory, beside the seed's Table 2 (4.6 min with CIS on the
  C1060); writes ``out/seed000-head-Ez.png``, |Ez scattered| on the central xy plane.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ..fdfd import krylov
from ..fdfd import solver as fsolver
from ..validation.fdfd import sphere_scenario
from .common import device_name, on_gpu

SEED_TABLE1 = {64: (337, 22, 21), 80: (851, 49, 42), 96: (1901, 115, 99)}
SEED_HEAD_MIN = 4.6


def _rec(case, size, metric, value, unit):
    return {"case": case, "size": size, "metric": metric, "value": float(value), "unit": unit,
            "device": device_name()}


def timed_solve(prep, *, method="cocg", tol=1e-6, max_iter=20000, reduce_dtype=None):
    """(seconds, iterations, converged, compile seconds) of one fused while_loop solve."""
    maker = {"cocg": krylov.make_cocg, "bicgstab": krylov.make_bicgstab}[method]
    mv = fsolver._matvec(prep.ops)
    ops = fsolver._kernel_ops(prep.ops)
    init, step = maker(mv, max_iter, float(tol), reduce_dtype)
    x0 = jnp.zeros_like(prep.b)
    t = time.perf_counter()
    s = init(ops, prep.b, x0)
    s, _ = step(ops, s, jnp.int32(1))
    jax.block_until_ready(s)
    compile_s = time.perf_counter() - t
    s = init(ops, prep.b, x0)
    jax.block_until_ready(s)
    t = time.perf_counter()
    s, _ = step(ops, s, jnp.int32(max_iter))
    jax.block_until_ready(s)
    return (time.perf_counter() - t, int(s["it"]), int(s["flag"]) == krylov.CONVERGED,
            compile_s)


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


def seed000_sphere(sizes=None, variants: bool = True) -> list[dict]:
    case = "seed000-sphere"
    sizes = sizes or ((64, 80, 96) if on_gpu() else (64,))
    out = []
    for n in sizes:
        sz = f"{n}^3"
        sim = sphere_scenario(0.32 / n)
        cpu_s, cas_s, cis_s = SEED_TABLE1.get(n, (np.nan,) * 3)
        out += [_rec(case, sz, "seed_cpu_time", cpu_s, "s"),
                _rec(case, sz, "seed_gpu_cas_time", cas_s, "s"),
                _rec(case, sz, "seed_gpu_cis_time", cis_s, "s")]
        for storage in ("arrays", "indices", "separable"):
            prep = _quiet(fsolver.prepare, sim, storage=storage)
            out.append(_rec(case, sz, f"{storage}_coeff_memory", prep.coeff_bytes / 2**20,
                            "MiB"))
            for tol in (1e-6, 1e-3):
                t, it, ok, comp = timed_solve(prep, tol=tol)
                tag = f"{storage}_cocg_{tol:g}"
                out += [_rec(case, sz, f"{tag}_time", t, "s"),
                        _rec(case, sz, f"{tag}_iterations", it, ""),
                        _rec(case, sz, f"{tag}_ms_per_iter", 1e3 * t / max(it, 1), "ms"),
                        _rec(case, sz, f"{tag}_converged", ok, "")]
            out.append(_rec(case, sz, f"{storage}_compile", comp, "s"))
            del prep
        if variants:
            out += _variants(sim, sz, case)
    return out


def _variants(sim, sz, case) -> list[dict]:
    out = []
    runs = [
        ("bicgstab_seed_system", dict(storage="indices", symmetrize=False), "bicgstab", None),
        ("bicgstab_symmetrized", dict(storage="indices"), "bicgstab", None),
        ("cocg_jacobi", dict(storage="indices", preconditioner="jacobi"), "cocg", None),
        ("cocg_c64_f64reduce", dict(storage="separable", precision="complex64"), "cocg",
         jnp.complex128),
        ("cocg_c64", dict(storage="separable", precision="complex64"), "cocg", None),
    ]
    for name, kw, method, rd in runs:
        prep = _quiet(fsolver.prepare, sim, **kw)
        t, it, ok, _ = timed_solve(prep, method=method, tol=1e-6, reduce_dtype=rd)
        mvs = it * krylov.MATVECS_PER_ITER[method]
        out += [_rec(case, sz, f"{name}_time", t, "s"),
                _rec(case, sz, f"{name}_iterations", it, ""),
                _rec(case, sz, f"{name}_matvecs", mvs, ""),
                _rec(case, sz, f"{name}_converged", ok, "")]
        del prep
    # complex64 inner solves inside complex128 iterative refinement
    hi = _quiet(fsolver.prepare, sim, storage="separable")
    lo = _quiet(fsolver.prepare, sim, storage="separable", precision="complex64")
    mv = fsolver._matvec(hi.ops)
    kh, kl = fsolver._kernel_ops(hi.ops), fsolver._kernel_ops(lo.ops)
    krylov.refine(mv, kh, kl, hi.b, tol=1e-6, inner_tol=1e-3, max_iter=50)  # compile
    t = time.perf_counter()
    r = krylov.refine(mv, kh, kl, hi.b, tol=1e-6, inner_tol=1e-3)
    jax.block_until_ready(r.x)
    t = time.perf_counter() - t
    out += [_rec(case, sz, "refine_c64_time", t, "s"),
            _rec(case, sz, "refine_c64_iterations", r.iterations, ""),
            _rec(case, sz, "refine_c64_converged", r.flag == krylov.CONVERGED, "")]
    return out


def seed000_head() -> list[dict]:
    from ..scenarios import load_builtin

    case = "seed000-head"
    sim = load_builtin("head-900mhz")
    if not on_gpu():
        d = sim.domain
        sim = sim.model_copy(update={"domain": d.model_copy(update={
            "shape": (80, 80, 47), "spacing": tuple(2 * s for s in d.spacing3)})})
    n = sim.domain.cells
    sz = "x".join(map(str, n))
    out = [_rec(case, sz, "seed_gpu_cis_time", SEED_HEAD_MIN * 60, "s")]
    prep = None
    for storage in ("indices", "separable"):
        prep = _quiet(fsolver.prepare, sim, storage=storage)
        t, it, ok, comp = timed_solve(prep, tol=1e-6, max_iter=sim.solver.max_iter)
        out += [_rec(case, sz, f"{storage}_cocg_1e-06_time", t, "s"),
                _rec(case, sz, f"{storage}_cocg_1e-06_iterations", it, ""),
                _rec(case, sz, f"{storage}_cocg_1e-06_converged", ok, ""),
                _rec(case, sz, f"{storage}_coeff_memory", prep.coeff_bytes / 2**20, "MiB"),
                _rec(case, sz, f"{storage}_compile", comp, "s")]
    e, _ = fsolver.solve(prep, tol=1e-6, chunk=sim.solver.max_iter)
    path = Path("out") / "seed000-head-Ez.png"
    plot_ez(prep, np.asarray(e), path)
    return out


def plot_ez(prep, e, path) -> Path:
    """|Ez scattered| on the central xy plane, as the seed's Figure 4."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    g = prep.st.grid
    k = g.shape[2] // 2
    x, y, _ = g.coords("Ez")
    fig, ax = plt.subplots(figsize=(6, 5))
    im = ax.imshow(np.abs(e[2, :, :, k]).T, origin="lower", cmap="jet",
                   extent=(x[0] * 100, x[-1] * 100, y[0] * 100, y[-1] * 100))
    ax.set_xlabel("x (cm)")
    ax.set_ylabel("y (cm)")
    ax.set_title(f"|E_scat,z| (V/m), z = {g.coords('Ez')[2][k] * 100:.2f} cm, "
                 f"{prep.sim.frequency / 1e6:.0f} MHz")
    fig.colorbar(im, ax=ax)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


CASES = {"seed000-sphere": seed000_sphere, "seed000-head": seed000_head}
