"""Krylov solvers in JAX: COCG and BiCGSTAB as jitted ``lax.while_loop`` chunks.

* COCG (van der Vorst and Melissen 1990): conjugate gradients with the unconjugated
  bilinear form x^T y, for complex-symmetric A (the symmetrized FDFD system). One
  product per iteration.
* Single-reduction COCG (``cocg_sr``, Chronopoulos and Gear 1989): the same iterates,
  one synchronisation per iteration.
* BiCGSTAB (van der Vorst 1992), as in seed 000: any A, two products per iteration.

Each maker ``make_*(matvec, chunk, reduce_dtype, dir_dtype)`` returns jitted
``init(ops, b, x0, tol)`` and ``step(ops, state, stop_at)``; the tolerance is part of
the state, so one compiled loop serves every tolerance.

The loop runs in chunks of ``chunk`` iterations (one jitted ``while_loop`` each); between
chunks the host reports progress, writes checkpoints and keeps the best iterate. Each
chunk records the relative residual ||r|| / ||b|| of every iteration. Breakdown (a
vanishing x^T A x, rho or omega) stops the loop with ``flag = 2``; convergence gives
``flag = 1``. ``reduce_dtype`` lets complex64 vectors use complex128 reductions;
``dir_dtype`` (COCG) stores the search direction and product in complex64 beside
complex128 x and r. Measured on the seed's sphere (CPU, 40^3 and 64^3): both reduced
precisions diverge, as plain complex64 COCG does; complex128 is the working path.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

RUNNING, CONVERGED, BREAKDOWN = 0, 1, 2


@dataclass
class KrylovResult:
    """x: solution; history: relative residual per iteration; flag: 1 ok, 0 max_iter, 2
    breakdown; iterations; matvecs; best_residual."""

    x: jax.Array
    history: np.ndarray
    flag: int
    iterations: int
    matvecs: int
    residual: float


def _dots(rd):
    def dotu(a, b):
        return jnp.sum(a.astype(rd) * b.astype(rd))

    def dotc(a, b):
        return jnp.sum(jnp.conj(a.astype(rd)) * b.astype(rd))

    def nrm2(a):
        a = a.astype(rd)
        return jnp.sum(a.real * a.real + a.imag * a.imag)

    return dotu, dotc, nrm2


def _hist_dtype(rd):
    return jnp.float64 if jnp.dtype(rd) == jnp.complex128 else jnp.float32


def _start(matvec, ops, b, x0, nrm2):
    """(r = b - A x0, |b| (1 where b = 0), |r| / |b|) of every method's first state."""
    r = b - matvec(ops, x0)
    bn = jnp.sqrt(nrm2(b))
    bn = jnp.where(bn > 0, bn, 1.0)
    return r, bn, jnp.sqrt(nrm2(r)) / bn


def _counters(bn, rn, tol, rd, flag=None) -> dict:
    """The state every method starts with beside its vectors: |b|, tolerance, residual,
    iteration and flag (``flag``: the start's own verdict where it has one)."""
    ok = jnp.where(rn <= tol, CONVERGED, RUNNING if flag is None else flag)
    return dict(bn=bn, tol=jnp.asarray(tol, _hist_dtype(rd)), res=rn, it=jnp.int32(0),
                flag=ok.astype(jnp.int32))


def _running(stop_at):
    """The while_loop condition: still iterating and below ``stop_at`` iterations."""
    def cond(c):
        s, _ = c
        return (s["flag"] == RUNNING) & (s["it"] < stop_at)

    return cond


