"""Fractioned mass matrices, local curls and the GPU layout of the DGATD operators.

Seed 004, eqs. (3)-(6). In each hexahedron Omega_r (tet t, local node i) the uniform
basis functions are the dual bases of the tangent vectors, ``w^m . a^n = delta_mn``,
so ``W = A^{-T}`` and, with |Omega_r| = V_t / 4 (the barycentric subdivision splits a
tet into four parts of equal volume),

    M^eps_r = eps V/4 (A^T A)^{-1},     M^mu_r = mu V/4 (A~^T A~)^{-1}.

The four M^mu_r of a tet assemble into the 4x4 M^mu_t on its four half dual edges;
the M^eps_r around a node assemble into M^eps_v on its ``degree`` half edges. The
Faraday step uses ``A_t = (M^mu_t)^{-1} s_t C_REF`` (4 x 6 on full-edge circulations);
the Ampere step uses ``(M^eps_v)^{-1} diag(sign)`` per node, restricted to the half
edges that are not on a PEC boundary edge (those stay zero).

Canonical layout (the kernels' layouts of :mod:`emjax.dga.layout` permute it; see
:mod:`emjax.dga.step` for the kernels and the bytes they move):

* f: (4, nt), tets minor, so that neighbouring tets are neighbouring words;
* u: one flat array, nodes grouped into *buckets* of equal padded degree ``w``; a
  bucket holds a (w, nv_b) block (slot-major, node minor). Buckets make the Ampere
  step a dense batched product, as the Faraday step is (the seed used cuSPARSE there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np

from ..driver.host import to_host
from .complex import C_REF, OTHERS, Complex, hexahedra, local_edge_index


@dataclass(frozen=True, eq=False)
class Bucket:
    """Nodes of one padded degree ``width``: arrays (w, nv) or (w, w, nv), nodes minor."""

    width: int
    nodes: np.ndarray  # (nv,) node indices
    offset: int  # start of this block in the flat u
    edge: np.ndarray  # (w, nv) edge of each slot, ne for padding
    free: np.ndarray  # (w, nv) bool: a real half edge not on a PEC edge
    Minv_s: np.ndarray  # (w, w, nv): (M^eps_v restricted)^{-1} diag(sign), 0 elsewhere
    Meps: np.ndarray  # (w, w, nv) M^eps_v (for energy)
    Msig: np.ndarray | None  # (w, w, nv) conductance matrix, None when lossless
    sign: np.ndarray  # (w, nv) +1 on side 0, -1 on side 1, 0 for padding

    @property
    def count(self) -> int:
        return int(self.nodes.size)


@dataclass(frozen=True, eq=False)
class Operators:
    """Everything the kernels need, in NumPy float64 (the solver casts).

    Attributes:
        cx: the complex.
        A: (4, 6, nt) Faraday matrices ``(M^mu_t)^{-1} C_t`` (1/H per m... : f per u).
        Mmu: (4, 4, nt) for the energy.
        hs, he: (6, nt) flat u positions of the side-0 and side-1 halves of each local edge.
        buckets: list of :class:`Bucket`.
        nu: length of the flat u (padding included).
        pec: (ne,) bool, edges held at zero.
    """

    cx: Complex
    A: np.ndarray
    Mmu: np.ndarray
    hs: np.ndarray
    he: np.ndarray
    buckets: list[Bucket]
    nu: int
    pec: np.ndarray
    he_pos: np.ndarray = field(repr=False)  # (ne, 2) flat position of each half edge

    @property
    def lossy(self) -> bool:
        return any(b.Msig is not None for b in self.buckets)


def hex_matrices(cx: Complex, eps_t, mu_t, xp=np):
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


def _on_device() -> bool:
    """Whether the set-up's local matrices may be formed on JAX's device: on an
    accelerator (2.7 s of NumPy at 2M DoFs on 2 CPU cores, 34.7 s at 20.2M on an H200's
    host; BENCHMARKS.md) with float64 on (the set-up switches it on; a direct call
    without it stays NumPy)."""
    return jax.default_backend() != "cpu" and bool(jax.config.jax_enable_x64)


DEVICE_LOCAL_FROM = 500_000
"""Tetrahedra from which the local matrices are formed on the device (where
:func:`_on_device`): their program compiles in 1.8-3.7 s on an H200's host where NumPy
takes about 5 us per tet, so a smaller mesh (the built-in ``cylinder-cavity``, 15,000
tets) is quicker in NumPy."""


def _local_math(cx, eps_t, mu_t, ratio, xp):
    """(Me_r, Ms_r or None, Mmu, A) from ``cx``'s nodes, tets, volumes and orientation;
    ``ratio``: sigma / eps per tet, or None when lossless."""
    Me_r, Mmu_r = hex_matrices(cx, eps_t, mu_t, xp)
    Ms_r = None if ratio is None else Me_r * xp.asarray(ratio)[:, None, None, None]
    Mmu = tet_mu_matrix(Mmu_r, xp)
    rhs = xp.asarray(cx.orientation)[:, None, None] * xp.asarray(C_REF)[None]
    if xp is np:
        return Me_r, Ms_r, Mmu, np.linalg.solve(Mmu, rhs)  # A: (nt, 4, 6)
    return Me_r, Ms_r, Mmu, (inv4(Mmu)[..., :, :, None] * rhs[..., None, :, :]).sum(-2)


@jax.jit  # one compilation per mesh size, not one per eager operation
def _local_on_device(nodes, tets, volumes, orientation, eps_t, mu_t, ratio):
    cx = SimpleNamespace(nodes=nodes, tets=tets, volumes=volumes, orientation=orientation)
    return _local_math(cx, eps_t, mu_t, ratio, jnp)


def _local_operators(cx: Complex, eps_t, mu_t, sigma_t):
    """(Me_r, Ms_r or None, Mmu, A) of :func:`assemble` as NumPy float64, formed
    on the device where :func:`_on_device` says so (the same formulas; rounding may
    differ from NumPy's in the last bits)."""
    ratio = sigma_t / eps_t if sigma_t is not None and np.any(sigma_t > 0) else None
    if not (_on_device() and cx.num_tets >= DEVICE_LOCAL_FROM):
        return _local_math(cx, eps_t, mu_t, ratio, np)
    out = _local_on_device(cx.nodes, cx.tets, cx.volumes, cx.orientation, eps_t, mu_t, ratio)
    # through pinned host memory: 1.3-1.6 GB/s pageable against 40-50 (driver/host.py)
    return tuple(None if m is None else to_host(m).astype(np.float64, copy=False) for m in out)


def choose_buckets(degree: np.ndarray, min_share: float = 0.01,
                   min_count: int = 256) -> np.ndarray:
    """Padded width per node: distinct degrees, small groups merged into the next width."""
    widths = sorted(set(degree.tolist()))
    counts = {w: int((degree == w).sum()) for w in widths}
    keep, carry = [], 0
    n = degree.size
    for w in widths:
        carry += counts[w]
        if w == widths[-1] or carry >= max(min_count, min_share * n):
            keep.append(w)
            carry = 0
    keep = np.array(keep)
    return keep[np.searchsorted(keep, degree)]


NODE_MIN_SHARE = 0.1
"""``min_share`` of the node buckets (:func:`choose_buckets`): a degree group under a
tenth of the nodes joins the next width. On a gmsh cylinder (2.46M DoFs, degrees 7-22)
that makes 8 buckets instead of 14 for 2.4% padding, and the XLA step ran 0.112 -> 0.100
ms and compiled 4.1 -> 2.8 s on an H200 (fewer launches; BENCHMARKS.md); the seed's ring
meshes keep their two buckets (10 and 14)."""


def assemble(cx: Complex, eps_t: np.ndarray, mu_t: np.ndarray, sigma_t: np.ndarray | None = None,
             pec_boundary: bool = True, min_share: float = NODE_MIN_SHARE,
             min_count: int = 256) -> Operators:
    """Build the operators; materials per tet in SI (F/m, H/m, S/m). ``min_share``,
    ``min_count``: node buckets of :func:`choose_buckets` (tests lower ``min_count`` to
    get several buckets on a small mesh)."""
    ne, nn = cx.num_edges, cx.num_nodes
    Me_r, Ms_r, Mmu, A = _local_operators(cx, eps_t, mu_t, sigma_t)
    pec = cx.edge_boundary.copy() if pec_boundary else np.zeros(ne, bool)

    # half edges of each Omega_r: node, edge, side, slot
    LE = local_edge_index()
    le_r = np.array([[LE[i, j] for j in OTHERS[i]] for i in range(4)])  # (4, 3)
    side_r = np.array([[0 if i < j else 1 for j in OTHERS[i]] for i in range(4)])
    edge_r = cx.tet_edges[:, le_r]  # (nt, 4, 3)
    slot_r = cx.slot[edge_r, side_r[None]]  # (nt, 4, 3)
    node_r = cx.tets  # (nt, 4)

    width = choose_buckets(cx.degree, min_share=min_share, min_count=min_count)
    buckets, offset = [], 0
    bucket_of = np.empty(nn, np.int64)
    pos_of = np.empty(nn, np.int64)
    for bi, w in enumerate(np.unique(width)):
        nodes = np.nonzero(width == w)[0]
        bucket_of[nodes] = bi
        pos_of[nodes] = np.arange(nodes.size)
        buckets.append((int(w), nodes, offset))
        offset += int(w) * nodes.size
    nu = offset
    # flat position of every half edge
    he_pos = np.empty((ne, 2), np.int64)
    for side in (0, 1):
        node = cx.edges[:, side]
        b = bucket_of[node]
        offs = np.array([o for _, _, o in buckets])[b]
        nvs = np.array([nd.size for _, nd, _ in buckets])[b]
        he_pos[:, side] = offs + cx.slot[:, side] * nvs + pos_of[node]

    out = []
    for bi, (w, nodes, off) in enumerate(buckets):
        nv = nodes.size
        sel = bucket_of[node_r] == bi  # (nt, 4)
        t_idx, i_idx = np.nonzero(sel)
        p = pos_of[node_r[t_idx, i_idx]]
        sl = slot_r[t_idx, i_idx]  # (k, 3)
        flat = (sl[:, :, None] * w + sl[:, None, :]) * nv + p[:, None, None]
        size = w * w * nv

        def acc(M_r, flat=flat, t_idx=t_idx, i_idx=i_idx, size=size, w=w, nv=nv):
            return np.bincount(flat.ravel(), weights=M_r[t_idx, i_idx].ravel(),
                               minlength=size).reshape(w, w, nv)

        Meps = acc(Me_r)
        Msig = acc(Ms_r) if Ms_r is not None else None
        edge = np.full((w, nv), ne, np.int64)
        sign = np.zeros((w, nv))
        for side in (0, 1):
            hs_node = cx.edges[:, side]
            m = bucket_of[hs_node] == bi
            e_ids = np.nonzero(m)[0]
            edge[cx.slot[e_ids, side], pos_of[hs_node[e_ids]]] = e_ids
            sign[cx.slot[e_ids, side], pos_of[hs_node[e_ids]]] = 1.0 if side == 0 else -1.0
        free = (edge < ne) & ~np.append(pec, True)[edge]
        Minv_s = restricted_inverse(Meps, free) * sign[None, :, :]
        out.append(Bucket(width=w, nodes=nodes, offset=off, edge=edge, free=free,
                          Minv_s=Minv_s, Meps=Meps, Msig=Msig, sign=sign))

    # Faraday gathers (the edge-sum tables are the layout's: emjax.dga.edges)
    hs = he_pos[cx.tet_edges, 0].T.copy()  # (6, nt)
    he = he_pos[cx.tet_edges, 1].T.copy()
    return Operators(cx=cx, A=np.ascontiguousarray(np.moveaxis(A, 0, 2)),
                     Mmu=np.ascontiguousarray(np.moveaxis(Mmu, 0, 2)), hs=hs, he=he,
                     buckets=out, nu=nu, pec=pec, he_pos=he_pos)


DEVICE_INVERSE_FROM = 8_000_000
"""Entries (w^2 nv) from which :func:`restricted_inverse` runs on the device: below,
NumPy takes under 0.2 s (44,738 10 x 10 inverses in 0.1 s on a 2-core VM) where the
device compiles one program per bucket shape (a gmsh mesh has 10-15 buckets; the
20.2M-DoF set-up compiled seven programs in 10.8 s on an H100's host, 2026-11-28)."""


def restricted_inverse(M: np.ndarray, free: np.ndarray) -> np.ndarray:
    """(w, w, nv): inverse of M on the free slots of each node, zero elsewhere."""
    device = _on_device() and M.size >= DEVICE_INVERSE_FROM
    inv = _inverse_on_device(M, free) if device else _inverse(M, free, np)
    return np.ascontiguousarray(np.moveaxis(to_host(inv).astype(np.float64, copy=False), 0, 2))


def _inverse(M, free, xp):
    """(nv, w, w) inverses of :func:`restricted_inverse`, node major."""
    Mb = xp.moveaxis(xp.asarray(M), 2, 0)  # (nv, w, w)
    fr = xp.asarray(free).T  # (nv, w)
    mask = fr[:, :, None] & fr[:, None, :]
    eye = xp.broadcast_to(xp.eye(M.shape[0], dtype=bool), Mb.shape)
    Mb = xp.where(mask, Mb, xp.where(eye, 1.0, 0.0))
    return xp.where(mask, xp.linalg.inv(Mb), 0.0)


_inverse_on_device = jax.jit(partial(_inverse, xp=jnp))


def lossy_factors(b: Bucket, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """(Pm, Q) of ``u_new = Pm u + Q G`` for a lossy bucket (Crank-Nicolson in sigma):
    Q = (M/dt + S/2)^{-1} diag(sign), Pm = (M/dt + S/2)^{-1} (M/dt - S/2)."""
    Lp = b.Meps / dt + b.Msig / 2
    inv = restricted_inverse(Lp, b.free)
    Lm = b.Meps / dt - b.Msig / 2
    Pm = np.einsum("ijv,jkv->ikv", inv, Lm)
    return Pm, inv * b.sign[None]


def sparse_matrices(ops: Operators, dt: float):
    """Global scipy CSR matrices of the seed's "SpMV" formulation (same flat layout):
    ``f -= F u`` with F (4 nt, nu) and ``u = Pm u + G f`` with G (nu, 4 nt); Pm is None
    when lossless (identity)."""
    import scipy.sparse as sp

    cx = ops.cx
    nt, ne = cx.num_tets, cx.num_edges
    A = ops.A * dt  # (4, 6, nt)
    rows = (np.arange(4)[:, None, None] * nt + np.arange(nt)[None, None, :])
    rows = np.broadcast_to(rows, A.shape)
    F = sp.csr_matrix(
        (np.concatenate([A.ravel(), -A.ravel()]),
         (np.concatenate([rows.ravel(), rows.ravel()]),
          np.concatenate([np.broadcast_to(ops.hs[None], A.shape).ravel(),
                          np.broadcast_to(ops.he[None], A.shape).ravel()]))),
        shape=(4 * nt, ops.nu))
    # edge sums: G_e = sum_t (s_t C_REF^T f_t)_e
    C = cx.orientation[None, None, :] * C_REF[:, :, None]  # (4, 6, nt)
    r = np.broadcast_to(cx.tet_edges.T[None], C.shape)  # edge
    c = np.broadcast_to(np.arange(4)[:, None, None] * nt + np.arange(nt)[None, None, :], C.shape)
    nz = C != 0
    Gm = sp.csr_matrix((C[nz], (r[nz], c[nz])), shape=(ne, 4 * nt))
    Qr, Qc, Qv, Pr, Pc, Pv = [], [], [], [], [], []
    for b in ops.buckets:
        nv = b.count
        pos = b.offset + np.arange(b.width)[:, None] * nv + np.arange(nv)[None, :]  # (w, nv)
        if b.Msig is not None:
            Pm, Q = lossy_factors(b, dt)
        else:
            Pm, Q = None, b.Minv_s * dt
        ii = np.broadcast_to(pos[:, None, :], Q.shape)
        jj = np.broadcast_to(b.edge[None, :, :], Q.shape)
        keep = (Q != 0) & (jj < ne)
        Qr.append(ii[keep]), Qc.append(jj[keep]), Qv.append(Q[keep])
        if Pm is not None:
            kk = np.broadcast_to(pos[None, :, :], Pm.shape)
            k2 = Pm != 0
            Pr.append(ii[k2]), Pc.append(kk[k2]), Pv.append(Pm[k2])
        else:
            d = pos.ravel()
            Pr.append(d), Pc.append(d), Pv.append(np.ones(d.size))
    Q = sp.csr_matrix((np.concatenate(Qv), (np.concatenate(Qr), np.concatenate(Qc))),
                      shape=(ops.nu, ne))
    Pm = None
    if ops.lossy:
        Pm = sp.csr_matrix((np.concatenate(Pv), (np.concatenate(Pr), np.concatenate(Pc))),
                           shape=(ops.nu, ops.nu))
    return F.tocsr(), (Q @ Gm).tocsr(), Pm, Q.tocsr()
