"""FDFD benchmarks (seed 000): Krylov solve time, iterations and coefficient memory.

- ``seed000-sphere``: the seed's dielectric sphere at 64^3, 80^3, 96^3 on a GPU (64^3 on
  the CPU; ``fdfd_sizes``, from ``EMJAX_FDFD_SIZES=64,80,96``, overrides). At every
  size, beside the seed's Table 1 (Xeon E5405 CPU 337 / 851 / 1901 s; Tesla C1060 CAS 22
  / 49 / 115 s, CIS 21 / 42 / 99 s), CAS ("arrays") and CIS ("indices") storage, COCG on
  the symmetrized system in complex128 to relative residuals 1e-6 and 1e-3: solve time
  (compile excluded: the jitted loop is compiled once per candidate and reused for both
  tolerances), iterations, ms per iteration, coefficient memory; and the default solver
  (``default_separable_fastdiag_c128``: separable storage, one-stencil product, COCG
  preconditioned by the empty box's exact inverse). At the largest size (40^3 on the
  CPU, to exercise the code) every candidate: storage (arrays, indices, separable,
  separable with the one-stencil product) x method (cocg, cocg_sr) in complex128; on the
  one-stencil product also the reduced precisions ("mixed": complex64 coefficients,
  search direction and product with complex128 x, r and reductions; complex64 vectors
  with complex128 reductions; both capped at 4,000 iterations, as both diverged on the
  CPU at 40^3 and 64^3), BiCGSTAB on the seed and symmetrized systems and Jacobi scaling
  (complex64-inner iterative refinement: ``benchmarks/precond_study.py mixed``).
  ``fdfd_candidates=False``
  (``EMJAX_FDFD_CANDIDATES=0``) leaves the candidates out. Each candidate's records
  carry ``<tag>_floor_MB_per_iter``, the memory-traffic floor of one iteration (see
  :func:`bytes_per_iteration`), ``<tag>_floor_ms_per_iter`` at the measured copy
  bandwidth, ``<tag>_x_floor`` (measured ms per iteration over the floor),
  ``<tag>_xla_MB_per_iter`` (XLA's cost model of the compiled loop body: how well the
  iteration fused) and ``<tag>_true_residual`` (the complex128 residual of the returned
  x; reduced precisions report their recursive residual in ``_converged``). Measured on
  the CPU (40^3): Jacobi scaling needs 3.3 times the COCG iterations, BiCGSTAB 3.3
  (symmetrized) and 6.4 (seed system) times its products. The targets on an H100 at 96^3
  are 1e-6 in 0.6 s and 1e-3 in 0.3 s.
- ``seed000-head``: the synthetic head at 900 MHz (160 x 160 x 93; on the CPU the same
  head on cells twice as large, 80 x 80 x 47), COCG to 1e-6 with CIS, separable and
  one-stencil separable storage, and the latter preconditioned by fastdiag: time,
  iterations, memory, beside the seed's Table 2
  (4.6 min with CIS on the C1060); writes ``seed000-head-Ez.png`` (|Ez scattered| on
  the central xy plane) in the folder ``figures`` (``emjax bench --figures DIR``,
  default ``out/``).
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ..fdfd import krylov, operator, precond
from ..fdfd import solver as fsolver
from ..records import Measurement
from ..scenarios.sphere import sphere_scenario
from .common import copy_bandwidth, on_gpu

SEED_TABLE1 = {64: (337, 22, 21), 80: (851, 49, 42), 96: (1901, 115, 99)}
SEED_HEAD_MIN = 4.6

# Vector passes of one iteration when every elementwise update is fused next to the
# product (see krylov.make_cocg): (reads, writes) of N-unknown vectors.
#   cocg:     pass 1 reads r, p_old, writes p, A p; pass 2 reads x, p, r, A p, writes x, r
#   cocg_sr:  one pass reads r, w, p, s, x, writes p, s, x, r, w (w = A r)
#   bicgstab: reads r, p, v, rh / writes p, v; reads r, v / writes s, t; reads x, p, s,
#             t, rh / writes x, r
_PASSES = {"cocg": 10, "cocg_sr": 10, "bicgstab": 17}
_PRODUCTS = {"cocg": 1, "cocg_sr": 1, "bicgstab": 2}

_rec = Measurement
"""The rows below: ``_rec(case, size, metric, value, unit)`` on the current device."""


def bytes_per_iteration(cells: int, method: str, storage: str, precision: str,
                        index_bytes: int = 1) -> int:
    """Memory-traffic floor of one Krylov iteration in bytes (cells of the grid).

    Vectors: :data:`_PASSES` reads and writes of 3 unknowns per cell, 16 B each in
    complex128, 8 B in complex64; "mixed" keeps x and r in complex128 and p, A p in
    complex64 (cocg: 6 of the 10 passes at 16 B, 4 at 8 B). Coefficients, read once per
    product: CAS 15 complex per cell, CIS 6 uint16 indices per cell (the tables stay in
    cache), separable 3 indices of ``index_bytes`` per cell. Neighbour reads of the
    stencil are assumed to hit in cache.
    """
    c = 16 if precision == "complex128" else 8
    if precision == "mixed":
        vec = 3 * cells * (6 * 16 + 4 * 8)
    else:
        vec = 3 * cells * _PASSES[method] * c
    coef = {"arrays": 15 * c, "indices": 12, "separable": 3 * index_bytes,
            "separable_stencil": 3 * index_bytes}[storage]
    return vec + _PRODUCTS[method] * cells * coef


def _matvec(prep, storage):
    if storage == "separable_stencil":
        return operator.matvec_sep_stencil
    if storage == "separable":  # H formed as arrays between the two curls
        return operator.matvec_sep
    return fsolver._matvec(prep.ops)


def _xla_bytes(compiled) -> float:
    """XLA's bytes-accessed estimate of a compiled loop (body counted once), or NaN."""
    try:
        ca = compiled.cost_analysis()
        ca = ca[0] if isinstance(ca, list | tuple) else ca
        return float(ca.get("bytes accessed", np.nan))
    except Exception:  # the cost model is a diagnostic; no backend is obliged to have it
        return float("nan")


