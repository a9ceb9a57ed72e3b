"""Drive an FDFD3D scenario: set-up, Krylov solve, fields, far field and RCS (seed 000).

Time convention e^{+j omega t} throughout (X(f) = int x(t) e^{-j 2 pi f t} dt, outgoing
waves e^{-j k r}), the same as :mod:`emjax.analysis.nf2ff`.

``run(sim)`` returns :class:`emjax.results.Results` with one ``DFTMonitor``-kind entry
``"scattered"`` holding the scattered E and H phasors on their Yee positions (shape
(1, nx, ny, nz) each, V/m and A/m; the leading axis is the single frequency), and the
metadata: iterations, residual history, solve time, coefficient memory, and the E- and
H-plane bistatic RCS (``rcs_theta_deg``, ``rcs_E_dBsm``, ``rcs_H_dBsm``) from the
scattered fields sampled on a closed box between the scatterers and the PML.

A stopped solve restarts from its last iterate: every ``checkpoint_every`` iterations,
and when SIGINT or SIGTERM stops the solve, the current iterate and the residual
history are written atomically to ``checkpoint_path`` (:mod:`emjax.fdfd.checkpoint`);
``resume=path`` restarts the Krylov method from it. ``solver.max_iter`` counts the
iterations before the resume too.

The metadata split the time: ``setup_time_s`` (coefficients, right-hand side,
preconditioner), ``compile_time_s`` (JAX tracing and compiling during the solve, from
:func:`emjax.driver.compile_cache.compile_counter`), ``solve_time_s`` (the rest of the
solve) and ``compiles``. A scenario with several ``frequencies`` runs
:func:`emjax.fdfd.sweep.run_sweep`.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ..constants import c0, eps0, mu0
from ..driver.backend import on_demand_pool
from ..driver.compile_cache import cache_report, compile_counter, mark
from ..driver.environment import environment
from ..driver.host import to_host
from ..driver.loop import StopFlag, check_every, progress_bar
from ..driver.memory import refuse_if_too_large
from ..driver.precision import needs_x64, require_x64
from ..driver.stages import Stages
from ..errors import ConvergenceError, EmjaxWarning, RunInterrupted, SetupError
from . import incident, krylov, operator, precond, setup
from .checkpoint import load_checkpoint, save_checkpoint
from .farfield import bistatic_rcs, far_field, huygens_box  # noqa: F401  (the solver's API)


@dataclass(frozen=True)
class KrylovPlan:
    """The Krylov solve as the scenario asks for it, read once in :func:`prepare`:
    method ("cocg", "cocg_sr", "bicgstab"), relative-residual tolerance, most
    iterations, iterations per host round trip (progress, checkpoints)."""

    method: str
    tol: float
    max_iter: int
    chunk: int


@dataclass
class Prepared:
    """A scenario turned into device arrays, ready to solve."""

    sim: object
    st: setup.FDFDSetup
    ops: dict  # operator pytree given to the Krylov product
    b: jax.Array  # right-hand side of the solved system
    b_seed: jax.Array  # right-hand side of the seed system G x = b
    e_inc: jax.Array  # incident E and H on the grid (:func:`emjax.fdfd.incident.rhs`)
    h_inc: jax.Array
    coeff_bytes: int
    setup_time: float
    storage: str = "indices"  # as resolved from "auto"
    preconditioner: str = "none"
    krylov: KrylovPlan | None = None
    stages: dict = field(default_factory=dict)  # s per set-up stage (driver.stages)


def prepare(sim, *, storage: str | None = None, precision: str | None = None,
            preconditioner: str | None = None, symmetrize: bool | None = None,
            geo: setup.Geometry | None = None) -> Prepared:
    """Coefficients (CAS, CIS or separable), right-hand side, scaling and preconditioner
    for ``sim``'s solve; arguments left None (or "auto") follow the scenario, with "auto"
    resolved as :attr:`FDFD3D.resolved_storage` and :meth:`FDFD3D.resolved_preconditioner`
    say. ``geo``: the frequency-independent :func:`emjax.fdfd.setup.geometry` (a sweep's,
    built once), else built here."""
    t0 = time.perf_counter()
    on_demand_pool()  # before JAX's backend starts
    storage = sim.resolved_storage if storage in (None, "auto") else storage
    precision = precision or sim.precision
    pre = sim.resolved_preconditioner(storage, precision) if preconditioner in (None, "auto") \
        else preconditioner
    sym = sim.solver.symmetrize if symmetrize is None else symmetrize
    refuse_if_too_large(sim.name, setup.estimate(sim))  # before rasterising anything
    cdt = np.complex128 if precision == "complex128" else np.complex64
    require_x64(needs_x64(cdt))
    stages = Stages()
    with stages("grid and media"):
        st = setup.build(sim, geo)
    with stages("coefficients"):
        if storage == "separable" and pre != "jacobi":  # the dense CAS arrays go unused
            ce = we = ch = None
        else:
            ce, we, ch = setup.coefficient_arrays(st)
        ssqrt = tuple(tuple(jnp.asarray(np.sqrt(s).astype(cdt)) for s in row)
                      for row in setup.sprod(st))
        ops, cas, coeff_bytes, contrast = _coefficients(st, ce, we, ch, storage, pre, cdt)
    del ce, we, ch
    if storage == "separable":
        sym = True
    t_rhs = time.perf_counter()
    ops["ssqrt"] = ssqrt
    if storage == "separable":
        ops.update(operator.wall_lines(ops, st.grid.shape))
    elif pre == "fastdiag":
        raise SetupError(f"preconditioner='fastdiag' needs storage='separable', not {storage!r}")
    if cas is not None:
        cas["ssqrt"] = ssqrt
    b, e_inc, h_inc = incident.rhs(
        st.grid, contrast, sim.incident, st.omega, cdt,
        magnetic=((st.mu - mu0) / st.mu) if st.magnetic else None,
        apply_ae=lambda h: operator.apply_ae(cas, h))
    shape = st.grid.shape
    bj = b
    od = _offdiagonal(st, cdt)
    if od is not None:
        if not sym:
            raise SetupError("subpixel smoothing couples E components (off-diagonal eps): "
                             "it needs the symmetrized system; set solver.symmetrize = true")
        ops["od"] = od
        if cas is not None:
            cas["od"] = od
    if storage == "separable":
        r = operator._sep_factors(ops, shape)[1]
        bj = r * (ops["kt"][ops["ki"].astype(jnp.int32)]) * bj  # mu0 r w b
    elif sym:
        w, r = operator.sym_factors(ops, shape)
        bj = r * w * bj
    if od is not None:  # the scattered-field source of the off-diagonal eps - eps0 I
        ei = jnp.asarray(e_inc.astype(cdt))
        bj = bj - operator.offdiagonal(ops, ei, 1.0 if storage == "separable" else 1 / mu0)
    jax.block_until_ready(bj)
    stages["right-hand side"] = time.perf_counter() - t_rhs
    with stages("preconditioner"):
        bj = _preconditioner(ops, st, cas, bj, pre, storage, sym, cdt, precision)
    ops["symmetrize"] = sym
    sol = sim.solver
    return Prepared(sim=sim, st=st, ops=ops, b=bj, b_seed=b, e_inc=e_inc, h_inc=h_inc,
                    coeff_bytes=int(coeff_bytes), setup_time=time.perf_counter() - t0,
                    storage=storage, preconditioner=pre, stages=stages,
                    krylov=KrylovPlan(sol.method, sol.tol, sol.max_iter, sol.progress_every))


def _preconditioner(ops: dict, st, cas, bj, pre: str, storage: str, sym: bool, cdt,
                    precision: str):
    """The preconditioner's arrays into ``ops`` (Jacobi's scale, fastdiag's factors); the
    right-hand side, Jacobi-scaled, back."""
    shape = st.grid.shape
    if pre == "jacobi":
        diag = operator.diagonal(cas, shape, symmetrize=sym)
        if storage == "separable":
            diag = diag * mu0
        ops["scale"] = (1.0 / jnp.sqrt(diag)).astype(cdt)
        bj = ops["scale"] * bj
    if pre == "fastdiag":
        if cdt is not np.complex128:
            raise SetupError("preconditioner='fastdiag' runs in complex128 only; "
                             f"got precision={precision!r}")
        # The empty box: eps_r of the wall samples (in the PML, the background) everywhere.
        kw_wall = complex(ops["kt"][ops["ki"][0, 0, 0, 0]])
        ops["pc"] = precond.fast_diag(shape, st.grid.spacing, -kw_wall, kw_wall,
                                      s_int=st.s_int, s_half=st.s_half,
                                      r=operator._sep_factors(ops, shape)[1])
    return jax.block_until_ready(bj)


def _offdiagonal(st, cdt):
    """``ops["od"]`` of :func:`emjax.fdfd.operator.offdiagonal` from the smoothing's
    couplings: pairs with both samples outside the PML and off the walls, weights
    -k0^2 eps_ab / eps0; None without couplings."""
    if not st.couplings:
        return None
    shape = st.grid.shape
    lo, hi = st.pml + 1, np.array(shape) - st.pml - 1
    strides = np.array([shape[1] * shape[2], shape[2], 1])
    k0sq = (st.omega / c0) ** 2
    by_pair = {(c.a, c.b): c for c in st.couplings}
    od = []
    for ab in operator.PAIRS:
        c = by_pair.get(ab)
        if c is None:
            od.append((jnp.zeros(0, jnp.int32), jnp.zeros(0, jnp.int32), jnp.zeros(0, cdt)))
            continue
        ok = ((c.p >= lo) & (c.p < hi) & (c.q >= lo) & (c.q < hi)).all(1)
        od.append((jnp.asarray(c.p[ok] @ strides, jnp.int32),
                   jnp.asarray(c.q[ok] @ strides, jnp.int32),
                   jnp.asarray((-k0sq / eps0 * c.w[ok]).astype(cdt))))
    return tuple(od)


def _coefficients(st, ce, we, ch, storage: str, pre: str, cdt) -> tuple:
    """(operator arrays, the CAS arrays the incident field and Jacobi need or None,
    coefficient bytes, the contrast (eps - eps0) / eps at the E samples) for ``storage``:
    separable (per-axis stretching, an index table of k^2; the contrast gathered on the
    device from a table of the same index), arrays (CAS) or indices (CIS)."""
    if storage == "separable":
        if st.magnetic:
            raise SetupError("storage='separable' needs mu_r = 1 and sigma_m = 0 in every "
                             "medium; use storage='indices' or 'arrays'")
        kt, ki = k2_table(st)
        if kt.size > 65536:
            raise SetupError(f"storage='separable': {kt.size} distinct permittivities exceed "
                             "65536; use storage='arrays'")
        # -k0^2 mu0 eps / (-k0^2 mu0) = eps: the contrast per table row, 0 on the padding
        ratio = _padded(1 - (-(st.omega**2) * mu0 * eps0) / kt)
        kt = _padded(kt)
        ki_dev = jnp.asarray(ki)
        contrast = jnp.asarray(ratio.astype(cdt))[ki_dev.astype(jnp.int32)]
        ops = {"ki": ki_dev, "kt": jnp.asarray(kt.astype(cdt)),
               "inv_int": tuple(jnp.asarray((1 / (si * d)).astype(cdt))
                                for si, d in zip(st.s_int, st.grid.spacing, strict=True)),
               "inv_half": tuple(jnp.asarray((1 / (sh * d)).astype(cdt))
                                 for sh, d in zip(st.s_half, st.grid.spacing, strict=True))}
        coeff_bytes = ki.nbytes + kt.size * cdt().itemsize
        cas = {"ce": jnp.asarray(ce.astype(cdt)), "we": jnp.asarray(we.astype(cdt)),
               "ch": jnp.asarray(ch.astype(cdt))} if pre == "jacobi" else None
    elif storage == "arrays":
        ops = {"ce": jnp.asarray(ce.astype(cdt)), "we": jnp.asarray(we.astype(cdt)),
               "ch": jnp.asarray(ch.astype(cdt))}
        coeff_bytes = ce.size * cdt().itemsize + we.size * cdt().itemsize \
            + ch.size * cdt().itemsize
        cas = ops
    else:
        ie, te, ih, th = setup.index_tables(ce, we, ch)
        te, th = _padded(te), _padded(th)
        ops = {"ie": jnp.asarray(ie), "te": jnp.asarray(te.astype(cdt)),
               "ih": jnp.asarray(ih), "th": jnp.asarray(th.astype(cdt))}
        coeff_bytes = ie.nbytes + ih.nbytes + (te.size + th.size) * cdt().itemsize
        cas = ops
    if storage != "separable":
        contrast = (st.eps - eps0) / st.eps
    return ops, cas, coeff_bytes, contrast


def k2_table(st) -> tuple[np.ndarray, np.ndarray]:
    """(table, index): mu0 we = -omega^2 mu0 eps of every E sample as a table and a
    (3, ...) uint8/uint16 index: a row per medium (the rasterized index as it stands)
    and a row per distinct smoothed value. Its np.unique over the whole grid took most
    of a sweep frequency's set-up (0.18 of 0.40 s at 64^3 on 2 CPU cores)."""
    k2 = -(st.omega**2) * mu0
    table = [k2 * np.asarray(st.eps_table, np.complex128)]
    rows = []
    for a, at in enumerate(st.smoothed):
        if len(at):
            vals, inv = np.unique(k2 * np.asarray(st.smoothed_eps[a]), return_inverse=True)
            rows.append((a, at, sum(len(t) for t in table) + inv))
            table.append(vals)
    kt = np.concatenate(table)
    # formed in its final dtype: an int64 stack of the whole grid cost as much again
    index = np.stack([np.asarray(i) for i in st.eps_index]).astype(
        np.uint8 if kt.size <= 256 else np.uint16)
    for a, at, rows_a in rows:
        index[a][at] = rows_a
    return kt, index


