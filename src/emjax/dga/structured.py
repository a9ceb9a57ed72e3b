"""Dependency-free structured tetrahedral meshes (NumPy only), for tests and benchmarks.

* :func:`box`: an n_x x n_y x n_z grid of hexahedra, each cut into six tetrahedra by
  Kuhn subdivision (the six monotone lattice paths along the main diagonal); the cut is
  the same in every cube, so the mesh is conforming.
* :func:`cylinder`: a disk triangulated in concentric rings (ring k of ``6 k`` nodes at
  radius ``k R / nr``, neighbouring rings zipped by angle), extruded in ``nz`` layers;
  each prism is cut into three tets with the rule "quad diagonal from the lower-index
  bottom node to the higher-index top node", which neighbouring prisms agree on.
  The boundary is the inscribed polygon of ``6 nr`` sides, whose area deficit
  ``~ (2 pi / (6 nr))^2 / 6`` is second order in the mesh size like the scheme itself.
* :func:`distort`: random displacement of interior nodes (patch tests).

Sizes follow ``edge_length`` (the mean edge length of the result is within about 30%
of it: Kuhn tets have edges h, h sqrt2 and h sqrt3).
"""

from __future__ import annotations

import math

import numpy as np

from .mesh import TetMesh, signed_volumes

_KUHN = np.array([(0, 1, 3, 7), (0, 1, 5, 7), (0, 2, 3, 7), (0, 2, 6, 7), (0, 4, 5, 7),
                  (0, 4, 6, 7)], dtype=np.int64)
"""Kuhn's six tets of the unit cube, corners numbered i + 2 j + 4 k."""


def box(size=(1.0, 1.0, 1.0), shape=None, edge_length: float | None = None,
        origin=(0.0, 0.0, 0.0), renumber: bool = False) -> TetMesh:
    """Box ``size`` (m) with lower corner ``origin``, ``shape`` cubes (or cubes of side
    ``edge_length``), six Kuhn tets per cube; region tag 0."""
    size = np.asarray(size, np.float64)
    if shape is None:
        if edge_length is None:
            raise ValueError("box: give shape (cells) or edge_length (m)")
        shape = tuple(max(1, round(s / edge_length)) for s in size)
    nx, ny, nz = (int(n) for n in shape)
    axes = [np.linspace(o, o + s, n + 1) for o, s, n in zip(origin, size, (nx, ny, nz),
                                                            strict=True)]
    X, Y, Z = np.meshgrid(*axes, indexing="ij")
    nodes = np.stack([X.ravel(), Y.ravel(), Z.ravel()], axis=1)
    idx = np.arange(nodes.shape[0]).reshape(nx + 1, ny + 1, nz + 1)
    corners = np.stack([idx[i:i + nx, j:j + ny, k:k + nz].ravel()
                        for k in (0, 1) for j in (0, 1) for i in (0, 1)], axis=1)
    mesh = generated(nodes, corners[:, _KUHN].reshape(-1, 4))
    return mesh.renumbered() if renumber else mesh


def disk(radius: float, rings: int) -> tuple[np.ndarray, np.ndarray]:
    """Points (n, 2) and triangles (m, 3) of the ring triangulation of a disk."""
    pts = [np.zeros((1, 2))]
    start = [0]
    count = [1]
    for k in range(1, rings + 1):
        n = 6 * k
        a = 2 * math.pi * np.arange(n) / n
        pts.append(radius * k / rings * np.stack([np.cos(a), np.sin(a)], axis=1))
        start.append(start[-1] + count[-1])
        count.append(n)
    tris = []
    for k in range(1, rings + 1):
        n_in, n_out = count[k - 1], count[k]
        i = j = 0
        s_in, s_out = start[k - 1], start[k]
        # walk both rings by angle (fractions of a turn), closing the loop
        while i < n_in or j < n_out:
            a_in = (i + 1) / n_in if i < n_in else 2.0
            a_out = (j + 1) / n_out if j < n_out else 2.0
            if k == 1 or a_out <= a_in:
                tris.append((s_in + i % n_in, s_out + j % n_out, s_out + (j + 1) % n_out))
                j += 1
                if k == 1 and j == n_out:
                    break
            else:
                tris.append((s_in + i % n_in, s_out + j % n_out, s_in + (i + 1) % n_in))
                i += 1
    return np.concatenate(pts), np.array(tris, np.int64)


