"""Tetrahedral meshes: the ``TetMesh`` container, checks, quality and renumbering.

A :class:`TetMesh` holds ``nodes`` (nn, 3) float64 in m, ``tets`` (nt, 4) int64 node
indices and ``regions`` (nt,) int32 tags. Construction checks it (NumPy only):

* every index in range, every node used;
* no degenerate tetrahedron: ``|volume| > 1e-10 * (mean edge)^3`` (refused with its index);
* orientation: tets of negative volume are flipped (``orient="fix"``, the default, as
  mesh files use either convention) or refused (``orient="strict"``);
* no inverted (folded) tetrahedron: across every interior face the two opposite
  vertices lie on opposite sides of the face's plane;
* manifold: a face is shared by at most two tetrahedra, and every boundary edge
  bounds exactly two boundary triangles.

``renumbered`` orders nodes by reverse Cuthill-McKee (scipy.sparse.csgraph) or along a
Morton curve (:data:`NODE_ORDERS`) and tets by their lowest node, so that neighbouring
threads on a GPU read neighbouring memory (random numbering halves throughput, see
ARCHITECTURE.md).
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import MeshError, SetupError

LOCAL_EDGES = np.array([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)], dtype=np.int64)
"""Local edges of a tetrahedron, as pairs of local node indices."""
LOCAL_FACES = np.array([(1, 2, 3), (0, 2, 3), (0, 1, 3), (0, 1, 2)], dtype=np.int64)
"""Local face k is opposite local node k."""


def _columns(nodes: np.ndarray, tets: np.ndarray) -> list[np.ndarray]:
    """x, y, z of every tet's nodes, (nt, 4) each: three gathers of one coordinate,
    where ``nodes[tets]`` and ``np.cross`` on (nt, 3) rows ran 3-4x slower (3.2M tets)."""
    return [np.ascontiguousarray(nodes[:, d])[tets] for d in range(3)]


def signed_volumes(nodes: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Signed volumes (nt,) m^3: det[x1-x0, x2-x0, x3-x0] / 6."""
    (a0, b0, c0), (a1, b1, c1), (a2, b2, c2) = (
        [x[:, k] - x[:, 0] for k in (1, 2, 3)] for x in _columns(nodes, tets))
    det = a0 * (b1 * c2 - b2 * c1) + a1 * (b2 * c0 - b0 * c2) + a2 * (b0 * c1 - b1 * c0)
    return det / 6.0