def timed_solve(prep, *, method="cocg", tols=(1e-6,), max_iter=20000, reduce_dtype=None,
                dir_dtype=None, matvec=None, b=None, ops=None):
    """Per tolerance (seconds, iterations, converged, x), plus compile seconds and XLA's
    bytes per iteration: one fused ``while_loop`` solve from zero, compiled once (ahead
    of time, so the cost model and the timed runs share one executable)."""
    maker = krylov.MAKERS[method]
    mv = matvec or fsolver._matvec(prep.ops)
    ops = ops if ops is not None else fsolver._kernel_ops(prep.ops)
    b = prep.b if b is None else b
    if "pc" in ops:  # prepared with preconditioner="fastdiag"
        init, step = maker(mv, max_iter, reduce_dtype, dir_dtype, precond.from_ops)
    else:
        init, step = maker(mv, max_iter, reduce_dtype, dir_dtype)
    x0 = jnp.zeros_like(b)
    t = time.perf_counter()
    s = init(ops, b, x0, tols[0])
    run = step.lower(ops, s, jnp.int32(1)).compile()
    compile_s = time.perf_counter() - t
    xla = _xla_bytes(run)
    out = []
    for tol in tols:
        s = init(ops, b, x0, tol)
        jax.block_until_ready(s)
        t = time.perf_counter()
        s, _ = run(ops, s, jnp.int32(max_iter))
        jax.block_until_ready(s)
        out.append((time.perf_counter() - t, int(s["it"]), int(s["flag"]) == krylov.CONVERGED,
                    s["x"]))
    return out, compile_s, xla


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