def cylinder(radius: float = 1.0, height: float = 0.5, edge_length: float | None = None,
             rings: int | None = None, layers: int | None = None,
             center=(0.0, 0.0, 0.0), renumber: bool = True) -> TetMesh:
    """Cylinder along z of ``radius`` and ``height`` (m), base centre at ``center``.

    ``rings`` (radial divisions) and ``layers`` (axial) default from ``edge_length``.
    """
    if rings is None or layers is None:
        if edge_length is None:
            raise ValueError("cylinder: give edge_length (m) or both rings and layers")
        rings = rings or max(1, round(radius / edge_length))
        layers = layers or max(1, round(height / edge_length))
    p2, tri = disk(radius, rings)
    n2 = p2.shape[0]
    z = np.linspace(0.0, height, layers + 1)
    nodes = np.concatenate([np.c_[p2, np.full(n2, zz)] for zz in z]) + np.asarray(center)
    tri = np.sort(tri, axis=1)
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    tets = []
    for layer in range(layers):
        lo, hi = layer * n2, (layer + 1) * n2
        tets.append(np.stack([a + lo, b + lo, c + lo, c + hi], axis=1))
        tets.append(np.stack([a + lo, b + lo, b + hi, c + hi], axis=1))
        tets.append(np.stack([a + lo, a + hi, b + hi, c + hi], axis=1))
    mesh = generated(nodes, np.concatenate(tets))
    return mesh.renumbered() if renumber else mesh


def generated(nodes: np.ndarray, tets: np.ndarray) -> TetMesh:
    """A mesh of this module's generators: tets of negative volume flipped (as
    :class:`TetMesh` does), without its fold and manifold checks, which the generators'
    meshes pass by construction where every coordinate is finite and no tet is
    degenerate (else :class:`TetMesh` is built and refuses it, naming why;
    tests/dga/test_mesh_input.py holds them to the checks at many sizes). The checks were
    2.2 of the 2.6 s of a 5.4M-DoF cylinder on a 2-core VM."""
    tets = np.array(tets, np.int64)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        vol = signed_volumes(nodes, tets)
        scale = np.abs(vol).mean() if vol.size else 0.0
        sound = bool(np.all(np.isfinite(nodes)) and np.all(np.abs(vol) > 1e-9 * scale))
    if not sound:  # sizes that overflow, underflow or flatten tets: the checks name it
        return TetMesh(nodes, tets)
    neg = vol < 0
    tets[neg] = tets[neg][:, [0, 1, 3, 2]]
    return TetMesh.trusted(nodes, tets, np.zeros(tets.shape[0], np.int32), int(neg.sum()))


def boundary_nodes(mesh: TetMesh) -> np.ndarray:
    """Boolean (nn,) mask of nodes on the boundary surface."""
    from .mesh import LOCAL_FACES

    faces = np.sort(mesh.tets[:, LOCAL_FACES], axis=2).reshape(-1, 3)
    u, c = np.unique(faces, axis=0, return_counts=True)
    mask = np.zeros(mesh.num_nodes, bool)
    mask[u[c == 1].ravel()] = True
    return mask


def distort(mesh: TetMesh, amount: float = 0.2, seed: int = 0) -> TetMesh:
    """Move every interior node by up to ``amount`` times the shortest edge at random."""
    rng = np.random.default_rng(seed)
    h = mesh.quality()["edge_min"]
    move = rng.uniform(-1, 1, mesh.nodes.shape) * amount * h
    move[boundary_nodes(mesh)] = 0.0
    return TetMesh(mesh.nodes + move, mesh.tets, mesh.regions)