@lru_cache(maxsize=32)
def make_cocg(matvec, chunk: int, reduce_dtype=None, dir_dtype=None, precond=None):
    """(init(ops, b, x0) -> state, step(ops, state, stop_at) -> (state, history)) for COCG.

    ``precond(ops, r)``: z = M r with M complex symmetric (preconditioned COCG: rho =
    r^T z, p = z + beta p); None is M = I. The history is always ||r|| / ||b||.

    The search direction is updated at the top of the iteration (``p = r + beta p``,
    beta = 0 at the start), so that XLA can fuse that update into the product that reads
    ``p`` (one pass reading r and the old p, writing p and A p) instead of a third pass
    at the bottom: two passes per iteration, about 10 vector reads and writes.

    ``dir_dtype`` (e.g. complex64 with complex128 x, r and b): the search direction p
    and the product A p are stored in that precision (the operator's coefficients
    should be too), x and r and the scalars stay in the precision of b; that cuts the
    traffic of an iteration from 10 to 7.5 complex128 vectors.
    """

    def init(ops, b, x0, tol):
        rd = reduce_dtype or b.dtype
        dotu, _, nrm2 = _dots(rd)
        r, bn, rn = _start(matvec, ops, b, x0, nrm2)
        z = {} if precond is None else {"z": precond(ops, r)}
        # p starts at zero, so the first beta (rho / rho_prev) multiplies nothing
        return dict(x=x0, r=r, p=jnp.zeros_like(r, dtype=dir_dtype or r.dtype),
                    rho=dotu(r, z.get("z", r)), **z,
                    rho_prev=jnp.ones((), rd), **_counters(bn, rn, tol, rd))

    def step(ops, state, stop_at):
        rd = reduce_dtype or state["x"].dtype
        dotu, _, nrm2 = _dots(rd)
        hist0 = jnp.full((chunk,), jnp.nan, dtype=_hist_dtype(rd))
        it0 = state["it"]

        cond = _running(stop_at)

        def body(c):
            # The scalars (beta, alpha) are formed where they are used, from the carried
            # reductions, and breakdown zeroes alpha rather than selecting whole vectors:
            # XLA then folds them into the vector kernels instead of running a tiny
            # kernel for each (Nsight Compute on an H100; BENCHMARKS.md).
            s, hist = c
            xdt, pdt = s["x"].dtype, s["p"].dtype
            rho0 = s["rho"]
            beta = rho0 / jnp.where(s["rho_prev"] == 0, 1.0, s["rho_prev"])
            p = (s.get("z", s["r"]) + beta.astype(xdt) * s["p"]).astype(pdt)
            q = matvec(ops, p)
            mu = dotu(p, q)
            bad = (jnp.abs(mu) <= 1e-30 * jnp.maximum(jnp.abs(rho0), 1e-300)) | (rho0 == 0)
            alpha = jnp.where(bad, 0, rho0 / jnp.where(bad, 1.0, mu)).astype(xdt)
            x = s["x"] + alpha * p.astype(xdt)
            r = s["r"] - alpha * q.astype(xdt)  # unchanged on breakdown, and so is rn
            z = {} if precond is None else {"z": precond(ops, r)}
            rho = dotu(r, z.get("z", r))
            rn = jnp.sqrt(nrm2(r)) / s["bn"]
            flag = jnp.where(bad, BREAKDOWN,
                             jnp.where(rn <= s["tol"], CONVERGED, RUNNING)).astype(jnp.int32)
            hist = hist.at[s["it"] - it0].set(rn.astype(hist.dtype))
            ns = dict(x=x, r=r, p=p, rho=rho, **z, rho_prev=rho0, bn=s["bn"], tol=s["tol"],
                      res=rn, it=s["it"] + 1, flag=flag)
            return ns, hist

        return lax.while_loop(cond, body, (state, hist0))

    return jax.jit(init), jax.jit(step)


