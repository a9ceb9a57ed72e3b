"""Memory orders of the DGATD state: the two kernels a run chooses between.

The operators of :mod:`emjax.dga.mass` are built once in a canonical order (f (4, nt)
rows; u per degree bucket a slot-major (w, nv) block). A run's kernels
(``DGATD.kernels``) fix the order its state is held in; :class:`Layout` maps between
the two and :mod:`emjax.dga.edges` / :mod:`emjax.dga.arrays` build the kernels' arrays
in it. Data flow: ``make_layout`` (this module, index maps) -> ``edge_tables`` (which
tets each edge sum reads) -> ``kernel_arrays`` (matrices packed, indices in int32).

* ``"xla"``: jitted JAX (:mod:`emjax.dga.step`), the reference and the CPU path.
  f (nt, 4): the four half-dual-edge circulations of a tet side by side, so the
  threads updating one tet share its gathers' cache lines. u node-major ((nv, w) per
  bucket): the half edges of a dual volume side by side. Matrices packed: 10 numbers
  of the symmetric ``s_t (M^mu_t)^{-1}`` per tet (the +-1 curl applied on the fly), and
  ``w (w + 1) / 2`` per node of ``(M^eps_v)^{-1}``, stored by cyclic diagonal ``D_d[i]
  = M[i, (i + d) mod w]``, diagonal-major (nd, nv, w), so that every product is
  elementwise with static rolls. Edge sums gather f directly (codes ``16 t + 8 [s_t <
  0] + local edge``, no per-tet array of edge contributions), edges bucketed by their
  number of tets; the new u is ``u + concatenate(du per bucket)``, which XLA writes
  over the carried u. This was the variant ``tets-node-sym-dam``.
* ``"pallas"``: the same arithmetic as Pallas (Triton) kernels, one thread per tet,
  edge or node (:mod:`emjax.dga.pallas`); on a GPU, elsewhere only in Pallas' (slow)
  interpreter. f and the Faraday matrices as for ``"xla"``; the node matrices of all
  buckets in warp tiles (:mod:`emjax.dga.tiles`); u in warp tiles
  (:func:`tile_position`: nodes in tiles of ``U_TILE``, slot-major within a tile, so
  the node kernel's thread per node reads and writes each slot of a warp's nodes as one
  128-byte line); the edge sums in one launch over a sliced table
  (:func:`emjax.dga.edges.edge_slices`). This was ``tets-tile-sym-dam-pe``.

``kernels="auto"`` (:func:`auto_kernels`) runs XLA on a CPU; on a GPU Pallas where the
run is long enough for its faster steps to repay its longer compilation (a gmsh mesh's
node kernel, unrolled to width 22, compiled 20 s longer than XLA's), else XLA.
Measured (H100, 2026-11-25, full step, Pallas / XLA): 0.0276 / 0.0442 ms at 0.87M DoFs,
0.0691 / 0.0825 at 2.7M, 0.386 / 0.566 at 20.2M on the seed's ring mesh; since the
node tiles of :mod:`emjax.dga.tiles` (2026-11-28) 0.355 / 0.550 there and 0.077 / 0.133
on a gmsh cylinder at 2.46M DoFs (BENCHMARKS.md).
Fourteen other layouts (f as rows, u slot-major, full matrices, compact or shared
indices, one padded edge table, ...) measured slower and were removed from ``src/``;
their figures are in BENCHMARKS.md and their code in git (``src/emjax/dga/layout.py``
and ``step.py`` at commit 2ec91cb).

Both kernels give the same fields to rounding (tests/test_dga.py compares them with
each other and with the sparse formulation); :meth:`Layout.u_canonical` /
:meth:`Layout.f_canonical` map states to the canonical order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SetupError
from .mass import Operators

KERNELS = ("xla", "pallas")
"""The dense kernels a run can choose (besides ``"auto"``); see the module docstring."""


PALLAS_SAVING_S = 1.0e-11
"""Seconds the Pallas kernels save per DoF and step against XLA's on a GPU: end to end
(probes, energy) on an H200 (2026-11-28) 0.029 ms a step on a 2.46M-DoF gmsh cylinder
(1.2e-11), 0.018 ms at 0.87M DoFs on the seed's ring mesh (2.1e-11), 0.004 ms at 2.8M
(0.13e-11); the kernels alone 0.19 ms at 20.2M DoFs (0.95e-11, H100)."""


def pallas_extra_compile_s(widths) -> float:
    """Seconds the Pallas kernels' compilation takes beyond XLA's for node buckets of
    ``widths``: the node kernel is unrolled to the widest bucket's w (w + 1) / 2 matrix
    entries, and Triton's time grows with their square (:data:`PALLAS_COMPILE_S`)."""
    w = max(widths, default=0)
    return PALLAS_COMPILE_S * (w * (w + 1) / 2) ** 2


