"""The DGATD operators: node buckets, the fractioned mass matrices summed into them,
their restricted inverses, and the global sparse matrices of the seed's formulation.

Seed 004, eqs. (3)-(6); the local matrices are :mod:`emjax.dga.local`'s. The Faraday
step uses ``s_t (M^mu_t)^{-1}`` (``Ms1``; with the curl, ``A_t = (M^mu_t)^{-1} s_t
C_REF``, 4 x 6 on full-edge circulations); the Ampere step uses ``(M^eps_v)^{-1}
diag(sign)`` per node, restricted to the half edges that are not on a PEC boundary
edge (those stay zero).

Canonical layout (the kernels' layouts of :mod:`emjax.dga.layout` permute it; see
:mod:`emjax.dga.step` for the kernels and the bytes they move):

* f: (4, nt), tets minor, so that neighbouring tets are neighbouring words;
* u: one flat array, nodes grouped into *buckets* of equal padded degree ``w``; a
  bucket holds a (w, nv_b) block (slot-major, node minor). Buckets make the Ampere
  step a dense batched product, as the Faraday step is (the seed used cuSPARSE there).
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial

import jax
import numpy as np

from ..driver.host import to_host
from .complex import C_REF, Complex
from .local import (
    corner_slots,
    local_math,
    local_on_device,
    node_matrices_on_device,
    node_sum,
    pack_cyclic,
    packed_inverse,
    spd_inverse,
    unpack_cyclic,
    unpack_sym4,
)


@dataclass(frozen=True, eq=False)
class Bucket:
    """Nodes of one padded degree ``width``: arrays (w, nv) or (w, w, nv), nodes minor."""

    width: int
    nodes: np.ndarray  # (nv,) node indices
    offset: int  # start of this block in the flat u
    edge: np.ndarray  # (w, nv) edge of each slot, ne for padding
    free: np.ndarray  # (w, nv) bool: a real half edge not on a PEC edge
    Minv_p: np.ndarray  # (w (w+1)/2, nv): (M^eps_v restricted)^{-1}, symmetric, packed
    Meps_p: np.ndarray  # (w (w+1)/2, nv) M^eps_v packed (local.pack_cyclic)
    Msig: np.ndarray | None  # (w, w, nv) conductance matrix, None when lossless
    sign: np.ndarray  # (w, nv) +1 on side 0, -1 on side 1, 0 for padding

    @property
    def count(self) -> int:
        return int(self.nodes.size)

    @property
    def Meps(self) -> np.ndarray:
        """(w, w, nv) M^eps_v, unpacked (lossy factors, references)."""
        return unpack_cyclic(self.Meps_p, self.width)

    @property
    def Minv_s(self) -> np.ndarray:
        """(w, w, nv) the restricted inverse times diag(sign) (sign by column), unpacked:
        zero off the free slots."""
        return unpack_cyclic(self.Minv_p, self.width) * self.sign[None]


@dataclass(frozen=True, eq=False)
class Operators:
    """Everything the kernels need, in NumPy float64 (the solver casts).

    Attributes:
        cx: the complex.
        Ms1: (10, nt) ``s_t (M^mu_t)^{-1}`` symmetrised, packed in ``local.SYM4`` order
            (1/H per m: the Faraday step's f per curl of u, with ``C_REF``).
        Mmu10: (10, nt) M^mu_t packed the same way (for the energy).
        hs, he: (6, nt) flat u positions of the side-0 and side-1 halves of each local edge.
        buckets: list of :class:`Bucket`.
        nu: length of the flat u (padding included).
        pec: (ne,) bool, edges held at zero.
        host_later: where the set-up formed the matrices on JAX's device, their
            copies to the host on their way (a Future of (Ms1, Mmu10, [(Meps_p, Msig,
            Minv_p) per bucket])), the matrix fields (``Ms1``, ``Mmu10`` and the
            buckets' ``Minv_p``, ``Meps_p``, ``Msig``) being the device arrays until
            :func:`on_host` (the set-up's, once it has dt: the power iteration reads
            them where they are); None when they are NumPy arrays.
    """

    cx: Complex
    Ms1: np.ndarray
    Mmu10: np.ndarray
    hs: np.ndarray
    he: np.ndarray
    buckets: list[Bucket]
    nu: int
    pec: np.ndarray
    he_pos: np.ndarray = field(repr=False)  # (ne, 2) flat position of each half edge
    host_later: Future | None = field(default=None, repr=False)

    @property
    def lossy(self) -> bool:
        return any(b.Msig is not None for b in self.buckets)

    @property
    def Mmu(self) -> np.ndarray:
        """(4, 4, nt) M^mu_t, unpacked (tests, references)."""
        return unpack_sym4(self.Mmu10)

    @property
    def A(self) -> np.ndarray:
        """(4, 6, nt) Faraday matrices ``(M^mu_t)^{-1} s_t C_REF`` (f per u)."""
        return np.einsum("kmt,me->ket", unpack_sym4(self.Ms1), C_REF)


def _on_device() -> bool:
    """Whether the set-up's local matrices may be formed on JAX's device: on an
    accelerator (2.7 s of NumPy at 2M DoFs on 2 CPU cores, 34.7 s at 20.2M on an H200's
    host; BENCHMARKS.md) with float64 on (the set-up switches it on; a direct call
    without it stays NumPy)."""
    return jax.default_backend() != "cpu" and bool(jax.config.jax_enable_x64)


def device_path(num_tets: int) -> bool:
    """Whether :func:`assemble` forms a mesh of ``num_tets`` tets' matrices on the device."""
    return _on_device() and num_tets >= DEVICE_LOCAL_FROM


DEVICE_LOCAL_FROM = 500_000
"""Tetrahedra from which the local matrices are formed on the device (where
:func:`_on_device`): their program compiles in 1.8-3.7 s on an H200's host where NumPy
takes about 5 us per tet, so a smaller mesh (the built-in ``cylinder-cavity``, 15,000
tets) is quicker in NumPy."""


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


def _groups(width: np.ndarray) -> tuple[list, np.ndarray, np.ndarray]:
    """([(w, nodes, offset)] per bucket, bucket of each node, its position there)."""
    groups, offset = [], 0
    bucket_of = np.empty(width.size, np.int64)
    pos_of = np.empty(width.size, np.int64)
    for bi, w in enumerate(np.unique(width)):
        nodes = np.nonzero(width == w)[0]
        bucket_of[nodes] = bi
        pos_of[nodes] = np.arange(nodes.size)
        groups.append((int(w), nodes, offset))
        offset += int(w) * nodes.size
    return groups, bucket_of, pos_of


def _slots(cx: Complex, pec: np.ndarray, bi: int, w: int, nv: int, bucket_of, pos_of):
    """(edge, sign, free) (w, nv) of bucket ``bi``: each slot's edge (ne: padding), +1 at
    the edge's side 0 and -1 at side 1, and whether it is a real half edge off the PEC."""
    ne = cx.num_edges
    edge = np.full((w, nv), ne, np.int64)
    sign = np.zeros((w, nv))
    for side in (0, 1):
        hs_node = cx.edges[:, side]
        e_ids = np.nonzero(bucket_of[hs_node] == bi)[0]
        at = (cx.slot[e_ids, side], pos_of[hs_node[e_ids]])
        edge[at] = e_ids
        sign[at] = 1.0 if side == 0 else -1.0
    return edge, sign, (edge < ne) & ~np.append(pec, True)[edge]


def _node_matrices(cx: Complex, eps_t, mu_t, sigma_t, groups, bucket_of, pos_of, slots,
                   ahead: Future | None):
    """(Ms1, Mmu10, [(Meps_p, Msig or None, Minv_p) per bucket], host_later), float64:
    device arrays and their copy to the host started on a thread
    (:attr:`Operators.host_later`), or NumPy arrays and None: on the
    device where :func:`_on_device` and the mesh is large (``ahead``: the local
    matrices' program compiled ahead, :func:`emjax.dga.local.compile_ahead`), else
    NumPy."""
    ratio = sigma_t / eps_t if sigma_t is not None and np.any(sigma_t > 0) else None
    if device_path(cx.num_tets):
        i32 = partial(np.asarray, dtype=np.int32)
        local = local_on_device if ahead is None else ahead.result()
        Me_r, Ms_r, Mmu10, Ms1 = local(cx.nodes, i32(cx.tets), cx.volumes, cx.orientation,
                                       eps_t, mu_t, ratio)
        per = node_matrices_on_device(
            Me_r, Ms_r, i32(cx.tets), i32(cx.slot), i32(cx.tet_edges), i32(bucket_of),
            i32(pos_of), [f for _, _, f in slots],
            counts=tuple(nodes.size for _, nodes, _ in groups))
        # 2.8 GB at 20.2M DoFs, 0.8-2.3 s on an H200's host: on a thread while the host
        # lays the operators out and the device finds dt (through pinned host memory)
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="emjax-node-matrices")
        later = pool.submit(to_host, (Ms1, Mmu10, per))
        pool.shutdown(wait=False)
        return Ms1, Mmu10, per, later
    Me_r, Ms_r, Mmu10, Ms1 = local_math(cx, eps_t, mu_t, ratio, np)
    slot_r, p_r, b_r = corner_slots(cx), pos_of[cx.tets], bucket_of[cx.tets]
    per = []
    for bi, ((w, nodes, _), (_, _, free)) in enumerate(zip(groups, slots, strict=True)):
        Meps, Msig = (None if M is None else node_sum(M, slot_r, p_r, b_r == bi, w, nodes.size)
                      for M in (Me_r, Ms_r))
        per.append((pack_cyclic(Meps), Msig, packed_inverse(restricted_inverse(Meps, free))))
    return Ms1, Mmu10, per, None


def assemble(cx: Complex, eps_t: np.ndarray, mu_t: np.ndarray, sigma_t: np.ndarray | None = None,
             pec_boundary: bool = True, min_share: float = NODE_MIN_SHARE,
             min_count: int = 256, ahead: Future | None = None,
             later: bool = False) -> Operators:
    """Build the operators; materials per tet in SI (F/m, H/m, S/m). ``min_share``,
    ``min_count``: node buckets of :func:`choose_buckets` (tests lower ``min_count`` to
    get several buckets on a small mesh); ``ahead``: see :func:`_node_matrices`;
    ``later``: matrices formed on the device stay there until :func:`on_host` (the
    set-up's), else they come to the host here."""
    ne = cx.num_edges
    pec = cx.edge_boundary.copy() if pec_boundary else np.zeros(ne, bool)
    width = choose_buckets(cx.degree, min_share=min_share, min_count=min_count)
    groups, bucket_of, pos_of = _groups(width)
    slots = [_slots(cx, pec, bi, w, nodes.size, bucket_of, pos_of)
             for bi, (w, nodes, _) in enumerate(groups)]
    Ms1, Mmu10, per, copies = _node_matrices(cx, eps_t, mu_t, sigma_t, groups, bucket_of,
                                             pos_of, slots, ahead)
    buckets = [Bucket(width=w, nodes=nodes, offset=off, edge=edge, free=free, Minv_p=Minv_p,
                      Meps_p=Meps_p, Msig=Msig, sign=sign)
               for (w, nodes, off), (edge, sign, free), (Meps_p, Msig, Minv_p)
               in zip(groups, slots, per, strict=True)]
    # flat position of every half edge; the Faraday gathers (the edge-sum tables are
    # the layout's: emjax.dga.edges)
    he_pos = np.empty((ne, 2), np.int64)
    offs = np.array([o for _, _, o in groups])
    nvs = np.array([nodes.size for _, nodes, _ in groups])
    for side in (0, 1):
        node = cx.edges[:, side]
        b = bucket_of[node]
        he_pos[:, side] = offs[b] + cx.slot[:, side] * nvs[b] + pos_of[node]
    ops = Operators(cx=cx, Ms1=Ms1, Mmu10=Mmu10, hs=he_pos[cx.tet_edges, 0].T.copy(),
                    he=he_pos[cx.tet_edges, 1].T.copy(), buckets=buckets,
                    nu=int(offs[-1] + nvs[-1] * groups[-1][0]),
                    pec=pec, he_pos=he_pos, host_later=copies)
    return ops if later else on_host(ops)


def on_host(ops: Operators) -> Operators:
    """``ops`` with NumPy matrices: their copies to the host (:attr:`Operators.
    host_later`) waited for where they were on their way; the device arrays are freed
    once unreferenced."""
    if ops.host_later is None:
        return ops
    Ms1, Mmu10, per = ops.host_later.result()
    buckets = [replace(b, Meps_p=Meps_p, Msig=Msig, Minv_p=Minv_p)
               for b, (Meps_p, Msig, Minv_p) in zip(ops.buckets, per, strict=True)]
    return replace(ops, Ms1=Ms1, Mmu10=Mmu10, buckets=buckets, host_later=None)


DEVICE_INVERSE_FROM = 8_000_000
"""Entries (w^2 nv) from which :func:`restricted_inverse` (the lossy buckets' factors at
dt) runs on the device: below,
NumPy takes under 0.2 s (44,738 10 x 10 inverses in 0.1 s on a 2-core VM) where the
device compiles one program per bucket shape (a gmsh mesh has 10-15 buckets; the
20.2M-DoF set-up compiled seven programs in 10.8 s on an H100's host, 2026-11-28)."""


def restricted_inverse(M: np.ndarray, free: np.ndarray) -> np.ndarray:
    """(w, w, nv): inverse of the symmetric positive definite M on the free slots of each
    node, zero elsewhere: NumPy's batched inverse, or on the device (large buckets)
    :func:`emjax.dga.local.spd_inverse`, the operators' own program's."""
    if _on_device() and M.size >= DEVICE_INVERSE_FROM:
        return to_host(_spd_inverse_on_device(M, free)).astype(np.float64, copy=False)
    Mb = np.moveaxis(M, 2, 0)  # (nv, w, w)
    mask = free.T[:, :, None] & free.T[:, None, :]
    Mb = np.where(mask, Mb, np.eye(M.shape[0]))
    return np.ascontiguousarray(np.moveaxis(np.where(mask, np.linalg.inv(Mb), 0.0), 0, 2))


_spd_inverse_on_device = jax.jit(spd_inverse)


def lossy_factors(b: Bucket, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """(Pm, Q) of ``u_new = Pm u + Q G`` for a lossy bucket (Crank-Nicolson in sigma):
    Q = (M/dt + S/2)^{-1} diag(sign), Pm = (M/dt + S/2)^{-1} (M/dt - S/2)."""
    Meps = b.Meps
    Lp = Meps / dt + b.Msig / 2
    inv = restricted_inverse(Lp, b.free)
    Lm = Meps / dt - b.Msig / 2
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