@lru_cache(maxsize=32)
def make_cocg_sr(matvec, chunk: int, reduce_dtype=None, dir_dtype=None):
    """(init, step) for single-reduction COCG (Chronopoulos and Gear 1989, unconjugated).

    The same iterates as COCG in exact arithmetic; the product is applied to the
    residual (w = A r) and A p is carried by the recurrence s = w + beta s, so all the
    inner products of an iteration (r^T r, r^T w, ||r||) come from one pass next to the
    product: one synchronisation per iteration instead of two, at the price of one
    more carried vector.
    """

    def init(ops, b, x0, tol):
        rd = reduce_dtype or b.dtype
        dotu, _, nrm2 = _dots(rd)
        r, bn, rn = _start(matvec, ops, b, x0, nrm2)
        w = matvec(ops, r)
        gamma, delta = dotu(r, r), dotu(r, w)
        alpha = gamma / jnp.where(delta == 0, 1.0, delta)
        z = jnp.zeros_like(r)
        return dict(x=x0, r=r, w=w, p=z, s=z, gamma=gamma, alpha=alpha,
                    beta=jnp.zeros((), rd),
                    **_counters(bn, rn, tol, rd, jnp.where(delta == 0, BREAKDOWN, RUNNING)))

    def step(ops, state, stop_at):
        rd = reduce_dtype or state["x"].dtype
        dotu, _, nrm2 = _dots(rd)
        hist0 = jnp.full((chunk,), jnp.nan, dtype=_hist_dtype(rd))
        it0 = state["it"]

        cond = _running(stop_at)

        def body(c):
            s, hist = c
            xdt = s["x"].dtype
            b_, a_ = s["beta"].astype(xdt), s["alpha"].astype(xdt)
            p = s["r"] + b_ * s["p"]
            sv = s["w"] + b_ * s["s"]
            x = s["x"] + a_ * p
            r = s["r"] - a_ * sv
            w = matvec(ops, r)
            gamma, delta = dotu(r, r), dotu(r, w)
            rn = jnp.sqrt(nrm2(r)) / s["bn"]
            beta = gamma / jnp.where(s["gamma"] == 0, 1.0, s["gamma"])
            den = delta - beta * gamma / s["alpha"]
            bad = (jnp.abs(den) <= 1e-30 * jnp.maximum(jnp.abs(gamma), 1e-300)) | (
                s["gamma"] == 0)
            alpha = gamma / jnp.where(bad, 1.0, den)
            flag = jnp.where(rn <= s["tol"], CONVERGED,
                             jnp.where(bad, BREAKDOWN, RUNNING)).astype(jnp.int32)
            hist = hist.at[s["it"] - it0].set(rn.astype(hist.dtype))
            ns = dict(x=x, r=r, w=w, p=p, s=sv, gamma=gamma, alpha=alpha, beta=beta,
                      bn=s["bn"], tol=s["tol"], res=rn, it=s["it"] + 1, flag=flag)
            return ns, hist

        return lax.while_loop(cond, body, (state, hist0))

    return jax.jit(init), jax.jit(step)