PALLAS_COMPILE_S = 3.9e-4
"""Seconds per squared unrolled entry of :func:`pallas_extra_compile_s`, fitted to
end-to-end runs on an H200 (2026-11-28, BENCHMARKS.md): 3.3-5.4 s more than XLA's
compilation on the seed's ring meshes (w = 14, 105 entries), 20-25 s more on a gmsh
cylinder (w = 22, 253 entries)."""


def auto_kernels(gpu: bool = False, dofs: int | None = None, steps: int | None = None,
                 widths=()) -> str:
    """The kernels ``kernels="auto"`` runs: XLA off a GPU (Pallas runs there only in its
    interpreter); on a GPU, Pallas where the run is long enough for its faster steps
    (:data:`PALLAS_SAVING_S` per DoF and step) to pay for its longer compilation
    (:func:`pallas_extra_compile_s` of the node buckets' ``widths``), else XLA. Without
    ``dofs`` and ``steps`` (a long run, as the benchmarks time) Pallas on a GPU."""
    if not gpu:
        return "xla"
    if dofs is None or steps is None:
        return "pallas"
    return "pallas" if dofs * steps * PALLAS_SAVING_S >= pallas_extra_compile_s(widths) else "xla"


U_TILE = 32
"""Nodes per tile of the Pallas layout's u: a warp's 32 threads read one slot of their
nodes as one 128-byte line."""


