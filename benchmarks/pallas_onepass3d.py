"""Experiment (issue 23): a one-pass Pallas (Triton) kernel for the 3D Yee step.

One ``pallas_call`` per time step reads E, H (six float32 arrays) and one uint8 code
per cell once and writes E, H once: 49 B per cell against 75 for the XLA two-pass
step of ``emjax.fdtd.update3d`` with CIS indices (H pass: E, H in, H out; E pass: E,
H, 3 uint8 indices in, E out). A program owns a (by, bz) tile of the (y, z) plane, z
contiguous, and marches along x over ``cx`` planes in a ``fori_loop``, carrying the
new Hy, Hz of the previous plane (the E update's d/dx) and the next plane's loads.
Scope: PEC walls or emjax's CPML (``per_face``, all six faces: the kernel does the psi
updates itself, ``pallas_onepass3d_cpml.py``), CIS or uniform media, lossy; no
sources, TF/SF, Mur, PMC or dispersive media.

The new H at y-1 and z-1 that the E update needs comes one of two ways (``Tiling.halo``):
0: recomputed from loads at shifted positions (about 30 loads a cell); 1: the program
writes its new H tile, plus a halo row (y = j0-1: Hx, Hz) and column (z = k0-1: Hx, Hy)
it recomputes as (1, bz) and (by, 1) tensors (a neighbour writes the same bits there),
waits at a CTA barrier and reloads the four shifted tiles (17 tile loads a cell).
Coefficients (``Tiling.sel``): 0, two gathers per component from a 12-float row per
code; 1, from the code's mixed-radix digit per component (constant, select or gather).

Measured (H100, 2026-11-27; round 1 ``results/2026-11-27-h100-pallas-onepass3d*``,
round 2 ``...-onepass3d-r2*``, numbers in their .txt): bitwise equal to the XLA step
after 1000 steps at 128^3 (every variant); 51.3 Gcells/s at 512^3 and 52.4 at 256^3
(4x256x32x8x1x1, halo 0, sel 0; table scalars loaded before the x loop: inside it they
cost 10%) against 39.9/39.4 for XLA. halo 1 and sel 1 measured slower (47.8-49.5), so
the defaults stay at round 1's choices. With the CPML: float32 rounding (1.1e-5 after
1000 steps; emjax's own two strategies differ by 7.2e-6); speed in the .txt.

The three per-component uint8 indices of emjax's CIS storage are packed into one
code per cell (mixed radix, or ``np.unique`` if that exceeds 256). The outputs go to a
second set of buffers (``input_output_aliases``): halo reads of a neighbour tile must
see the old fields (and psi), so the loop body does two steps, A -> B -> A, and XLA
copies nothing.

The reference is emjax itself: an ``em.FDTD3D`` (vacuum, a lossy dielectric box, PEC
walls or a CPML with ``cpml_strategy="per_face"``) lowered by ``FDTDSolver(...).setup``,
stepped with ``update3d.update_H`` then ``update_E`` (``solver._step3d`` without extras).

Usage:
  python benchmarks/pallas_onepass3d.py check [steps] [NXxNYxNZ] [cpml cells]  (CPU)
  python benchmarks/pallas_onepass3d.py gpu OUT.json [check_n] [check_steps]
      [sizes, e.g. 256,512] [tilings: by x bz x cx x warps[x prefetch[x stages[x halo[x
      sel[x zby[x one]]]]]]] [cpml cells, 0: PEC only] [tilings with CPML] [PEC tilings checked]
  python benchmarks/pallas_onepass3d.py one N TILING [cpml]   (two steps, for ncu)
``gpu`` checks every tiling against the XLA step (``check_steps`` steps at check_n^3,
0: none; with CPML too), then times 200-step scans at each size, without and with the
CPML; JSON lines on stdout and in OUT.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from dataclasses import asdict, dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

from emjax.fdtd.cpml import CURL_TERMS
from emjax.fdtd.update3d import Layout, UpdateCoefficients, zeros_psi

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from pallas_onepass3d_cpml import (
    Static,
    Tile,
    _copies,
    _copy,
    _time,
    compare,
    initial,
    launches,
    pack,
    pack_pml,
    psi_to_list,
    scene,
    slab_corrections,
    xla_run,
    yardstick,
)

F32 = jnp.float32
PREFETCH = ((0, 0, 0), (3, 0, 0), (4, 0, 0), (5, 0, 0), (6, 0, 0))
"""With ``Tiling.prefetch``: (field, dj, dk) of the next plane's unshifted loads (Ex, Hx,
Hy, Hz, the code) carried to the next iteration, so that their DRAM latency overlaps the
work; Ey, Ez of the next plane are always carried (the H update's d/dx reads them), and
with halo 0 also their shifted copies Ey(j-1), Ez(k-1)."""


@dataclass(frozen=True)
class Tiling:
    """by x bz tile of the (y, z) plane (powers of two), cx planes per program, warps;
    prefetch: carry the next plane's unshifted loads; stages: Triton's num_stages;
    halo: 0 recompute shifted H, 1 halo + barrier + reload; sel: 0 row gathers, 1
    per-component digit selects (module docstring); zby: with CPML, by of the z-edge
    strips' launch (0: one launch); one: with CPML, 1: one ``lax.cond`` per plane picks
    a bulk body or a slab body that applies every slab term masked (straight-line code,
    loads batched), 0: a ``lax.cond`` per slab term (each one's loads wait in turn)."""

    by: int = 8
    bz: int = 64
    cx: int = 64
    warps: int = 4
    prefetch: int = 0
    stages: int = 1
    halo: int = 0
    sel: int = 0
    zby: int = 0
    one: int = 1

    @classmethod
    def parse(cls, s: str) -> Tiling:
        return cls(*(int(v) for v in s.split("x")))

    def __str__(self) -> str:
        return "x".join(str(v) for v in asdict(self).values())


# ---------------------------------------------------------------------- kernel
def _kernel(*refs, st: Static, t: Tiling):
    P = st.plan.n_psi
    fields, (code_ref, trow, tdig, ptab) = refs[:6], refs[6:10]
    psi_in, outs, psi_out = refs[10:10 + P], refs[16 + 2 * P:22 + 2 * P], refs[22 + 2 * P:]
    nx, ny, nz = st.shape
    inv_d = st.inv_d
    pz, py, px = pl.program_id(0), pl.program_id(1), pl.program_id(2)
    j0, k0 = py * t.by, st.zb + pz * st.zs
    jj = j0 + jnp.arange(t.by, dtype=jnp.int32)
    kk = k0 + jnp.arange(t.bz, dtype=jnp.int32)
    srcs = (*fields, code_ref)
    last = st.zb + (st.zn - 1) * st.zs + t.bz  # the last z tile's end
    mk = functools.partial(Tile, shape=st.shape, over=(ny % t.by != 0, last > nz),
                           kend=st.ze if last > st.ze else None)
    cpml = functools.partial(slab_corrections, plan=st.plan, shape=st.shape, inv_d=inv_d,
                             ptab=ptab, psi_in=psi_in, psi_out=psi_out,
                             krange=(st.zb - 1, st.ze), masked=bool(t.one))
    sel = t.sel and st.digits is not None
    # table scalars, loaded once before the x loop (inside it, each is a load per plane)
    scal = {}
    for comp in range(6):
        if sel and st.digits[comp][1] <= 2:
            off = st.digits[comp][2]
            for q in range(2 * st.digits[comp][1]):
                scal[off + q] = tdig[off + q]
        elif not sel and comp >= 3 and st.h_uniform:
            scal[2 * comp], scal[2 * comp + 1] = trow[2 * comp], trow[2 * comp + 1]

    def coef(tile: Tile, comp: int, dj: int = 0, dk: int = 0):
        """(a, b) of component comp (0-2 E, 3-5 H) at the tile's cells."""
        if not sel:
            if comp >= 3 and st.h_uniform:
                return scal[2 * comp], scal[2 * comp + 1]
            row = tile(6, 0, dj, dk) * 12 + 2 * comp
            return trow[row], trow[row + 1]
        mult, radix, off, rem = st.digits[comp]
        if radix == 1:
            return scal[off], scal[off + 1]
        d = tile(6, 0, dj, dk)
        if mult > 1:
            d = lax.div(d, jnp.int32(mult))
        if rem:
            d = lax.rem(d, jnp.int32(radix))
        if radix == 2:
            one = d == 1
            return (jnp.where(one, scal[off + 2], scal[off]),
                    jnp.where(one, scal[off + 3], scal[off + 1]))
        return tdig[off + 2 * d], tdig[off + 2 * d + 1]

    def h_new(tile: Tile, c: int, dj: int = 0, dk: int = 0, store: bool = False,
              slabs: bool = True):
        """H^{n+1/2} of component c at the tile's cells shifted by (dj, dk):
        update3d's expression, then (``slabs``) the slabs' corrections (psi stored if
        ``store``)."""
        curl, diffs = None, {}
        for s_, src, ax in CURL_TERMS[c]:
            e = [0, 0, 0]
            e[ax] = 1
            d = tile(src, e[0], dj + e[1], dk + e[2]) - tile(src, 0, dj, dk)
            diffs[ax] = d
            term = s_ * inv_d[ax] * d
            curl = term if curl is None else curl + term
        a, b = coef(tile, 3 + c, dj, dk)
        out = a * tile(3 + c, 0, dj, dk) + -1.0 * b * curl
        if st.plan.slabs and slabs:
            out = cpml(tile.view(dj, dk), out, field="H", comp=c, diffs=diffs, b=b,
                       store=store)
        return out

    carried = ((1, 0, 0), (2, 0, 0)) + (() if t.halo else ((1, -1, 0), (2, 0, -1))) \
        + (PREFETCH if t.prefetch else ())
    i0 = px * t.cx
    if t.cx == nx:  # one chunk: the plane before it lies outside the grid
        zero = jnp.zeros((t.by, t.bz), F32)
        hy_m, hz_m = zero, zero
        tile = mk(srcs, i0, jj, kk, j0, k0)
        pre = [tile(f, 0, dj, dk) for f, dj, dk in carried]
    else:
        tile = mk(srcs, i0 - 1, jj, kk, j0, k0, check_x=True)
        hy_m, hz_m = h_new(tile, 1), h_new(tile, 2)
        pre = [tile(f, 1, dj, dk) for f, dj, dk in carried]

    keep_e = []  # the PEC walls' and the z padding's masks of each E component
    for comp in range(3):
        k = jnp.ones((t.by, t.bz), jnp.bool_)
        if comp != 1:
            k = k & (jj != 0)[:, None]
        if comp != 2:
            k = k & (kk != 0)[None, :]
        if st.nz_phys < nz:
            k = k & (kk < st.nz_phys)[None, :]
        keep_e.append(k)

    def body_of(step, carry, slabs: bool):
        hy_m, hz_m, *pre = carry
        i = i0 + step
        tile = mk(srcs, i, jj, kk, j0, k0)
        for (f, dj, dk), v in zip(carried, pre, strict=True):
            tile.cache[(f, 0, dj, dk)] = v
        h_new_ = functools.partial(h_new, slabs=slabs)
        Hn = [h_new_(tile, c, store=True) for c in range(3)]
        if t.halo:  # write H, the halo row and column; barrier; reload shifted
            for c in range(3):
                tile.store(outs[3 + c], Hn[c])
            one = jnp.arange(1, dtype=jnp.int32)
            row = mk(srcs, i, j0 - 1 + one, kk, j0 - 1, k0, lo=(-1, 0))
            col = mk(srcs, i, jj, k0 - 1 + one, j0, k0 - 1, lo=(0, -1))
            for halo, comps in ((row, (0, 2)), (col, (0, 1))):
                for c in comps:
                    halo.store(outs[3 + c], h_new_(halo, c))
            if not st.interpret:
                plt.debug_barrier()
            new = mk(outs, i, jj, kk, j0, k0)
            back = {(0, 1): new(3, 0, -1, 0), (2, 1): new(5, 0, -1, 0),
                    (0, 2): new(3, 0, 0, -1), (1, 2): new(4, 0, 0, -1)}
        else:  # new H one cell back along y and z, recomputed
            back = {(0, 1): h_new_(tile, 0, dj=-1), (2, 1): h_new_(tile, 2, dj=-1),
                    (0, 2): h_new_(tile, 0, dk=-1), (1, 2): h_new_(tile, 1, dk=-1)}
        back[(1, 0)], back[(2, 0)] = hy_m, hz_m
        for comp in range(3):
            curl, diffs = None, {}
            for s_, src, ax in CURL_TERMS[comp]:
                d = Hn[src] - back[(src, ax)]
                diffs[ax] = d
                term = s_ * inv_d[ax] * d
                curl = term if curl is None else curl + term
            a, b = coef(tile, comp)
            e = a * tile(comp) + 1.0 * b * curl
            if st.plan.slabs and slabs:
                e = cpml(tile, e, field="E", comp=comp, diffs=diffs, b=b, store=True)
            keep = keep_e[comp] if comp == 0 else keep_e[comp] & (i != 0)
            tile.store(outs[comp], jnp.where(keep, e, 0.0))
        if not t.halo:
            for c in range(3):
                tile.store(outs[3 + c], Hn[c])
        nxt = [tile(f, 1, dj, dk) for f, dj, dk in carried]
        return (Hn[1], Hn[2], *nxt)

    body = functools.partial(body_of, slabs=bool(st.plan.slabs))
    if st.plan.slabs and t.one:  # does the tile (halo included) or the plane meet a slab?
        near = [(j0 - 1 < s.start + s.length) & (j0 + t.by > s.start) if s.axis == 1 else
                (k0 - 1 < s.start + s.length) & (k0 + t.bz > s.start)
                for s in st.plan.slabs if s.axis == 1 or (s.axis == 2 and not (
                    s.start + s.length <= st.zb - 1 or s.start >= st.ze))]
        yz = functools.reduce(jnp.logical_or, near, jnp.bool_(False))

        def body(step, carry):
            i = i0 + step
            px_ = [(i >= s.start) & (i < s.start + s.length) for s in st.plan.slabs
                   if s.axis == 0]
            return lax.cond(functools.reduce(jnp.logical_or, px_, yz),
                            functools.partial(body_of, step, slabs=True),
                            functools.partial(body_of, step, slabs=False), carry)

    lax.fori_loop(0, t.cx, body, (hy_m, hz_m, *pre))


def onepass_step(E, H, psi, tabs, dst, dst_psi, st: Static, t: Tiling,
                 only: int | None = None):
    """(E^{n+1}, H^{n+1/2}, psi^{n+1}) from (E^n, H^{n-1/2}, psi^n), written into the
    buffers of ``dst`` and ``dst_psi`` (donated); fields 3D, flattened for the kernel;
    psi flat; tabs: (code, row table, digit table, slab table). only: run that launch
    alone (timing of one launch; the step is then incomplete)."""
    nx, ny, nz = st.shape
    assert nx % t.cx == 0, f"cx = {t.cx} must divide nx = {nx}"
    n, P = nx * ny * nz, len(psi)
    flat = [a.reshape(n) for a in (*E, *H)]
    code, *tabs = tabs
    out = [*(a.reshape(n) for a in dst), *dst_psi]
    for q, (s, tt) in enumerate(launches(st, t)):
        if only is not None and q != only:
            continue
        out = pl.pallas_call(
            functools.partial(_kernel, st=s, t=tt), grid=(s.zn, -(-ny // tt.by), nx // tt.cx),
            out_shape=[jax.ShapeDtypeStruct((n,), F32)] * 6 + [
                jax.ShapeDtypeStruct(p.shape, F32) for p in psi],
            input_output_aliases={10 + P + m: m for m in range(6 + P)},
            interpret=st.interpret,
            compiler_params=plt.CompilerParams(num_warps=tt.warps, num_stages=tt.stages),
        )(*flat, code.reshape(n), *tabs, *psi, *out)
    f = [a.reshape(st.shape) for a in out[:6]]
    return tuple(f[:3]), tuple(f[3:]), tuple(out[6:])


# ------------------------------------------------------------------------ runs
@dataclass
class Scene:
    """A lowered scene on the device: layout, emjax's coefficients and slab
    coefficients, the kernel's packed tables and static description."""

    lay: Layout
    cE: UpdateCoefficients
    cH: UpdateCoefficients
    pml: dict
    tabs: tuple
    st: Static

    @classmethod
    def make(cls, cells: tuple[int, int, int], align: int = 4, cpml: int = 0) -> Scene:
        lay, cE, cH, pml = scene(cells, align, cpml)
        code, trow, tdig, digits, h_uni = pack(cE, cH, lay.shape)
        plan, ptab = pack_pml(lay.slabs, pml)
        st = Static(lay.shape, lay.nodes[2], lay.inv_d, digits, h_uni, plan,
                    jax.default_backend() != "gpu")
        tabs = tuple(jnp.asarray(a) for a in (code, trow, tdig, ptab))
        return cls(lay, jax.device_put(cE), jax.device_put(cH), jax.device_put(pml),
                   tabs, st)

    def psi0(self) -> tuple[dict, dict]:
        return zeros_psi(self.lay, F32)

    def xla_state(self, fields):
        return (*fields, *self.psi0())

    def kernel_state(self, fields):
        """((E, H), flat psi): the kernel's state from the fields, psi zero."""
        psi = psi_to_list(self.st.plan, *self.psi0())
        return fields, tuple(p.reshape(-1) for p in psi)

    def onepass(self, t: Tiling, pairs: int, only: int | None = None):
        """2 * pairs one-pass steps, two per scan iteration (A -> B -> A, in place):
        ``fn(state, scratch, tabs)``, state and scratch donated (only: one launch)."""
        st = self.st

        @functools.partial(jax.jit, donate_argnums=(0, 1))
        def run(state, scratch, tabs):
            def body(c, _):
                ((E, H), psi), (SF, Sp) = c
                B = onepass_step(E, H, psi, tabs, SF, Sp, st, t, only)
                A = onepass_step(*B, tabs, (*E, *H), psi, st, t, only)
                return (((A[0], A[1]), A[2]), ((*B[0], *B[1]), B[2])), None
            # the whole carry: the scratch output aliases its donated input (no copy)
            return lax.scan(body, (state, scratch), None, length=pairs)[0]

        return run

    def scratch(self) -> tuple:
        psi = self.kernel_state(((), ()))[1]
        return (tuple(jnp.zeros(self.lay.shape, F32) for _ in range(6)),
                tuple(jnp.zeros_like(p) for p in psi))

    @property
    def psi_cells(self) -> int:
        """psi entries (all slabs, E and H)."""
        return sum(int(np.prod(s.psi_shape(self.lay.shape))) * 4 for s in self.lay.slabs)


def bench(n: int, tilings: list[Tiling], steps: int, copy_bw: float, emit,
          cpml: int = 0) -> list[dict]:
    """ms per step and Gcells/s (all cells counted) at n^3 of the XLA step and each
    tiling of the kernel; with ``cpml`` cells of CPML on all faces (XLA: per_face and
    combined). B/cell nominal: kernel 49 (E, H in and out, 1 uint8 code), XLA 75;
    plus 8 B per psi entry (read and written) spread over all cells."""
    t0 = time.perf_counter()
    sc = Scene.make((n, n, n), cpml=cpml)
    cells = float(np.prod(sc.lay.shape))
    psi_b = 8 * sc.psi_cells / cells
    emit({"n": n, "cpml": cpml, "setup_s": time.perf_counter() - t0,
          "codes": len(sc.tabs[1]) // 12, "psi_bytes_per_cell": psi_b})
    fields = initial(sc.lay)
    rows = []

    def row(name, fn, args_fn, bpc, copies=False, **kw):
        sec = _time(fn, args_fn)
        r = {"n": n, "cpml": cpml, "kernel": name, "ms_per_step": 1e3 * sec / steps,
             "gcells_s": cells * steps / sec / 1e9, "bytes_per_cell": bpc,
             "fraction_of_copy": cells * steps * bpc / sec / copy_bw, **kw}
        if copies:
            r["hlo_copies"] = _copies(fn, args_fn())
        rows.append(r)
        emit(r)

    def xla_args():
        return sc.xla_state(_copy(fields)), sc.cE, sc.cH, sc.pml

    for strat in ("per_face", "combined") if cpml else ("per_face",):
        row(f"xla-two-pass-{strat}" if cpml else "xla-two-pass",
            xla_run(sc.lay, steps // 2, strat), xla_args, 75 + psi_b, copies=not cpml)
    for q, t in enumerate(tilings):
        try:
            row("pallas-one-pass", sc.onepass(t, steps // 2),
                lambda: (sc.kernel_state(_copy(fields)), sc.scratch(), sc.tabs), 49 + psi_b,
                copies=q == 0 and not cpml, tiling=str(t))
            for q_only in (0, 1) if q == 0 and cpml and t.zby and n >= 512 else ():
                row(f"launch {q_only} alone (incomplete step)", sc.onepass(
                    t, steps // 2, q_only), lambda: (sc.kernel_state(_copy(fields)),
                                                     sc.scratch(), sc.tabs), 0, tiling=str(t))
        except Exception as exc:
            emit({"n": n, "tiling": str(t), "error": f"{type(exc).__name__}: {exc}"[:2000]})
    return rows


def main(argv: list[str]) -> None:
    mode = argv[1] if len(argv) > 1 else "check"
    if mode == "check":  # CPU, Pallas interpreter
        steps = int(argv[2]) if len(argv) > 2 else 20
        cells = tuple(int(v) for v in (argv[3] if len(argv) > 3 else "32x24x38").split("x"))
        cpml = int(argv[4]) if len(argv) > 4 else 5
        for c in (0, cpml):
            sc = Scene.make(cells, align=4, cpml=c)  # 38 -> 40 stored: pad_z = 2
            if c:
                print(json.dumps(yardstick(sc, steps)), flush=True)
            for t in (Tiling(8, 16, sc.lay.shape[0], 1, 0, 1, 0, 0),
                      Tiling(16, 32, 8, 1, 1, 1, 1, 1), Tiling(4, 16, 8, 1, 0, 1, 0, 1),
                      *([Tiling(4, 16, 8, 1, 0, 1, 1, 1, 8), Tiling(8, 8, 8, 1, 1, 1, 0, 1, 4),
                         Tiling(4, 16, 8, 1, 0, 1, 1, 0, 8, 0)] if c else [])):
                print(json.dumps(compare(sc, t, steps)), flush=True)
        return
    if mode == "one":  # two launches at n^3 (for ncu)
        n, t = int(argv[2]), Tiling.parse(argv[3])
        sc = Scene.make((n, n, n), cpml=int(argv[4]) if len(argv) > 4 else 0)
        fn = sc.onepass(t, 1)
        for _ in range(2):
            jax.block_until_ready(fn(sc.kernel_state(initial(sc.lay)), sc.scratch(), sc.tabs))
        return
    out_path = argv[2]
    check_n = int(argv[3]) if len(argv) > 3 else 128
    check_steps = int(argv[4]) if len(argv) > 4 else 1000
    sizes = [int(v) for v in (argv[5] if len(argv) > 5 else "256,512").split(",")]
    tilings = [Tiling.parse(s) for s in
               (argv[6] if len(argv) > 6 else "4x256x32x8x1x1").split(",")]
    cpml = int(argv[7]) if len(argv) > 7 else 10
    cpml_tilings = [Tiling.parse(s) for s in (argv[8] if len(argv) > 8 else
                    "4x256x32x8x1x1x1x0x32x1,4x256x32x8x1x1x0x0x32x1").split(",")]
    checked = [Tiling.parse(s) for s in argv[9].split(",")] if len(argv) > 9 else tilings
    record: dict = {"device": jax.devices()[0].device_kind, "jax": jax.__version__,
                    "date": "2026-11-27", "argv": argv, "results": []}

    def emit(r: dict) -> None:
        print(json.dumps(r), flush=True)
        record["results"].append(r)
        with open(out_path, "w") as fh:
            json.dump(record, fh, indent=1)

    from emjax.bench.common import copy_bandwidth
    bw = copy_bandwidth(2 << 30)
    emit({"copy_bandwidth_TBps": bw / 1e12, "method": "emjax.bench.common.copy_bandwidth, "
          "2 GiB, read + written"})
    for c, ts in ((0, checked), (cpml, cpml_tilings)) if cpml else ((0, checked),):
        sc = Scene.make((check_n,) * 3, cpml=c)
        if c and check_steps:
            emit(yardstick(sc, check_steps))
        for t in ts if check_steps else []:
            try:
                emit({"check": compare(sc, t, check_steps), "tiling_asdict": asdict(t)})
            except Exception as exc:
                emit({"check_error": f"{type(exc).__name__}: {exc}"[:2000], "tiling": str(t)})
    for n in sizes:
        bench(n, tilings, 200, bw, emit)
        if cpml:
            bench(n, cpml_tilings, 200, bw, emit, cpml)


if __name__ == "__main__":
    main(sys.argv)
