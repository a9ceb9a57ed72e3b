"""Experiment (issue 23): a one-pass Pallas (Triton) kernel for the 3D Yee step.

One ``pallas_call`` per time step reads E, H (six float32 arrays) and one uint8 code
per cell once and writes E, H once: 49 B per cell against 75 for the XLA two-pass
step of ``emjax.fdtd.update3d`` with CIS indices (H pass: E, H in, H out; E pass: E,
H, 3 uint8 indices in, E out). A program owns a (by, bz) tile of the (y, z) plane, z
contiguous, and marches along x over ``cx`` planes in a ``fori_loop``, carrying the
new Hy, Hz of the previous plane (the E update's d/dx) and four E tiles of the next
plane. The new H at y-1 and z-1 that the E update needs is recomputed from loads at
shifted positions (L1/L2 hits); tile and grid borders use masked loads. Scope: PEC
walls, CIS (or uniform) media, lossy; no CPML, sources, TF/SF, Mur or PMC.

Measured (H100, 2026-11-27, records ``benchmarks/results/2026-11-27-h100-pallas-
onepass3d*``): equal to the XLA step bitwise after 1000 steps at 128^3; 51.1 Gcells/s
at 256^3 and 512^3 (tiling 4x256x32x8x1, 0.85 of copy bandwidth) against 39.5-39.8
for the XLA step (1.01 of copy bandwidth at 75 B/cell). Latency bound (ncu: L1TEX
scoreboard stalls, occupancy limited by 80-96 registers per thread).

The three per-component uint8 indices of emjax's CIS storage are packed into one
code per cell (mixed radix, or ``np.unique`` if that exceeds 256) indexing a table of
(ca, cb) x 3 plus (da, db) x 3 rows. The kernel's outputs go to a second set of
buffers (``input_output_aliases``): its halo reads of a neighbour tile must see the
old fields, so the loop body does two steps, A -> B -> A, and XLA copies nothing.

The reference is emjax itself: the scene is an ``em.FDTD3D`` (vacuum, a lossy
dielectric box, PEC walls) lowered by ``FDTDSolver(...).setup``, stepped with
``update3d.update_H`` then ``update_E`` (what ``solver._step3d`` does without extras).

Usage:
  python benchmarks/pallas_onepass3d.py check [steps] [NXxNYxNZ]   (CPU: interpreter)
  python benchmarks/pallas_onepass3d.py gpu OUT.json [check_n] [check_steps]
      [sizes, e.g. 256,512] [tilings: by x bz x cx x warps[x prefetch[x stages]], e.g.
      4x128x128x4,4x128x32x4x1]
  python benchmarks/pallas_onepass3d.py one N TILING   (two steps, for ncu)
``gpu`` checks every tiling against the XLA step (``check_steps`` steps at check_n^3,
0: none), then times 200-step scans at each size; JSON lines on stdout and in OUT.
"""

from __future__ import annotations

import functools
import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

import emjax as em
from emjax.fdtd.cpml import CURL_TERMS
from emjax.fdtd.solver import FDTDSolver
from emjax.fdtd.update3d import Layout, UpdateCoefficients, _mask, update_E, update_H

F32 = jnp.float32
CARRIED = ((1, 0, 0), (1, -1, 0), (2, 0, 0), (2, 0, -1))
"""(field, dj, dk) of the next plane's loads handed to the next iteration (Ey, Ez: the
H update's d/dx reads them); with ``Tiling.prefetch`` also Ex, Hx, Hy, Hz and the code
(field 6), loaded an iteration ahead so that their DRAM latency overlaps the work."""
PREFETCH = ((0, 0, 0), (3, 0, 0), (4, 0, 0), (5, 0, 0), (6, 0, 0))


@dataclass(frozen=True)
class Tiling:
    """by x bz tile of the (y, z) plane (powers of two), cx planes per program, warps;
    prefetch: carry the next plane's unshifted loads (``PREFETCH``); stages: Triton's
    num_stages. (A variant that hid the z alignment from Triton, so that all loads had
    one unvectorised layout, ran 10% slower: Triton makes no layout conversions here.)"""

    by: int = 8
    bz: int = 64
    cx: int = 64
    warps: int = 4
    prefetch: int = 0
    stages: int = 1

    @classmethod
    def parse(cls, s: str) -> Tiling:
        return cls(*(int(v) for v in s.split("x")))

    def __str__(self) -> str:
        return "x".join(str(v) for v in asdict(self).values())