@lru_cache(maxsize=32)
def make_bicgstab(matvec, chunk: int, reduce_dtype=None, dir_dtype=None):
    """(init, step) for BiCGSTAB; see :func:`make_cocg`."""

    def init(ops, b, x0, tol):
        rd = reduce_dtype or b.dtype
        nrm2 = _dots(rd)[2]
        r, bn, rn = _start(matvec, ops, b, x0, nrm2)
        one = jnp.ones((), rd)
        return dict(x=x0, r=r, rh=r, p=jnp.zeros_like(r), v=jnp.zeros_like(r), rho=one,
                    alpha=one, omega=one, **_counters(bn, rn, tol, rd))

    def step(ops, state, stop_at):
        rd = reduce_dtype or state["x"].dtype
        _, dotc, nrm2 = _dots(rd)
        hist0 = jnp.full((chunk,), jnp.nan, dtype=_hist_dtype(rd))
        it0 = state["it"]

        cond = _running(stop_at)

        def body(c):
            s, hist = c
            xdt = s["x"].dtype
            rho = dotc(s["rh"], s["r"])
            beta = (rho / s["rho"]) * (s["alpha"] / s["omega"])
            p = s["r"] + beta.astype(xdt) * (s["p"] - s["omega"].astype(xdt) * s["v"])
            v = matvec(ops, p)
            rv = dotc(s["rh"], v)
            bad1 = (jnp.abs(rho) <= 1e-300) | (jnp.abs(rv) <= 1e-300)
            alpha = rho / jnp.where(bad1, 1.0, rv)
            sv = s["r"] - alpha.astype(xdt) * v
            t = matvec(ops, sv)
            tt = nrm2(t)
            bad2 = tt <= 1e-300
            omega = dotc(t, sv) / jnp.where(bad2, 1.0, tt)
            x = s["x"] + alpha.astype(xdt) * p + omega.astype(xdt) * sv
            r = sv - omega.astype(xdt) * t
            rn = jnp.sqrt(nrm2(r)) / s["bn"]
            bad = bad1 | bad2 | (jnp.abs(omega) <= 1e-300)
            flag = jnp.where(bad, BREAKDOWN,
                             jnp.where(rn <= s["tol"], CONVERGED, RUNNING)).astype(jnp.int32)
            hist = hist.at[s["it"] - it0].set(rn.astype(hist.dtype))
            ns = dict(x=jnp.where(bad, s["x"], x), r=jnp.where(bad, s["r"], r), rh=s["rh"],
                      p=p, v=v, rho=rho, alpha=alpha, omega=omega, bn=s["bn"], tol=s["tol"],
                      res=jnp.where(bad, s["res"], rn), it=s["it"] + 1, flag=flag)
            return ns, hist

        return lax.while_loop(cond, body, (state, hist0))

    return jax.jit(init), jax.jit(step)


MATVECS_PER_ITER = {"cocg": 1, "cocg_sr": 1, "bicgstab": 2}
MAKERS = {"cocg": make_cocg, "cocg_sr": make_cocg_sr, "bicgstab": make_bicgstab}


def solve(matvec, ops, b, x0=None, *, method="cocg", tol=1e-6, max_iter=1000, chunk=100,
          reduce_dtype=None, dir_dtype=None, callback=None, start_iteration=0,
          precond=None):
    """Run ``method`` on ``matvec(ops, x)`` to ``tol`` (relative residual) or ``max_iter``.

    ``callback(it, res, x, history)`` runs on the host after each chunk (progress,
    checkpoints; ``history``: the residuals so far); a true return value stops the loop.
    ``precond(ops, r)``: a complex-symmetric preconditioner (COCG only).
    Returns a :class:`KrylovResult` holding the best iterate seen at chunk ends (for
    COCG and BiCGSTAB the residual is not monotone).
    """
    maker = MAKERS[method]
    chunk = max(1, min(chunk, max_iter))
    if precond is not None:
        if method != "cocg":
            raise ValueError(f"a preconditioner needs method = 'cocg', not {method!r}")
        init, step = maker(matvec, chunk, reduce_dtype, dir_dtype, precond)
    else:
        init, step = maker(matvec, chunk, reduce_dtype, dir_dtype)
    x0 = jnp.zeros_like(b) if x0 is None else x0
    state = init(ops, b, x0, float(tol))
    best_x, best_res = state["x"], float(state["res"])
    hist = []
    it = 0
    while int(state["flag"]) == RUNNING and it < max_iter:
        stop = min(it + chunk, max_iter)
        state, h = step(ops, state, jnp.int32(stop))
        it = int(state["it"])
        h = np.asarray(h)
        hist.append(h[~np.isnan(h)])
        res = float(state["res"])
        if res < best_res or not np.isfinite(best_res):
            best_x, best_res = state["x"], res
        if callback is not None and callback(start_iteration + it, res, state["x"],
                                             np.concatenate(hist)):
            break  # the caller asked to stop (SIGINT): the result so far, flag RUNNING
    flag = int(state["flag"])
    if flag == CONVERGED:
        best_x, best_res = state["x"], float(state["res"])
    history = np.concatenate(hist) if hist else np.zeros(0)
    return KrylovResult(x=best_x, history=history, flag=flag, iterations=it,
                        matvecs=it * MATVECS_PER_ITER[method] + 1, residual=best_res)
