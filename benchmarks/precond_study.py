"""Preconditioners for COCG on the seed's sphere (separable stencil operator): iteration
counts on the CPU.

Usage: python benchmarks/precond_study.py N [CANDIDATE ...]
       python benchmarks/precond_study.py time N [CANDIDATE]   (GPU timing, default fdiag:0)
       python benchmarks/precond_study.py mixed N|head [INNER_TOL]  (complex64 inner solves)
  candidates: plain, fdiag:BETA[:EPS_BG[:SIGN]], fourier:BETA[:EPS_BG[:SIGN]],
  cheb:DEGREE:RATIO (default: plain fdiag:0 fdiag:0.5 fourier:0.5 cheb:2:10)

Every candidate runs (preconditioned) COCG (:func:`emjax.fdfd.krylov.make_cocg`) from
zero to 1e-3, then on to 1e-6, and checks the true residual ||b - A x|| / ||b|| at both
points. Prints one line per candidate: iterations, products per iteration, CPU seconds.

* fdiag:BETA: M = r (curl' curl' - k0^2 eps_bg (1 - SIGN j BETA))^(-1) r^(-1), the exact
  inverse for the homogeneous box with the same PML (the sphere left out), by fast
  diagonalization (:func:`emjax.fdfd.precond.fast_diag`). SIGN +1 (default) damps like
  a lossy medium under e^{+j omega t}.
* fourier:BETA: the same without the PML stretching (r = 1, DCT-II/DST-I bases of the
  uniform PEC box): the FFT-diagonalizable constant-coefficient version.
* cheb:D:RATIO: M = p(A), p of degree D from D + 1 steps of Chebyshev iteration from zero
  on the real interval [lmax / RATIO, lmax], lmax from 30 power iterations: D products
  per application, so D + 1 per COCG iteration.
"""

from __future__ import annotations

import functools
import sys
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from emjax.constants import c0  # noqa: E402
from emjax.fdfd import krylov, operator, precond  # noqa: E402
from emjax.fdfd import solver as fsolver  # noqa: E402
from emjax.validation.fdfd import sphere_scenario  # noqa: E402

MV = operator.matvec_sep_stencil


def refine(matvec, ops_hi, ops_lo, b, *, method="cocg", tol=1e-6, inner_tol=1e-3,
           max_iter=20000, max_outer=20, chunk=None, precond=None):
    """Mixed-precision iterative refinement: the residual in the high precision of
    ``ops_hi``/``b``, corrections from a Krylov solve in the low precision of ``ops_lo``
    (complex64) to ``inner_tol``, preconditioned by ``precond(ops_lo, r)`` if given.
    Returns a KrylovResult (iterations summed). Moved here from ``emjax.fdfd.krylov``
    (issue #18): only this study uses it."""
    lo = jnp.complex64
    x = jnp.zeros_like(b)
    bn = float(jnp.linalg.norm(b))
    hist, its, mv = [], 0, 0
    res = 1.0
    for _ in range(max_outer):
        r = b - matvec(ops_hi, x)
        res = float(jnp.linalg.norm(r)) / bn
        if res <= tol or its >= max_iter:
            break
        scale = jnp.linalg.norm(r)
        # fixed inner tolerance and chunk: the jitted loop compiles once
        inner = krylov.solve(matvec, ops_lo, (r / scale).astype(lo), method=method,
                      tol=inner_tol, max_iter=max_iter - its, chunk=chunk or 1000,
                      precond=precond)
        x = x + scale * inner.x.astype(b.dtype)
        hist.append(inner.history * res)
        its += inner.iterations
        mv += inner.matvecs + 1
    flag = krylov.CONVERGED if res <= tol else krylov.RUNNING
    return krylov.KrylovResult(x=x, history=np.concatenate(hist) if hist else np.zeros(0),
                               flag=flag, iterations=its, matvecs=mv, residual=res)