@dataclass(frozen=True, eq=False)
class TetMesh:
    """A checked, positively oriented tetrahedral mesh (see the module docstring).

    Attributes:
        nodes: (nn, 3) float64, m.
        tets: (nt, 4) int64, positively oriented after construction.
        regions: (nt,) int32 region tags (default all 0).
        flipped: number of tets whose orientation was fixed.
    """

    nodes: np.ndarray
    tets: np.ndarray
    regions: np.ndarray | None = None
    orient: str = "fix"
    flipped: int = field(default=0, init=False)

    def __post_init__(self):
        nodes = np.ascontiguousarray(self.nodes, dtype=np.float64)
        tets = np.array(self.tets, dtype=np.int64)
        if nodes.ndim != 2 or nodes.shape[1] != 3 or nodes.shape[0] < 4:
            raise SetupError(f"mesh nodes have shape {nodes.shape}; give (nn >= 4, 3) in m")
        if tets.ndim != 2 or tets.shape[1] != 4 or tets.shape[0] < 1:
            raise SetupError(f"mesh tets have shape {tets.shape}; give (nt >= 1, 4) node indices")
        if not np.all(np.isfinite(nodes)):
            raise SetupError("mesh nodes hold non-finite coordinates")
        if tets.min() < 0 or tets.max() >= nodes.shape[0]:
            raise SetupError(f"mesh tets index nodes {tets.min()}..{tets.max()} but there are "
                             f"{nodes.shape[0]} nodes")
        regions = (np.zeros(tets.shape[0], np.int32) if self.regions is None
                   else np.asarray(self.regions).astype(np.int32))
        if regions.shape != (tets.shape[0],):
            raise SetupError(f"mesh regions have shape {regions.shape}; give one tag per tet "
                             f"({tets.shape[0]})")
        used = np.zeros(nodes.shape[0], bool)
        used[tets.ravel()] = True
        if not used.all():
            raise SetupError(f"{int((~used).sum())} mesh nodes belong to no tetrahedron (first: "
                             f"{int(np.argmin(used))}); drop them (TetMesh.compact does)")
        srt = np.sort(tets, axis=1)
        rep = np.any(srt[:, 1:] == srt[:, :-1], axis=1)
        if rep.any():
            k = int(np.argmax(rep))
            raise SetupError(f"tetrahedron {k} repeats a node {tets[k].tolist()}: degenerate")
        with np.errstate(over="ignore", invalid="ignore"):
            vol = signed_volumes(nodes, tets)
            h3 = np.float64(mean_edge(nodes, tets)) ** 3
            tiny = np.abs(vol) <= 1e-10 * h3
        if not (np.all(np.isfinite(vol)) and np.isfinite(h3)):
            raise SetupError(f"mesh coordinates reach {np.abs(nodes).max():.3g} m: tet volumes "
                             "overflow float64; give the mesh in metres (a file's 'scale')")
        if tiny.any():
            k = int(np.argmax(tiny))
            raise SetupError(
                f"{int(tiny.sum())} degenerate tetrahedra (volume <= 1e-10 mean-edge^3); first "
                f"is tet {k} with nodes {tets[k].tolist()}, volume {vol[k]:.3e} m^3; fix the mesh")
        neg = vol < 0
        if neg.any() and self.orient == "strict":
            k = int(np.argmax(neg))
            raise SetupError(f"{int(neg.sum())} tetrahedra are inverted (negative volume), first "
                             f"tet {k} with nodes {tets[k].tolist()}; reorder their nodes or use "
                             "orient='fix'")
        tets[neg] = tets[neg][:, [0, 1, 3, 2]]
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "tets", tets)
        object.__setattr__(self, "regions", regions)
        object.__setattr__(self, "flipped", int(neg.sum()))
        _check_topology(nodes, tets)

    @classmethod
    def trusted(cls, nodes: np.ndarray, tets: np.ndarray, regions: np.ndarray,
                flipped: int = 0) -> TetMesh:
        """A TetMesh of arrays known to pass the checks (a renumbering of a checked mesh,
        or one read back from the set-up cache), built without repeating them."""
        mesh = object.__new__(cls)
        for name, value in (("nodes", np.ascontiguousarray(nodes, np.float64)),
                            ("tets", np.ascontiguousarray(tets, np.int64)),
                            ("regions", np.ascontiguousarray(regions, np.int32)),
                            ("orient", "fix"), ("flipped", int(flipped))):
            object.__setattr__(mesh, name, value)
        return mesh

    # ------------------------------------------------------------ derived
    @property
    def num_nodes(self) -> int:
        return int(self.nodes.shape[0])

    @property
    def num_tets(self) -> int:
        return int(self.tets.shape[0])

    @property
    def volumes(self) -> np.ndarray:
        """(nt,) m^3, positive."""
        return signed_volumes(self.nodes, self.tets)

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self.nodes.min(axis=0), self.nodes.max(axis=0)

    def quality(self) -> dict[str, float]:
        """Edge lengths (m), radius ratio 3 r_in / r_circ (1 for a regular tet) and
        dihedral angles (degrees): min, mean and max of each."""
        x = self.nodes[self.tets]
        e = x[:, LOCAL_EDGES[:, 1]] - x[:, LOCAL_EDGES[:, 0]]
        length = np.linalg.norm(e, axis=2)
        vol = self.volumes
        areas = np.stack([0.5 * np.linalg.norm(np.cross(x[:, f[1]] - x[:, f[0]],
                                                        x[:, f[2]] - x[:, f[0]]), axis=1)
                          for f in LOCAL_FACES], axis=1)
        r_in = 3 * vol / areas.sum(axis=1)
        # circumradius from the edge products (formula of Crelle)
        a = length[:, 0] * length[:, 5]
        b = length[:, 1] * length[:, 4]
        c = length[:, 2] * length[:, 3]
        s = (a + b + c) * (a + b - c) * (a - b + c) * (-a + b + c)
        r_circ = np.sqrt(np.maximum(s, 0)) / (24 * vol)
        ratio = 3 * r_in / r_circ
        normals = np.stack([np.cross(x[:, f[1]] - x[:, f[0]], x[:, f[2]] - x[:, f[0]])
                            for f in LOCAL_FACES], axis=1)
        # outward for a positive tet: faces 0 and 2 as listed, faces 1 and 3 reversed
        normals *= np.array([1.0, -1.0, 1.0, -1.0])[None, :, None]
        normals /= np.linalg.norm(normals, axis=2, keepdims=True)
        dih = []
        for i, j in LOCAL_EDGES:  # edge (i, j) is shared by the faces opposite the other two
            k, m = (q for q in range(4) if q not in (i, j))
            cosang = -np.einsum("ij,ij->i", normals[:, k], normals[:, m])
            dih.append(np.degrees(np.arccos(np.clip(cosang, -1, 1))))
        dih = np.stack(dih, axis=1)
        return {
            "tets": float(self.num_tets), "nodes": float(self.num_nodes),
            "edge_min": float(length.min()), "edge_mean": float(length.mean()),
            "edge_max": float(length.max()), "radius_ratio_min": float(ratio.min()),
            "radius_ratio_mean": float(ratio.mean()), "dihedral_min": float(dih.min()),
            "dihedral_max": float(dih.max()),
        }

    # ------------------------------------------------------------ renumbering
    def renumbered(self, order: str = "rcm") -> TetMesh:
        """A copy with nodes in ``order`` (:data:`NODE_ORDERS`: reverse Cuthill-McKee or
        a Morton sort of the coordinates) and tets sorted by their lowest node."""
        if order == "morton":
            perm = morton_order(self.nodes)
        elif order == "rcm":
            perm = self._rcm_order()
        else:
            raise ValueError(f"order = {order!r}: choose one of {list(NODE_ORDERS)}")
        new_of_old = np.empty(self.num_nodes, np.int64)
        new_of_old[perm] = np.arange(self.num_nodes)
        tets = new_of_old[self.tets]
        key = np.sort(tets, axis=1)
        # np.lexsort((key[:, 1], key[:, 0])) as one stable sort of a combined key (0.25
        # -> 0.11 s at 3.2M tets, the same order)
        order_t = np.argsort(key[:, 0].astype(np.int64) * self.num_nodes + key[:, 1],
                             kind="stable")
        # a relabelling of a checked mesh: same volumes (no flips), same topology
        return TetMesh.trusted(self.nodes[perm], tets[order_t], self.regions[order_t])

    def _rcm_order(self) -> np.ndarray:
        """The nodes in reverse Cuthill-McKee order of the edge graph."""
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import reverse_cuthill_mckee

        nn = self.num_nodes
        i = self.tets[:, LOCAL_EDGES[:, 0]].ravel()
        j = self.tets[:, LOCAL_EDGES[:, 1]].ravel()
        g = coo_matrix((np.ones(2 * i.size, np.int8), (np.r_[i, j], np.r_[j, i])),
                       shape=(nn, nn)).tocsr()
        return np.asarray(reverse_cuthill_mckee(g, symmetric_mode=True))

    def permuted_random(self, seed: int = 0) -> TetMesh:
        """A copy with nodes and tets in random order (benchmarks compare with it)."""
        rng = np.random.default_rng(seed)
        perm = rng.permutation(self.num_nodes)
        new_of_old = np.empty_like(perm)
        new_of_old[perm] = np.arange(perm.size)
        order = rng.permutation(self.num_tets)
        return TetMesh(self.nodes[perm], new_of_old[self.tets][order], self.regions[order])

    # ------------------------------------------------------------ I/O
    def to_meshio(self, point_data=None, cell_data=None):
        import meshio

        return meshio.Mesh(self.nodes, [("tetra", self.tets)],
                           point_data=point_data or {},
                           cell_data={"region": [self.regions], **(cell_data or {})})

    def write(self, path, **kw) -> None:
        """Write with meshio (format from the suffix: .vtu, .msh, .xdmf, ...)."""
        self.to_meshio(**kw).write(str(path))