def _padded(table: np.ndarray) -> np.ndarray:
    """``table`` with zero rows appended up to a power of two (at least 8): the table
    sizes, and so the compiled solve, then stay the same over a frequency sweep even
    where two media coincide at one frequency (no index points at the padding)."""
    n = max(8, 1 << (len(table) - 1).bit_length())
    pad = np.zeros((n - len(table), *table.shape[1:]), table.dtype)
    return np.concatenate([table, pad])


def _matvec(ops):
    if "ki" in ops:  # the stencil form: 0.415 against 0.504 ms per COCG iteration at 96^3
        return operator.matvec_sep_stencil  # on an H100 (BENCHMARKS.md)
    return operator.matvec_sym if ops["symmetrize"] else operator.matvec_g


def _kernel_ops(ops):
    return {k: v for k, v in ops.items() if k != "symmetrize"}


def solve(prep: Prepared, *, method=None, tol=None, max_iter=None, chunk=None, x0=None,
          reduce_dtype=None, callback=None, start_iteration=0):
    """Run the Krylov method (``prep.krylov``'s, or the arguments given); returns (E
    scattered (3, ...) jax array, KrylovResult)."""
    plan = prep.krylov
    method = method or plan.method
    if method != "bicgstab" and not prep.ops["symmetrize"]:
        raise ValueError(f"method={method!r} needs the symmetrized system (symmetrize=True)")
    res = krylov.solve(
        _matvec(prep.ops), _kernel_ops(prep.ops), prep.b, x0, method=method,
        tol=plan.tol if tol is None else tol,
        max_iter=plan.max_iter if max_iter is None else max_iter,
        chunk=chunk or plan.chunk, reduce_dtype=reduce_dtype,
        callback=callback, start_iteration=start_iteration,
        precond=precond.from_ops if "pc" in prep.ops else None)
    x = res.x
    if "scale" in prep.ops:
        x = prep.ops["scale"] * x
    if prep.ops["symmetrize"]:
        x = x / operator._sep_factors(_kernel_ops(prep.ops), x.shape[1:])[1]
    return x, res


