"""Local matrices of the fractioned DGATD and their sums at the nodes (seed 004, eqs. 3-6).

In each hexahedron Omega_r (tet t, local node i) the uniform basis functions are the
dual bases of the tangent vectors, ``w^m . a^n = delta_mn``, so ``W = A^{-T}`` and, with
|Omega_r| = V_t / 4 (the barycentric subdivision splits a tet into four parts of equal
volume),

    M^eps_r = eps V/4 (A^T A)^{-1},     M^mu_r = mu V/4 (A~^T A~)^{-1}.

The four M^mu_r of a tet assemble into the 4x4 M^mu_t on its four half dual edges; the
Faraday step reads ``s_t (M^mu_t)^{-1}`` packed symmetric (``Ms1``, (10, nt) in
:data:`SYM4` order; the +-1 curl ``C_REF`` is applied in the kernels). The M^eps_r
around a node sum into M^eps_v on its ``degree`` half edges (:func:`node_sum`), whose
inverse restricted to the free half edges the Ampere step reads.

Every formula takes ``xp`` (NumPy, the CPU path; jax.numpy, an accelerator's), and
:func:`local_on_device` and :func:`node_matrices_on_device` run the chain on the device,
from the mesh to the node matrices and their inverses, so that only the packed and
summed matrices come back to the host (at 20.2M DoFs the per-Omega_r matrices alone are 0.94
GB; BENCHMARKS.md).
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np

from .complex import OTHERS, hexahedra, local_edge_index

SYM4 = ((0, 0), (1, 1), (2, 2), (3, 3), (0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
"""Packed order of the 10 entries of a symmetric 4x4 matrix (rows of ``Ms1``, ``Mmu10``)."""


def pack_sym4(M, xp=np):
    """Symmetric (4, 4, ...) -> (10, ...): its upper triangle in ``SYM4`` order."""
    return xp.stack([M[k, m] for k, m in SYM4])


def unpack_sym4(P: np.ndarray) -> np.ndarray:
    """(10, ...) in ``SYM4`` order -> the symmetric (4, 4, ...)."""
    M = np.empty((4, 4, *P.shape[1:]), P.dtype)
    for r, (k, m) in enumerate(SYM4):
        M[k, m] = M[m, k] = P[r]
    return M


def cyclic_size(width: int) -> int:
    """Rows of :func:`pack_cyclic`'s packing of a symmetric w x w matrix: w (w + 1) / 2."""
    return width * (width + 1) // 2


