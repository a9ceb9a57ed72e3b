"""A matrix-free preconditioner for the symmetrized FDFD system (separable storage).

Preconditioned COCG (:func:`emjax.fdfd.krylov.make_cocg` with ``precond``; van der
Vorst and Melissen 1990) needs a complex-symmetric M (M^T = M, unconjugated): z = M r,
rho = r^T z, p = z + beta p, alpha = rho / p^T A p.

:func:`fast_diag` builds the shifted curl-curl preconditioner of a homogeneous box

    M = r (curl' curl' - s)^(-1) r^(-1),   s = k0^2 eps_bg (1 - j beta)   (1/m^2),

curl' the stretched-coordinate Yee curls of the actual grid (same PML, same PEC walls,
uniform spacing), r = sqrt(s_x s_y s_z) as in :func:`emjax.fdfd.operator.apply_sep`:
the exact inverse of the symmetrized operator with eps_r replaced by s / k0^2 (the
sphere is left out). It is inverted by fast diagonalization (Lynch, Rice and Thomas
1964): the 1D stretched second differences along one axis (integer nodes, Dirichlet
walls; half nodes) are diagonalized once (n x n eigenvector matrices), and since the
1D difference operators of different axes commute, the mode (m_x, m_y, m_z) couples
the three components only through the 3 x 3 symbol ``(sig.sig) I - sig sig^T``
(unconjugated, sig_a^2 the 1D eigenvalues). Its inverse is the transverse part
1 / (sig.sig - s) plus the longitudinal (gradient) part -1 / s. With no PML the bases
are the DCT-II (own axis) and DST-I (other axes) of the PEC box. Wall samples (E
tangential to a lower wall, decoupled in the symmetrized system) get 1 / kw_wall, the
exact inverse there. Per application: 18 dense 1D transforms (n x n complex matrices
along one axis of an (n, n, n) array), O(n^4) each, as one batched product per axis.

Measured (``benchmarks/precond_study.py``, CPU): COCG on the seed's sphere needs 12 and
20 iterations to 1e-3 and 1e-6 at 64^3 and 96^3 with beta = 0 (plain COCG: 1381 and
1895 at 96^3); the constant-coefficient version without PML diverges.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def from_ops(ops, r):
    """M r with the operands of :func:`fast_diag` in ``ops["pc"]``: the ``precond`` of
    :func:`emjax.fdfd.krylov.make_cocg` for an operator prepared with
    ``preconditioner="fastdiag"``."""
    return apply_fast_diag(ops["pc"], r)


# ------------------------------------------------- fast-diagonalization preconditioner
def _axis_basis(s_int, s_half, d: float):
    """1D eigenbases of one axis of the stretched Yee curl-curl (PEC walls).

    F: integer nodes 1..n-1 (0 and n are walls, zero) -> half nodes 0..n-1,
    (F u)[j] = (u[j+1] - u[j]) / (s_half[j] d); B = -diag(1 / (s_int d)) F'^T, the
    backward difference half -> integer. -B F = U diag(lam) U^-1 ((n-1) x (n-1)); the
    half-node basis is V = [1, F U / sig], sig = sqrt(lam), so that F u_m = sig_m v_m
    and B v_m = -sig_m u_m (v_0 = 1: B 1 = 0). Returns (U, U^-1, V, V^-1) embedded in
    n x n (integer mode and sample 0 unused) and sig (n,), sig[0] = 0."""
    n = len(s_half)
    dm = np.zeros((n, n - 1))
    dm[np.arange(n - 1), np.arange(n - 1)] = 1.0
    dm[np.arange(1, n), np.arange(n - 1)] = -1.0
    f = dm / (np.asarray(s_half)[:, None] * d)
    b = -dm.T / (np.asarray(s_int)[1:, None] * d)
    lam, u = np.linalg.eig(-b @ f)
    order = np.argsort(lam.real)
    lam, u = lam[order], u[:, order]
    sig = np.sqrt(lam.astype(complex))
    v = np.concatenate([np.ones((n, 1)), (f @ u) / sig], axis=1)
    ue = np.zeros((n, n), complex)
    ue[1:, 1:] = u
    uie = np.zeros((n, n), complex)
    uie[1:, 1:] = np.linalg.inv(u)
    return ue, uie, v, np.linalg.inv(v), np.concatenate([[0.0], sig])


def fast_diag(shape, spacing, shift: complex, kw_wall: complex, s_int=None, s_half=None,
              r=None, per_x: bool | None = None) -> dict:
    """Operands of :func:`apply_fast_diag`: M = r (curl' curl' - shift)^(-1) r^(-1), the
    exact inverse of the symmetrized operator of a homogeneous box (mu0 T + k0^2 eps_r
    + shift, i.e. eps_r replaced by the constant shift / k0^2) with the PML stretching
    ``s_int``/``s_half`` (per axis, (n,) complex; None: no PML, then the bases are the
    DST-I / DCT-II of a uniform PEC box); ``r`` (3, nx, ny, nz): sqrt(s_x s_y s_z) at the
    E samples (None: 1). ``shift`` in 1/m^2 (k0^2 eps_bg (1 - 1j beta)); ``kw_wall``:
    the diagonal of mu0 T at the wall samples. ``per_x`` (default: on a GPU) stores the
    y transform's matrices once per x, (3, nx, ny, ny) (:func:`per_x_bytes`), so that it
    is a product batched over (component, x) in the array's own order, without the
    transposes XLA otherwise puts around it (:func:`_transform3`)."""
    if any(n < 2 for n in shape):
        raise ValueError(f"shape = {tuple(shape)}: every axis needs >= 2 cells")
    if complex(shift) == 0 or complex(kw_wall) == 0:
        raise ValueError(f"shift = {shift}, kw_wall = {kw_wall}: both must be nonzero (1/m^2; "
                         "e.g. shift = k0^2 eps_bg, kw_wall = -k0^2)")
    if per_x is None:
        per_x = jax.default_backend() == "gpu"
    bases = []
    done: dict = {}  # axes alike (a cube's) share one eigendecomposition
    for b, (n, d) in enumerate(zip(shape, spacing, strict=True)):
        si = np.ones(n) if s_int is None else np.asarray(s_int[b])
        sh = np.ones(n) if s_half is None else np.asarray(s_half[b])
        key = (float(d), si.tobytes(), sh.tobytes())
        if key not in done:
            done[key] = _axis_basis(si, sh, d)
        bases.append(done[key])
    # per axis b, the (3, n, n) matrices of the three components: the half-node basis
    # along the component's own axis (b = a), the integer-node one along the others
    fwd, inv = [], []
    for b, (ue, uie, v, vi, _) in enumerate(bases):
        fwd.append(np.stack([vi if a == b else uie for a in range(3)]))
        inv.append(np.stack([v if a == b else ue for a in range(3)]))
    if per_x:
        fwd[1], inv[1] = (np.broadcast_to(m[:, None], (3, shape[0], *m.shape[1:]))
                          for m in (fwd[1], inv[1]))
    return {"fwd": tuple(jnp.asarray(m) for m in fwd),
            "inv": tuple(jnp.asarray(m) for m in inv),
            "sig": tuple(jnp.asarray(sg) for *_, sg in bases),
            "shift": jnp.asarray(complex(shift)),
            "inv_wall": jnp.asarray(1.0 / complex(kw_wall)), "r": r,
            "r_inv": None if r is None else 1.0 / jnp.asarray(r)}


def per_x_bytes(shape) -> int:
    """Device bytes of the per-x y matrices of :func:`fast_diag` (complex128)."""
    nx, ny, _ = shape
    return 2 * 3 * nx * ny * ny * 16


def _transform3(mats, u):
    """Per axis b, component a of ``u`` (3, nx, ny, nz) times its matrix along axis b:
    one batched matrix product per axis, the component as batch (0.997 -> 0.658 ms per
    application at 96^3 on an H100 against one component at a time), each written so
    that its product comes out in u's order: x with the matrix on the left, z with u
    on the left, y batched over (component, x) where its matrices are stored per x
    (0.81 -> 0.70 ms at 96^3 on an H200, 2026-11-28; on a CPU those small products ran
    slower, 14.2 -> 17.5 ms at 48^3, BENCHMARKS.md)."""
    # full precision: XLA:GPU may run float32 products in TF32 otherwise
    hi = lax.Precision.HIGHEST
    u = jnp.einsum("cab,cbyz->cayz", mats[0], u, precision=hi)
    y = "cxab,cxbz->cxaz" if mats[1].ndim == 4 else "cab,cxbz->cxaz"
    u = jnp.einsum(y, mats[1], u, precision=hi)
    return jnp.einsum("cxyb,cab->cxya", u, mats[2], precision=hi)


def apply_fast_diag(pops, y):
    """M y for :func:`fast_diag` (y of shape (3, nx, ny, nz))."""
    shape = y.shape[1:]
    r = pops["r"]
    x = y if r is None else y * pops["r_inv"]
    xh = list(_transform3(pops["fwd"], x))
    sg = [pops["sig"][b].reshape([-1 if i == b else 1 for i in range(3)]) for b in range(3)]
    s2 = sg[0] * sg[0] + sg[1] * sg[1] + sg[2] * sg[2]  # unconjugated sig . sig
    s = pops["shift"]
    tr = 1.0 / (s2 - s)
    safe = jnp.where(s2 != 0, s2, 1.0)
    lg = (-1.0 / s - tr) / safe  # (longitudinal - transverse) / (sig . sig)
    sdotx = sg[0] * xh[0] + sg[1] * xh[1] + sg[2] * xh[2]
    zh = [tr * xh[a] + lg * sg[a] * sdotx for a in range(3)]
    z = _transform3(pops["inv"], jnp.stack(zh))
    if r is not None:
        z = r * z
    return jnp.where(wall_samples(shape), pops["inv_wall"] * y, z)


def wall_samples(shape):
    """(3, nx, ny, nz) bool: the E samples on a lower PEC wall (index 0 along an axis
    other than the component's), decoupled in the symmetrized system: M gives them
    1 / kw."""
    wall = []
    for a in range(3):
        m = jnp.zeros(shape, bool)
        for b in range(3):
            if b != a:
                m = m | (lax.broadcasted_iota(jnp.int32, shape, b) == 0)
        wall.append(m)
    return jnp.stack(wall)
