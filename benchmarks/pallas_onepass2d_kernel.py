"""The kernel of the 2D one-pass experiment (issue 23; ``pallas_onepass2d.py`` runs it):
TMz, emjax's CPML, CIS media, one Triton program per tile, one to three launches a step.

Launches (``Tiling2D.mode``): 0, one launch over the grid, every program running the
masked slab code; 1, the same with one ``lax.cond`` per program between a body with the
slab code and one without (Triton allocates registers for the larger branch, so every
program pays its occupancy); 2, three launches that write disjoint cells of the same
buffers: the interior (no slab code at all) and the x and y edge strips that hold the
slabs and their one-cell halo (the edge tiles listed in a small int32 table). All three
read the old fields, so a step is still one pass over memory. 3: as 2, but the first
launch covers the whole grid without slab code (aligned whole tiles) and the edge
launches then write the strips' cells over it.

Coefficients (``Tiling2D.sel``): the per-component CIS indices packed into one uint8
code per cell (mixed radix over the components that vary); a component with one
medium uses scalars, one with two media a select between two scalars (sel 1) or a
gather from its table (sel 0), more media always a gather.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

F32 = jnp.float32
EDGE_X = (4, 256)
"""Tile of the x edge strips (rows, columns) in mode 2."""
EDGE_Y = (64, 16)
"""Tile of the y edge strips in mode 2."""


@dataclass(frozen=True)
class Tiling2D:
    """bx x by tile (powers of two), Triton warps and stages, launch mode and
    coefficient selects (module docstring); probe (timing only, wrong fields): mode 2's
    launches in part, 1 the interior alone, 2 the edges alone, 3 an interior over whole
    rows (from column 0, not clipped), 4 an interior shrunk to whole tiles."""

    bx: int = 8
    by: int = 256
    warps: int = 4
    stages: int = 1
    mode: int = 2
    sel: int = 1
    probe: int = 0

    @classmethod
    def parse(cls, s: str) -> Tiling2D:
        return cls(*(int(v) for v in s.split("x")))

    def __str__(self) -> str:
        return "x".join(str(v) for v in asdict(self).values())


@dataclass(frozen=True)
class Static2D:
    """What the kernel is compiled for: shape, (1/dx, 1/dy) in 1/m, per axis the slab
    length L (0: none) and the high slab's start; digits: per component (Ez, Hx, Hy)
    (multiplier, radix, offset of its (a, b) pairs in the coefficient table)."""

    shape: tuple[int, int]
    inv_d: tuple[float, float]
    L: tuple[int, int]
    hi: tuple[int, int]
    digits: tuple[tuple[int, int, int], ...]
    interpret: bool

    @property
    def has_code(self) -> bool:
        return any(r > 1 for _, r, _ in self.digits)


@dataclass(frozen=True)
class Launch:
    """One ``pallas_call``: tile (bx, by), warps, stages; slabs 0 none, 1 masked, 2 a
    cond per program; table -1 (a grid of tiles from ``base``, cells below ``end``
    written) or this launch's first row in the tile table; span (i lo, i hi, j lo, j hi):
    the cells its tiles cover (for the static bounds checks); grid; clipped: some tile
    runs past the cells it writes."""

    bx: int
    by: int
    warps: int
    stages: int
    slabs: int
    table: int
    base: tuple[int, int]
    end: tuple[int, int]
    span: tuple[int, int, int, int]
    grid: tuple[int, ...]
    clipped: bool


# ---------------------------------------------------------------------- packing
# (the CIS codes and CPML tables: emjax.fdtd.pallas2d.pack_media / pack_slabs, which
# the solver's kernel, this experiment's mode 3 at 1 x 512, shares)


def plan_launches(st: Static2D, t: Tiling2D) -> tuple[list[Launch], np.ndarray]:
    """The step's launches and the edge tiles' table (int32 rows i0, j0, i end, j end)."""
    nx, ny = st.shape

    def grid_launch(base, end, bx, by, slabs):
        g = (-(-(end[0] - base[0]) // bx), -(-(end[1] - base[1]) // by))
        span = (base[0], base[0] + g[0] * bx, base[1], base[1] + g[1] * by)
        return Launch(bx, by, t.warps, t.stages, slabs, -1, base, end, span, g,
                      span[1] > end[0] or span[3] > end[1])

    if not any(st.L) or t.mode < 2:
        slabs = 0 if not any(st.L) else (1 if t.mode == 0 else 2)
        return [grid_launch((0, 0), (nx, ny), t.bx, t.by, slabs)], np.zeros(4, np.int32)
    Ib = -(-(st.L[0] + 1) // EDGE_X[0]) * EDGE_X[0] if st.L[0] else 0
    Jb = -(-(st.L[1] + 1) // EDGE_Y[1]) * EDGE_Y[1] if st.L[1] else 0
    assert nx > 2 * Ib and ny > 2 * Jb, "no interior between the edge strips"
    out = [grid_launch((Ib, Jb), (nx - Ib, ny - Jb), t.bx, t.by, 0) if t.mode == 2 else
           grid_launch((0, 0), (nx, ny), t.bx, t.by, 0)]
    if t.probe == 3:
        return [grid_launch((Ib, 0), (nx - Ib, ny), t.bx, t.by, 0)], np.zeros(4, np.int32)
    if t.probe == 4:
        w = (ny - 2 * Jb) // t.by * t.by
        return [grid_launch((Ib, Jb), (nx - Ib, Jb + w), t.bx, t.by, 0)], np.zeros(4, np.int32)
    rows = []
    for (bx, by), boxes in ((EDGE_X, [(0, Ib, 0, ny), (nx - Ib, nx, 0, ny)] if Ib else []),
                            (EDGE_Y, [(Ib, nx - Ib, 0, Jb), (Ib, nx - Ib, ny - Jb, ny)]
                             if Jb else [])):
        first = len(rows)
        for i_lo, i_hi, j_lo, j_hi in boxes:
            rows += [(i0, j0, i_hi, j_hi) for i0 in range(i_lo, i_hi, bx)
                     for j0 in range(j_lo, j_hi, by)]
        part = np.array(rows[first:], np.int64).reshape(-1, 4)
        if not len(part):
            continue
        span = (int(part[:, 0].min()), int(part[:, 0].max()) + bx,
                int(part[:, 1].min()), int(part[:, 1].max()) + by)
        clipped = bool(np.any(part[:, 0] + bx > part[:, 2]) or np.any(part[:, 1] + by >
                                                                     part[:, 3]))
        out.append(Launch(bx, by, 4, 1, 1, first, (0, 0), (nx, ny), span, (len(part),),
                          clipped))
    out = out[:1] if t.probe == 1 else out[1:] if t.probe == 2 else out
    return out, np.array(rows, np.int32).reshape(-1)


# ---------------------------------------------------------------------- kernel
def _kernel(ez_r, hx_r, hy_r, code_r, ctab_r, ptab_r, tiles_r, *refs, st: Static2D,
            la: Launch, sel: int):
    # refs: psi^n (4), the destination buffers (7, aliased to the outputs), the outputs
    psi_in, (ez_o, hx_o, hy_o), psi_out = refs[:4], refs[11:14], refs[14:]
    nx, ny = st.shape
    idx, idy = st.inv_d
    if la.table < 0:
        i0 = la.base[0] + pl.program_id(0) * la.bx
        j0 = la.base[1] + pl.program_id(1) * la.by
        ie, je = la.end
    else:
        r = (la.table + pl.program_id(0)) * 4
        i0, j0, ie, je = (tiles_r[r + q] for q in range(4))
    i = i0 + jnp.arange(la.bx, dtype=jnp.int32)[:, None]
    j = j0 + jnp.arange(la.by, dtype=jnp.int32)[None, :]
    full = jnp.ones((la.bx, la.by), jnp.bool_)
    o = i * ny + j
    valid = ((i < ie) & (j < je) & full) if la.clipped else None
    lo_i, hi_i, lo_j, hi_j = la.span

    def mask(di, dj):
        m = None
        for need, cond in ((lo_i + di < 0, i + di >= 0), (hi_i + di > nx, i + di < nx),
                           (lo_j + dj < 0, j + dj >= 0), (hi_j + dj > ny, j + dj < ny)):
            if need:
                m = cond & full if m is None else m & cond
        return m

    def ld(ref, di=0, dj=0):
        m = mask(di, dj)
        if m is None:
            return ref[o + (di * ny + dj)]
        return plt.load(ref.at[o + (di * ny + dj)], mask=m, other=jnp.zeros((), ref.dtype))

    def st_(ref, v):
        if valid is None:
            ref[o] = v
        else:  # masked entries point past the end (the interpreter's scatter)
            plt.store(ref.at[jnp.where(valid, o, nx * ny)], v, mask=valid)

    ez, ez_xp, ez_yp, ez_xm, ez_ym = (ld(ez_r, *s) for s in
                                      ((0, 0), (1, 0), (0, 1), (-1, 0), (0, -1)))
    hx, hx_ym, hy, hy_xm = ld(hx_r), ld(hx_r, 0, -1), ld(hy_r), ld(hy_r, -1, 0)
    codes = {}

    def coef(comp, di=0, dj=0):
        """(a, b) of component comp (0 Ez, 1 Hx, 2 Hy) at the cells shifted by (di, dj)."""
        mult, radix, off = st.digits[comp]
        if radix == 1:
            return ctab_r[off], ctab_r[off + 1]
        if (di, dj) not in codes:
            codes[(di, dj)] = ld(code_r, di, dj).astype(jnp.int32)
        d = codes[(di, dj)]
        if mult > 1:
            d = lax.div(d, jnp.int32(mult))
        d = lax.rem(d, jnp.int32(radix))
        if radix == 2 and sel:
            one = d == 1
            return (jnp.where(one, ctab_r[off + 2], ctab_r[off]),
                    jnp.where(one, ctab_r[off + 3], ctab_r[off + 1]))
        return ctab_r[off + 2 * d], ctab_r[off + 2 * d + 1]

    (ca, cb), (dax, dbx), (day, dby) = coef(0), coef(1), coef(2)
    (dax_m, dbx_m), (day_m, dby_m) = coef(1, 0, -1), coef(2, -1, 0)

    def body(slabs: bool):
        def cpml(curl, D, p, field, ax, di, dj, store):
            """curl + (1/kappa - 1) D + psi' on the slab cells of axis ``ax`` (cells
            shifted by (di, dj)); psi' stored where ``store``."""
            if not slabs or not st.L[ax]:
                return curl
            L, hi = st.L[ax], st.hi[ax]
            pos = (i + di) if ax == 0 else (j + dj)
            m = (((pos >= 0) & (pos < L)) | (pos >= hi)) & full
            lpos = jnp.clip(jnp.where(pos < L, pos, pos - hi + L), 0, 2 * L - 1)
            op = lpos * ny + (j + dj) if ax == 0 else (i + di) * (2 * L) + lpos
            op = jnp.where(m, op, psi_in[p].shape[0])  # (the interpreter's scatter)
            psi = plt.load(psi_in[p].at[op], mask=m, other=jnp.zeros((), F32))
            base = (0 if ax == 0 else 12 * st.L[0]) + (0 if field == "E" else 3) * 2 * L
            pb, pc, pk = (ptab_r[base + q * 2 * L + lpos] for q in range(3))
            psi_new = pb * psi + pc * D
            if store:
                sm = m if valid is None else m & valid
                plt.store(psi_out[p].at[jnp.where(sm, op, psi_in[p].shape[0])], psi_new,
                          mask=sm)
            return curl + jnp.where(m, pk * D + psi_new, 0.0)

        # H^{n+1/2}: Hx at (i, j) and (i, j-1), Hy at (i, j) and (i-1, j)
        D = idy * (ez_yp - ez)
        hx_n = dax * hx + -dbx * cpml(D, D, 1, "H", 1, 0, 0, True)
        D = idy * (ez - ez_ym)
        hx_nm = jnp.where(j >= 1, dax_m * hx_ym + -dbx_m * cpml(D, D, 1, "H", 1, 0, -1,
                                                                  False), 0.0)
        D = -idx * (ez_xp - ez)
        hy_n = day * hy + -dby * cpml(D, D, 0, "H", 0, 0, 0, True)
        D = -idx * (ez - ez_xm)
        hy_nm = jnp.where(i >= 1, day_m * hy_xm + -dby_m * cpml(D, D, 0, "H", 0, -1, 0,
                                                                  False), 0.0)
        # E^{n+1}: the curl's x term, its y term, then the x and the y slabs' terms
        Dx, Dy = idx * (hy_n - hy_nm), -idy * (hx_n - hx_nm)
        curl = cpml(cpml(Dx + Dy, Dx, 2, "E", 0, 0, 0, True), Dy, 3, "E", 1, 0, 0, True)
        st_(ez_o, jnp.where((i != 0) & (j != 0), ca * ez + cb * curl, 0.0))
        st_(hx_o, hx_n)
        st_(hy_o, hy_n)

    if la.slabs < 2:
        body(bool(la.slabs))
    else:
        near = [(lo - 1 < st.L[ax]) | (lo + n > st.hi[ax])  # tile + halo meets a slab
                for ax, (lo, n) in enumerate(((i0, la.bx), (j0, la.by))) if st.L[ax]]
        lax.cond(functools.reduce(jnp.logical_or, near), lambda: body(True),
                 lambda: body(False))


def onepass_step(F, psi, tabs, dst, dst_psi, st: Static2D, t: Tiling2D):
    """((Ez, Hx, Hy), psi) one step on, written into the donated ``dst`` buffers; tabs:
    (code, coefficient table, CPML table, tile table)."""
    n = st.shape[0] * st.shape[1]
    flat = [a.reshape(n) for a in F]
    out = [*(a.reshape(n) for a in dst), *dst_psi]
    launches, _ = plan_launches(st, t)
    for la in launches:
        out = pl.pallas_call(
            functools.partial(_kernel, st=st, la=la, sel=t.sel), grid=la.grid,
            out_shape=[jax.ShapeDtypeStruct((n,), F32)] * 3 + [
                jax.ShapeDtypeStruct(p.shape, F32) for p in psi],
            input_output_aliases={11 + m: m for m in range(7)},
            interpret=st.interpret,
            compiler_params=plt.CompilerParams(num_warps=la.warps, num_stages=la.stages),
        )(*flat, *tabs, *psi, *out)
    return tuple(a.reshape(st.shape) for a in out[:3]), tuple(out[3:])


__all__ = ["Launch", "Static2D", "Tiling2D", "onepass_step", "plan_launches"]
