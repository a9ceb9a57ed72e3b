"""Benchmark of the fractioned DGATD (seed 004, Table I) on the seed's cylinder.

``seed004-cylinder``: PEC cylinder R = 1 m, h = 0.5 m, structured ring mesh renumbered
by reverse Cuthill-McKee, float32. Sizes (DoFs = 2 edges + 4 tets, the fractioned
unknowns): about 0.85M and 2.6M (the seed's two meshes) and >= 20M on a GPU; 40k and
150k on the CPU. For each size: the Faraday and Ampere half-steps of the dense
(custom) kernels timed apart, their bytes (:func:`emjax.dga.step.half_step_bytes`,
counted in that module's docstring) and GB/s against the measured copy bandwidth;
the full step of the dense and of the global sparse (BCOO "SpMV") formulation, and the
dense step on a randomly numbered mesh. The sparse formulation and the random
numbering are skipped above 3M DoFs (the sparse Ampere matrix holds about w x 2P
entries per half edge, ~1e9 at 20M DoFs; NumPy set-up time).

Seed 004 Table I (Tesla C2075, 102 GB/s; speed-ups over one Xeon core):
0.85M DoFs: SpMV 13.42, custom 16.58; 2.6M DoFs: SpMV 15.84, custom 19.50; its Faraday
kernel sustained 98 GB/s. Speed-ups over a CPU core are not measured here; the records
give the sparse/dense ratio and the fraction of copy bandwidth instead.
"""

from __future__ import annotations

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


def _time(fn, *args, repeats: int = 20) -> float:
    out = fn(*args)
    jax.block_until_ready(out)
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(fn(*args))
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def measure(rings: int, layers: int, sparse: bool = True, random_order: bool = True,
            repeats: int = 20) -> dict:
    """Timings (s) and bytes of one mesh; see the module docstring."""
    from ..constants import eps0, mu0
    from ..dga import step as kern
    from ..dga import structured
    from ..dga.complex import build
    from ..dga.mass import assemble
    from ..dga.solver import bucket_layout, dense_arrays, sparse_arrays

    def setup(mesh):
        cx = build(mesh)
        ops = assemble(cx, np.full(cx.num_tets, eps0), np.full(cx.num_tets, mu0))
        return cx, ops

    mesh = structured.cylinder(1.0, 0.5, rings=rings, layers=layers)
    cx, ops = setup(mesh)
    dt = 1e-11
    K = jax.device_put(dense_arrays(ops, dt, np.float32))
    lay = bucket_layout(ops)
    rng = np.random.default_rng(0)
    u = jnp.asarray(rng.standard_normal(ops.nu).astype(np.float32))
    f = jnp.asarray(rng.standard_normal((4, cx.num_tets)).astype(np.float32))
    far = jax.jit(lambda u, f, K: kern.faraday(u, f, K))
    amp = jax.jit(lambda u, f, K: kern.ampere(u, f, K, lay))
    step = jax.jit(lambda u, f, K: (lambda f2: (kern.ampere(u, f2, K, lay), f2))(
        kern.faraday(u, f, K)))
    out = {"dofs": cx.num_dofs, "tets": cx.num_tets, "bytes": kern.half_step_bytes(ops),
           "faraday_s": _time(far, u, f, K, repeats=repeats),
           "ampere_s": _time(amp, u, f, K, repeats=repeats),
           "step_s": _time(step, u, f, K, repeats=repeats)}
    if sparse:
        S = jax.device_put(sparse_arrays(ops, dt, np.float32))
        sstep = jax.jit(lambda u, f, S: (lambda f2: (kern.ampere_sparse(u, f2, S), f2))(
            kern.faraday_sparse(u, f, S)))
        out["sparse_step_s"] = _time(sstep, u, f, S, repeats=repeats)
        del S
    if random_order:
        cxr, opsr = setup(mesh.permuted_random())
        Kr = jax.device_put(dense_arrays(opsr, dt, np.float32))
        layr = bucket_layout(opsr)
        ur = jnp.asarray(rng.standard_normal(opsr.nu).astype(np.float32))
        fr = jnp.asarray(rng.standard_normal((4, cxr.num_tets)).astype(np.float32))
        stepr = jax.jit(lambda u, f, K: (lambda f2: (kern.ampere(u, f2, K, layr), f2))(
            kern.faraday(u, f, K)))
        out["random_step_s"] = _time(stepr, ur, fr, Kr, repeats=repeats)
    return out


def seed004_cylinder(targets=None) -> list[dict]:
    case = "seed004-cylinder"
    dev = device_name()
    gpu = on_gpu()
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
        m = measure(r, L, sparse=small, random_order=small)
        size = f"{m['dofs']} DoFs ({m['tets']} tets, rings {r}, layers {L})"
        for half in ("faraday", "ampere"):
            gbs = m["bytes"][half] / m[f"{half}_s"] / 1e9
            rec(size, f"{half} half-step time", m[f"{half}_s"] * 1e3, "ms")
            rec(size, f"{half} bytes per half-step", m["bytes"][half] / 1e6, "MB")
            rec(size, f"{half} achieved bandwidth", gbs, "GB/s")
            rec(size, f"{half} fraction of copy bandwidth", gbs * 1e9 / bw, "")
        rec(size, "dense (custom) step time", m["step_s"] * 1e3, "ms")
        rec(size, "dense (custom) DoF updates per second", m["dofs"] / m["step_s"] / 1e9,
            "GDoF/s")
        if "sparse_step_s" in m:
            rec(size, "sparse (BCOO SpMV) step time", m["sparse_step_s"] * 1e3, "ms")
            rec(size, "speed-up custom / SpMV", m["sparse_step_s"] / m["step_s"], "x")
        if "random_step_s" in m:
            rec(size, "dense step, random numbering", m["random_step_s"] * 1e3, "ms")
            rec(size, "slow-down from random numbering", m["random_step_s"] / m["step_s"], "x")
    for dofs, sp in SEED_TABLE.items():
        rec(f"seed {dofs} DoFs", "seed Table I custom / SpMV",
            sp["custom"] / sp["spmv"], "x")
    rec("seed C2075", "seed Faraday kernel fraction of bandwidth", 98 / 102, "")
    return recs


CASES: dict[str, Callable[[], list[dict]]] = {"seed004-cylinder": seed004_cylinder}