NODE_ORDERS = {
    "rcm": "reverse Cuthill-McKee of the edge graph (scipy.sparse.csgraph)",
    "morton": "a Morton (Z-order) sort of the node coordinates, 21 bits per axis",
}
"""The node orders of :meth:`TetMesh.renumbered`. On an H200 the DGATD kernels run as
fast on either (steps within 1.5%, the 20.2M-DoF ring mesh and a 2.46M-DoF gmsh
cylinder) and Morton's costs 0.6 s against 2.2 s at 20.2M DoFs; on a 2-core CPU its
steps are 4% slower (BENCHMARKS.md, ``benchmarks/dga_renumbering.py``)."""


def _spread3(v: np.ndarray) -> np.ndarray:
    """Integers below 2^21 with two zero bits after each bit (uint64)."""
    v = v.astype(np.uint64) & np.uint64(0x1FFFFF)
    for shift, mask in ((32, 0x1F00000000FFFF), (16, 0x1F0000FF0000FF),
                        (8, 0x100F00F00F00F00F), (4, 0x10C30C30C30C30C3),
                        (2, 0x1249249249249249)):
        v = (v | (v << np.uint64(shift))) & np.uint64(mask)
    return v


def morton_order(nodes: np.ndarray) -> np.ndarray:
    """The node indices sorted along the Morton curve of their coordinates, each axis
    scaled to 21 bits over the mesh's bounding box (ties in input order)."""
    lo, hi = nodes.min(axis=0), nodes.max(axis=0)
    q = ((nodes - lo) / np.maximum(hi - lo, np.finfo(float).tiny) * (2**21 - 1)).astype(np.int64)
    key = _spread3(q[:, 0]) | (_spread3(q[:, 1]) << np.uint64(1)) \
        | (_spread3(q[:, 2]) << np.uint64(2))
    return np.argsort(key, kind="stable")