def seed000_sphere(fdfd_sizes: tuple[int, ...] | None = None,
                   fdfd_candidates: bool = True) -> list[Measurement]:
    """See the module docstring. ``fdfd_sizes``: cells per side of the Table 1 runs
    (default 64, 80, 96 on a GPU, 64 on the CPU); ``fdfd_candidates=False`` leaves the
    candidates out. The command line sets both from ``EMJAX_FDFD_SIZES`` and
    ``EMJAX_FDFD_CANDIDATES``."""
    case = "seed000-sphere"
    sizes = fdfd_sizes or ((64, 80, 96) if on_gpu() else (64,))
    bw = copy_bandwidth(nbytes=(2 << 30) if on_gpu() else (256 << 20))
    out = [_rec(case, "-", "copy_bandwidth", bw / 1e9, "GB/s")]
    for n in sizes:
        sz = f"{n}^3"
        sim = sphere_scenario(0.32 / n, preconditioner="none")
        cpu_s, cas_s, cis_s = SEED_TABLE1.get(n, (np.nan,) * 3)
        out += [_rec(case, sz, "seed_cpu_time", cpu_s, "s"),
                _rec(case, sz, "seed_gpu_cas_time", cas_s, "s"),
                _rec(case, sz, "seed_gpu_cis_time", cis_s, "s")]
        mem = {}
        for storage in ("arrays", "indices"):
            prep = _quiet(fsolver.prepare, sim, storage=storage)
            mem[storage] = prep.coeff_bytes
            out.append(_rec(case, sz, f"{storage}_coeff_memory", prep.coeff_bytes / 2**20,
                            "MiB"))
            out += _candidate(case, sz, sim, bw, f"{storage}_cocg_c128", prep, storage,
                              "cocg", "complex128")
            del prep
        out.append(_rec(case, sz, "cis_over_cas_memory", mem["indices"] / mem["arrays"], ""))
        # the default solver: separable storage, COCG preconditioned by fastdiag
        prep = _quiet(fsolver.prepare, sim, storage="separable", preconditioner="fastdiag")
        out += _candidate(case, sz, sim, bw, "default_separable_fastdiag_c128", prep,
                          "separable_stencil", "cocg", "complex128")
        del prep
    if fdfd_candidates:
        n = sizes[-1] if on_gpu() or fdfd_sizes else 40
        out += _candidates(case, n, bw)
    return out


def _candidate(case, sz, sim, bw, tag, prep, storage, method, precision, *, hi=None,
               reduce_dtype=None, dir_dtype=None, ops=None, tols=(1e-6, 1e-3),
               max_iter=20000) -> list[Measurement]:
    """Records of one candidate: per tolerance time, iterations, ms/iteration, converged,
    true residual; once: floor, XLA bytes, compile time."""
    cells = int(np.prod(sim.domain.cells))
    ib = 1
    if "ki" in prep.ops:
        ib = prep.ops["ki"].dtype.itemsize
    floor = bytes_per_iteration(cells, method, storage, precision, ib)
    hi = hi or prep
    b = hi.b if dir_dtype is not None else prep.b  # mixed: complex128 b, x and r
    runs, comp, xla = timed_solve(prep, method=method, tols=tols, reduce_dtype=reduce_dtype,
                                  dir_dtype=dir_dtype, matvec=_matvec(prep, storage), b=b,
                                  ops=ops, max_iter=max_iter)
    kh = fsolver._kernel_ops(hi.ops)
    mvh = fsolver._matvec(hi.ops)
    out = [_rec(case, sz, f"{tag}_floor_MB_per_iter", floor / 1e6, "MB"),
           _rec(case, sz, f"{tag}_floor_ms_per_iter", 1e3 * floor / bw, "ms"),
           _rec(case, sz, f"{tag}_xla_MB_per_iter", xla / 1e6, "MB"),
           _rec(case, sz, f"{tag}_compile", comp, "s")]
    for tol, (t, it, ok, x) in zip(tols, runs, strict=True):
        x = x.astype(hi.b.dtype)
        true = float(jnp.linalg.norm(hi.b - mvh(kh, x)) / jnp.linalg.norm(hi.b))
        ms = 1e3 * t / max(it, 1)
        k = f"{tag}_{tol:g}"
        out += [_rec(case, sz, f"{k}_time", t, "s"),
                _rec(case, sz, f"{k}_iterations", it, ""),
                _rec(case, sz, f"{k}_ms_per_iter", ms, "ms"),
                _rec(case, sz, f"{k}_x_floor", ms / (1e3 * floor / bw), ""),
                _rec(case, sz, f"{k}_converged", ok, ""),
                _rec(case, sz, f"{k}_true_residual", true, "")]
    return out


