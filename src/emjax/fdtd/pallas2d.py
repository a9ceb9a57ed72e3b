"""The one-pass 2D step (TMz and TEz) on a GPU: a Pallas (Triton) kernel that advances H
and E in one pass over memory (issue 23).

The XLA step of :mod:`emjax.fdtd.update2d` reads the fields twice (H update, then E
update: 36 B per float32 cell); here one program per (bx, by) tile reads the three field
components (TMz: Ez, Hx, Hy; TEz: Ex, Ey, Hz) once and writes them once (24 B, +1 B of
material code where the medium varies), forming the new H one cell back along x and y
(the E update's backward differences) again from shifted loads of the old fields; the
code follows ``update2d``'s curl terms, so one kernel serves both polarizations. The
outputs go to a second set of buffers, since a neighbouring tile's recomputation must
still see the old fields: the run's state
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

Scope (:func:`lower`): grids of at least :data:`MIN_CELLS`, float32 without 16-bit
storage, PEC walls or CPML (low and high slabs of an axis equally thick), CIS media of at
most 256 codes, electric line sources (added after the kernel, in place); no split-field
PML, dispersive media, magnetic sources, conformal cells, TEz's smoothed off-diagonal
terms or CAS storage. TF/SF plane waves: their H
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

from .update2d import POLARIZATIONS, curl_terms

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


def psi_list(polarization: str) -> tuple[tuple[str, int, int], ...]:
    """The kernel's psi arrays, (field, component, axis): H's curl terms, then E's, each
    component's in ``CURL_TERMS`` order (TMz: Hx along y, Hy along x, Ez along x and y;
    TEz: Hz along x and y, Ex along y, Ey along x)."""
    e, h = POLARIZATIONS[polarization]
    return tuple((f, c, ax) for f, comps in (("H", h), ("E", e)) for c in comps
                 for _, _, ax in curl_terms(c))


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
    per axis the slab length L (0: none) and the high slab's start, per state component
    (the E group's, then the H group's) its code digit (multiplier, radix, offset of its
    (a, b) pairs in the coefficient table), the launches, whether Pallas interprets (no
    GPU), and the polarization."""

    shape: tuple[int, int]
    inv_d: tuple[float, float]
    L: tuple[int, int]
    hi: tuple[int, int]
    digits: tuple[tuple[int, int, int], ...]
    launches: tuple[Launch, ...]
    interpret: bool
    polarization: str = "TMz"

    @property
    def has_code(self) -> bool:
        return any(r > 1 for _, r, _ in self.digits)

    @property
    def scan_unroll(self) -> int:
        """Steps per iteration of the chunk's scan: 2 for the compiled kernel, whose
        scratch buffers swap places each step (two steps bring them back: no copies);
        1 in the interpreter, which copies anyway and compiled 1.7x slower unrolled."""
        return 1 if self.interpret else 2

    @property
    def comps(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(E components, H components) as numbers 0, 1, 2."""
        return POLARIZATIONS[self.polarization]

    @property
    def psi(self) -> tuple[tuple[str, int, int], ...]:
        return psi_list(self.polarization)


def pack_media(cE, cH, shape, groups: tuple[int, int] = (1, 2)
               ) -> tuple[np.ndarray, np.ndarray, tuple] | None:
    """(code uint8 (nx, ny), coefficient table, digits) from the CIS coefficients (one
    table per field group, per-component indices; ``groups``: the E and H groups' sizes,
    TMz's by default), or None beyond 256 codes or for CAS."""
    idx, tabs = [], []
    for c, pos in [(cE, p) for p in range(groups[0])] + [(cH, p) for p in range(groups[1])]:
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
    """Zero psi in the kernel's layout: (E's arrays, H's) in :func:`psi_list` order, flat
    float32 (one entry where an axis has no slab)."""
    nx, ny = plan.shape
    z = {(f, c, ax): jnp.zeros((2 * plan.L[ax] * (ny if ax == 0 else nx) or 1,),
                               jnp.float32) for f, c, ax in plan.psi}
    return tuple(v for k, v in z.items() if k[0] == "E"), tuple(
        v for k, v in z.items() if k[0] == "H")


def psi_to_reference(plan: OnePass2D, slabs, psi_E: tuple, psi_H: tuple) -> tuple:
    """The kernel's psi as :func:`emjax.fdtd.update2d.zeros_psi` lays it out ({slab key:
    {component: array}} for E, then for H), exactly (slices of each array); ``slabs``:
    the layout's."""
    out = {"E": {s.key: {} for s in slabs}, "H": {s.key: {} for s in slabs}}
    flat = dict(zip(plan.psi, (*psi_H, *psi_E), strict=True))
    for (f, c, ax), a in flat.items():
        L = plan.L[ax]
        for s in slabs:
            if s.axis == ax:
                full = a.reshape((2 * L, -1) if ax == 0 else (-1, 2 * L))
                lo = 0 if s.side == "low" else L
                out[f][s.key][c] = full[lo:lo + L] if ax == 0 else full[:, lo:lo + L]
    return out["E"], out["H"]


def psi_from_reference(plan: OnePass2D, psi_E: dict, psi_H: dict) -> tuple[tuple, tuple]:
    """The inverse of :func:`psi_to_reference`: (E's arrays, H's) in the kernel's
    layout (a face without a slab: zeros)."""
    e, h = psi_zeros(plan)
    out = dict(zip(plan.psi, (*h, *e), strict=True))
    for (f, c, ax) in plan.psi:
        if not plan.L[ax]:
            continue
        ref = psi_E if f == "E" else psi_H
        n = plan.shape[1 - ax]
        shape = (plan.L[ax], n) if ax == 0 else (n, plan.L[ax])
        parts = [ref.get(f"{'xy'[ax]}_{side}", {}).get(c, jnp.zeros(shape, jnp.float32))
                 for side in ("low", "high")]
        out[(f, c, ax)] = jnp.concatenate(parts, axis=ax).reshape(-1)
    return (tuple(v for k, v in out.items() if k[0] == "E"),
            tuple(v for k, v in out.items() if k[0] == "H"))


def lower(layout, coeffs: dict, pml: dict, dtype, *, interpret: bool, tfsf_h=(),
          cb_at=None) -> tuple | None:
    """(plan, (tables, TF/SF terms)) of the one-pass kernel for a lowered TMz grid, or
    None where it does not apply (module docstring; the caller checks the scenario's
    other features). tables: (code, coefficient table, CPML table, tile table), NumPy;
    TF/SF terms: per plane wave, :func:`tfsf_curl_terms` of its H terms ``tfsf_h``
    (``cb_at(ii, jj)``: Ez's cb at those samples)."""
    if np.dtype(dtype) != np.float32 or layout.shape[0] * layout.shape[1] < MIN_CELLS:
        return None
    media = pack_media(coeffs["E"], coeffs["H"], layout.shape,
                       tuple(len(g) for g in layout.comps))
    slabs = pack_slabs(layout, pml)
    if media is None or slabs is None:
        return None
    L, hi, ptab = slabs
    launches = plan_launches(layout.shape, L)
    if launches is None:
        return None
    code, ctab, digits = media
    plan = OnePass2D(tuple(layout.shape), tuple(layout.inv_d), L, hi, digits, launches[0],
                     interpret, layout.polarization)
    code = code.reshape(-1) if plan.has_code else np.zeros(1, np.uint8)
    curls = tuple(tfsf_curl_terms(t, cb_at, layout.inv_d, plan.comps) for t in tfsf_h)
    return plan, ((code, ctab, ptab, launches[1]), curls)


def tfsf_curl_terms(terms_h: dict, cb_at, inv_d, comps) -> dict:
    """E's share of the TF/SF corrections of H, as terms of
    :func:`emjax.fdtd.update2d.tfsf_add` ({E position: ((ii, jj), weight, aux idx, aux
    w)}, read with the same incident E as the H terms): the kernel's E update reads H
    without them, so E^{n+1} gets cb curl(dH) afterwards. A curl term s d/da of H
    component h in E component e takes dH at (i, j) into E(i, j) as +s dH/d_a and into
    E one cell on along a as -s dH/d_a (backward differences; TMz: dHy enters Ez(i, j)
    as +dHy/dx and Ez(i+1, j) as -dHy/dx). ``cb_at(position, ii, jj)``: E's cb there;
    ``comps``: (E, H) components. The box lies inside the PML's interface, so no psi
    sees dH."""
    e_comps, h_comps = comps
    rows: dict[int, list] = {}
    for hpos, ((ii, jj), w, aidx, aw) in terms_h.items():
        for epos, ec in enumerate(e_comps):
            for s_, src, ax in curl_terms(ec):
                if src != h_comps[hpos]:
                    continue
                for shift, sign in ((0, 1.0), (1, -1.0)):
                    ti, tj = ii + shift * (ax == 0), jj + shift * (ax == 1)
                    wt = np.asarray(w, np.float64) * (s_ * sign * inv_d[ax]) * cb_at(
                        epos, ti, tj)
                    rows.setdefault(epos, []).append(
                        (ti, tj, wt.astype(np.asarray(w).dtype), aidx, aw))
    out = {}
    for epos, rs in rows.items():
        ti, tj, wt, aidx, aw = (np.concatenate([r[k] for r in rs]) for k in range(5))
        out[epos] = ((ti.astype(np.int32), tj.astype(np.int32)), wt, aidx, aw)
    return out


def _kernel(f0_r, f1_r, f2_r, code_r, ctab_r, ptab_r, tiles_r, *refs, plan: OnePass2D,
            la: Launch):
    """One program of launch ``la``: its tile's H^{n+1/2} and E^{n+1} (and psi where the
    launch has slabs), the state's three components in E-then-H order. Long: one Triton
    program is one function, and its helpers close over the tile's indices, masks and
    loads."""
    # refs: psi^n (4), the destination buffers (7, aliased to the outputs), the outputs
    psi_in, outs, psi_out = refs[:4], refs[11:14], refs[14:]
    fields = (f0_r, f1_r, f2_r)
    nx, ny = plan.shape
    e_comps, h_comps = plan.comps
    ne = len(e_comps)
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
    loads: dict = {}

    def ld(ref, di=0, dj=0):
        """ref at the cells shifted by (di, dj), zero beyond the grid (checks only where
        some tile of the launch can reach beyond it); memoised."""
        key = (id(ref), di, dj)
        if key in loads:
            return loads[key]
        m = None
        for need, cond in ((lo_i + di < 0, i + di >= 0), (hi_i + di > nx, i + di < nx),
                           (lo_j + dj < 0, j + dj >= 0), (hi_j + dj > ny, j + dj < ny)):
            if need:
                m = cond & full if m is None else m & cond
        at = o + (di * ny + dj)
        v = ref[at] if m is None else plt.load(ref.at[at], mask=m,
                                               other=jnp.zeros((), ref.dtype))
        loads[key] = v
        return v

    def coef(pos, di=0, dj=0):
        """(a, b) of state component ``pos`` at the cells shifted by (di, dj)."""
        mult, radix, off = plan.digits[pos]
        if radix == 1:
            return ctab_r[off], ctab_r[off + 1]
        d = lax.rem(lax.div(ld(code_r, di, dj).astype(jnp.int32), jnp.int32(mult)),
                    jnp.int32(radix))
        if radix == 2:
            one = d == 1
            return (jnp.where(one, ctab_r[off + 2], ctab_r[off]),
                    jnp.where(one, ctab_r[off + 3], ctab_r[off + 1]))
        return ctab_r[off + 2 * d], ctab_r[off + 2 * d + 1]

    def cpml(curl, D, field, comp, ax, di, dj, keep):
        """curl + (1/kappa - 1) D + psi' on the slab cells of axis ``ax`` (the cells
        shifted by (di, dj)); psi' stored where ``keep``."""
        if not la.slabs or not plan.L[ax]:
            return curl
        p = plan.psi.index((field, comp, ax))
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

    def update(pos, comp, diff, field, di, dj, keep):
        """a F + sign b (curl + slab terms) of state component ``pos`` (field ``field``)
        at the cells shifted by (di, dj): update2d's expression; ``diff(src, ax)``: the
        difference of the curl's source ``src`` along ``ax`` there."""
        curl, terms = None, []
        for s_, src, ax in curl_terms(comp):
            D = (s_ * plan.inv_d[ax]) * diff(src, ax)
            curl = D if curl is None else curl + D
            terms.append((ax, D))
        for ax, D in terms:
            curl = cpml(curl, D, field, comp, ax, di, dj, keep)
        a, b = coef(pos, di, dj)
        return a * ld(fields[pos], di, dj) + (1.0 if field == "E" else -1.0) * b * curl

    def h_new(hpos, di, dj):
        """H^{n+1/2} of H-group position hpos at the cells shifted by (di, dj) (zero
        before the grid's first sample: the XLA step's shifted zeros)."""
        def diff(src, ax):  # forward difference of E
            e = fields[e_comps.index(src)]
            return ld(e, di + (ax == 0), dj + (ax == 1)) - ld(e, di, dj)

        v = update(ne + hpos, h_comps[hpos], diff, "H", di, dj, not (di or dj))
        if di or dj:
            v = jnp.where((i + di >= 0) & (j + dj >= 0), v, 0.0)
        return v

    hn = {(hp, 0, 0): h_new(hp, 0, 0) for hp in range(len(h_comps))}
    for epos, ec in enumerate(e_comps):
        def diff(src, ax):  # backward difference of the new H
            hp = h_comps.index(src)
            back = (hp, -int(ax == 0), -int(ax == 1))
            if back not in hn:
                hn[back] = h_new(*back)
            return hn[(hp, 0, 0)] - hn[back]

        e = update(epos, ec, diff, "E", 0, 0, True)
        keep = [(i != 0) if a == 0 else (j != 0) for a in (0, 1) if a != ec]
        store(outs[epos], jnp.where(functools.reduce(jnp.logical_and, keep), e, 0.0),
              o, valid, nx * ny)
    for hp in range(len(h_comps)):
        store(outs[ne + hp], hn[(hp, 0, 0)], o, valid, nx * ny)


def store(ref, v, o, valid, n: int) -> None:
    """ref[o] = v, masked where ``valid`` (None: every cell; masked entries point past
    the end ``n``: the interpreter's scatter)."""
    if valid is None:
        ref[o] = v
    else:
        plt.store(ref.at[jnp.where(valid, o, n)], v, mask=valid)


def step(F, psi, arrays, scratch, plan: OnePass2D):
    """One leapfrog step: (F, psi) at n + 1 written into ``scratch`` (the same structure,
    donated by the caller's carry), from F = the E group then the H group at n (three
    2D arrays; TMz: Ez, Hx, Hy), psi: the four flat arrays of :func:`psi_list`; arrays:
    :func:`lower`'s tables, on the device. Returns (new F, new psi)."""
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


__all__ = ["COEFS", "Launch", "OnePass2D", "lower", "pack_media", "pack_slabs",
           "plan_launches", "psi_from_reference", "psi_list", "psi_to_reference",
           "psi_zeros", "step", "tfsf_curl_terms"]
