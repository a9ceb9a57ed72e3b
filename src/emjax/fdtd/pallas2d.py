"""The one-pass TMz step on a GPU: a Pallas (Triton) kernel that advances H and E in one
pass over memory (issue 23).

The XLA step of :mod:`emjax.fdtd.update2d` reads the fields twice (H update, then E
update: 36 B per float32 cell); here one program per (bx, by) tile reads Ez, Hx, Hy once
and writes them once (24 B, +1 B of material code where the medium varies), forming the
new H one cell back along x and y (the E update's backward differences) again from
shifted loads of the old fields. The outputs go to a second set of buffers, since a
neighbouring tile's recomputation must still see the old fields: the run's state
carries that scratch set (:attr:`emjax.fdtd.state.FDTDState.scratch`), each step writes
into it and hands back the old set as the next scratch, and the driver's scan runs two
steps per iteration, so the buffers come back to their places and XLA copies nothing.

CPML (Roden and Gedney 2000) with emjax's arithmetic: for a curl term along a slab's
axis, D = s inv_d (difference), psi' = b psi + c D, and the curl gains
(1/kappa - 1) D + psi'. psi lives in the slabs only, one array per (field, axis) with
the low slab's rows (or columns) then the high slab's. The step is three launches: the
whole grid without slab code (whole tiles, no masks: the kernel's speed), then the x and
the y edge strips, which hold the slabs and their one-cell halo, written over it with
the slab terms (tiles listed in a small table). On an H200 at 8192^2 with a 10-cell
CPML: 152.6 Gcells/s against 114.7 for the XLA step, 0.89 of copy bandwidth; a lossy
disc 139.9 against 107.1 (``benchmarks/pallas_onepass2d.py``, BENCHMARKS.md).

Coefficients: the per-component CIS indices packed into one uint8 code per cell (mixed
radix over the components that vary); a component with one medium uses scalars, with
two a select between two, with more a gather from its table.

Scope (:func:`lower`): grids of at least :data:`MIN_CELLS`, TMz, float32 without 16-bit
storage, PEC walls or CPML (low and high slabs of an axis equally thick), CIS media of at
most 256 codes, electric line sources (added after the kernel, in place); no split-field
PML, dispersive media, magnetic sources or CAS storage. TF/SF plane waves: their H
corrections are added after the kernel, and E, which the kernel updated from H without
them, gets their curl (:func:`tfsf_curl_terms`) beside its own corrections. Everything
else runs the XLA step, which stays the reference and the CPU path (tests run this
kernel in Pallas' interpreter there).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

TILE = (1, 512, 4)
"""(rows, columns, warps) of the whole-grid launch: the best lossy tiling at 8192^2 on an
H200 (139.9 Gcells/s; vacuum 149.6, within 2% of the best, 152.6 at 1 x 1024)."""
MIN_CELLS = 1 << 22
"""Grids below this many cells take the XLA step: there the kernel's three launches a
step cost more than the bytes they save (``emjax bench seed002-tmz`` on an H200, CPML:
1024^2 48.3 Gcells/s against 60.7 for the XLA step with the split-field PML; 2048^2
85.4 against 81.3; 8192^2 147.5 against 113.4)."""
EDGE_X = (4, 256)
"""Tile of the x edge strips (rows, columns)."""
EDGE_Y = (64, 16)
"""Tile of the y edge strips."""
COEFS = ("bE", "cE", "kE", "bH", "cH", "kH")
PSI = (("H", 1, 0), ("H", 0, 1), ("E", 2, 0), ("E", 2, 1))
"""The kernel's psi arrays: (field, component, axis): Hy along x, Hx along y, Ez along x,
Ez along y."""


@dataclass(frozen=True)
class Launch:
    """One ``pallas_call``: tile (bx, by), warps; slabs: with the slab code; table: -1 (a
    grid of tiles from (0, 0)) or this launch's first row in the tile table; span (i lo,
    i hi, j lo, j hi): the cells its tiles cover; grid; clipped: a tile runs past the
    cells it writes (its stores are masked)."""

    bx: int
    by: int
    warps: int
    slabs: bool
    table: int
    span: tuple[int, int, int, int]
    grid: tuple[int, ...]
    clipped: bool


@dataclass(frozen=True)
class OnePass2D:
    """What the kernel is compiled for (hashable): shape (nx, ny), (1/dx, 1/dy) in 1/m,
    per axis the slab length L (0: none) and the high slab's start, per component (Ez,
    Hx, Hy) its code digit (multiplier, radix, offset of its (a, b) pairs in the
    coefficient table), the launches, and whether Pallas interprets (no GPU)."""

    shape: tuple[int, int]
    inv_d: tuple[float, float]
    L: tuple[int, int]
    hi: tuple[int, int]
    digits: tuple[tuple[int, int, int], ...]
    launches: tuple[Launch, ...]
    interpret: bool

    @property
    def has_code(self) -> bool:
        return any(r > 1 for _, r, _ in self.digits)


def pack_media(cE, cH, shape) -> tuple[np.ndarray, np.ndarray, tuple] | None:
    """(code uint8 (nx, ny), coefficient table, digits) from the CIS coefficients (one
    table per field group, per-component indices), or None beyond 256 codes or for CAS."""
    idx, tabs = [], []
    for c, pos in ((cE, 0), (cH, 0), (cH, 1)):
        if isinstance(c.a, tuple):
            return None
        idx.append(None if c.idx is None else np.asarray(c.idx[pos]).astype(np.int64))
        tabs.append((np.atleast_1d(np.asarray(c.a)), np.atleast_1d(np.asarray(c.b))))
    code = np.zeros(shape, np.int64)
    digits, table, mult = [], [], 1
    for ix, (a, b) in zip(idx, tabs, strict=True):
        radix = 1 if ix is None else len(a)
        digits.append((mult, radix, len(table)))
        table += [v for q in range(radix) for v in (a[q], b[q])]
        if ix is not None:
            code += ix * mult
            mult *= radix
    if mult > 256:
        return None
    return code.astype(np.uint8), np.array(table, np.float32), tuple(digits)


def pack_slabs(lay, pml: dict):
    """(L per axis, high start per axis, CPML table) or None (a split-field slab, or
    low and high slabs of one axis of different lengths): per axis the six 1D arrays of
    ``COEFS``, each the low slab's then the high slab's (a missing face's entries zero,
    so that its terms add exactly 0)."""
    if lay.split:
        return None
    L, hi, parts = [0, 0], [0, 0], []
    for ax in range(2):
        slabs = {s.side: s for s in lay.slabs if s.axis == ax}
        lens = {s.length for s in slabs.values()}
        if len(lens) > 1 or ("low" in slabs and slabs["low"].start != 0):
            return None
        L[ax] = lens.pop() if lens else 0
        hi[ax] = slabs["high"].start if "high" in slabs else lay.shape[ax] + 1
        for name in COEFS:
            for side in ("low", "high"):
                v = np.zeros(L[ax], np.float32)
                if side in slabs:
                    v = np.asarray(getattr(pml[slabs[side].key], name), np.float32)
                parts.append(v)
    tab = np.concatenate(parts) if any(p.size for p in parts) else np.zeros(1, np.float32)
    return tuple(L), tuple(hi), tab


def plan_launches(shape, L) -> tuple[tuple[Launch, ...], np.ndarray] | None:
    """The step's launches and the edge tiles' table (int32 rows: i0, j0, i end, j end),
    or None when the grid leaves no interior between the edge strips."""
    nx, ny = shape
    bx, by, warps = TILE
    g = (-(-nx // bx), -(-ny // by))
    span = (0, g[0] * bx, 0, g[1] * by)
    out = [Launch(bx, by, warps, False, -1, span, g, span[1] > nx or span[3] > ny)]
    Ib = -(-(L[0] + 1) // EDGE_X[0]) * EDGE_X[0] if L[0] else 0
    Jb = -(-(L[1] + 1) // EDGE_Y[1]) * EDGE_Y[1] if L[1] else 0
    if nx <= 2 * Ib or ny <= 2 * Jb:
        return None
    rows: list[tuple[int, int, int, int]] = []
    for (tx, ty), boxes in ((EDGE_X, [(0, Ib, 0, ny), (nx - Ib, nx, 0, ny)] if Ib else []),
                            (EDGE_Y, [(Ib, nx - Ib, 0, Jb), (Ib, nx - Ib, ny - Jb, ny)]
                             if Jb else [])):
        first = len(rows)
        for i_lo, i_hi, j_lo, j_hi in boxes:
            rows += [(i0, j0, i_hi, j_hi) for i0 in range(i_lo, i_hi, tx)
                     for j0 in range(j_lo, j_hi, ty)]
        part = np.array(rows[first:], np.int64).reshape(-1, 4)
        if len(part):
            sp = (int(part[:, 0].min()), int(part[:, 0].max()) + tx,
                  int(part[:, 1].min()), int(part[:, 1].max()) + ty)
            clipped = bool(np.any(part[:, 0] + tx > part[:, 2]) or
                           np.any(part[:, 1] + ty > part[:, 3]))
            out.append(Launch(tx, ty, 4, True, first, sp, (len(part),), clipped))
    return tuple(out), np.array(rows or [(0, 0, 0, 0)], np.int32).reshape(-1)


def psi_zeros(plan: OnePass2D) -> tuple[tuple, tuple]:
    """Zero psi in the kernel's layout: ((Ez along x, Ez along y), (Hy along x, Hx
    along y)), flat float32 (one entry where an axis has no slab)."""
    nx, ny = plan.shape
    sizes = [2 * plan.L[ax] * (ny if ax == 0 else nx) or 1 for _, _, ax in PSI]
    z = [jnp.zeros((s,), jnp.float32) for s in sizes]
    return (z[2], z[3]), (z[0], z[1])


def lower(layout, coeffs: dict, pml: dict, dtype, *, interpret: bool, tfsf_h=(),
          cb_at=None) -> tuple | None:
    """(plan, (tables, TF/SF terms)) of the one-pass kernel for a lowered TMz grid, or
    None where it does not apply (module docstring; the caller checks the scenario's
    other features). tables: (code, coefficient table, CPML table, tile table), NumPy;
    TF/SF terms: per plane wave, :func:`tfsf_curl_terms` of its H terms ``tfsf_h``
    (``cb_at(ii, jj)``: Ez's cb at those samples)."""
    if layout.polarization != "TMz" or np.dtype(dtype) != np.float32 or \
            layout.shape[0] * layout.shape[1] < MIN_CELLS:
        return None
    media = pack_media(coeffs["E"], coeffs["H"], layout.shape)
    slabs = pack_slabs(layout, pml)
    if media is None or slabs is None:
        return None
    L, hi, ptab = slabs
    launches = plan_launches(layout.shape, L)
    if launches is None:
        return None
    code, ctab, digits = media
    plan = OnePass2D(tuple(layout.shape), tuple(layout.inv_d), L, hi, digits, launches[0],
                     interpret)
    code = code.reshape(-1) if plan.has_code else np.zeros(1, np.uint8)
    curls = tuple(tfsf_curl_terms(t, cb_at, layout.inv_d) for t in tfsf_h)
    return plan, ((code, ctab, ptab, launches[1]), curls)


def tfsf_curl_terms(terms_h: dict, cb_at, inv_d) -> dict:
    """Ez's share of the TF/SF corrections of H, as terms of
    :func:`emjax.fdtd.update2d.tfsf_add` ({0: ((ii, jj), weight, aux idx, aux w)}, read
    with the same incident E as the H terms): the kernel's E update reads H without
    them, so E^{n+1} gets cb curl(dH) afterwards. dHy at (i, j) enters Ez(i, j) as
    +dHy/dx and Ez(i+1, j) as -dHy/dx; dHx enters Ez(i, j) as -dHx/dy and Ez(i, j+1)
    as +dHx/dy (the box lies inside the PML's interface, so no psi sees dH)."""
    rows = []
    for pos, ((ii, jj), w, aidx, aw) in terms_h.items():
        ax, s = (1, -1.0) if pos == 0 else (0, 1.0)  # Hx: -d/dy; Hy: +d/dx
        for shift, sign in ((0, 1.0), (1, -1.0)):
            ti, tj = ii + shift * (ax == 0), jj + shift * (ax == 1)
            wt = np.asarray(w, np.float64) * (s * sign * inv_d[ax]) * cb_at(ti, tj)
            rows.append((ti, tj, wt.astype(np.asarray(w).dtype), aidx, aw))
    if not rows:
        return {}
    ti, tj, wt, aidx, aw = (np.concatenate([r[k] for r in rows]) for k in range(5))
    return {0: ((ti.astype(np.int32), tj.astype(np.int32)), wt, aidx, aw)}


def _kernel(ez_r, hx_r, hy_r, code_r, ctab_r, ptab_r, tiles_r, *refs, plan: OnePass2D,
            la: Launch):
    """One program of launch ``la``: its tile's H^{n+1/2} and E^{n+1} (and psi where the
    launch has slabs). Long: one Triton program is one function, and its helpers close
    over the tile's indices, masks and loads."""
    # refs: psi^n (4), the destination buffers (7, aliased to the outputs), the outputs
    psi_in, (ez_o, hx_o, hy_o), psi_out = refs[:4], refs[11:14], refs[14:]
    nx, ny = plan.shape
    idx, idy = plan.inv_d
    if la.table < 0:
        i0, j0 = pl.program_id(0) * la.bx, pl.program_id(1) * la.by
        ie, je = nx, ny
    else:
        r = (la.table + pl.program_id(0)) * 4
        i0, j0, ie, je = (tiles_r[r + q] for q in range(4))
    i = i0 + jnp.arange(la.bx, dtype=jnp.int32)[:, None]
    j = j0 + jnp.arange(la.by, dtype=jnp.int32)[None, :]
    full = jnp.ones((la.bx, la.by), jnp.bool_)
    o = i * ny + j
    valid = ((i < ie) & (j < je) & full) if la.clipped else None
    lo_i, hi_i, lo_j, hi_j = la.span

    def ld(ref, di=0, dj=0):
        """ref at the cells shifted by (di, dj), zero beyond the grid (checks only where
        some tile of the launch can reach beyond it)."""
        m = None
        for need, cond in ((lo_i + di < 0, i + di >= 0), (hi_i + di > nx, i + di < nx),
                           (lo_j + dj < 0, j + dj >= 0), (hi_j + dj > ny, j + dj < ny)):
            if need:
                m = cond & full if m is None else m & cond
        if m is None:
            return ref[o + (di * ny + dj)]
        return plt.load(ref.at[o + (di * ny + dj)], mask=m, other=jnp.zeros((), ref.dtype))

    def store(ref, v):
        if valid is None:
            ref[o] = v
        else:  # masked entries point past the end (the interpreter's scatter)
            plt.store(ref.at[jnp.where(valid, o, nx * ny)], v, mask=valid)

    ez, ez_xp, ez_yp, ez_xm, ez_ym = (ld(ez_r, *s) for s in
                                      ((0, 0), (1, 0), (0, 1), (-1, 0), (0, -1)))
    hx, hx_ym, hy, hy_xm = ld(hx_r), ld(hx_r, 0, -1), ld(hy_r), ld(hy_r, -1, 0)
    codes: dict = {}

    def coef(comp, di=0, dj=0):
        """(a, b) of component comp (0 Ez, 1 Hx, 2 Hy) at the cells shifted by (di, dj)."""
        mult, radix, off = plan.digits[comp]
        if radix == 1:
            return ctab_r[off], ctab_r[off + 1]
        if (di, dj) not in codes:
            codes[(di, dj)] = ld(code_r, di, dj).astype(jnp.int32)
        d = lax.rem(lax.div(codes[(di, dj)], jnp.int32(mult)), jnp.int32(radix))
        if radix == 2:
            one = d == 1
            return (jnp.where(one, ctab_r[off + 2], ctab_r[off]),
                    jnp.where(one, ctab_r[off + 3], ctab_r[off + 1]))
        return ctab_r[off + 2 * d], ctab_r[off + 2 * d + 1]

    def cpml(curl, D, p, field, ax, di, dj, keep):
        """curl + (1/kappa - 1) D + psi' on the slab cells of axis ``ax`` (the cells
        shifted by (di, dj)); psi' stored where ``keep``."""
        if not la.slabs or not plan.L[ax]:
            return curl
        L, hi = plan.L[ax], plan.hi[ax]
        pos = (i + di) if ax == 0 else (j + dj)
        m = (((pos >= 0) & (pos < L)) | (pos >= hi)) & full
        lpos = jnp.clip(jnp.where(pos < L, pos, pos - hi + L), 0, 2 * L - 1)
        op = lpos * ny + (j + dj) if ax == 0 else (i + di) * (2 * L) + lpos
        end = psi_in[p].shape[0]
        psi = plt.load(psi_in[p].at[jnp.where(m, op, end)], mask=m,
                       other=jnp.zeros((), jnp.float32))
        base = (0 if ax == 0 else 12 * plan.L[0]) + (0 if field == "E" else 3) * 2 * L
        pb, pc, pk = (ptab_r[base + q * 2 * L + lpos] for q in range(3))
        psi_new = pb * psi + pc * D
        if keep:
            sm = m if valid is None else m & valid
            plt.store(psi_out[p].at[jnp.where(sm, op, end)], psi_new, mask=sm)
        return curl + jnp.where(m, pk * D + psi_new, 0.0)

    (ca, cb), (dax, dbx), (day, dby) = coef(0), coef(1), coef(2)
    (dax_m, dbx_m), (day_m, dby_m) = coef(1, 0, -1), coef(2, -1, 0)
    # H^{n+1/2}: Hx at (i, j) and (i, j-1), Hy at (i, j) and (i-1, j)
    D = idy * (ez_yp - ez)
    hx_n = dax * hx + -dbx * cpml(D, D, 1, "H", 1, 0, 0, True)
    D = idy * (ez - ez_ym)
    hx_nm = jnp.where(j >= 1, dax_m * hx_ym + -dbx_m * cpml(D, D, 1, "H", 1, 0, -1, False),
                      0.0)
    D = -idx * (ez_xp - ez)
    hy_n = day * hy + -dby * cpml(D, D, 0, "H", 0, 0, 0, True)
    D = -idx * (ez - ez_xm)
    hy_nm = jnp.where(i >= 1, day_m * hy_xm + -dby_m * cpml(D, D, 0, "H", 0, -1, 0, False),
                      0.0)
    # E^{n+1}: the curl's x term, its y term, then the x and the y slabs' terms
    Dx, Dy = idx * (hy_n - hy_nm), -idy * (hx_n - hx_nm)
    curl = cpml(cpml(Dx + Dy, Dx, 2, "E", 0, 0, 0, True), Dy, 3, "E", 1, 0, 0, True)
    store(ez_o, jnp.where((i != 0) & (j != 0), ca * ez + cb * curl, 0.0))
    store(hx_o, hx_n)
    store(hy_o, hy_n)


def step(F, psi, arrays, scratch, plan: OnePass2D):
    """One leapfrog step: ((Ez, Hx, Hy), psi) at n + 1 written into ``scratch`` (the
    same structure, donated by the caller's carry), from F = (Ez, Hx, Hy) at n (2D
    arrays), psi: the four flat arrays of :data:`PSI`; arrays: :func:`lower`'s, on the
    device. Returns (new F, new psi)."""
    nx, ny = plan.shape
    n = nx * ny
    out = [*(a.reshape(n) for a in scratch[0]), *scratch[1]]
    for la in plan.launches:
        out = pl.pallas_call(
            functools.partial(_kernel, plan=plan, la=la), grid=la.grid,
            out_shape=[jax.ShapeDtypeStruct((n,), jnp.float32)] * 3 + [
                jax.ShapeDtypeStruct(p.shape, jnp.float32) for p in psi],
            input_output_aliases={11 + m: m for m in range(7)},
            interpret=plan.interpret,
            compiler_params=plt.CompilerParams(num_warps=la.warps, num_stages=1),
        )(*(a.reshape(n) for a in F), *arrays, *psi, *out)
    return tuple(a.reshape(plan.shape) for a in out[:3]), tuple(out[3:])


__all__ = ["COEFS", "PSI", "Launch", "OnePass2D", "lower", "pack_media", "pack_slabs",
           "plan_launches", "psi_zeros", "step", "tfsf_curl_terms"]
