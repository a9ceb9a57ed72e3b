"""Helpers of the one-pass Pallas experiment (issue 23, ``pallas_onepass3d.py``): the
CPML inside the kernel, the kernel's tile loads, coefficient packing, fields, timing.

CPML: emjax's ``per_face`` CPML inside the one-pass kernel. Each slab's psi lives in
its slab window only, as emjax stores it (``emjax.fdtd.cpml``); the kernel reads psi^n
from one set of buffers and writes psi^{n+1} to a second (ping-pong like the fields: a
halo H recomputed by a neighbouring program must see the old psi). Every H or E value
the kernel forms gets, after its bulk update and in ``Layout.slabs`` order, the
correction of each slab that holds it:

    D = inv_d[axis] * (difference along the slab's axis, the curl term's own);
    psi' = b psi + c D;  F += sign * cb (or db) * s ((kappa^-1 - 1) D + psi')

as ``update3d._update_fields`` does with ``strategy="per_face"``: the kernel's E update
reads the corrected new H, so E needs no curl(dH) correction. Where slab work runs:
``Tiling.one`` 0, a ``lax.cond`` per slab term (each term's loads wait in turn: 31.2
Gcells/s at 512^3 when every z tile met a z slab, 21.7 with the z strips below); 1, one
``lax.cond`` per plane between the bulk body and a slab body with every term masked.
``Tiling.zby``: the z-edge strips in a second launch (``launches``), so the interior
launch has no z-slab code. psi costs 8 B per psi entry (read and written), slabs only.
"""

from __future__ import annotations

import dataclasses
import functools
import statistics
import time
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental.pallas import triton as plt

import emjax as em
from emjax.fdtd.cpml import CURL_TERMS, Slab, tangential
from emjax.fdtd.solver import FDTDSolver
from emjax.fdtd.update3d import Layout, UpdateCoefficients, _mask, update_E, update_H

F32 = jnp.float32

COEFS = ("bE", "cE", "kE", "bH", "cH", "kH")


@dataclass(frozen=True)
class SlabPlan:
    """The slabs in ``Layout.slabs`` order with each one's offset into the packed 1D
    coefficient table (six arrays of ``slab.length``: ``COEFS``)."""

    slabs: tuple[Slab, ...] = ()
    offs: tuple[int, ...] = ()

    @property
    def n_psi(self) -> int:
        return 4 * len(self.slabs)

    def psi_index(self, si: int, field: str, comp: int) -> int:
        """Position of (slab si, field "H"/"E", component) in the flat psi list."""
        return 4 * si + 2 * (field == "E") + tangential(self.slabs[si].axis).index(comp)


def pack_pml(slabs: tuple[Slab, ...], pml: dict) -> tuple[SlabPlan, np.ndarray]:
    """(plan, float32 table) of the slabs' 1D CPML coefficients."""
    parts, offs, off = [], [], 0
    for slab in slabs:
        offs.append(off)
        for name in COEFS:
            v = np.asarray(getattr(pml[slab.key], name), np.float32)
            assert v.shape == (slab.length,)
            parts.append(v)
            off += slab.length
    tab = np.concatenate(parts) if parts else np.zeros(1, np.float32)
    return SlabPlan(tuple(slabs), tuple(offs)), tab


def psi_to_list(plan: SlabPlan, psi_E: dict, psi_H: dict) -> list:
    """emjax's psi dicts ({key: {comp: array}}) as the kernel's flat list."""
    out = [None] * plan.n_psi
    for si, slab in enumerate(plan.slabs):
        for field, psi in (("H", psi_H), ("E", psi_E)):
            for c in tangential(slab.axis):
                out[plan.psi_index(si, field, c)] = psi[slab.key][c]
    return out


def psi_from_list(plan: SlabPlan, flat) -> tuple[dict, dict]:
    """The inverse of :func:`psi_to_list`: (psi_E, psi_H)."""
    psi = {"E": {}, "H": {}}
    for si, slab in enumerate(plan.slabs):
        for field in ("H", "E"):
            psi[field][slab.key] = {c: flat[plan.psi_index(si, field, c)]
                                    for c in tangential(slab.axis)}
    return psi["E"], psi["H"]