def initial_guess(prep: Prepared, e) -> jax.Array:
    """The Krylov unknown of ``prep``'s system whose solution would be the scattered E
    ``e`` (3, nx, ny, nz): the inverse of the unscaling in :func:`solve` (a warm start
    from another frequency's field)."""
    x = jnp.asarray(e).astype(prep.b.dtype)
    if prep.ops["symmetrize"]:
        x = x * operator._sep_factors(_kernel_ops(prep.ops), x.shape[1:])[1]
    if "scale" in prep.ops:
        x = x / prep.ops["scale"]
    return x


def seed_residual(prep: Prepared, e) -> float:
    """||b - G e|| / ||b|| of the seed (unsymmetrized) system (CAS and CIS only)."""
    ops = _kernel_ops(prep.ops)
    ops.pop("scale", None)
    bs = jnp.asarray(prep.b_seed).astype(e.dtype)
    r = bs - operator.apply_g(ops, e)
    return float(jnp.linalg.norm(r) / jnp.linalg.norm(bs))


def scattered_h(prep: Prepared, e) -> np.ndarray:
    """H_scat = A_h E_scat - ((mu - mu0)/mu) H_inc, (3, nx, ny, nz) A/m."""
    ops = _kernel_ops(prep.ops)
    ops.pop("scale", None)
    em = jnp.where(operator.wall_mask(e.shape[1:]), e, 0)
    if "ki" in ops:
        h = operator.apply_ah_sep(ops, em, prep.st.omega)
    else:
        h = operator.apply_ah(ops, em)
    if prep.st.magnetic:
        h = h - jnp.asarray((prep.st.mu - mu0) / prep.st.mu, h.dtype) * prep.h_inc
    return np.asarray(to_host(h), dtype=np.complex128)