# ----------------------------------------------------------------------- scene
def scene(cells: tuple[int, int, int], align: int = 1):
    """(layout, E coefficients, H coefficients) of vacuum with a lossy dielectric box
    and PEC walls, lowered by emjax (``align``: z alignment, as on accelerators)."""
    d = 1e-3
    size = tuple(n * d for n in cells)
    box = em.Structure(geometry=em.Box(center=tuple(0.11 * s for s in size),
                                       size=tuple(0.45 * s for s in size)),
                       medium=em.Medium(eps_r=4.0, sigma=0.05))
    sim = em.FDTD3D(domain=em.Domain(size=size, spacing=d), steps=10, boundary=em.PEC(),
                    structures=[box])
    s = FDTDSolver(sim, check_memory=False, align=align).setup
    lay = s.layout
    assert not (lay.slabs or lay.mur or any(lay.pmc_low) or any(lay.pmc_high))
    assert all(lay.pec_low) and s.dtype == np.float32
    return lay, s.coeffs["E"], s.coeffs["H"]


def pack(cE: UpdateCoefficients, cH: UpdateCoefficients, shape) -> tuple:
    """(code (uint8, ``shape``), table (float32, 12 per code), H uniform): the
    per-component CIS indices as one code per cell; each table row holds (ca, cb) of
    Ex, Ey, Ez then (da, db) of Hx, Hy, Hz."""
    parts = []  # (index array, a table, b table) per component
    for c in (cE, cH):
        for comp in range(3):
            if c.idx is None:
                assert not isinstance(c.a, tuple), "CAS storage: not packed"
                parts.append((None, np.asarray(c.a), np.asarray(c.b)))
            else:
                parts.append((np.asarray(c.idx[comp]), np.asarray(c.a), np.asarray(c.b)))
    h_uniform = cH.idx is None
    radix = [len(a) if ix is not None else 1 for ix, a, _ in parts]
    if int(np.prod(radix)) <= 256:
        code, mult, digits = np.zeros(shape, np.uint8), 1, []
        for (ix, _, _), r in zip(parts, radix, strict=True):
            if ix is not None:
                code += (ix.astype(np.uint8) * np.uint8(mult)).astype(np.uint8)
            digits.append(mult)
            mult *= r
        rows = [[(k // m) % r for m, r in zip(digits, radix, strict=True)]
                for k in range(int(np.prod(radix)))]
    else:
        key = np.zeros(shape, np.int64)
        mult = 1
        for (ix, _, _), r in zip(parts, radix, strict=True):
            if ix is not None:
                key += ix.astype(np.int64) * mult
            mult *= r
        uniq, inv = np.unique(key.reshape(-1), return_inverse=True)
        assert len(uniq) <= 256, f"{len(uniq)} distinct codes"
        code = inv.astype(np.uint8).reshape(shape)
        rows, mult = [], [int(np.prod(radix[:p])) for p in range(6)]
        rows = [[(int(k) // m) % r for m, r in zip(mult, radix, strict=True)] for k in uniq]
    table = np.array([[t[q] for (_, a, b), q in zip(parts, row, strict=True)
                       for t in (a, b)] for row in rows], np.float32)
    return code, table.reshape(-1), h_uniform


# ---------------------------------------------------------------------- kernel
def _kernel(*refs, shape, nz_phys: int, inv_d, t: Tiling, h_uniform: bool):
    fields, code_ref, tab_ref, outs = refs[:6], refs[6], refs[7], refs[14:20]
    nx, ny, nz = shape
    pz, py, px = pl.program_id(0), pl.program_id(1), pl.program_id(2)
    jj = py * t.by + jnp.arange(t.by, dtype=jnp.int32)
    kk = pz * t.bz + jnp.arange(t.bz, dtype=jnp.int32)
    full = jnp.ones((t.by, t.bz), jnp.bool_)

    def mask(i, di: int, dj: int, dk: int, check_x: bool):
        m = None

        def both(a, b):
            return b if a is None else a & b

        if dj < 0:
            m = both(m, (jj + dj >= 0)[:, None])
        if dj > 0 or ny % t.by:
            m = both(m, (jj + dj < ny)[:, None])
        if dk < 0:
            m = both(m, (kk + dk >= 0)[None, :])
        if dk > 0 or nz % t.bz:
            m = both(m, (kk + dk < nz)[None, :])
        if di < 0 or check_x:
            m = both(m, full & (i + di >= 0))
        if di > 0 or check_x:
            m = both(m, full & (i + di < nx))
        return None if m is None else m & full

    def offset(i, di: int, dj: int, dk: int):
        return ((i + di) * (ny * nz) + ((jj + dj) * nz)[:, None]) + (kk + dk)[None, :]

    def loader(i, check_x: bool = False):
        """A memoised load of field f (0-5: Ex..Hz; 6: the code) at (i+di, j+dj, k+dk),
        zero outside the grid."""
        cache: dict = {}

        def load(f: int, di: int, dj: int, dk: int):
            key = (f, di, dj, dk)
            if key not in cache:
                ref = code_ref if f == 6 else fields[f]
                m, o = mask(i, di, dj, dk, check_x), offset(i, di, dj, dk)
                if m is None:
                    v = ref[o]
                else:
                    v = plt.load(ref.at[o], mask=m, other=jnp.zeros((), ref.dtype))
                cache[key] = v.astype(jnp.int32) if f == 6 else v
            return cache[key]

        return load, cache

    uniform = {c: (tab_ref[2 * c], tab_ref[2 * c + 1]) for c in range(3, 6)} if h_uniform \
        else {}

    def coef(load, comp: int, dj: int = 0, dk: int = 0):
        """(a, b) of component comp (0-2 E, 3-5 H) at (i, j+dj, k+dk)."""
        if comp in uniform:
            return uniform[comp]
        row = load(6, 0, dj, dk) * 12 + 2 * comp
        return tab_ref[row], tab_ref[row + 1]

    def h_new(load, c: int, dj: int = 0, dk: int = 0):
        """H^{n+1/2} of component c at (i, j+dj, k+dk): update3d's expression."""
        curl = None
        for s_, src, ax in CURL_TERMS[c]:
            e = [0, 0, 0]
            e[ax] = 1
            d = load(src, e[0], dj + e[1], dk + e[2]) - load(src, 0, dj, dk)
            term = s_ * inv_d[ax] * d
            curl = term if curl is None else curl + term
        a, b = coef(load, 3 + c, dj, dk)
        return a * load(3 + c, 0, dj, dk) + -1.0 * b * curl

    def store(ref, i, v):
        m = mask(i, 0, 0, 0, False)
        if m is None:
            ref[offset(i, 0, 0, 0)] = v
        else:
            plt.store(ref.at[offset(i, 0, 0, 0)], v, mask=m)

    carried = CARRIED + (PREFETCH if t.prefetch else ())
    i0 = px * t.cx
    if t.cx == nx:  # one chunk: the plane before it lies outside the grid
        zero = jnp.zeros((t.by, t.bz), F32)
        hy_m, hz_m = zero, zero
        load, _ = loader(i0)
        pre = [load(f, 0, dj, dk) for f, dj, dk in carried]
    else:
        load, _ = loader(i0 - 1, check_x=True)
        hy_m, hz_m = h_new(load, 1), h_new(load, 2)
        pre = [load(f, 1, dj, dk) for f, dj, dk in carried]

    keep_e = []  # the PEC walls' and the z padding's masks of each E component
    for comp in range(3):
        k = full
        if comp != 1:
            k = k & (jj != 0)[:, None]
        if comp != 2:
            k = k & (kk != 0)[None, :]
        if nz_phys < nz:
            k = k & (kk < nz_phys)[None, :]
        keep_e.append(k)

    def body(step, carry):
        hy_m, hz_m, *pre = carry
        i = i0 + step
        load, cache = loader(i)
        for (f, dj, dk), v in zip(carried, pre, strict=True):
            cache[(f, 0, dj, dk)] = v
        Hn = [h_new(load, c) for c in range(3)]
        # new H one cell back along each axis: [component][axis]
        back = {(1, 0): hy_m, (2, 0): hz_m, (0, 1): h_new(load, 0, dj=-1),
                (2, 1): h_new(load, 2, dj=-1), (0, 2): h_new(load, 0, dk=-1),
                (1, 2): h_new(load, 1, dk=-1)}
        for comp in range(3):
            curl = None
            for s_, src, ax in CURL_TERMS[comp]:
                term = s_ * inv_d[ax] * (Hn[src] - back[(src, ax)])
                curl = term if curl is None else curl + term
            a, b = coef(load, comp)
            e = a * load(comp, 0, 0, 0) + 1.0 * b * curl
            keep = keep_e[comp] if comp == 0 else keep_e[comp] & (i != 0)
            store(outs[comp], i, jnp.where(keep, e, 0.0))
        for c in range(3):
            store(outs[3 + c], i, Hn[c])
        nxt = [load(f, 1, dj, dk) for f, dj, dk in carried]
        return (Hn[1], Hn[2], *nxt)

    lax.fori_loop(0, t.cx, body, (hy_m, hz_m, *pre))


def onepass_step(E, H, code, tab, dst, lay: Layout, t: Tiling, h_uniform: bool):
    """(E^{n+1}, H^{n+1/2}) from (E^n, H^{n-1/2}), written into the buffers of ``dst``
    (six arrays, donated); arrays are 3D, flattened for the kernel."""
    shape = lay.shape
    nx, ny, nz = shape
    assert nx % t.cx == 0, f"cx = {t.cx} must divide nx = {nx}"
    n = nx * ny * nz
    kern = functools.partial(_kernel, shape=shape, nz_phys=lay.nodes[2], inv_d=lay.inv_d,
                             t=t, h_uniform=h_uniform)
    grid = (-(-nz // t.bz), -(-ny // t.by), nx // t.cx)
    flat = [a.reshape(n) for a in (*E, *H)]
    out = pl.pallas_call(
        kern, out_shape=[jax.ShapeDtypeStruct((n,), F32)] * 6, grid=grid,
        input_output_aliases={8 + m: m for m in range(6)},
        interpret=jax.default_backend() != "gpu",
        compiler_params=plt.CompilerParams(num_warps=t.warps, num_stages=t.stages),
    )(*flat, code.reshape(n), tab, *(a.reshape(n) for a in dst))
    out = [a.reshape(shape) for a in out]
    return tuple(out[:3]), tuple(out[3:])


def xla_step(E, H, cE, cH, lay: Layout):
    """emjax's two-pass step: update_H, then update_E (no extras)."""
    H, _ = update_H(E, H, cH, {}, {}, lay)
    E, _ = update_E(E, H, cE, {}, {}, lay)
    return E, H


# ------------------------------------------------------------------------ runs
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


@dataclass
class Scene:
    """A lowered scene on the device: layout, emjax's coefficients, the packed codes."""

    lay: Layout
    cE: UpdateCoefficients
    cH: UpdateCoefficients
    code: jax.Array
    tab: jax.Array
    h_uniform: bool

    @classmethod
    def make(cls, cells: tuple[int, int, int], align: int = 4) -> Scene:
        lay, cE, cH = scene(cells, align)
        code, tab, h_uni = pack(cE, cH, lay.shape)
        return cls(lay, jax.device_put(cE), jax.device_put(cH), jnp.asarray(code),
                   jnp.asarray(tab), h_uni)

    def xla(self, pairs: int):
        """2 * pairs XLA steps in a scan: ``fn(fields, cE, cH)``, fields donated (the
        coefficients are arguments: captured, XLA constant-folds their gathers)."""
        lay = self.lay

        @functools.partial(jax.jit, donate_argnums=0)
        def run(fields, cE, cH):
            def body(c, _):
                return xla_step(*c, cE, cH, lay), None
            return lax.scan(body, fields, None, length=2 * pairs)[0]

        return run

    def onepass(self, t: Tiling, pairs: int):
        """2 * pairs one-pass steps, two per scan iteration (A -> B -> A, in place):
        ``fn(fields, scratch, code, tab)``, fields and scratch donated."""
        lay, h_uni = self.lay, self.h_uniform

        @functools.partial(jax.jit, donate_argnums=(0, 1))
        def run(fields, scratch, code, tab):
            def body(c, _):
                (E, H), S = c
                B = onepass_step(E, H, code, tab, S, lay, t, h_uni)
                A = onepass_step(*B, code, tab, (*E, *H), lay, t, h_uni)
                return (A, (*B[0], *B[1])), None
            return lax.scan(body, (fields, scratch), None, length=pairs)[0]

        return run

    def zeros(self) -> tuple:
        return tuple(jnp.zeros(self.lay.shape, F32) for _ in range(6))


def _copy(tree):
    return jax.tree.map(lambda a: a + 0, tree)


def compare(sc: Scene, t: Tiling, steps: int) -> dict:
    """max |one-pass - XLA| / max |XLA| per field after ``steps`` steps."""
    f0 = initial(sc.lay)
    ref = sc.xla(steps // 2)(_copy(f0), sc.cE, sc.cH)
    got, _ = sc.onepass(t, steps // 2)(_copy(f0), sc.zeros(), sc.code, sc.tab)
    ref = [np.asarray(a) for g in ref for a in g]
    got = [np.asarray(a) for g in got for a in g]
    err = [float(np.abs(a - b).max() / np.abs(a).max()) for a, b in zip(ref, got, strict=True)]
    return {"shape": list(sc.lay.shape), "pad_z": sc.lay.pad_z, "steps": 2 * (steps // 2),
            "tiling": str(t), "rel_err_per_component": err, "rel_err": max(err),
            "peak": float(max(np.abs(a).max() for a in ref))}


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


def bench(n: int, tilings: list[Tiling], steps: int, copy_bw: float, emit) -> list[dict]:
    """ms per step and Gcells/s at n^3 of the XLA step and each tiling of the kernel."""
    t0 = time.perf_counter()
    sc = Scene.make((n, n, n))
    emit({"n": n, "setup_s": time.perf_counter() - t0, "codes": len(sc.tab) // 12})
    cells = float(np.prod(sc.lay.shape))
    fields = initial(sc.lay)
    rows = []

    def row(name, fn, args_fn, bpc, **kw):
        sec = _time(fn, args_fn)
        r = {"n": n, "kernel": name, "ms_per_step": 1e3 * sec / steps,
             "gcells_s": cells * steps / sec / 1e9, "bytes_per_cell": bpc,
             "fraction_of_copy": cells * steps * bpc / sec / copy_bw,
             "hlo_copies": _copies(fn, args_fn()), **kw}
        rows.append(r)
        emit(r)

    row("xla-two-pass", sc.xla(steps // 2), lambda: (_copy(fields), sc.cE, sc.cH), 75)
    for t in tilings:
        try:
            row("pallas-one-pass", sc.onepass(t, steps // 2),
                lambda: (_copy(fields), sc.zeros(), sc.code, sc.tab), 49, tiling=str(t))
        except Exception as exc:
            emit({"n": n, "tiling": str(t), "error": f"{type(exc).__name__}: {exc}"[:2000]})
    return rows


def main(argv: list[str]) -> None:
    mode = argv[1] if len(argv) > 1 else "check"
    if mode == "check":  # CPU, Pallas interpreter
        steps = int(argv[2]) if len(argv) > 2 else 20
        cells = tuple(int(v) for v in (argv[3] if len(argv) > 3 else "32x24x38").split("x"))
        sc = Scene.make(cells, align=4)  # 38 -> 40 stored: pad_z = 2
        for t in (Tiling(8, 16, sc.lay.shape[0], 1), Tiling(16, 32, 8, 1, 1)):
            print(json.dumps(compare(sc, t, steps)), flush=True)
        return
    if mode == "one":  # two launches at n^3 (for ncu)
        n, t = int(argv[2]), Tiling.parse(argv[3])
        sc = Scene.make((n, n, n))
        fn = sc.onepass(t, 1)
        for _ in range(2):
            jax.block_until_ready(fn(initial(sc.lay), sc.zeros(), sc.code, sc.tab))
        return
    out_path = argv[2]
    check_n = int(argv[3]) if len(argv) > 3 else 128
    check_steps = int(argv[4]) if len(argv) > 4 else 1000
    sizes = [int(v) for v in (argv[5] if len(argv) > 5 else "256,512").split(",")]
    tilings = [Tiling.parse(s) for s in
               (argv[6] if len(argv) > 6 else "4x256x32x8x1,4x128x32x4").split(",")]
    record: dict = {"device": jax.devices()[0].device_kind, "jax": jax.__version__,
                    "date": "2026-11-27", "results": []}

    def emit(r: dict) -> None:
        print(json.dumps(r), flush=True)
        record["results"].append(r)
        with open(out_path, "w") as fh:
            json.dump(record, fh, indent=1)

    from emjax.bench.common import copy_bandwidth
    bw = copy_bandwidth(2 << 30)
    emit({"copy_bandwidth_TBps": bw / 1e12, "method": "emjax.bench.common.copy_bandwidth, "
          "2 GiB, read + written"})
    sc = Scene.make((check_n,) * 3)
    for t in tilings if check_steps else []:
        try:
            emit({"check": compare(sc, t, check_steps), "tiling_asdict": asdict(t)})
        except Exception as exc:
            emit({"check_error": f"{type(exc).__name__}: {exc}"[:2000], "tiling": str(t)})
    for n in sizes:
        bench(n, tilings, 200, bw, emit)


if __name__ == "__main__":
    main(sys.argv)