def slab_corrections(tile, out, *, field: str, comp: int, diffs: dict, b, plan: SlabPlan,
                     shape, inv_d, ptab, psi_in, psi_out, store: bool,
                     krange: tuple[int, int], masked: bool):
    """``out`` with each slab's CPML correction of component ``comp`` of ``field`` added
    (in ``plan.slabs`` order), psi^{n+1} written to ``psi_out`` where ``store``.

    tile: the region (``pallas_onepass3d.Tile``: plane ``i``, rows ``jr``, columns
    ``kr``, first row/column ``j_first``/``k_first``, its grid mask); diffs: {axis:
    the difference of the curl's source along that axis}; b: cb or db of the cells;
    krange: [lo, hi) of the z the launch's tiles and halos cover (z slabs outside it
    are left out of the code); masked: each term applied with its slab's mask, no
    ``lax.cond`` (the caller branched already)."""
    _, ny, nz = shape
    sign = 1.0 if field == "E" else -1.0
    q0 = 0 if field == "E" else 3
    for si, slab in enumerate(plan.slabs):
        if comp not in tangential(slab.axis) or (slab.axis == 2 and (
                slab.start + slab.length <= krange[0] or slab.start >= krange[1])):
            continue
        s_, _, ax = next(term for term in CURL_TERMS[comp] if term[2] == slab.axis)
        s, L, off = slab.start, slab.length, plan.offs[si]
        if ax == 0:
            pred = (tile.i >= s) & (tile.i < s + L)
            elem = jnp.ones((1, 1), jnp.bool_) & pred if masked else None
            cidx = jnp.zeros((1, 1), jnp.int32) + jnp.clip(tile.i - s, 0, L - 1)
        elif ax == 1:
            pred = (tile.j_first < s + L) & (tile.j_first + tile.ry > s)
            elem = ((tile.jr >= s) & (tile.jr < s + L))[:, None]
            cidx = jnp.clip(tile.jr - s, 0, L - 1)[:, None]
        else:
            pred = (tile.k_first < s + L) & (tile.k_first + tile.rz > s)
            elem = ((tile.kr >= s) & (tile.kr < s + L))[None, :]
            cidx = jnp.clip(tile.kr - s, 0, L - 1)[None, :]
        p = plan.psi_index(si, field, comp)
        d = diffs[ax]

        def apply(o, *, s=s, L=L, off=off, ax=ax, elem=elem, cidx=cidx, p=p, d=d, s_=s_):
            pb, pc, pk = (ptab[off + (q0 + q) * L + cidx] for q in range(3))
            ii = tile.i - s if ax == 0 else tile.i
            ny_, nz_ = (L if ax == 1 else ny), (L if ax == 2 else nz)
            jo = tile.jr - s if ax == 1 else tile.jr
            ko = tile.kr - s if ax == 2 else tile.kr
            o_psi = ii * (ny_ * nz_) + (jo * nz_)[:, None] + ko[None, :]
            m = tile.grid_mask
            if elem is not None:  # full shape: a store's mask is not broadcast
                e = elem & jnp.ones((tile.ry, tile.rz), jnp.bool_)
                m = e if m is None else m & e
            if m is not None:  # masked entries off the end: the interpreter's masked
                # store is a scatter that writes them back, racing the unmasked ones
                o_psi = jnp.where(m, o_psi, psi_in[p].shape[0])
            if m is None:
                psi = psi_in[p][o_psi]
            else:
                psi = plt.load(psi_in[p].at[o_psi], mask=m, other=jnp.zeros((), jnp.float32))
            D = inv_d[ax] * d
            psi_new = pb * psi + pc * D
            corr = s_ * (pk * D + psi_new)
            new = o + sign * b * corr
            if elem is not None:
                new = jnp.where(elem, new, o)
            if store:
                if m is None:
                    psi_out[p][o_psi] = psi_new
                else:
                    plt.store(psi_out[p].at[o_psi], psi_new, mask=m)
            return new

        out = apply(out) if masked else lax.cond(pred, apply, lambda o: o, out)
    return out