def _candidates(case, n, bw) -> list[Measurement]:
    """Every storage x method x precision candidate at n^3 (see the module docstring)."""
    sz = f"{n}^3"
    sim = sphere_scenario(0.32 / n, preconditioner="none")
    out = []
    c64 = jnp.complex64
    for storage in ("arrays", "indices", "separable", "separable_stencil"):
        st = "separable" if storage == "separable_stencil" else storage
        hi = _quiet(fsolver.prepare, sim, storage=st)
        lo = _quiet(fsolver.prepare, sim, storage=st, precision="complex64")
        out.append(_rec(case, sz, f"{storage}_coeff_memory", hi.coeff_bytes / 2**20, "MiB"))
        for method in ("cocg", "cocg_sr"):
            out += _candidate(case, sz, sim, bw, f"{storage}_{method}_c128", hi, storage,
                              method, "complex128")
        if storage == "separable_stencil":
            # Reduced precision, capped at 4,000 iterations (about twice what complex128
            # needs): both diverged on the CPU at 64^3 (the precision note).
            # "mixed": complex64 coefficients, p and A p; complex128 x, r, scalars.
            out += _candidate(case, sz, sim, bw, f"{storage}_cocg_mixed", lo, storage, "cocg",
                              "mixed", hi=hi, dir_dtype=c64, ops=fsolver._kernel_ops(lo.ops),
                              max_iter=4000)
            # complex64 vectors throughout, complex128 reductions
            out += _candidate(case, sz, sim, bw, f"{storage}_cocg_c64_f64reduce", lo,
                              storage, "cocg", "complex64", hi=hi, reduce_dtype=jnp.complex128,
                              tols=(1e-3,), max_iter=4000)
        del hi, lo
    runs = [
        ("indices_bicgstab_seed_system", dict(storage="indices", symmetrize=False)),
        ("indices_bicgstab_symmetrized", dict(storage="indices")),
    ]
    for tag, kw in runs:
        prep = _quiet(fsolver.prepare, sim, **kw)
        out += _candidate(case, sz, sim, bw, tag, prep, "indices", "bicgstab", "complex128",
                          tols=(1e-6,))
        out.append(_rec(case, sz, f"{tag}_1e-06_matvecs",
                        next(r["value"] for r in out[::-1]
                             if r["metric"] == f"{tag}_1e-06_iterations") * 2, ""))
    prep = _quiet(fsolver.prepare, sim, storage="indices", preconditioner="jacobi")
    out += _candidate(case, sz, sim, bw, "indices_cocg_jacobi", prep, "indices", "cocg",
                      "complex128", tols=(1e-6,))
    # (complex64 inner solves inside complex128 iterative refinement: benchmarks/precond_study.py)
    return out


def seed000_head(sim=None, figures: str | Path = "out") -> list[Measurement]:
    """See the module docstring; ``sim`` replaces the built-in head (for smoke tests);
    the figure goes into the folder ``figures``."""
    from ..scenarios import load_builtin

    case = "seed000-head"
    if sim is None:
        sim = load_builtin("head-900mhz")
    if not on_gpu() and sim.domain.cells[0] > 80:
        d = sim.domain
        sim = sim.model_copy(update={"domain": d.model_copy(update={
            "shape": (80, 80, 47), "spacing": tuple(2 * s for s in d.spacing3)})})
    n = sim.domain.cells
    sz = "x".join(map(str, n))
    out = [_rec(case, sz, "seed_gpu_cis_time", SEED_HEAD_MIN * 60, "s")]
    x = prep = None
    for storage in ("indices", "separable", "separable_stencil", "fastdiag"):
        if storage == "fastdiag":  # the stencil product, preconditioned
            prep = _quiet(fsolver.prepare, sim, storage="separable", preconditioner="fastdiag")
        elif storage != "separable_stencil":  # the stencil shares separable's set-up
            prep = _quiet(fsolver.prepare, sim, storage=storage, preconditioner="none")
        runs, comp, _ = timed_solve(
            prep, tols=(1e-6,), max_iter=sim.solver.max_iter,
            matvec=_matvec(prep, "separable_stencil" if storage == "fastdiag" else storage))
        t, it, ok, x = runs[0]
        out += [_rec(case, sz, f"{storage}_cocg_1e-06_time", t, "s"),
                _rec(case, sz, f"{storage}_cocg_1e-06_iterations", it, ""),
                _rec(case, sz, f"{storage}_cocg_1e-06_ms_per_iter", 1e3 * t / max(it, 1), "ms"),
                _rec(case, sz, f"{storage}_cocg_1e-06_converged", ok, ""),
                _rec(case, sz, f"{storage}_coeff_memory", prep.coeff_bytes / 2**20, "MiB"),
                _rec(case, sz, f"{storage}_compile", comp, "s"),
                _rec(case, sz, f"{storage}_speedup_over_seed", SEED_HEAD_MIN * 60 / t, "")]
    # the symmetrized unknown y = sqrt(s_x s_y s_z) E: back to E for the figure
    kops = fsolver._kernel_ops(prep.ops)
    e = x / operator._sep_factors(kops, x.shape[1:])[1]
    path = Path(figures) / "seed000-head-Ez.png"
    plot_ez(prep, np.asarray(e), path)
    out.append(_rec(case, sz, f"figure {path}", 1, ""))
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