def pack_cyclic(M, xp=np):
    """Symmetric (w, w, nv) -> (w (w + 1) / 2, nv), exactly the numbers of each node's
    matrix: row ``d w + i`` holds ``M[i, (i + d) mod w]`` (cyclic diagonals d = 0 .. (w -
    1) // 2), and for even w the last w / 2 rows ``M[i, i + w / 2]``. The node kernels'
    order (:mod:`emjax.dga.arrays`: ``D``, then ``Dh``) and the energy monitor's."""
    w = M.shape[0]
    i = np.arange(w)
    rows = [M[i, (i + d) % w] for d in range((w - 1) // 2 + 1)]
    if w % 2 == 0:
        rows.append(M[np.arange(w // 2), np.arange(w // 2) + w // 2])
    return xp.concatenate(rows)


def unpack_cyclic(P: np.ndarray, width: int) -> np.ndarray:
    """(w (w + 1) / 2, nv) of :func:`pack_cyclic` -> the symmetric (w, w, nv)."""
    w = width
    M = np.empty((w, w, P.shape[-1]), P.dtype)
    i = np.arange(w)
    for d in range((w - 1) // 2 + 1):
        M[i, (i + d) % w] = M[(i + d) % w, i] = P[d * w:(d + 1) * w]
    if w % 2 == 0:
        h = np.arange(w // 2)
        M[h, h + w // 2] = M[h + w // 2, h] = P[((w - 1) // 2 + 1) * w:]
    return M


def split_cyclic(P: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(D (nd, w, nv), Dh (w / 2, nv) or None): :func:`pack_cyclic`'s rows as the cyclic
    diagonals and the half diagonal (views)."""
    nd = (width - 1) // 2 + 1
    D = P[:nd * width].reshape(nd, width, P.shape[-1])
    return D, (P[nd * width:] if width % 2 == 0 else None)


def hex_matrices(cx, eps_t, mu_t, xp=np):
    """(Me_r, Mmu_r): (nt, 4, 3, 3) fractioned local mass matrices (F and H units);
    ``xp`` as in :func:`emjax.dga.complex.hexahedra`."""
    a, at = hexahedra(cx, xp=xp)
    q = xp.asarray(cx.volumes)[:, None, None, None] / 4.0
    Ge = inv3(_gram(a, xp), xp)
    Gm = inv3(_gram(at, xp), xp)
    return (xp.asarray(eps_t)[:, None, None, None] * q * Ge,
            xp.asarray(mu_t)[:, None, None, None] * q * Gm)


def _gram(a, xp):
    """(..., 3, 3) Gram matrices a^T a of a stack (..., 3, 3). In JAX a product and a
    sum, which XLA fuses into one loop: as a batched dot it became a cuBLAS call whose
    autotuning and compilation made the local matrices' program compile for 3.8 s on a
    2.46M-DoF mesh against 1.6 s (H200, 2026-11-28, with :func:`inv4`)."""
    if xp is np:
        return np.einsum("tixm,tixn->timn", a, a)
    return (a[..., :, :, None] * a[..., :, None, :]).sum(-3)


def inv4(M, xp=jnp):
    """Inverse of a stack (..., 4, 4) from its 2 x 2 minors (the adjugate over the
    determinant), elementwise: the device path's replacement of a batched LU solve."""
    m = [[M[..., i, j] for j in range(4)] for i in range(4)]
    s = [m[0][a] * m[1][b] - m[1][a] * m[0][b] for a, b in _PAIRS]  # rows 0, 1
    c = [m[2][a] * m[3][b] - m[3][a] * m[2][b] for a, b in _PAIRS]  # rows 2, 3
    det = s[0] * c[5] - s[1] * c[4] + s[2] * c[3] + s[3] * c[2] - s[4] * c[1] + s[5] * c[0]
    adj = [[m[1][1] * c[5] - m[1][2] * c[4] + m[1][3] * c[3],
            -m[0][1] * c[5] + m[0][2] * c[4] - m[0][3] * c[3],
            m[3][1] * s[5] - m[3][2] * s[4] + m[3][3] * s[3],
            -m[2][1] * s[5] + m[2][2] * s[4] - m[2][3] * s[3]],
           [-m[1][0] * c[5] + m[1][2] * c[2] - m[1][3] * c[1],
            m[0][0] * c[5] - m[0][2] * c[2] + m[0][3] * c[1],
            -m[3][0] * s[5] + m[3][2] * s[2] - m[3][3] * s[1],
            m[2][0] * s[5] - m[2][2] * s[2] + m[2][3] * s[1]],
           [m[1][0] * c[4] - m[1][1] * c[2] + m[1][3] * c[0],
            -m[0][0] * c[4] + m[0][1] * c[2] - m[0][3] * c[0],
            m[3][0] * s[4] - m[3][1] * s[2] + m[3][3] * s[0],
            -m[2][0] * s[4] + m[2][1] * s[2] - m[2][3] * s[0]],
           [-m[1][0] * c[3] + m[1][1] * c[1] - m[1][2] * c[0],
            m[0][0] * c[3] - m[0][1] * c[1] + m[0][2] * c[0],
            -m[3][0] * s[3] + m[3][1] * s[1] - m[3][2] * s[0],
            m[2][0] * s[3] - m[2][1] * s[1] + m[2][2] * s[0]]]
    return xp.stack([xp.stack(r, -1) for r in adj], -2) / det[..., None, None]


_PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))


def inv3(M, xp=np):
    """Inverse of a stack (..., 3, 3) by cofactors (10x faster than batched LAPACK)."""
    c0 = xp.cross(M[..., 1, :], M[..., 2, :])
    c1 = xp.cross(M[..., 2, :], M[..., 0, :])
    c2 = xp.cross(M[..., 0, :], M[..., 1, :])
    det = xp.einsum("...i,...i->...", M[..., 0, :], c0)
    return xp.stack([c0, c1, c2], axis=-1) / det[..., None, None]


def tet_mu_matrix(Mmu_r, xp=np):
    """Assemble the four Omega_r matrices of each tet into (nt, 4, 4) on its faces."""
    M = xp.zeros((Mmu_r.shape[0], 4, 4), Mmu_r.dtype)
    for i in range(4):
        o = OTHERS[i]
        at = (slice(None), o[:, None], o[None, :])
        if xp is np:
            M[at] += Mmu_r[:, i]
        else:
            M = M.at[at].add(Mmu_r[:, i])
    return M


def local_math(cx, eps_t, mu_t, ratio, xp):
    """(Me_r, Ms_r or None, Mmu10, Ms1) from ``cx``'s nodes, tets, volumes and
    orientation: the Omega_r matrices (nt, 4, 3, 3) of eps and sigma (``ratio``: sigma /
    eps per tet, or None when lossless), and per tet M^mu_t and ``s_t (M^mu_t)^{-1}``
    symmetrised, both packed (10, nt)."""
    Me_r, Mmu_r = hex_matrices(cx, eps_t, mu_t, xp)
    Ms_r = None if ratio is None else Me_r * xp.asarray(ratio)[:, None, None, None]
    Mmu = tet_mu_matrix(Mmu_r, xp)  # (nt, 4, 4)
    inv = np.linalg.inv(Mmu) if xp is np else inv4(Mmu)
    inv = 0.5 * (inv + xp.swapaxes(inv, 1, 2))
    Ms1 = pack_sym4(xp.moveaxis(inv, 0, 2), xp) * xp.asarray(cx.orientation)[None, :]
    return Me_r, Ms_r, pack_sym4(xp.moveaxis(Mmu, 0, 2), xp), Ms1


def corner_slots(cx, xp=np):
    """(nt, 4, 3): the slot, in the node's half-edge list, of the three half edges of
    each Omega_r (tet corner i, its edges to the other three nodes ascending)."""
    LE = local_edge_index()
    le_r = np.array([[LE[i, j] for j in OTHERS[i]] for i in range(4)])  # (4, 3)
    side_r = np.array([[0 if i < j else 1 for j in OTHERS[i]] for i in range(4)])
    return xp.asarray(cx.slot)[xp.asarray(cx.tet_edges)[:, le_r], side_r[None]]


def node_sum(M_r, slot_r, pos_r, in_bucket, width: int, count: int, xp=np):
    """(w, w, nv) M^eps_v of one node bucket: the (nt, 4, 3, 3) Omega_r matrices ``M_r``
    added at (slot, slot, node position) of the corners ``in_bucket`` (nt, 4) bool;
    ``pos_r`` (nt, 4) each corner node's position in its bucket."""
    size = width * width * count
    if xp is np:
        t_idx, i_idx = np.nonzero(in_bucket)
        sl, p = slot_r[t_idx, i_idx], pos_r[t_idx, i_idx]  # (k, 3), (k,)
        flat = (sl[:, :, None] * width + sl[:, None, :]) * count + p[:, None, None]
        return np.bincount(flat.ravel(), weights=M_r[t_idx, i_idx].ravel(),
                           minlength=size).reshape(width, width, count)
    flat = (slot_r[..., :, None] * width + slot_r[..., None, :]) * count + pos_r[..., None, None]
    flat = jnp.where(in_bucket[..., None, None], flat, size)  # the others dropped
    return jnp.zeros(size, M_r.dtype).at[flat.ravel()].add(M_r.ravel(), mode="drop") \
        .reshape(width, width, count)


def spd_inverse(M, free):
    """(w, w, nv): each node's symmetric positive definite M restricted to its ``free``
    (w, nv) slots, inverted, zero elsewhere; Gauss-Jordan without pivoting (safe for SPD
    matrices), elementwise over the nodes (minor axis), one pass of the array per slot:
    no batched LU program per bucket shape."""
    w = M.shape[0]
    mask = free[:, None, :] & free[None, :, :]
    A = jnp.where(mask, M, jnp.eye(w, dtype=M.dtype)[:, :, None])
    k_of = jnp.arange(w)

    def pivot(k, A):
        p = A[k, k]  # (nv,)
        row, col = A[k] / p, A[:, k]  # (w, nv) each
        at_k = (k_of == k)[:, None]
        A = A - col[:, None, :] * row[None, :, :]
        A = jnp.where(at_k[:, :, None], jnp.where(at_k, 1.0 / p, row)[None], A)
        return jnp.where(at_k[None], jnp.where(at_k, 1.0 / p, -col / p)[:, None], A)

    return jnp.where(mask, jax.lax.fori_loop(0, w, pivot, A), 0.0)


@jax.jit  # one compilation per mesh size, not one per eager operation
def local_on_device(nodes, tets, volumes, orientation, eps_t, mu_t, ratio):
    """:func:`local_math` on the device: (Me_r, Ms_r or None, Mmu10, Ms1)."""
    cx = SimpleNamespace(nodes=nodes, tets=tets, volumes=volumes, orientation=orientation)
    return local_math(cx, eps_t, mu_t, ratio, jnp)


def compile_ahead(num_nodes: int, num_tets: int, lossy: bool) -> Future:
    """:func:`local_on_device` compiled for these sizes on a thread of its own (XLA
    compiles outside the GIL), started once the mesh is known, while the host renumbers
    it and builds the complex (the program compiled for 1.8-3.5 s at 20.2M DoFs on an
    H200's host, BENCHMARKS.md). The result is called with the arguments of
    :func:`local_on_device`, ``tets`` int32, ``ratio`` None unless ``lossy``."""
    f64 = partial(jax.ShapeDtypeStruct, dtype=np.float64)
    per_tet = f64((num_tets,))
    args = (f64((num_nodes, 3)), jax.ShapeDtypeStruct((num_tets, 4), np.int32), per_tet,
            per_tet, per_tet, per_tet, per_tet if lossy else None)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="emjax-compile-ahead")
    future = pool.submit(lambda: local_on_device.lower(*args).compile())
    pool.shutdown(wait=False)
    return future


def packed_inverse(Minv, xp=np):
    """:func:`pack_cyclic` of the symmetric part of restricted inverses (w, w, nv): what
    the node kernels read (times dt). Gauss-Jordan's inverse is symmetric only to
    rounding; its symmetric part is what the kernels have always been given."""
    return pack_cyclic(0.5 * (Minv + xp.swapaxes(Minv, 0, 1)), xp)


@partial(jax.jit, static_argnames=("counts",))
def node_matrices_on_device(Me_r, Ms_r, tets, slot, tet_edges, bucket_of, pos_of, frees,
                            counts):
    """[(Meps_p, Msig or None, Minv_p) per bucket] as :func:`emjax.dga.mass.assemble`
    forms them, from the Omega_r matrices on the device, M^eps_v and its restricted
    inverse packed (:func:`pack_cyclic`; about half the bytes of the full matrices to
    bring to the host): ``frees`` (w, nv) per bucket, ``counts`` their node counts
    (static)."""
    slot_r = corner_slots(SimpleNamespace(slot=slot, tet_edges=tet_edges), jnp)
    b_r, p_r = bucket_of[tets], pos_of[tets]
    out = []
    for bi, (free, nv) in enumerate(zip(frees, counts, strict=True)):
        w = free.shape[0]
        Meps = node_sum(Me_r, slot_r, p_r, b_r == bi, w, nv, jnp)
        Msig = None if Ms_r is None else node_sum(Ms_r, slot_r, p_r, b_r == bi, w, nv, jnp)
        out.append((pack_cyclic(Meps, jnp), Msig,
                    packed_inverse(spd_inverse(Meps, free), jnp)))
    return out


__all__ = ["SYM4", "compile_ahead", "corner_slots", "cyclic_size", "hex_matrices", "inv3",
           "inv4", "local_math", "local_on_device", "node_matrices_on_device", "node_sum",
           "pack_cyclic", "pack_sym4", "packed_inverse", "spd_inverse", "split_cyclic",
           "tet_mu_matrix", "unpack_cyclic", "unpack_sym4"]
