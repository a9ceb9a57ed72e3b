"""Benchmark of the fractioned DGATD (seed 004, Table I) on the seed's cylinder.

``seed004-cylinder``: PEC cylinder R = 1 m, h = 0.5 m, structured ring mesh renumbered
by reverse Cuthill-McKee, float32. Sizes (DoFs = 2 edges + 4 tets, the fractioned
unknowns): about 0.85M and 2.6M (the seed's two meshes) and >= 20M on a GPU; 40k and
150k on the CPU. The mesh and operators are built once per size; then *every* kernel
variant of :mod:`emjax.dga.layout` (memory layouts, packed or full matrices) is timed:
the Faraday and Ampere half-steps and the full step, each inside one jitted
``fori_loop`` (see :func:`time_variant`), with its bytes per half-step counted two
ways (:func:`emjax.dga.layout.half_step_bytes`: unique bytes, the roofline count, and
the first version's nominal count with gathers per access) and the fraction of the
measured copy bandwidth. A variant that fails to compile is recorded as FAILED and
the others go on. The record "fastest variant" names the winner at each size. The
Pallas variants (``-p``) are timed on a GPU only.
``shared`` variants (one table of distinct matrices, see :mod:`emjax.dga.layout`) also
record their tables' size: their bytes are smaller on this mesh of repeated layers. The
global sparse (BCOO "SpMV") step and the default variant on a randomly numbered mesh
are timed up to 3M DoFs (the sparse Ampere matrix holds about w x 2P entries per half
edge, ~1e9 at 20M DoFs; NumPy set-up time).

Environment: ``EMJAX_DGA_BENCH_DOFS=20e6`` (comma-separated sizes) and
``EMJAX_DGA_BENCH_VARIANTS=tets-node-sym,rows-slot`` restrict the run (for a 10-minute
device limit: set-up is NumPy and takes minutes at 20M DoFs).

Seed 004 Table I (Tesla C2075, 102 GB/s; speed-ups over one Xeon core):
0.85M DoFs: SpMV 13.42, custom 16.58; 2.6M DoFs: SpMV 15.84, custom 19.50; its Faraday
kernel sustained 98 GB/s. Speed-ups over a CPU core are not measured here; the records
give the sparse/dense ratio and the fraction of copy bandwidth instead.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from .common import copy_bandwidth, device_name, on_gpu

SEED_TABLE = {854752: {"spmv": 13.42, "custom": 16.58}, 2625360: {"spmv": 15.84, "custom": 19.50}}


def cylinder_dofs(rings: int, layers: int) -> int:
    """Fractioned DoFs of the structured cylinder mesh (Euler: E2 = N2 + T2 - 1)."""
    t2 = 6 * rings * rings
    n2 = 3 * rings * (rings + 1) + 1
    e2 = n2 + t2 - 1
    ne = (layers + 1) * e2 + layers * n2 + layers * e2
    return 2 * ne + 4 * 3 * t2 * layers


def rings_for(dofs: int) -> tuple[int, int]:
    """(rings, layers) of the smallest cylinder mesh (layers = rings / 2) with >= dofs."""
    r = 2
    while cylinder_dofs(r, max(1, r // 2)) < dofs:
        r += 1
    return r, max(1, r // 2)


def _median_loop(run, args, n: int, repeats: int) -> float:
    """Seconds per iteration of a jitted loop of ``n`` iterations (median of repeats)."""
    jax.block_until_ready(run(*args))
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(run(*args))
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) / n


def time_variant(ops, lay, dt: float, n: int = 50, repeats: int = 5, seed: int = 0,
                 K: dict | None = None) -> dict:
    """Seconds per Faraday half-step, Ampere half-step and full step of one variant.

    Each is timed inside one jitted ``fori_loop`` of ``n`` iterations, as the solver's
    scan runs them (no per-call dispatch in the figure). A half-step repeated on fixed
    input would be hoisted out of the loop by XLA, so each iteration also writes one
    element of the other field from the half-step's result (a one-element kernel).
    """
    from jax import lax

    from ..dga import step as kern
    from ..dga.layout import kernel_arrays

    spec = lay.spec
    K = dict(K) if K is not None else kernel_arrays(ops, lay, dt, np.float32)
    K.pop("gpos", None)
    K = jax.device_put(K)
    rng = np.random.default_rng(seed)
    u = jnp.asarray(lay.u_from_canonical(rng.standard_normal(ops.nu).astype(np.float32)))
    f = jnp.asarray(lay.f_from_canonical(
        rng.standard_normal((4, ops.cx.num_tets)).astype(np.float32)))

    # each half-step alone, its input made to depend on the previous pass through one
    # entry (so that XLA cannot hoist it out of the loop)
    def far(c, K):
        u, f = c
        f2 = kern.faraday(u, f, K, spec)
        return u.at[0].set(f2.reshape(-1)[0]), f2

    def amp(c, K):
        u, f = c
        u2 = kern.ampere(u, f, K, spec)
        return u2, f.reshape(-1).at[0].set(u2[0]).reshape(f.shape)

    def step(c, K):
        u, f = c
        f2 = kern.faraday(u, f, K, spec)
        return kern.ampere(u, f2, K, spec), f2

    out = {}
    for name, body in (("faraday", far), ("ampere", amp), ("step", step)):
        run = jax.jit(lambda c, K, body=body: lax.fori_loop(0, n, lambda i, c: body(c, K), c))
        t0 = time.perf_counter()
        jax.block_until_ready(run((u, f), K))
        out[f"{name}_compile_s"] = time.perf_counter() - t0
        out[f"{name}_s"] = _median_loop(run, ((u, f), K), n, repeats)
    del K
    return out


def measure(mesh, dt: float, variants=None, sparse: bool = True, random_order: bool = True,
            n: int = 50, repeats: int = 5) -> dict:
    """Timings (s) and bytes of every variant on one ``TetMesh`` (air-filled, PEC walls)
    at time step ``dt`` (s); see the module docstring."""
    from jax import lax

    from ..constants import eps0, mu0
    from ..dga import step as kern
    from ..dga.complex import build
    from ..dga.layout import DEFAULT_VARIANT, VARIANTS, half_step_bytes, kernel_arrays, make_layout
    from ..dga.layout import sparse_arrays as sparse_kernel_arrays
    from ..dga.mass import assemble

    # Pallas runs off the GPU only in its interpreter: not a timing worth recording
    variants = list(variants or [v for v in VARIANTS
                                 if on_gpu() or not VARIANTS[v].get("pallas")])

    def setup(mesh):
        cx = build(mesh)
        ops = assemble(cx, np.full(cx.num_tets, eps0), np.full(cx.num_tets, mu0))
        return cx, ops

    t0 = time.perf_counter()
    cx, ops = setup(mesh)
    out = {"dofs": cx.num_dofs, "tets": cx.num_tets, "setup_s": time.perf_counter() - t0,
           "variants": {}}
    for v in variants:
        lay = make_layout(ops, v)
        K = kernel_arrays(ops, lay, dt, np.float32)  # once: the shared tables set the bytes
        rec = {"bytes": half_step_bytes(ops, lay, K=K)}
        if lay.spec.shared:  # how far the mesh's repetition shrank the matrix tables
            rec["table_mb"] = (K["Ms_tab"].nbytes + sum(B["Dtab"].nbytes
                                                        for B in K["buckets"])) / 1e6
        try:
            rec.update(time_variant(ops, lay, dt, n=n, repeats=repeats, K=K))
        except Exception as e:  # a variant that fails to compile must not hide the others
            rec["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        del K
        out["variants"][v] = rec
    if sparse:
        lay = make_layout(ops, DEFAULT_VARIANT)
        S = jax.device_put(sparse_kernel_arrays(ops, lay, dt, np.float32))
        u = jnp.zeros(ops.nu, jnp.float32).at[0].set(1.0)
        f = lay.spec.f_zeros(jnp.float32)

        def sstep(c, S):
            u, f = c
            f2 = kern.faraday_sparse(u, f, S)
            return kern.ampere_sparse(u, f2, S), f2

        run = jax.jit(lambda c, S: lax.fori_loop(0, n, lambda i, c: sstep(c, S), c))
        out["sparse_step_s"] = _median_loop(run, ((u, f), S), n, repeats)
        del S
    if random_order:
        _, opsr = setup(mesh.permuted_random())
        r = time_variant(opsr, make_layout(opsr, DEFAULT_VARIANT), dt, n=n, repeats=repeats)
        out["random_step_s"] = r["step_s"]
    return out


def seed004_cylinder(targets=None, variants=None) -> list[dict]:
    from ..constants import c0
    from ..dga import structured
    from ..dga.layout import DEFAULT_VARIANT, auto_variant

    case = "seed004-cylinder"
    dev = device_name()
    gpu = on_gpu()
    env_sizes = os.environ.get("EMJAX_DGA_BENCH_DOFS")
    env_variants = os.environ.get("EMJAX_DGA_BENCH_VARIANTS")
    if env_sizes:
        targets = tuple(int(float(x)) for x in env_sizes.split(","))
    if env_variants:
        variants = tuple(v.strip() for v in env_variants.split(","))
    targets = targets or ((854_752, 2_625_360, 20_000_000) if gpu else (40_000, 150_000))
    bw = copy_bandwidth(1 << 30 if gpu else 1 << 26)
    recs = []

    def rec(size, metric, value, unit):
        recs.append({"case": case, "size": size, "metric": metric, "value": float(value),
                     "unit": unit, "device": dev})

    rec("-", "copy bandwidth", bw / 1e9, "GB/s")
    for target in targets:
        r, L = rings_for(target)
        small = cylinder_dofs(r, L) <= 3_000_000
        t0 = time.perf_counter()
        mesh = structured.cylinder(1.0, 0.5, rings=r, layers=L)
        mesh_s = time.perf_counter() - t0
        dt = 0.3 * (1.0 / r) / c0  # below the stable step of the ring mesh
        m = measure(mesh, dt, variants=variants, sparse=small, random_order=small,
                    n=100 if small else 30, repeats=5 if gpu else 2)
        size = f"{m['dofs']} DoFs ({m['tets']} tets, rings {r}, layers {L})"
        rec(size, "mesh and operator set-up (NumPy)", mesh_s + m["setup_s"], "s")
        best = None
        for v, mv in m["variants"].items():
            if "error" in mv:
                rec(size, f"{v}: FAILED ({mv['error']})", float("nan"), "")
                continue
            for half in ("faraday", "ampere"):
                t = mv[f"{half}_s"]
                b, bn = mv["bytes"][half], mv["bytes"][f"{half}_nominal"]
                rec(size, f"{v}: {half} half-step time", t * 1e3, "ms")
                rec(size, f"{v}: {half} unique bytes per half-step", b / 1e6, "MB")
                rec(size, f"{v}: {half} achieved bandwidth (unique bytes)", b / t / 1e9, "GB/s")
                rec(size, f"{v}: {half} fraction of copy bandwidth (unique bytes)", b / t / bw,
                    "")
                rec(size, f"{v}: {half} fraction of copy bandwidth (nominal bytes, v1 count)",
                    bn / t / bw, "")
            if "table_mb" in mv:
                rec(size, f"{v}: distinct-matrix tables (tets + nodes)", mv["table_mb"], "MB")
            rec(size, f"{v}: step time (fused jit)", mv["step_s"] * 1e3, "ms")
            rec(size, f"{v}: DoF updates per second", m["dofs"] / mv["step_s"] / 1e9, "GDoF/s")
            rec(size, f"{v}: compile time of the step loop", mv["step_compile_s"], "s")
            if best is None or mv["step_s"] < m["variants"][best]["step_s"]:
                best = v
        auto = auto_variant(gpu)
        if best is not None:
            rec(size, f"fastest variant: {best} (auto: {auto})",
                m["variants"][best]["step_s"] * 1e3, "ms")
        ref = m["variants"].get(DEFAULT_VARIANT, {})
        if "sparse_step_s" in m:
            rec(size, "sparse (BCOO SpMV) step time", m["sparse_step_s"] * 1e3, "ms")
            for v in dict.fromkeys((auto, DEFAULT_VARIANT)):
                if "step_s" in m["variants"].get(v, {}):
                    rec(size, f"speed-up {v} / SpMV",
                        m["sparse_step_s"] / m["variants"][v]["step_s"], "x")
        if "random_step_s" in m and "step_s" in ref:
            rec(size, f"{DEFAULT_VARIANT} step, random numbering", m["random_step_s"] * 1e3, "ms")
            rec(size, "slow-down from random numbering", m["random_step_s"] / ref["step_s"], "x")
    for dofs, sp in SEED_TABLE.items():
        rec(f"seed {dofs} DoFs", "seed Table I custom / SpMV",
            sp["custom"] / sp["spmv"], "x")
    rec("seed C2075", "seed Faraday kernel fraction of bandwidth", 98 / 102, "")
    return recs


CASES: dict[str, Callable[[], list[dict]]] = {"seed004-cylinder": seed004_cylinder}