def tile_position(v, i, w: int, nv: int, tile: int = U_TILE):
    """Position within a bucket (w half edges per node, nv nodes) of half edge i of node
    v in the Pallas layout's u: nodes in tiles of ``tile``, slot-major inside a tile, the
    last tile holding the remaining ``nv mod tile`` nodes. NumPy or JAX integer arrays."""
    full = nv // tile * tile
    nb = tile - (v >= full) * (tile - (nv - full))  # nodes in v's tile
    return (v // tile) * (tile * w) + i * nb + v % tile


@dataclass(frozen=True)
class Spec:
    """Static (hashable) description of a layout's arrays, closed over by jitted code.

    Attributes:
        kernels: ``"xla"`` or ``"pallas"``.
        nt: number of tets.
        buckets: (offset in u, width w, node count nv) per node bucket.
        lossy: per node bucket, whether it has conductivity.
    """

    kernels: str
    nt: int
    buckets: tuple[tuple[int, int, int], ...]
    lossy: tuple[bool, ...]

    @property
    def pallas(self) -> bool:
        """Whether the half-steps run as Pallas kernels."""
        return self.kernels == "pallas"

    @property
    def u_order(self) -> str:
        """``"tile"`` (Pallas) or ``"node"`` (XLA): see the module docstring."""
        return "tile" if self.pallas else "node"

    @property
    def f_shape(self) -> tuple[int, int]:
        """Shape of f: (nt, 4)."""
        return (self.nt, 4)

    def f_zeros(self, dtype):
        """A zero f in this layout's form."""
        import jax.numpy as jnp

        return jnp.zeros(self.f_shape, dtype)

    @property
    def nu(self) -> int:
        """Length of u (padded half edges)."""
        return sum(w * n for _, w, n in self.buckets)


@dataclass(frozen=True, eq=False)
class Layout:
    """Index maps of a layout (NumPy, int64).

    Attributes:
        spec: the static :class:`Spec`.
        u_perm: (nu,) layout position of each canonical (slot-order) u position.
        f_pos: (4, nt) flat position in the layout's f of f[k, t].
        he_pos: (ne, 2) layout position of each half edge.
        hs, he: (6, nt) layout positions of the side-0 / side-1 halves of each local edge.
    """

    spec: Spec
    u_perm: np.ndarray
    f_pos: np.ndarray
    he_pos: np.ndarray
    hs: np.ndarray
    he: np.ndarray

    def u_canonical(self, u):
        """u in the canonical slot order (NumPy or JAX)."""
        return u[self.u_perm]

    def u_from_canonical(self, uc):
        """u in the layout's order from the canonical one (NumPy)."""
        out = np.zeros_like(np.asarray(uc))
        out[self.u_perm] = np.asarray(uc)
        return out

    def f_canonical(self, f):
        """f as (4, nt) rows (NumPy or JAX)."""
        return f.T

    def f_from_canonical(self, fc):
        """f in the layout's form (nt, 4) from (4, nt) rows (NumPy)."""
        return np.ascontiguousarray(np.asarray(fc).T)

    def free(self, ops: Operators) -> np.ndarray:
        """(nu,) bool mask of the unknowns (not padding, not on a PEC edge)."""
        out = np.zeros(ops.nu, bool)
        out[self.u_perm[canonical_free(ops)]] = True
        return out


def canonical_free(ops: Operators) -> np.ndarray:
    """(nu,) bool mask of the unknowns in the canonical order."""
    free = np.zeros(ops.nu, bool)
    for b in ops.buckets:
        pos = b.offset + np.arange(b.width)[:, None] * b.count + np.arange(b.count)[None, :]
        free[pos[b.free]] = True
    return free


def make_layout(ops: Operators, kernels: str = "xla") -> Layout:
    """The index maps of ``kernels`` (``"xla"`` or ``"pallas"``) for these operators."""
    if kernels not in KERNELS:
        raise SetupError(f"kernels = {kernels!r} is unknown; choose one of {list(KERNELS)} "
                         "(a scenario may also say 'auto')")
    tile = kernels == "pallas"
    nt = ops.cx.num_tets
    u_perm = np.empty(ops.nu, np.int64)
    for b in ops.buckets:
        w, nv = b.width, b.count
        s, p = np.meshgrid(np.arange(w), np.arange(nv), indexing="ij")
        canon = b.offset + s * nv + p
        u_perm[canon] = b.offset + (tile_position(p, s, w, nv) if tile else p * w + s)
    t, k = np.meshgrid(np.arange(nt), np.arange(4), indexing="xy")  # (4, nt)
    return Layout(spec=layout_spec(ops, kernels), u_perm=u_perm, f_pos=4 * t + k,
                  he_pos=u_perm[ops.he_pos], hs=u_perm[ops.hs], he=u_perm[ops.he])


def layout_spec(ops: Operators, kernels: str) -> Spec:
    """The :class:`Spec` of ``kernels`` for these operators."""
    return Spec(kernels=kernels, nt=ops.cx.num_tets,
                buckets=tuple((b.offset, b.width, b.count) for b in ops.buckets),
                lossy=tuple(b.Msig is not None for b in ops.buckets))


__all__ = [
    "KERNELS",
    "PALLAS_COMPILE_S",
    "PALLAS_SAVING_S",
    "U_TILE",
    "Layout",
    "Spec",
    "auto_kernels",
    "canonical_free",
    "layout_spec",
    "make_layout",
    "pallas_extra_compile_s",
    "tile_position",
]
