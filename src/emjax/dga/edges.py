"""Edge-sum tables of the DGATD Ampere half-step: which tets each edge's sum reads.

The Ampere half-step first forms, for every edge, the circulation of h around its dual
face, ``G[e] = sum over the tets t around e of s_t (f[t, kp] - f[t, km])`` (kp, km:
the two faces of t on the local edge; seed 004, eq. (6)). The tables here list, per
edge, a code per tet around it, ``16 t + 8 [s_t < 0] + local edge`` (the local edge 7
gives ``f[t, 0] - f[t, 0] = 0``: the padding), so that the kernel gathers f itself and
no per-tet array of edge contributions is written out. G is stored with a zero in front
(``G[0] = 0``, the padding of the node tables) and the edges in table order; ``gpos``
gives each edge's position in G (the node tables and the sources index G through it).

* XLA (:func:`emjax.dga.step.edge_sums`): edges bucketed by their number of tets
  (``mass.choose_buckets``), a (count, edges) table per bucket, no padding.
* Pallas (:func:`emjax.dga.pallas.sliced_edge_sums`): one sliced table (sliced
  ELLPACK, :func:`edge_slices`), read in one launch: edges in windows of
  ``EDGE_WINDOW`` in edge order, sorted within a window by their number of tets, cut
  into slices of ``EDGE_SLICE`` edges (one program each) stored slot-major and padded
  only to the slice's own widest edge. f is then read once, in the mesh's order, where
  one launch per bucket swept all of f once per bucket, and a mesh whose tets per edge
  vary widely (gmsh: 1 to 11) pays about 3% padding where one table as wide as the
  widest edge read 2.3 times the codes (H100, 2026-11-25, BENCHMARKS.md).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import SetupError
from .complex import Complex
from .layout import Spec
from .mass import Operators, choose_buckets

EDGE_SLICE = 256
"""Edges per slice of the sliced table, one Pallas program each."""
EDGE_WINDOW = 8192
"""Edges sorted by their tets per edge within windows of this many consecutive edges:
a slice's edges then have nearly equal counts, and its gathers of f stay among a
window's few thousand tets."""

MAX_TETS_CODED = 2**31 // 16
"""Tets an int32 edge-table code ``16 t + 8 [s_t < 0] + local edge`` can name."""


