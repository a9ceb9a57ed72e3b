"""The Pallas node kernel's arrays: every node bucket's nodes in warp tiles, one launch.

The Ampere node product ``u_v <- u_v + (M^eps_v)^{-1} x_v`` (lossy: ``P_v u_v + Q_v x_v``)
has one w x w matrix per node, w the node's bucket width. A launch per bucket filled the
GPU on the seed's ring mesh (two widths, 10 and 14) but not on a gmsh mesh, whose node
degrees run 6 to 22: 14 buckets of 350 to 11,000 nodes, 14 launches none of which fills
132 SMs (H100, 2026-11-25: Ampere at 0.16 of the copy bandwidth). Here every bucket's
nodes are cut into tiles of ``U_TILE`` nodes (u's warp tiles,
:func:`emjax.dga.layout.tile_position`), and one launch (or a few, :func:`groups`) runs
tiles of any width: a program holds whole tiles, a warp one tile, the tile's width read
from a table, slots past it masked.

Per tile (``tab`` rows, int32): ``UBASE`` its first position in u, ``NB`` its node count
(``U_TILE``, or fewer in a bucket's last tile: u's slot stride), ``WIDTH`` w, ``GBASE``
/ ``MBASE`` / ``PBASE`` its first entries in ``gidx``, ``M``, ``P``. The three arrays are
slot-major within a tile with the constant stride ``U_TILE`` (a last tile's missing
nodes padded with zeros), so a warp reads each entry of its 32 nodes as one line:

* ``gidx``: w per node, the signed position in G of each half edge's edge sum;
* ``M``: the symmetric ``(M^eps_v)^{-1}`` (lossy: Q) times dt, upper triangle by columns,
  entry (i, j), i <= j, at :func:`sym_index` ``j (j + 1) / 2 + i``: the entries
  of a width-w matrix are the first ``w (w + 1) / 2`` of every wider one, so one unrolled
  kernel of width W serves all w <= W with static offsets;
* ``P`` (lossy meshes only): the full Crank-Nicolson ``P_v`` at :func:`full_index`, the
  same prefix property (identity for a bucket without conductivity).
"""

from __future__ import annotations

import numpy as np

from .layout import U_TILE

UBASE, NB, WIDTH, GBASE, MBASE, PBASE = range(6)
"""Rows of the tile table ``tab`` (6, ntiles)."""


def sym_index(i: int, j: int) -> int:
    """Packed position of entry (i, j), i <= j, of a symmetric matrix (by columns)."""
    assert i <= j
    return j * (j + 1) // 2 + i


def full_index(i: int, j: int) -> int:
    """Packed position of entry (i, j) of a full matrix: by shells ``max(i, j) = m``
    (row m's first m + 1 entries, then column m above the diagonal)."""
    m = max(i, j)
    return m * m + (j if i == m else m + 1 + i)


