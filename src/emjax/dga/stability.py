"""The stable time step and the discrete spectrum of the DGATD operator.

Seed 004, Sec. III: with ``K = (M^eps)^{-1} C~ (M^mu)^{-1} C`` the leapfrog is stable for
``dt < 2 / sqrt(rho(K))``. K is self-adjoint and non-negative in the M^eps inner product,
so the power iteration converges to its largest eigenvalue; the Rayleigh quotient
``rho ~ (f^T M^mu f) / (u^T M^eps u)`` with ``f = (M^mu)^{-1} C u`` is used, which lies
below rho by the square of the iteration error. The step taken is ``safety`` times the
limit.

:func:`eigenfrequencies` solves the symmetric pencil ``C^T (M^mu)^{-1} C x = lambda M^eps x``
(scipy.sparse.linalg.eigsh, shift-invert at several shifts) on the free half edges and
drops the null space of gradients (lambda ~ 0). The leapfrog then rings at
``sin(omega dt / 2) = (dt / 2) sqrt(lambda)``: :func:`leapfrog_frequency`.
"""

from __future__ import annotations

import math
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ..driver.host import to_host
from . import step as kern
from .arrays import kernel_base, operator_arrays, xla_node_matrices
from .layout import make_layout


def spectral_radius(ops, lay=None, base: dict | None = None, iters: int = 300,
                    seed: int = 0) -> float:
    """Largest eigenvalue of K (1/s^2) by ``iters`` power iterations, float64.

    The iteration runs on the XLA kernels in the node layout whatever kernels the run
    takes (``lay``, ``base``: the run's layout and :func:`emjax.dga.arrays.kernel_base`,
    reused, or its matrices when that layout is Pallas'): every kernel choice gets the
    same dt bit for bit, and on a GPU the Pallas kernels' float64 variants compiled for
    18-22 s on a 2.46M-DoF gmsh mesh against 4-7 s for XLA's (H200, 2026-11-28). The
    start vector is drawn in the canonical order from ``seed``. The matrices are read
    where they are: on the device where the set-up formed them there (before
    :func:`emjax.dga.mass.on_host`; 1.5 GB at 20.2M DoFs that need not go back to the
    device, while their copies go to the host), and there the Rayleigh quotient is a
    second program (:func:`_rayleigh`), else NumPy's (:func:`rayleigh_forms`); the
    programs compile on threads while the arrays are formed and copied
    (:func:`compile_ahead`; started at the layout instead, their tracing on those
    threads slowed the layout beside them as much, H200 2026-11-29).
    """
    if lay is None or lay.spec.pallas:
        lay, base = make_layout(ops, "xla"), None  # (the base holds a layout's tables)
    on_device = ops.host_later is not None
    power, rayleigh = compile_ahead(ops, lay, iters, rayleigh=on_device)
    base = base or kernel_base(ops, lay)
    v0 = lay.u_from_canonical(np.random.default_rng(seed).standard_normal(ops.nu))
    K1, E = operator_arrays(ops, lay, base)
    v, f = power.result()(jax.device_put(v0 * lay.free(ops)), jax.device_put(K1))
    if on_device:
        num, den = to_host(rayleigh.result()(v, f, jax.device_put(E)))
    else:  # NumPy's matrices: the quotient in NumPy, no second program to compile
        num, den = rayleigh_forms(*to_host((v, f)), E, lay.spec, np)
    return float(num) / float(den)


def compile_ahead(ops, lay, iters: int = 300,
                  rayleigh: bool = True) -> tuple[Future, Future | None]:
    """:func:`_power_iteration` and (``rayleigh``) :func:`_rayleigh` for the XLA layout
    ``lay`` compiled, each on a thread of its own (XLA compiles outside the GIL), from
    :func:`emjax.dga.arrays.operator_arrays`' shapes, while the caller forms the arrays
    and copies them to the device (0.7 and 0.9-1.1 s of compilation at 20.2M DoFs on an
    H200's host; the second 0.64 s for the built-in cylinder on a 2-core CPU, where the
    host's quotient takes milliseconds)."""
    (sk, se), f64, spec = operator_arrays(ops, lay, shapes=True), np.float64, lay.spec
    sv = jax.ShapeDtypeStruct((ops.nu,), f64)
    sf = jax.ShapeDtypeStruct(spec.f_zeros(f64).shape, f64)
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="emjax-power-compile")
    out = (pool.submit(lambda: _power_iteration.lower(sv, sk, spec, iters).compile()),
           pool.submit(lambda: _rayleigh.lower(sv, sf, se, spec).compile())
           if rayleigh else None)
    pool.shutdown(wait=False)
    return out


@partial(jax.jit, static_argnames=("spec", "iters"))
def _power_iteration(v, K1: dict, spec, iters: int):
    """(v, f = -(M^mu)^{-1} C v) after ``iters`` power iterations from ``v``; K1:
    :func:`emjax.dga.arrays.operator_arrays`' (packed node matrices). The kernel
    arrays are arguments, not closed-over constants: as constants they were folded into
    the program, whose compilation then grew with the mesh (11.6 s at 2.6M DoFs on 2 CPU
    cores for 2 iterations)."""
    zero_f = spec.f_zeros(v.dtype)
    K1 = xla_node_matrices(K1, spec)

    def apply(u):
        f = kern.faraday(u, zero_f, K1, spec)  # -(M^mu)^{-1} C u
        return -kern.ampere(jnp.zeros_like(u), f, K1, spec), f

    def body(_, v):
        w, _ = apply(v)
        return w / jnp.linalg.norm(w)

    v = jax.lax.fori_loop(0, iters, body, v / jnp.linalg.norm(v))
    return v, apply(v)[1]