def compact(nodes: np.ndarray, tets: np.ndarray, regions=None) -> TetMesh:
    """A TetMesh of only the nodes that tets use (mesh files often carry others)."""
    tets = np.asarray(tets, np.int64)
    used, inv = np.unique(tets.ravel(), return_inverse=True)
    return TetMesh(np.asarray(nodes)[used], inv.reshape(tets.shape), regions)


def mean_edge(nodes: np.ndarray, tets: np.ndarray) -> float:
    """Mean length (m) of the six edges of every tet (an edge counted once per tet)."""
    sq = 0.0
    for x in _columns(nodes, tets):
        d = x[:, LOCAL_EDGES[:, 1]] - x[:, LOCAL_EDGES[:, 0]]
        sq = sq + d * d
    return float(np.sqrt(sq).mean())


def read(path, region_key: str | None = None, scale: float = 1.0) -> TetMesh:
    """Read any volume mesh file meshio reads, coordinates times ``scale`` (to m); tags
    from cell data ``region_key`` (default: the first of 'region', 'gmsh:physical',
    'medit:ref', 'cell_tags' present). Every failure is a :class:`MeshError` naming the
    file (absolute) and the reason: checked before reading (exists, a regular file, not
    empty, a known suffix), then meshio's errors, then the mesh checks of :class:`TetMesh`."""
    from ..model.files import file_problem, mesh_suffix_problem, resolved

    path = resolved(str(path))
    problem = file_problem(path, "mesh file") or mesh_suffix_problem(path)
    if problem:
        raise MeshError(f"{problem}; give the path of a volume mesh file")
    m = _meshio_read(path)
    try:
        blocks = [(k, c) for k, c in enumerate(m.cells) if c.type == "tetra"]
        if not blocks:
            kinds = sorted({c.type for c in m.cells})
            raise MeshError(f"mesh file '{path}' holds no tetrahedra (cells: {kinds}); "
                            "give a volume mesh")
        tets = np.concatenate([c.data for _, c in blocks])
        keys = [region_key] if region_key else ["region", "gmsh:physical", "medit:ref",
                                                "cell_tags"]
        regions = None
        for key in keys:
            if key in m.cell_data:
                regions = np.concatenate([np.asarray(m.cell_data[key][k]) for k, _ in blocks])
                break
        else:
            if region_key:
                raise MeshError(f"mesh file '{path}' has no cell data '{region_key}'; it has "
                                f"{sorted(m.cell_data)}")
        with np.errstate(over="ignore"):  # an overflow is refused as non-finite below
            return compact(np.asarray(m.points, np.float64)[:, :3] * scale, tets, regions)
    except MeshError:
        raise
    except (SetupError, ValueError, TypeError, IndexError) as e:  # checks, odd cell data
        raise MeshError(f"mesh file '{path}': {e}") from e