# ---------------------------------------------------------------- run
def run(sim, *, progress: bool = False, checkpoint_every: int | None = None,
        checkpoint_path=None, resume=None, **_):
    """Solve ``sim``; see the module docstring for what the Results hold.

    checkpoint_every: write the current iterate every this many iterations to
    ``checkpoint_path`` (default ``<name>.ckpt.h5``, as the time-domain driver);
    resume: a checkpoint to warm-start from (its iterations count towards
    ``solver.max_iter``). SIGINT or SIGTERM stops the solve at the next host round trip
    (every ``solver.progress_every`` iterations), writes the checkpoint and raises
    :class:`~emjax.errors.RunInterrupted` with the partial results.
    """
    if sim.frequencies is not None and len(sim.frequencies) > 1:
        from .sweep import run_sweep

        return run_sweep(sim, progress=progress, checkpoint_every=checkpoint_every,
                         resume=resume)
    check_every(checkpoint_every)
    born = mark()  # the compilations from here on: did they hit the persistent cache?
    compile_counter()  # listening from here on
    prep = prepare(sim)
    plan = prep.krylov
    start, x0, history0 = 0, None, np.zeros(0)
    if resume:
        start, xs, history0 = load_checkpoint(sim, resume, prep.b)
        x0 = jnp.asarray(xs)
    ckpt = Path(checkpoint_path or f"{sim.name}.ckpt.h5")
    chunk = plan.chunk
    if checkpoint_every:
        chunk = int(np.gcd(chunk, int(checkpoint_every)))
    last_ckpt = [start]
    bar = progress_bar(plan.max_iter, progress, unit="it")
    bar.update(start)
    stop = StopFlag()

    def callback(it, res, x, history) -> bool:
        bar.update(it - bar.n)
        bar.set_postfix_str(f"residual {res:.3e}")
        if (checkpoint_every and it - last_ckpt[0] >= checkpoint_every) or stop.requested:
            save_checkpoint(sim, ckpt, it, x, np.concatenate([history0, history]))
            last_ckpt[0] = it
        return stop.requested is not None

    n0, c0 = compile_counter()
    t0 = time.perf_counter()
    try:
        with stop:
            e, kres = solve(prep, chunk=chunk, x0=x0, max_iter=max(plan.max_iter - start, 0),
                            callback=callback, start_iteration=start)
            e = e.block_until_ready()
    finally:
        bar.close()
    wall = time.perf_counter() - t0
    n1, c1 = compile_counter()
    times = {"compile_time_s": min(c1 - c0, wall), "solve_time_s": max(wall - (c1 - c0), 0.0),
             "compiles": n1 - n0}
    history = np.concatenate([history0, kres.history])
    it = start + kres.iterations
    if stop.requested and kres.flag == krylov.RUNNING and it < plan.max_iter:
        partial = _results(sim, prep, e, kres, history, start, wall, rcs=False,
                           interrupted_at_iteration=it, **times)
        raise RunInterrupted(
            f"FDFD solve stopped by {stop.requested} at iteration {it} of at most "
            f"{plan.max_iter} (residual {kres.residual:.3e}); checkpoint written to "
            f"'{ckpt}'. Resume with `emjax run --resume {ckpt}` or run(resume='{ckpt}')",
            results=partial, checkpoint=ckpt, step=it)
    check_converged(sim, plan, kres, it)
    return _results(sim, prep, e, kres, history, start, wall, rcs=bool(sim.rcs),
                    **times, **cache_report(born))