def tile_widths(buckets) -> np.ndarray:
    """Width of every tile, buckets in order: ``buckets`` (offset, w, nv) per bucket."""
    return np.concatenate([np.full(-(-nv // U_TILE), w, np.int64) for _, w, nv in buckets])


def tile_table(buckets, lossy: bool) -> np.ndarray:
    """``tab`` (6, ntiles) int32 of these buckets ((offset, w, nv) each)."""
    rows = []
    for off, w, nv in buckets:
        n = -(-nv // U_TILE)
        t = np.arange(n)
        rows.append(np.stack([off + t * U_TILE * w, np.minimum(U_TILE, nv - t * U_TILE),
                              np.full(n, w), np.full(n, w * U_TILE),
                              np.full(n, w * (w + 1) // 2 * U_TILE),
                              np.full(n, w * w * U_TILE if lossy else 0)]))
    tab = np.concatenate(rows, axis=1)
    for r in (GBASE, MBASE, PBASE):  # sizes -> exclusive running sums
        tab[r] = np.concatenate([[0], np.cumsum(tab[r])[:-1]])
    if tab.max() >= 2**31:
        raise ValueError("the DGATD node tiles exceed int32 positions")
    return tab.astype(np.int32)


def _fill(parts: list[tuple[list, float | None]], dtype) -> np.ndarray:
    """Flat tiled array of buckets' entries: per bucket ``(rows, scale)``, ``rows`` its k
    entries as (nv,) arrays (views), each times ``scale`` (None: as they are), laid per
    tile (k, U_TILE) slot-major and zero-padded, in ``dtype``. Written in place, one
    row at a time: no (k, nv) stack, padded copy or transpose of it (1.4 s of the
    20.2M-DoF set-up on an H200's host went to those copies, BENCHMARKS.md)."""
    shapes = [(-(-rows[0].size // U_TILE), len(rows)) for rows, _ in parts]
    out = np.zeros(sum(n * k * U_TILE for n, k in shapes), dtype)
    start = 0
    for (rows, scale), (n, k) in zip(parts, shapes, strict=True):
        view = out[start:start + n * k * U_TILE].reshape(n, k, U_TILE)
        nv = rows[0].size
        full = nv // U_TILE
        for r, row in enumerate(rows):
            src = row if scale is None else row * scale
            view[:full, r, :] = src[:full * U_TILE].reshape(full, U_TILE)
            view[full:, r, :nv - full * U_TILE] = src[full * U_TILE:]
        start += n * k * U_TILE
    return out


def symmetric_rows(D: np.ndarray, Dh: np.ndarray | None) -> list[np.ndarray]:
    """The cyclic packing ``D`` (nd, w, nv) / ``Dh`` (w / 2, nv) of symmetric matrices
    (``D[d, i] = M[i, (i + d) mod w]``) as w (w + 1) / 2 rows (nv,) (views) in
    :func:`sym_index` order."""
    nd, w, _ = D.shape
    rows = []
    for j in range(w):
        for i in range(j + 1):
            d = j - i
            if d < nd:
                rows.append(D[d, i])
            elif w % 2 == 0 and d == w // 2:
                rows.append(Dh[i])
            else:  # M[i, j] = M[j, (j + w - d) mod w]
                rows.append(D[w - d, j])
    return rows


def symmetric_entries(D: np.ndarray, Dh: np.ndarray | None) -> np.ndarray:
    """:func:`symmetric_rows` stacked, (w (w + 1) / 2, nv)."""
    return np.stack(symmetric_rows(D, Dh))


def full_rows(P: np.ndarray) -> list[np.ndarray]:
    """Full matrices (w, w, nv) as w^2 rows (nv,) (views) in :func:`full_index` order."""
    w = P.shape[0]
    order = sorted(((i, j) for i in range(w) for j in range(w)), key=lambda ij: full_index(*ij))
    return [P[i, j] for i, j in order]


def full_entries(P: np.ndarray) -> np.ndarray:
    """:func:`full_rows` stacked, (w^2, nv)."""
    return np.stack(full_rows(P))


def pack(parts: list[dict], lossy: bool, dtype) -> dict:
    """``gidx``, ``M`` (and ``P`` when ``lossy``) of all buckets in tiles. ``parts``: per
    bucket ``gidx`` (w, nv) int, ``M`` the (w (w + 1) / 2) rows (nv,) in
    :func:`sym_index` order times ``scale`` (absent: 1) and, for lossy buckets, ``P``
    the (w^2) rows in :func:`full_index` order (missing: identity)."""
    out = {"gidx": _fill([(list(p["gidx"]), None) for p in parts], np.int32),
           "M": _fill([(p["M"], p.get("scale")) for p in parts], dtype)}
    if lossy:
        Ps = []
        for p in parts:
            P = p.get("P")
            if P is None:
                w, nv = p["gidx"].shape
                P = full_rows(np.broadcast_to(np.eye(w)[:, :, None], (w, w, nv)))
            Ps.append((P, None))
        out["P"] = _fill(Ps, dtype)
    return out


def groups(widths: np.ndarray, slack: float = 0.5) -> list[tuple[int, int, int]]:
    """Launches over the tiles (widths ascending within each bucket's run): (first tile,
    tiles, unrolled width W) each. A launch unrolls W (W + 1) / 2 matrix entries per
    thread whatever its tile's width, so tiles are split off into a new launch where the
    launch's issued entries would exceed ``1 + slack`` times the entries its tiles hold."""
    tri = widths * (widths + 1) // 2
    out, start = [], 0
    for t in range(1, len(widths) + 1):
        if t < len(widths):
            W = int(widths[start:t + 1].max())
            issued = (t + 1 - start) * W * (W + 1) // 2
            if issued <= (1 + slack) * tri[start:t + 1].sum():
                continue
        out.append((start, t - start, int(widths[start:t].max())))
        start = t
    return out


__all__ = ["GBASE", "MBASE", "NB", "PBASE", "UBASE", "WIDTH", "full_entries", "full_index",
           "full_rows", "groups", "pack", "sym_index", "symmetric_entries", "symmetric_rows",
           "tile_table", "tile_widths"]