def rayleigh_forms(u, f, E: dict, spec, xp=jnp):
    """(f^T M^mu f, u^T M^eps u) for u in the layout's order and f = (M^mu)^{-1} C u (its
    sign does not matter): the Rayleigh quotient of K in the M^eps inner product is
    their ratio, below rho by the square of u's error as an eigenvector (1/s^2). E: the
    packed "Mmu" and "Meps" of :func:`emjax.dga.step.energy`, float64; ``xp``: jax.numpy
    (:func:`_rayleigh`, the device's matrices) or NumPy (the host's)."""
    fr = kern.f_rows(f, spec)
    num = xp.sum(kern.sym4_form(E["Mmu"], fr, fr))
    den = sum(xp.sum(kern.cyclic_form(Me, ub, ub, xp))
              for ub, Me in zip(kern.u_blocks(u, spec), E["Meps"], strict=True))
    return num, den


_rayleigh = jax.jit(rayleigh_forms, static_argnames=("spec", "xp"))


def stable_dt(rho: float, safety: float) -> float:
    """``safety * 2 / sqrt(rho)`` in s."""
    return safety * 2.0 / math.sqrt(rho)


def pencil(ops):
    """(S, M, free): stiffness C^T (M^mu)^{-1} C and mass M^eps on the flat u, CSR,
    restricted to the free half edges (indices ``free`` into the flat u)."""
    import scipy.sparse as sp

    from .complex import C_REF

    cx = ops.cx
    nt = cx.num_tets
    Ct = cx.orientation[None, None, :] * C_REF[:, :, None]  # (4, 6, nt)
    rows = np.broadcast_to(np.arange(4)[:, None, None] * nt + np.arange(nt)[None, None, :],
                           Ct.shape)
    nz = Ct != 0
    Cu = sp.csr_matrix(
        (np.concatenate([Ct[nz], -Ct[nz]]),
         (np.concatenate([rows[nz], rows[nz]]),
          np.concatenate([np.broadcast_to(ops.hs[None], Ct.shape)[nz],
                          np.broadcast_to(ops.he[None], Ct.shape)[nz]]))),
        shape=(4 * nt, ops.nu))
    Minv = np.linalg.inv(np.moveaxis(ops.Mmu, 2, 0))  # (nt, 4, 4)
    r = np.arange(4)[None, :, None] * nt + np.arange(nt)[:, None, None]
    c = np.arange(4)[None, None, :] * nt + np.arange(nt)[:, None, None]
    Mmu_inv = sp.csr_matrix((Minv.ravel(), (np.broadcast_to(r, Minv.shape).ravel(),
                                            np.broadcast_to(c, Minv.shape).ravel())),
                            shape=(4 * nt, 4 * nt))
    S = (Cu.T @ Mmu_inv @ Cu).tocsr()
    mr, mc, mv = [], [], []
    free = np.zeros(ops.nu, bool)
    for b in ops.buckets:
        nv = b.count
        pos = b.offset + np.arange(b.width)[:, None] * nv + np.arange(nv)[None, :]
        free[pos[b.free]] = True
        Meps = b.Meps
        ii = np.broadcast_to(pos[:, None, :], Meps.shape)
        jj = np.broadcast_to(pos[None, :, :], Meps.shape)
        keep = Meps != 0
        mr.append(ii[keep]), mc.append(jj[keep]), mv.append(Meps[keep])
    M = sp.csr_matrix((np.concatenate(mv), (np.concatenate(mr), np.concatenate(mc))),
                      shape=(ops.nu, ops.nu))
    idx = np.nonzero(free)[0]
    return S[idx][:, idx].tocsr(), M[idx][:, idx].tocsc(), idx


def eigenfrequencies(ops, shifts_hz, per_shift: int = 6, null_tol: float = 1e-6) -> np.ndarray:
    """Distinct angular-free frequencies f = sqrt(lambda) / 2 pi (Hz) of the discrete
    operator found near each shift (Hz), gradients (lambda below ``null_tol`` times the
    shift) removed; sorted."""
    from scipy.sparse.linalg import eigsh

    S, M, _ = pencil(ops)
    found = []
    for fs in shifts_hz:
        sigma = (2 * math.pi * fs) ** 2
        lam = eigsh(S, k=per_shift, M=M, sigma=sigma, which="LM", return_eigenvectors=False)
        found.extend(lam[lam > null_tol * sigma].tolist())
    f = np.sqrt(np.sort(np.array(found))) / (2 * math.pi)
    keep = np.concatenate([[True], np.diff(f) > 1e-9 * f[1:]]) if f.size else f.astype(bool)
    return f[keep]


def leapfrog_frequency(f_exact_operator: np.ndarray, dt: float) -> np.ndarray:
    """Frequency (Hz) at which the leapfrog rings for an operator eigenfrequency (Hz):
    ``sin(omega dt / 2) = (dt / 2) sqrt(lambda)``, sqrt(lambda) = 2 pi f."""
    w = 2 * math.pi * np.asarray(f_exact_operator)
    return 2.0 / dt * np.arcsin(w * dt / 2) / (2 * math.pi)