def check_converged(sim, plan: KrylovPlan, kres, it: int, at: str = "") -> None:
    """Warn (or raise ConvergenceError under ``solver.raise_on_failure``) when ``kres``
    did not converge after ``it`` iterations; ``at``: where (a sweep's frequency)."""
    if kres.flag == krylov.CONVERGED:
        return
    why = "broke down" if kres.flag == krylov.BREAKDOWN else "did not converge"
    msg = (f"FDFD {plan.method}{at} {why}: tol={plan.tol:g} not reached in "
           f"{it} iterations (best residual {kres.residual:.3e}); raise "
           "solver.max_iter, use method='cocg' with symmetrize=true, or thicken the PML")
    if sim.solver.raise_on_failure:
        raise ConvergenceError(msg)
    warnings.warn(msg + "; returning the best iterate", EmjaxWarning, stacklevel=3)


def _results(sim, prep: Prepared, e, kres, history, start: int, wall: float, *, rcs: bool,
             **extra):
    """Results of a solve: the scattered phasors of ``e`` (the best iterate as E) and H,
    the solver metadata with the residual ``history`` of every iteration and ``extra``,
    and the RCS when ``rcs``."""
    from ..results import MonitorData, Results

    e_np = np.asarray(to_host(e), dtype=np.complex128)
    h_np = scattered_h(prep, e)
    grid = prep.st.grid
    comps = ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz")
    order = np.argsort(-np.abs(sim.incident.e_hat), kind="stable")
    names = [comps[i] for i in order] + [comps[3 + i] for i in order]
    data = {c: (e_np if c[0] == "E" else h_np)["xyz".index(c[1].lower())][None] for c in names}
    coords = {"f": np.array([sim.frequency])}
    for c in names:
        for a, ax in enumerate("xyz"):
            coords[f"{ax}_{c}"] = grid.axis_coords(c, a)
    md = MonitorData(name="scattered", kind="DFTMonitor", data=data, coords=coords,
                     attrs={"quantity": "scattered field phasors (e^{+j w t})"})
    meta = {
        "solver": "fdfd", "method": prep.krylov.method, "storage": prep.storage,
        "preconditioner": prep.preconditioner,
        "precision": sim.precision, "iterations": start + kres.iterations,
        "matvecs": kres.matvecs, "relative_residual": kres.residual,
        "converged": kres.flag == krylov.CONVERGED,
        "residual_history": history.tolist(), "wall_time_s": wall,
        "setup_time_s": prep.setup_time, "coefficient_bytes": prep.coeff_bytes,
        "setup_stages": {k: round(v, 4) for k, v in prep.stages.items()},
        "grid_shape": list(grid.shape), "warnings": prep.st.warnings, **environment(),
        **extra,
    }
    if rcs:
        th, se, sh = bistatic_rcs(sim, prep.st, e_np, h_np, sim.rcs_angles)
        meta["rcs_theta_deg"] = th.tolist()
        with np.errstate(divide="ignore"):  # a zero RCS (no scatterer, a null): -inf dBsm
            meta["rcs_E_dBsm"] = (10 * np.log10(se)).tolist()
            meta["rcs_H_dBsm"] = (10 * np.log10(sh)).tolist()
    return Results(scenario=sim, monitors={"scattered": md}, metadata=meta)
