"""Benchmark of the fractioned DGATD (seed 004, Table I) on the seed's cylinder.

``seed004-cylinder``: PEC cylinder R = 1 m, h = 0.5 m, structured ring mesh renumbered
by reverse Cuthill-McKee, float32. Sizes (DoFs = 2 edges + 4 tets, the fractioned
unknowns): about 0.85M and 2.6M (the seed's two meshes) and >= 20M on a GPU; 40k and
150k on the CPU. The mesh and operators are built once per size; then the dense
kernels (:mod:`emjax.dga.layout`: ``"xla"``, and ``"pallas"`` on a GPU, where it is
not its interpreter that is timed) are timed: the Faraday and Ampere half-steps and
the full step, each inside one jitted ``fori_loop`` (see :func:`time_kernels`), with
the bytes per half-step counted two ways (:func:`emjax.dga.arrays.half_step_bytes`:
unique bytes, the roofline count, and the first version's nominal count with gathers
per access) and the fraction of the measured copy bandwidth. Kernels that fail to
compile are recorded as FAILED and the others go on. The global sparse (BCOO "SpMV")
step, the seed's reference, and the XLA kernels on a randomly numbered mesh are timed
up to 3M DoFs (the sparse Ampere matrix holds about w x 2P entries per half edge, ~1e9
at 20M DoFs; NumPy set-up time).

:func:`seed004_cylinder` takes the sizes (``dofs``) and the kernels to time; for a
10-minute device limit (set-up is NumPy and takes minutes at 20M DoFs), run one size
from a script: ``seed004_cylinder(dofs=(20e6,))``.

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


def _median_loop(run, args, n: int, repeats: int) -> float:
    """Seconds per iteration of a jitted loop of ``n`` iterations (median of repeats)."""
    jax.block_until_ready(run(*args))
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(run(*args))
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) / n


def time_kernels(ops, lay, dt: float, n: int = 50, repeats: int = 5, seed: int = 0,
                 K: dict | None = None) -> dict:
    """Seconds per Faraday half-step, Ampere half-step and full step of one layout's
    kernels (``lay``: :func:`emjax.dga.layout.make_layout`; ``K`` its
    :func:`emjax.dga.arrays.kernel_arrays` at ``dt``, built when not given).

    Each is timed inside one jitted ``fori_loop`` of ``n`` iterations, as the solver's
    scan runs them (no per-call dispatch in the figure). A half-step repeated on fixed
    input would be hoisted out of the loop by XLA, so each iteration also writes one
    element of the other field from the half-step's result (a one-element kernel).
    """
    from jax import lax

    from ..dga import step as kern
    from ..dga.arrays import kernel_arrays

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


def default_kernels() -> tuple[str, ...]:
    """The kernels timed by default: XLA, and Pallas on a GPU (off it Pallas runs only in
    its interpreter: not a timing worth recording)."""
    return ("xla", "pallas") if on_gpu() else ("xla",)


def measure(mesh, dt: float, kernels=None, sparse: bool = True, random_order: bool = True,
            n: int = 50, repeats: int = 5) -> dict:
    """Timings (s) and bytes of each of ``kernels`` (default :func:`default_kernels`) on
    one ``TetMesh`` (air-filled, PEC walls) at time step ``dt`` (s); with ``sparse`` the
    BCOO step, with ``random_order`` the XLA kernels on the mesh randomly renumbered."""
    from jax import lax

    from ..constants import eps0, mu0
    from ..dga import step as kern
    from ..dga.arrays import half_step_bytes
    from ..dga.arrays import sparse_arrays as sparse_kernel_arrays
    from ..dga.complex import build
    from ..dga.layout import make_layout
    from ..dga.mass import assemble

    kernels = tuple(kernels or default_kernels())

    def setup(mesh):
        cx = build(mesh)
        ops = assemble(cx, np.full(cx.num_tets, eps0), np.full(cx.num_tets, mu0))
        return cx, ops

    t0 = time.perf_counter()
    cx, ops = setup(mesh)
    out = {"dofs": cx.num_dofs, "tets": cx.num_tets, "setup_s": time.perf_counter() - t0,
           "kernels": {}}
    for name in kernels:
        lay = make_layout(ops, name)
        rec = {"bytes": half_step_bytes(ops, lay)}
        try:
            rec.update(time_kernels(ops, lay, dt, n=n, repeats=repeats))
        except Exception as e:  # kernels that fail to compile must not hide the others
            rec["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        out["kernels"][name] = rec
    if sparse:
        lay = make_layout(ops, "xla")
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
        r = time_kernels(opsr, make_layout(opsr, "xla"), dt, n=n, repeats=repeats)
        out["random_step_s"] = r["step_s"]
    return out


def seed004_cylinder(dofs=None, kernels=None) -> list[dict]:
    """Records of the case (module docstring). ``dofs``: target sizes (default 854,752,
    2,625,360 and 20M DoFs on a GPU, 40k and 150k elsewhere); ``kernels``: the dense
    kernels timed (default :func:`default_kernels`)."""
    from ..constants import c0
    from ..dga import structured
    from ..dga.layout import auto_kernels

    case = "seed004-cylinder"
    dev = device_name()
    gpu = on_gpu()
    targets = tuple(int(float(x)) for x in dofs) if dofs else (
        (854_752, 2_625_360, 20_000_000) if gpu else (40_000, 150_000))
    bw = copy_bandwidth(1 << 30 if gpu else 1 << 26)
    recs = []

    def rec(size, metric, value, unit):
        recs.append({"case": case, "size": size, "metric": metric, "value": float(value),
                     "unit": unit, "device": dev})

    rec("-", "copy bandwidth", bw / 1e9, "GB/s")
    auto = auto_kernels(gpu)
    for target in targets:
        r, L = rings_for(target)
        small = cylinder_dofs(r, L) <= 3_000_000
        t0 = time.perf_counter()
        mesh = structured.cylinder(1.0, 0.5, rings=r, layers=L)
        mesh_s = time.perf_counter() - t0
        dt = 0.3 * (1.0 / r) / c0  # below the stable step of the ring mesh
        m = measure(mesh, dt, kernels=kernels, sparse=small, random_order=small,
                    n=100 if small else 30, repeats=5 if gpu else 2)
        size = f"{m['dofs']} DoFs ({m['tets']} tets, rings {r}, layers {L})"
        rec(size, "mesh and operator set-up (NumPy)", mesh_s + m["setup_s"], "s")
        for name, mk in m["kernels"].items():
            if "error" in mk:
                rec(size, f"{name}: FAILED ({mk['error']})", float("nan"), "")
                continue
            for half in ("faraday", "ampere"):
                t = mk[f"{half}_s"]
                b, bn = mk["bytes"][half], mk["bytes"][f"{half}_nominal"]
                rec(size, f"{name}: {half} half-step time", t * 1e3, "ms")
                rec(size, f"{name}: {half} unique bytes per half-step", b / 1e6, "MB")
                rec(size, f"{name}: {half} achieved bandwidth (unique bytes)", b / t / 1e9,
                    "GB/s")
                rec(size, f"{name}: {half} fraction of copy bandwidth (unique bytes)",
                    b / t / bw, "")
                rec(size, f"{name}: {half} fraction of copy bandwidth (nominal bytes, v1 count)",
                    bn / t / bw, "")
            rec(size, f"{name}: step time (fused jit)", mk["step_s"] * 1e3, "ms")
            rec(size, f"{name}: DoF updates per second", m["dofs"] / mk["step_s"] / 1e9,
                "GDoF/s")
            rec(size, f"{name}: compile time of the step loop", mk["step_compile_s"], "s")
            if "sparse_step_s" in m:
                rec(size, f"speed-up {name} / SpMV", m["sparse_step_s"] / mk["step_s"], "x")
        if "sparse_step_s" in m:
            rec(size, "sparse (BCOO SpMV) step time", m["sparse_step_s"] * 1e3, "ms")
        timed = {k: v["step_s"] for k, v in m["kernels"].items() if "step_s" in v}
        if timed:
            best = min(timed, key=timed.get)
            rec(size, f"fastest kernels: {best} (auto: {auto})", timed[best] * 1e3, "ms")
        if "random_step_s" in m and "xla" in timed:
            rec(size, "xla step, random numbering", m["random_step_s"] * 1e3, "ms")
            rec(size, "slow-down from random numbering", m["random_step_s"] / timed["xla"], "x")
    for n_dofs, sp in SEED_TABLE.items():
        rec(f"seed {n_dofs} DoFs", "seed Table I custom / SpMV",
            sp["custom"] / sp["spmv"], "x")
    rec("seed C2075", "seed Faraday kernel fraction of bandwidth", 98 / 102, "")
    return recs


CASES: dict[str, Callable[[], list[dict]]] = {"seed004-cylinder": seed004_cylinder}


def seed004_setup(dofs=None) -> list[dict]:
    """``seed004-setup``: the DGATD set-up of ``cylinder-cavity`` on the seed's cylinder
    at ``dofs`` (default 20.2M on a GPU, 0.87M elsewhere; from a script:
    ``seed004_setup(dofs=(20.2e6,))``), stage by stage
    (``DGASetup.stages``): once from nothing (the set-up cache empty) and once from the
    cache, in a temporary cache folder removed afterwards."""
    import tempfile

    from ..dga.solver import DGASolver
    from ..driver.compile_cache import setup_cache
    from ..scenarios import load_builtin

    case, dev = "seed004-setup", device_name()
    targets = tuple(int(float(x)) for x in dofs) if dofs else (
        (20_200_000,) if on_gpu() else (870_000,))
    recs = []
    for target in targets:
        r, _ = rings_for(target)
        base = load_builtin("cylinder-cavity")  # the ring mesh of ``r`` rings (about)
        sim = base.model_copy(update={"mesh": base.mesh.model_copy(
            update={"edge_length": 1.25 / r})})
        with tempfile.TemporaryDirectory() as tmp, setup_cache(tmp):
            for label in ("from nothing", "from the cache"):
                t0 = time.perf_counter()
                s = DGASolver(sim).setup
                total = time.perf_counter() - t0
                size = f"{s.cx.num_dofs} DoFs ({s.cx.num_tets} tets)"
                for stage, sec in s.stages.items():
                    recs.append({"case": case, "size": size, "metric": f"{label}: {stage}",
                                 "value": float(sec), "unit": "s", "device": dev})
                recs.append({"case": case, "size": size,
                             "metric": f"{label}: set-up total (cache {s.cache})",
                             "value": total, "unit": "s", "device": dev})
                del s
    return recs


CASES["seed004-setup"] = seed004_setup