def edge_slices(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sliced edge table of ``counts`` (tets per edge): (the edges in table order,
    (ne,); the codes per edge of each slice of ``EDGE_SLICE``, (ns,), its widest edge's
    count). Order: by window of ``EDGE_WINDOW`` edges, then by decreasing count."""
    ne = counts.size
    order = np.lexsort((-counts, np.arange(ne) // EDGE_WINDOW))
    ns = -(-ne // EDGE_SLICE)
    c = np.zeros(ns * EDGE_SLICE, np.int64)
    c[:ne] = counts[order]
    return order, c.reshape(ns, EDGE_SLICE).max(axis=1)


def edge_tables(ops: Operators, spec: Spec) -> tuple[np.ndarray, dict]:
    """(gpos, tables): gpos (ne,) int64 the position in G of each edge; tables
    ``{"ebk": [(count, edges) int32 per bucket]}`` (XLA) or ``{"esl": {"codes",
    "start", "width"}}`` (Pallas: the flat slot-major codes, each slice's start in them
    and its width, int32). Taken from :func:`tables_ahead`'s thread where it built
    them (once: a second call builds again)."""
    ahead = ops.cx.__dict__.get("_tables_ahead", {}).pop(spec.pallas, None)
    return ahead.result() if ahead is not None else _tables(ops.cx, spec.pallas)


def tables_ahead(cx: Complex, pallas: tuple[bool, ...]) -> None:
    """Start building the edge tables of the layouts ``pallas`` (False: XLA's) on a
    thread of their own: they depend on the complex only, and the set-up forms the
    operators meanwhile (2.2 s a layout at 20.2M DoFs on an H200's host, BENCHMARKS.md).
    :func:`edge_tables` takes them from there."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="emjax-edge-tables")
    futures = cx.__dict__.setdefault("_tables_ahead", {})
    for p in pallas:
        futures[p] = pool.submit(_tables, cx, p)
    pool.shutdown(wait=False)


def _tables(cx: Complex, pallas: bool) -> tuple[np.ndarray, dict]:
    """The work of :func:`edge_tables`."""
    nt, ne = cx.num_tets, cx.num_edges
    if nt > MAX_TETS_CODED:
        raise SetupError(f"{nt} tets are too many for the int32 edge-table codes (at most "
                         f"{MAX_TETS_CODED}); coarsen the mesh")
    neg = (cx.orientation < 0).astype(np.int64)
    code = 16 * np.arange(nt)[:, None] + 8 * neg[:, None] + np.arange(6)[None, :]  # (nt, 6)
    pad = 7  # local edge 7: f[t, 0] - f[t, 0] = 0
    edge_of = cx.tet_edges.ravel()
    order, rank = cx.tets_by_edge  # rank: the place of each tet at its edge
    counts = cx.tets_per_edge
    gpos = np.empty(ne, np.int64)
    if pallas:  # the edge at G position 1 + p: its rank-r code at starts[p // C] + r C + p % C
        eorder, widths = edge_slices(counts)
        C = EDGE_SLICE
        gpos[eorder] = 1 + np.arange(ne)
        starts = np.concatenate([[0], np.cumsum(widths * C)[:-1]])
        codes = np.full(int(widths.sum()) * C, pad, np.int64)
        p = gpos[edge_of[order]] - 1
        codes[starts[p // C] + rank * C + p % C] = code.ravel()[order]
        return gpos, {"esl": {"codes": codes.astype(np.int32), "start": starts.astype(np.int32),
                              "width": widths.astype(np.int32)}}
    width = choose_buckets(counts)
    widths, sizes = np.unique(width, return_counts=True)
    bucket = np.searchsorted(widths, width)  # (ne,) each edge's bucket
    # the buckets' tables (width, edges) one after another in one buffer; each edge's
    # column and table start, so that every entry's place is one multiply-add
    by_bucket = np.argsort(bucket, kind="stable")
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    gpos[by_bucket] = 1 + np.arange(ne)  # G[0] = 0: the padding of the node tables
    loc = gpos - 1 - first[bucket]  # each edge's column in its bucket's table
    offset = np.concatenate([[0], np.cumsum(widths * sizes)])
    flat = np.full(int(offset[-1]), pad, np.int32)
    # each (tet, local edge) entry once, in edge order: its row (rank) and column
    eo = edge_of[order]
    flat[(offset[bucket] + loc)[eo] + rank * sizes[bucket][eo]] = code.ravel()[order]
    ebk = [flat[offset[k]:offset[k + 1]].reshape(int(widths[k]), int(sizes[k]))
           for k in range(widths.size)]
    return gpos, {"ebk": ebk}


def xla_table_shapes(counts: np.ndarray) -> list[tuple[int, int]]:
    """The shapes (count, edges) of XLA's edge tables ``ebk`` for ``counts`` (tets per
    edge), in order, without building them (programs compile ahead from them)."""
    width = choose_buckets(counts)
    return [(int(c), int((width == c).sum())) for c in np.unique(width)]


def table_codes(counts: np.ndarray, spec: Spec) -> int:
    """Codes the edge tables of ``spec`` hold for ``counts`` (tets per edge), padding and
    (sliced) the two int32 per slice included: the tables' bytes are 4 times this."""
    if spec.pallas:
        widths = edge_slices(counts)[1]
        return int(widths.sum()) * EDGE_SLICE + 2 * widths.size
    width = choose_buckets(counts)
    return int(sum(int(c) * int((width == c).sum()) for c in np.unique(width)))


__all__ = ["EDGE_SLICE", "EDGE_WINDOW", "MAX_TETS_CODED", "edge_slices", "edge_tables",
           "table_codes", "tables_ahead", "xla_table_shapes"]