def pack(cE: UpdateCoefficients, cH: UpdateCoefficients, shape) -> tuple:
    """(code (uint8, ``shape``), row table (12 float32 per code: (ca, cb) of Ex, Ey,
    Ez then (da, db) of Hx, Hy, Hz), digit table, digits, H uniform): the per-component
    CIS indices as one code per cell. digits: per component (multiplier, radix, offset
    of its (a, b) pairs in the digit table, digit not the last), or None when
    ``np.unique`` packed them."""
    parts = []  # (index array, a table, b table) per component
    for c in (cE, cH):
        for comp in range(3):
            assert c.idx is not None or not isinstance(c.a, tuple), "CAS storage: not packed"
            ix = None if c.idx is None else np.asarray(c.idx[comp])
            parts.append((ix, np.asarray(c.a), np.asarray(c.b)))
    h_uniform = cH.idx is None
    radix = [len(a) if ix is not None else 1 for ix, a, _ in parts]
    mults = [int(np.prod(radix[:p])) for p in range(6)]
    digits, dig = None, [0.0]
    if int(np.prod(radix)) <= 256:
        code = np.zeros(shape, np.uint8)
        for (ix, _, _), m in zip(parts, mults, strict=True):
            if ix is not None:
                code += (ix.astype(np.uint8) * np.uint8(m)).astype(np.uint8)
        rows = [[(k // m) % r for m, r in zip(mults, radix, strict=True)]
                for k in range(int(np.prod(radix)))]
        digits, dig, total = [], [], int(np.prod(radix))
        for (_, a, b), m, r in zip(parts, mults, radix, strict=True):
            digits.append((m, r, len(dig), m * r < total))
            dig += [v for q in range(r) for v in (a[q], b[q])]
        digits = tuple(digits)
    else:
        key = np.zeros(shape, np.int64)
        for (ix, _, _), m in zip(parts, mults, strict=True):
            if ix is not None:
                key += ix.astype(np.int64) * m
        uniq, inv = np.unique(key.reshape(-1), return_inverse=True)
        assert len(uniq) <= 256, f"{len(uniq)} distinct codes"
        code = inv.astype(np.uint8).reshape(shape)
        rows = [[(int(k) // m) % r for m, r in zip(mults, radix, strict=True)] for k in uniq]
    table = np.array([[t[q] for (_, a, b), q in zip(parts, row, strict=True)
                       for t in (a, b)] for row in rows], np.float32)
    return code, table.reshape(-1), np.array(dig, np.float32), digits, h_uniform


class Tile:
    """Plane ``i``, rows ``jr`` and columns ``kr`` (1D int32) of the grid: the program's
    tile, or a halo row/column (``lo``: (-1, 0) or (0, -1), its offset from the tile).
    Calling it loads (memoised, zero outside the grid) field ``f`` of ``srcs`` (0-5:
    Ex..Hz; 6: the code, as int32) at (i+di, jr+dj, kr+dk). over: (rows, columns) of
    some tile may lie beyond the grid; kend: the launch writes z < kend (None: all)."""

    def __init__(self, srcs, i, jr, kr, j_first, k_first, *, shape, over: tuple[bool, bool],
                 kend: int | None = None, lo=(0, 0), check_x: bool = False):
        self.srcs, self.i, self.jr, self.kr = srcs, i, jr, kr
        self.j_first, self.k_first, self.shape, self.over = j_first, k_first, shape, over
        self.lo, self.check_x = lo, check_x
        self.ry, self.rz = jr.shape[0], kr.shape[0]
        self.cache: dict = {}
        m = self.bounds(0, 0, 0)
        if kend is not None:
            e = jnp.ones((self.ry, self.rz), jnp.bool_) & (kr < kend)[None, :]
            m = e if m is None else m & e
        self.grid_mask = m

    def bounds(self, di: int, dj: int, dk: int):
        nx, ny, nz = self.shape
        m = None

        def both(a, b):
            return b if a is None else a & b

        if self.lo[0] + dj < 0:
            m = both(m, (self.jr + dj >= 0)[:, None])
        if dj > 0 or self.over[0]:
            m = both(m, (self.jr + dj < ny)[:, None])
        if self.lo[1] + dk < 0:
            m = both(m, (self.kr + dk >= 0)[None, :])
        if dk > 0 or self.over[1]:
            m = both(m, (self.kr + dk < nz)[None, :])
        full = jnp.ones((self.ry, self.rz), jnp.bool_)
        if di < 0 or self.check_x:
            m = both(m, full & (self.i + di >= 0))
        if di > 0 or self.check_x:
            m = both(m, full & (self.i + di < nx))
        return None if m is None else m & full

    def offset(self, di: int, dj: int, dk: int):
        _, ny, nz = self.shape
        return ((self.i + di) * (ny * nz) + ((self.jr + dj) * nz)[:, None]) \
            + (self.kr + dk)[None, :]

    def __call__(self, f: int, di: int = 0, dj: int = 0, dk: int = 0):
        key = (f, di, dj, dk)
        if key not in self.cache:
            ref = self.srcs[f]
            m, o = self.bounds(di, dj, dk), self.offset(di, dj, dk)
            v = ref[o] if m is None else plt.load(ref.at[o], mask=m,
                                                  other=jnp.zeros((), ref.dtype))
            self.cache[key] = v.astype(jnp.int32) if f == 6 else v
        return self.cache[key]

    def store(self, ref, v) -> None:
        m, o = self.grid_mask, self.offset(0, 0, 0)
        if m is None:
            ref[o] = v
        else:
            plt.store(ref.at[o], v, mask=m)

    def view(self, dj: int, dk: int):
        """The region shifted by (dj, dk), for the slab corrections (halo 0)."""
        if not (dj or dk):
            return self
        v = Tile.__new__(Tile)
        v.i, v.jr, v.kr, v.ry, v.rz = self.i, self.jr + dj, self.kr + dk, self.ry, self.rz
        v.j_first, v.k_first = self.j_first + dj, self.k_first + dk
        v.grid_mask = self.bounds(0, dj, dk)
        return v


def initial(lay: Layout, seed: int = 0):
    """Smooth random-ish E and H: a few random Fourier modes per component plus 1%
    noise; E zero where the walls hold it."""
    rng = np.random.default_rng(seed)
    axes = [jnp.arange(n, dtype=F32) / n for n in lay.shape]
    out = []
    for comp in range(6):
        f = jnp.zeros(lay.shape, F32)
        for _ in range(3):
            k, ph = rng.integers(1, 5, 3), rng.uniform(0, 2 * np.pi, 3)
            g = [jnp.sin(2 * np.pi * k[a] * axes[a] + ph[a]) for a in range(3)]
            f = f + g[0][:, None, None] * g[1][None, :, None] * g[2][None, None, :]
        key = jax.random.PRNGKey(seed * 7 + comp)
        f = f + 0.01 * jax.random.normal(key, lay.shape, F32)
        out.append(_mask(f, comp, lay, True) if comp < 3 else f / 376.73)  # H ~ E / eta0
    return tuple(out[:3]), tuple(out[3:])


def _copy(tree):
    return jax.tree.map(lambda a: a + 0, tree)


def _err(ref, got) -> list[float]:
    return [float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(np.asarray(a)).max(),
            1e-30)) for a, b in zip(ref, got, strict=True)]


def _time(fn, args_fn, repeats: int = 3) -> float:
    """Median seconds of ``fn(*args_fn())`` after a warm-up (args rebuilt per call:
    the loops donate their inputs)."""
    jax.block_until_ready(fn(*args_fn()))
    times = []
    for _ in range(repeats):
        args = args_fn()
        jax.block_until_ready(args)
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _copies(fn, args) -> list[str]:
    """The copy instructions of the compiled loop (none: the carry stays in place)."""
    sds = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), args)
    text = fn.lower(*sds).compile().as_text()
    return [ln.strip()[:160] for ln in text.splitlines() if " copy(" in ln]


def scene(cells: tuple[int, int, int], align: int = 1, cpml: int = 0):
    """(layout, E coefficients, H coefficients, pml) of vacuum with a lossy dielectric
    box, lowered by emjax (``align``: z alignment, as on accelerators): PEC walls, or a
    ``cpml``-cell CPML on all six faces with ``cpml_strategy="per_face"``."""
    d = 1e-3
    size = tuple(n * d for n in cells)
    box = em.Structure(geometry=em.Box(center=tuple(0.11 * s for s in size),
                                       size=tuple(0.45 * s for s in size)),
                       medium=em.Medium(eps_r=4.0, sigma=0.05))
    sim = em.FDTD3D(domain=em.Domain(size=size, spacing=d), steps=10, structures=[box],
                    boundary=em.CPML(thickness=cpml) if cpml else em.PEC(),
                    cpml_strategy="per_face")
    s = FDTDSolver(sim, check_memory=False, align=align).setup
    lay = s.layout
    assert not (lay.mur or any(lay.pmc_low) or any(lay.pmc_high))
    assert all(lay.pec_low) and bool(lay.slabs) == bool(cpml) and s.dtype == np.float32
    return lay, s.coeffs["E"], s.coeffs["H"], s.pml


@dataclass(frozen=True)
class Static:
    """What the kernel is compiled for: grid, coefficient packing, slabs, and the z range
    of one launch: programs start at z = zb + pz * zs (zn of them) and write z < ze."""

    shape: tuple[int, int, int]
    nz_phys: int
    inv_d: tuple[float, float, float]
    digits: tuple | None
    h_uniform: bool
    plan: SlabPlan
    interpret: bool
    zb: int = 0
    zs: int = 0
    zn: int = 0
    ze: int = 0


def launches(st: Static, t: Any) -> list[tuple[Static, Any]]:
    """One launch over all z, or (CPML, ``t.zby``) two: the interior z range with
    ``t`` (no z-slab code) and the two z-edge strips of width Z (a power of two that
    holds each z slab) with (zby, Z) tiles, 4 warps. Both read the old fields and write
    disjoint cells of the same buffers, so the split is still one pass over memory."""
    nz = st.shape[2]
    zslabs = [s for s in st.plan.slabs if s.axis == 2]
    if not (zslabs and t.zby):
        return [(dataclasses.replace(st, zb=0, zs=t.bz, zn=-(-nz // t.bz), ze=nz), t)]
    need = max(max(s.length for s in zslabs if s.side == "low"),
               max(nz - s.start for s in zslabs if s.side == "high"))
    Z = 1 << (need - 1).bit_length()
    assert nz > 2 * Z, f"nz = {nz}: no interior between the z strips of {Z}"
    inner = dataclasses.replace(st, zb=Z, zs=t.bz, zn=-(-(nz - 2 * Z) // t.bz), ze=nz - Z)
    edge = dataclasses.replace(st, zb=0, zs=nz - Z, zn=2, ze=nz)
    return [(inner, t), (edge, dataclasses.replace(t, by=t.zby, bz=Z, warps=4, zby=0))]


def xla_run(lay: Layout, pairs: int, strategy: str | None = None):
    """2 * pairs steps of emjax's two-pass step (update_H, then update_E; no extras) in
    a scan: ``fn((E, H, psi_E, psi_H), cE, cH, pml)``, state donated (the coefficients
    are arguments: captured, XLA constant-folds their gathers)."""
    lay = lay if strategy is None else dataclasses.replace(lay, strategy=strategy)

    @functools.partial(jax.jit, donate_argnums=0)
    def run(state, cE, cH, pml):
        def body(c, _):
            E, H, psi_E, psi_H = c
            H, psi_H = update_H(E, H, cH, pml, psi_H, lay)
            E, psi_E = update_E(E, H, cE, pml, psi_E, lay)
            return (E, H, psi_E, psi_H), None
        return lax.scan(body, state, None, length=2 * pairs)[0]

    return run


def compare(sc: Any, t: Any, steps: int) -> dict:
    """max |one-pass - XLA| / max |XLA| per field (and per psi array) after ``steps``."""
    f0 = initial(sc.lay)
    E, H, pE, pH = xla_run(sc.lay, steps // 2)(sc.xla_state(_copy(f0)), sc.cE, sc.cH, sc.pml)
    got = sc.onepass(t, steps // 2)(sc.kernel_state(_copy(f0)), sc.scratch(), sc.tabs)[0]
    err = _err((*E, *H), (*got[0][0], *got[0][1]))
    ref_psi = [p.reshape(-1) for p in psi_to_list(sc.st.plan, pE, pH)]
    psi_err = _err(ref_psi, got[1])
    peak = float(max(np.abs(np.asarray(a)).max() for a in (*E, *H)))
    return {"shape": list(sc.lay.shape), "pad_z": sc.lay.pad_z, "steps": 2 * (steps // 2),
            "slabs": len(sc.lay.slabs), "tiling": str(t), "rel_err_per_component": err,
            "rel_err": max(err), "psi_rel_err": max(psi_err, default=0.0), "peak": peak}


def yardstick(sc: Any, steps: int) -> dict:
    """The rounding yardstick: emjax's two CPML strategies (same arithmetic, other
    order) against each other, as ``compare`` measures the kernel."""
    f0 = initial(sc.lay)
    a, b = (xla_run(sc.lay, steps // 2, s)(sc.xla_state(_copy(f0)), sc.cE, sc.cH, sc.pml)
            for s in ("per_face", "combined"))
    err = _err((*a[0], *a[1]), (*b[0], *b[1]))
    psi = _err(*(psi_to_list(sc.st.plan, x[2], x[3]) for x in (a, b)))
    return {"yardstick": "xla combined vs per_face", "steps": 2 * (steps // 2),
            "shape": list(sc.lay.shape), "rel_err": max(err), "psi_rel_err": max(psi)}