def build(n: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prep = fsolver.prepare(sphere_scenario(0.32 / n), storage="separable")
    return prep, fsolver._kernel_ops(prep.ops)


def lam_max(ops, b, its: int = 30) -> float:
    """|lambda|_max of A by power iteration (an estimate from below)."""
    v = b / jnp.linalg.norm(b)
    lam = 0.0
    for _ in range(its):
        w = MV(ops, v)
        lam = float(jnp.linalg.norm(w))
        v = w / lam
    return lam


def cheb_apply(ops, r, deg: int):
    """p(A) r: Chebyshev iteration on A z = r from z = 0 over ops["cheb"] = [lo, hi],
    ``deg`` products."""
    lo, hi = ops["cheb"]
    theta, delta = (hi + lo) / 2, (hi - lo) / 2
    sigma = theta / delta
    rho = 1 / sigma
    d = r / theta
    z = d
    res = r
    for _ in range(deg):
        res = res - MV(ops, d)
        rho_new = 1 / (2 * sigma - rho)
        d = rho_new * rho * d + 2 * rho_new / delta * res
        z = z + d
        rho = rho_new
    return z


def candidate(name, prep, ops):
    """(precond(ops, r) or None, operands to add to ops, products per application)."""
    kind, *args = name.split(":")
    if kind == "plain":
        return None, {}, 0
    if kind in ("fourier", "fdiag"):
        beta = float(args[0])
        eps_bg = float(args[1]) if len(args) > 1 else 1.0
        sign = float(args[2]) if len(args) > 2 else 1.0
        st = prep.st
        k0 = st.omega / c0
        shift = k0 ** 2 * eps_bg * (1 - sign * 1j * beta)
        kw = {} if kind == "fourier" else dict(
            s_int=st.s_int, s_half=st.s_half,
            r=operator._sep_factors(ops, st.grid.shape)[1])
        pops = precond.fast_diag(st.grid.shape, st.grid.spacing, shift, -k0 ** 2, **kw)
        return precond.from_ops, {"pc": pops}, 0
    if kind == "cheb":
        deg, ratio = int(args[0]), float(args[1])
        hi = 1.05 * lam_max(ops, prep.b)
        return functools.partial(cheb_apply, deg=deg), {"cheb": (hi / ratio, hi)}, deg
    raise ValueError(f"candidate {name!r}: use plain, fourier:BETA[:EPS[:SIGN]], cheb:D:R")


def run(name, prep, ops, max_iter: int = 6000):
    pre, extra, per_app = candidate(name, prep, ops)
    ops = dict(ops, **extra)
    init, step = krylov.make_cocg(MV, max_iter, None, None, pre)
    b = prep.b
    bn = float(jnp.linalg.norm(b))
    t = time.perf_counter()
    s = init(ops, b, jnp.zeros_like(b), 1e-3)
    out = {}
    for tol in (1e-3, 1e-6):
        s = dict(s, tol=jnp.asarray(tol), flag=jnp.int32(0))
        s, _ = step(ops, s, jnp.int32(max_iter))
        true = float(jnp.linalg.norm(b - MV(ops, s["x"]))) / bn
        out[tol] = (int(s["it"]), int(s["flag"]), true)
    sec = time.perf_counter() - t
    per_it = 1 + per_app
    (i3, f3, t3), (i6, f6, t6) = out[1e-3], out[1e-6]
    print(f"{name:22s} n={prep.st.grid.shape[0]}: 1e-3 {i3:5d} it (flag {f3}, true {t3:.2e}) "
          f"1e-6 {i6:5d} it (flag {f6}, true {t6:.2e}); products/it {per_it}; "
          f"products {i3 * per_it}/{i6 * per_it}; CPU {sec:.1f} s", flush=True)
    return out


def _per_call(fn, *args, reps: int = 20) -> float:
    jax.block_until_ready(fn(*args))
    t = time.perf_counter()
    for _ in range(reps):
        out = fn(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - t) / reps


def timed(n: int, name: str = "fdiag:0", max_iter: int = 4000):
    """Seconds to 1e-3 and 1e-6 (compile excluded, one fused while_loop from zero, as
    ``emjax.bench.fdfd.timed_solve``), set-up seconds of the preconditioner, and the
    per-call times of one product and one preconditioner application."""
    prep, ops = build(n)
    t = time.perf_counter()
    pre, extra, _ = candidate(name, prep, ops)
    jax.block_until_ready(extra)
    setup_s = time.perf_counter() - t
    ops = dict(ops, **extra)
    b = prep.b
    mv_s = _per_call(jax.jit(MV), ops, b)
    pc_s = _per_call(jax.jit(pre), ops, b) if pre is not None else 0.0
    init, step = krylov.make_cocg(MV, max_iter, None, None, pre)
    s0 = init(ops, b, jnp.zeros_like(b), 1e-3)
    t = time.perf_counter()
    run_ = step.lower(ops, s0, jnp.int32(1)).compile()
    compile_s = time.perf_counter() - t
    print(f"{name} {n}^3 on {jax.devices()[0].device_kind}: set-up {setup_s:.3f} s, compile "
          f"{compile_s:.1f} s, product {mv_s * 1e3:.3f} ms, preconditioner "
          f"{pc_s * 1e3:.3f} ms", flush=True)
    for tol in (1e-3, 1e-6):
        s = init(ops, b, jnp.zeros_like(b), tol)
        jax.block_until_ready(s)
        t = time.perf_counter()
        s, _ = run_(ops, s, jnp.int32(max_iter))
        jax.block_until_ready(s)
        sec = time.perf_counter() - t
        its = int(s["it"])
        true = float(jnp.linalg.norm(b - MV(ops, s["x"])) / jnp.linalg.norm(b))
        print(f"  to {tol:g}: {sec:.4f} s, {its} iterations, {sec / max(its, 1) * 1e3:.3f} "
              f"ms/iter, flag {int(s['flag'])}, true residual {true:.2e}", flush=True)


def mixed(case: str, inner_tol: float = 1e-3, tol: float = 1e-6):
    """Seconds to ``tol`` of complex64 fastdiag-preconditioned COCG solves to
    ``inner_tol`` inside complex128 iterative refinement (second run timed, compile
    excluded), beside complex128 preconditioned COCG; ``case`` an n for the sphere at
    n^3 or "head" (the built-in head-900mhz)."""
    from emjax.bench.fdfd import timed_solve
    from emjax.scenarios import load_builtin

    sim = load_builtin("head-900mhz") if case == "head" else sphere_scenario(0.32 / int(case))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hi = fsolver.prepare(sim, storage="separable", preconditioner="fastdiag")
    kh = fsolver._kernel_ops(hi.ops)
    kl = jax.tree_util.tree_map(
        lambda a: a.astype(jnp.complex64) if jnp.iscomplexobj(a) else a, kh)
    (run128,), _, _ = timed_solve(hi, tols=(tol,), matvec=MV, max_iter=20000)
    print(f"{case} on {jax.devices()[0].device_kind}: complex128 fastdiag COCG to {tol:g}: "
          f"{run128[0]:.4f} s, {run128[1]} iterations", flush=True)
    for _ in range(2):  # the second run is timed (the first compiles)
        t = time.perf_counter()
        r = refine(MV, kh, kl, hi.b, tol=tol, inner_tol=inner_tol, max_iter=20000,
                          precond=precond.from_ops)
        jax.block_until_ready(r.x)
        sec = time.perf_counter() - t
    true = float(jnp.linalg.norm(hi.b - MV(kh, r.x)) / jnp.linalg.norm(hi.b))
    err = float(jnp.linalg.norm(r.x - run128[3]) / jnp.linalg.norm(run128[3]))
    print(f"  complex64 inner to {inner_tol:g} in complex128 refinement: {sec:.4f} s, "
          f"{r.iterations} inner iterations, flag {r.flag}, true residual {true:.2e}, "
          f"difference from complex128 {err:.2e}", flush=True)


def main(argv):
    if argv[0] == "time":
        return timed(int(argv[1]), *argv[2:3])
    if argv[0] == "mixed":
        return mixed(argv[1], *(float(a) for a in argv[2:3]))
    n = int(argv[0])
    names = argv[1:] or ["plain", "fdiag:0", "fdiag:0.5", "fourier:0.5", "cheb:2:10"]
    prep, ops = build(n)
    for name in names:
        run(name, prep, ops)


if __name__ == "__main__":
    main(sys.argv[1:])
