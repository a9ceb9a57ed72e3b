"""The primal complex and its barycentric dual, as the fractioned DGATD needs them.

Seed 004 (Cicuttin, Codecasa, Kapidani, Specogna, Trevisan, IEEE Trans. Magn. 2018), Sec. II.

Primal: nodes, edges (oriented from lower to higher node index), faces, tets. Each
tet's nodes are kept in ascending order (``tets_sorted``) so that its six local edges
``LOCAL_EDGES`` run along the global edge orientation; ``orientation`` (+1/-1) is the
sign of its volume in that order.

Barycentric dual: a dual node per tet (its barycentre b), a dual edge per face, split
at the face barycentre g into two halves, one per tet; a dual volume per node.

Unknowns (the seed's fractioned DoFs):

* ``u``: circulation of e on each *half primal edge*, oriented from its node outward
  to the edge midpoint m. Half edge (edge, side): side 0 sits at ``edges[:, 0]``,
  side 1 at ``edges[:, 1]``; the full edge circulation is ``u[e, 0] - u[e, 1]``.
* ``f``: circulation of h on each *half dual edge* from b of a tet to g of one of its
  faces (outward): four per tet, ``f[k, t]`` for the face opposite local node k.

The fractioned hexahedron Omega_r = tet t intersected with the dual volume of its local
node i has the primal tangent vectors ``a^j = (x_j - x_i) / 2`` (j != i, the half edges
at i) and the dual ones ``a~^k = g_k - b`` (k != i, the faces through i).
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property

import jax
import jax.numpy as jnp
import numpy as np

from ..driver.host import to_host
from .mesh import LOCAL_EDGES, LOCAL_FACES, TetMesh, _row_keys, signed_volumes

FACE_SIGN = np.array([1.0, -1.0, 1.0, -1.0])
"""Face k of a positive tet in ascending local order, traversed p -> q -> r (sorted),
has outward normal for k = 0, 2 and inward for k = 1, 3."""


def _local_curl() -> np.ndarray:
    """C_ref (4, 6): outward circulation of face k from full-edge circulations."""
    le = {tuple(p): i for i, p in enumerate(LOCAL_EDGES.tolist())}
    C = np.zeros((4, 6))
    for k, (p, q, r) in enumerate(LOCAL_FACES.tolist()):
        C[k, le[(p, q)]] += FACE_SIGN[k]
        C[k, le[(q, r)]] += FACE_SIGN[k]
        C[k, le[(p, r)]] -= FACE_SIGN[k]
    return C


C_REF = _local_curl()
"""(4, 6) local face-edge incidence of a positive tet; a tet of orientation s uses s C_REF."""


@dataclass(frozen=True, eq=False)
class Complex:
    """Incidence of the primal mesh and the index maps of the fractioned unknowns.

    Attributes (nt tets, ne edges, nn nodes):
        nodes: (nn, 3) m.
        tets: (nt, 4) node indices in ascending order.
        orientation: (nt,) +1 or -1, sign of the volume in that order.
        volumes: (nt,) m^3 (positive).
        edges: (ne, 2) node indices, edges[:, 0] < edges[:, 1].
        tet_edges: (nt, 6) edge of each local edge.
        edge_boundary: (ne,) bool, edge on the boundary surface.
        node_boundary: (nn,) bool.
        degree: (nn,) number of edges at each node (half edges of its dual volume).
        slot: (ne, 2) position of half edge (e, side) in its node's list (0..degree-1).
        node_edges: list per node is implicit: ``(node_of_he, slot)`` pairs; see
            :meth:`half_edges`.
        tets_per_edge: (ne,) count of tets around each edge.
    """

    nodes: np.ndarray
    tets: np.ndarray
    orientation: np.ndarray
    volumes: np.ndarray
    edges: np.ndarray
    tet_edges: np.ndarray
    edge_boundary: np.ndarray
    node_boundary: np.ndarray
    degree: np.ndarray
    slot: np.ndarray
    tets_per_edge: np.ndarray

    @property
    def num_edges(self) -> int:
        return int(self.edges.shape[0])

    @property
    def num_tets(self) -> int:
        return int(self.tets.shape[0])

    @property
    def num_nodes(self) -> int:
        return int(self.nodes.shape[0])

    @cached_property
    def edge_reach(self) -> float:
        """The largest extent (m) of an edge along any axis: a tet holding a point has
        every node within this distance of it per axis (the placement's node filter)."""
        if self.num_edges == 0:
            return 0.0
        return float(np.abs(self.nodes[self.edges[:, 1]] - self.nodes[self.edges[:, 0]]).max())

    @cached_property
    def tets_by_edge(self) -> tuple[np.ndarray, np.ndarray]:
        """(order, rank): the entries of ``tet_edges.ravel()`` (6 t + local edge) sorted
        stably by edge, and each sorted entry's place among its edge's tets. Both
        layouts' edge tables read it (:func:`emjax.dga.edges.edge_tables`): one sort of
        6 nt keys, 0.7 s at 20.2M DoFs, instead of one per layout."""
        edge_of = self.tet_edges.ravel()
        order = np.argsort(edge_of, kind="stable")
        first = np.concatenate([[0], np.cumsum(self.tets_per_edge)[:-1]])
        return order, np.arange(order.size) - first[edge_of[order]]

    @property
    def num_dofs(self) -> int:
        """Fractioned unknowns: 2 ne half-edge circulations + 4 nt half-dual-edge ones."""
        return 2 * self.num_edges + 4 * self.num_tets


def _boundary(tets: np.ndarray, nn: int) -> tuple[np.ndarray, np.ndarray]:
    """(node_boundary (nn,) bool, the sorted keys ``i nn + j`` of the boundary edges)
    from the faces that only one tet has: keyed by arithmetic on their nodes, or by
    their rows where nn^3 overflows an int64 key (past 1.66M nodes, as TetMesh's checks)."""
    faces = tets[:, LOCAL_FACES].reshape(-1, 3)  # rows ascending: the tets are sorted
    uf, fc = np.unique(_row_keys(faces, nn), axis=0, return_counts=True)
    return _boundary_of(uf[fc == 1], nn)


def _boundary_of(bf: np.ndarray, nn: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_boundary`'s result from the boundary faces, as rows (k, 3) or keys (k,)."""
    bfaces = bf if bf.ndim == 2 else np.stack([bf // (nn * nn), (bf // nn) % nn, bf % nn], 1)
    node_boundary = np.zeros(nn, bool)
    node_boundary[bfaces.ravel()] = True
    be = np.concatenate([bfaces[:, [0, 1]], bfaces[:, [0, 2]], bfaces[:, [1, 2]]])
    return node_boundary, np.unique(be[:, 0] * nn + be[:, 1])


def _unique_inverse(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the sorted distinct values, each entry's index among them) of int64 ``key``, as
    ``np.unique(key, return_inverse=True)`` gives them, from one stable argsort (a third
    of np.unique's time on 19.6M keys, 2-core VM)."""
    order = np.argsort(key, kind="stable")
    sk = key[order]
    new = np.empty(sk.size, bool)
    new[:1] = True
    np.not_equal(sk[1:], sk[:-1], out=new[1:])
    inv = np.empty(key.size, np.int64)
    inv[order] = np.cumsum(new) - 1
    return sk[new], inv


def _incidence(tets, nn):
    """The sorts of :func:`build` in JAX (on the device; int64, x64 on), for ``tets``
    (nt, 4) ascending and ``nn`` nodes (traced): (inv (6 nt,) each local edge's edge,
    the distinct edge keys ``i nn + j`` ascending in the first ne of (6 nt,), ne, the
    face keys ascending (4 nt,), and whether each is its face's only one: a boundary
    face). Sizes are static, so that it compiles ahead from nt alone
    (:func:`compile_ahead`)."""
    t = tets.astype(jnp.int64)
    pairs = t[:, LOCAL_EDGES].reshape(-1, 2)
    key = pairs[:, 0] * nn + pairs[:, 1]
    order = jnp.argsort(key)
    sk = key[order]
    new = jnp.concatenate([jnp.ones(1, bool), sk[1:] != sk[:-1]])
    idx = jnp.cumsum(new) - 1
    inv = jnp.zeros_like(idx).at[order].set(idx)
    ukey = jnp.zeros_like(sk).at[idx].set(sk)
    faces = t[:, LOCAL_FACES].reshape(-1, 3)
    fk = jnp.sort((faces[:, 0] * nn + faces[:, 1]) * nn + faces[:, 2])
    differs = fk[1:] != fk[:-1]
    edge = jnp.ones(1, bool)
    return inv, ukey, idx[-1] + 1, fk, jnp.concatenate([edge, differs]) & \
        jnp.concatenate([differs, edge])


_incidence_jit = jax.jit(_incidence)


def device_sorts(num_nodes: int) -> bool:
    """Whether :func:`build` may sort on the device for a mesh of ``num_nodes`` nodes:
    its face keys ``(i nn + j) nn + k`` must fit an int64 (below 2.09M nodes, about 70M
    DoFs; beyond, the host's row sort), and x64 must be on (the set-up's)."""
    return num_nodes ** 3 < 2**62 and bool(jax.config.jax_enable_x64)


def compile_ahead(num_tets: int) -> Future:
    """:func:`_incidence` compiled for ``num_tets`` tets on a thread of its own, while
    the host renumbers the mesh; :func:`build` takes it as ``ahead``."""
    args = (jax.ShapeDtypeStruct((num_tets, 4), np.int64), jax.ShapeDtypeStruct((), np.int64))
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="emjax-complex-compile")
    future = pool.submit(lambda: _incidence_jit.lower(*args).compile())
    pool.shutdown(wait=False)
    return future


def build(mesh: TetMesh, ahead: Future | None = None, on_device: bool = False) -> Complex:
    """Edges, boundary flags, node degrees and half-edge slots of ``mesh``. The sorts of
    the edge and face keys run on JAX's device where ``on_device`` (the set-up's device
    path, ``ahead``: their program compiled ahead, :func:`compile_ahead`; the same
    arrays bit for bit), else in NumPy, the faces' on a thread beside the edges' (NumPy's
    sorts release the GIL: 3.4 -> 2.8 s at 20.2M DoFs on an H200's host, BENCHMARKS.md)."""
    tets = np.sort(mesh.tets, axis=1)
    nn = mesh.num_nodes
    if on_device and device_sorts(nn):
        program = _incidence_jit if ahead is None else ahead.result()
        out = program(tets.astype(np.int64, copy=False), np.int64(nn))  # asynchronous
        vol = signed_volumes(mesh.nodes, tets)
        inv, ukey, ne, fk, single = to_host(out)
        ukey = ukey[:int(ne)]
        node_boundary, bkey = _boundary_of(fk[single], nn)
    else:
        with ThreadPoolExecutor(max_workers=1) as pool:
            boundary = pool.submit(_boundary, tets, nn)
            vol = signed_volumes(mesh.nodes, tets)
            pairs = tets[:, LOCAL_EDGES].reshape(-1, 2)
            ukey, inv = _unique_inverse(pairs[:, 0] * nn + pairs[:, 1])
            node_boundary, bkey = boundary.result()
    edges = np.stack([ukey // nn, ukey % nn], axis=1)
    ne = edges.shape[0]
    edge_boundary = np.zeros(ne, bool)
    edge_boundary[np.searchsorted(ukey, bkey)] = True  # every boundary edge is an edge
    # half edges sorted by (node, edge), one key each: slot = rank within the node
    he_node = np.concatenate([edges[:, 0], edges[:, 1]])
    order = np.argsort(he_node * ne + np.tile(np.arange(ne), 2))
    degree = np.bincount(he_node, minlength=nn)
    first = np.concatenate([[0], np.cumsum(degree)[:-1]])
    rank = np.empty(2 * ne, np.int64)
    rank[order] = np.arange(2 * ne) - first[he_node[order]]
    slot = np.stack([rank[:ne], rank[ne:]], axis=1)
    return Complex(
        nodes=mesh.nodes, tets=tets, orientation=np.sign(vol), volumes=np.abs(vol),
        edges=edges, tet_edges=inv.reshape(-1, 6), edge_boundary=edge_boundary,
        node_boundary=node_boundary, degree=degree, slot=slot,
        tets_per_edge=np.bincount(inv, minlength=ne),
    )


def hexahedra(cx: Complex, tets: np.ndarray | None = None, xp=np) -> tuple:
    """Tangent vectors of the fractioned hexahedra Omega_r, r = (tet, local node i), of
    every tet or of the tets ``tets`` (indices) only.

    Returns (a, at), each (nt, 4, 3, 3) (or (len(tets), 4, 3, 3)): ``a[t, i, :, m]`` is
    the m-th primal half-edge vector ``(x_j - x_i) / 2`` (j the m-th local node != i, ascending) and
    ``at[t, i, :, m]`` the m-th dual half-edge vector ``g_k - b`` (k the m-th face
    through i, i.e. k != i ascending). Columns are the vectors, in m. ``xp``: NumPy, or
    jax.numpy to form them on JAX's device (float64: x64 on).
    """
    tt = cx.tets if tets is None else cx.tets[tets]
    x = xp.asarray(cx.nodes)[xp.asarray(tt)]  # (nt, 4, 3)
    b = x.mean(axis=1)
    s = x.sum(axis=1)
    g = (s[:, None, :] - x) / 3.0  # g[:, k]: barycentre of the face opposite k
    a = 0.5 * (x[:, OTHERS] - x[:, :, None])  # (nt, 4, 3, 3): [t, i, m, xyz]
    at = g[:, OTHERS] - b[:, None, None, :]
    return xp.swapaxes(a, 2, 3), xp.swapaxes(at, 2, 3)


OTHERS = np.array([[j for j in range(4) if j != i] for i in range(4)])
"""OTHERS[i]: the three local nodes (and faces) != i, ascending."""


def local_edge_index() -> np.ndarray:
    """LE[i, j]: local edge index of (i, j) (symmetric), -1 on the diagonal."""
    le = -np.ones((4, 4), np.int64)
    for k, (i, j) in enumerate(LOCAL_EDGES.tolist()):
        le[i, j] = le[j, i] = k
    return le