def _meshio_read(path: Path):
    """``meshio.read`` with everything it raises, prints or exits with (it calls
    ``sys.exit(1)`` on some damaged XML) turned into one :class:`MeshError`."""
    import meshio

    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            return meshio.read(str(path))
    except (Exception, SystemExit) as e:  # any reader failure: bad bytes raise anything
        printed = " ".join(said.getvalue().replace("Error: ", "").split())
        reason = f"{type(e).__name__}: {e}" if not isinstance(e, SystemExit) else ""
        reason = "; ".join(r for r in (printed, reason) if r) or "unreadable"
        raise MeshError(f"mesh file '{path}' could not be read by meshio ({reason[:500]}); "
                        "check that it is a complete, uncorrupted volume mesh of the format "
                        "its suffix names") from None


def _check_topology(nodes: np.ndarray, tets: np.ndarray) -> None:
    """Manifold faces and boundary, and no folded (inverted) elements."""
    srt = np.sort(tets, axis=1)
    nn = nodes.shape[0]
    # face k of a sorted tet: its other three nodes, already in increasing order, keyed
    # by arithmetic on srt's columns (no (4 nt, 3) face array is sorted or formed)
    others = [[j for j in range(4) if j != k] for k in range(4)]
    if nn ** 3 < 2**62:
        keys = np.empty(srt.shape, np.int64)
        for k, (a, b, c) in enumerate(others):
            keys[:, k] = (srt[:, a] * nn + srt[:, b]) * nn + srt[:, c]
        keys = keys.ravel()
        order = np.argsort(keys, kind="stable")
        sk = keys[order]
        differs = sk[1:] != sk[:-1]

        def face(i):
            k = keys[i]
            return np.stack([k // (nn * nn), k // nn % nn, k % nn], axis=-1)
    else:
        rows = srt[:, others].reshape(-1, 3)
        order = np.lexsort(rows.T[::-1])
        sk = rows[order]
        differs = np.any(sk[1:] != sk[:-1], axis=1)

        def face(i):
            return rows[i]
    # one sort puts each face's copies side by side (np.unique and an argsort of its
    # inverse sorted twice)
    start = np.flatnonzero(np.concatenate([[True], differs]))
    counts = np.diff(np.append(start, sk.shape[0]))
    count_of = np.repeat(counts, counts)  # copies of the face at each sorted position
    if counts.max() > 2:
        run = int(np.argmax(counts > 2))
        raise SetupError(f"non-manifold mesh: face {face(order[start[run]]).tolist()} is "
                         f"shared by {int(counts[run])} tetrahedra (at most 2 allowed); fix "
                         "the mesh")
    # folded elements: opposite vertices across each interior face on opposite sides
    pairs = order[count_of == 2].reshape(-1, 2)
    t0, k0 = divmod(pairs[:, 0], 4)
    t1, k1 = divmod(pairs[:, 1], 4)
    fn = face(pairs[:, 0])
    p = nodes[fn]
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    s0 = np.einsum("ij,ij->i", nodes[srt[t0, k0]] - p[:, 0], n)
    s1 = np.einsum("ij,ij->i", nodes[srt[t1, k1]] - p[:, 0], n)
    bad = s0 * s1 >= 0
    if bad.any():
        q = int(np.argmax(bad))
        raise SetupError(f"inverted (folded) tetrahedra: tets {int(t0[q])} and {int(t1[q])} lie "
                         f"on the same side of their shared face {fn[q].tolist()}; "
                         f"{int(bad.sum())} such faces; fix the mesh")
    bfaces = face(order[count_of == 1])
    bedges = np.sort(np.concatenate([bfaces[:, [0, 1]], bfaces[:, [0, 2]], bfaces[:, [1, 2]]]),
                     axis=1)
    _, first, ec = np.unique(_row_keys(bedges, nodes.shape[0]), axis=0, return_index=True,
                             return_counts=True)
    if ec.size and (ec != 2).any():
        e = int(first[np.argmax(ec != 2)])
        raise SetupError(f"non-manifold boundary: boundary edge {bedges[e].tolist()} bounds "
                         f"{int(ec[np.argmax(ec != 2)])} boundary triangles (exactly 2 needed); "
                         "fix the mesh")


def _row_keys(rows: np.ndarray, nn: int) -> np.ndarray:
    """One int64 per row of sorted node indices (rows themselves when nn is too large)."""
    k = rows.shape[1]
    if nn ** k >= 2**62:
        return rows
    key = rows[:, 0].astype(np.int64)
    for j in range(1, k):
        key = key * nn + rows[:, j]
    return key
