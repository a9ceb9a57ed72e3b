"""The DGATD lowering: a scenario to a :class:`DGASetup` (mesh, complex, operators,
layout, dt), stage by stage, through the set-up cache (:mod:`emjax.dga.cache`).

Set-up (NumPy float64 on the host, the operators' matrices in two device programs on
an accelerator): mesh -> renumbered (the backend's node order) -> complex -> fractioned
operators (:mod:`emjax.dga.mass`) -> stable dt by power iteration
(:mod:`emjax.dga.stability`) -> the kernels (``auto``: by the run's length) and their
layout; stages that need only what is known overlap on threads (:func:`_build`).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import jax
import numpy as np

from ..constants import eps0, mu0
from ..driver import advice
from ..driver.backend import on_demand_pool
from ..driver.memory import refuse_if_too_large
from ..driver.precision import require_x64
from ..driver.stages import Stages
from ..errors import SetupError
from ..model.scenario import MAX_STEPS
from . import cache
from . import step as kern
from .arrays import kernel_base
from .complex import Complex, build, device_sorts
from .complex import compile_ahead as complex_ahead
from .edges import tables_ahead
from .layout import Layout, auto_kernels, make_layout
from .local import compile_ahead
from .mass import Operators, assemble, device_path, on_host
from .mesh import TetMesh
from .placement import check_inside
from .stability import spectral_radius, stable_dt


@dataclass(eq=False)
class DGASetup:
    """The lowered DGATD run: mesh (renumbered), complex, fractioned operators, the
    kernels' layout, the time step dt (s) from the spectral radius rho (1/s^2) and the
    scenario's ``safety`` (read here only), the number of steps and the dtype."""

    mesh: TetMesh
    cx: Complex
    ops: Operators
    layout: Layout
    dt: float
    rho: float
    steps: int
    dtype: type
    safety: float = 0.9
    stages: dict = field(default_factory=dict)  # seconds per set-up stage
    cache: str = "off"  # the set-up cache's verdict: hit, miss, rebuilt, unwritable, off
    cache_key: str = ""  # its key where the cache is on (the kernel arrays are kept there)
    kernel_base: dict | None = field(default=None, repr=False)  # arrays.kernel_base, once


def make_mesh(sim) -> TetMesh:
    from .generate import build_mesh

    mesh = build_mesh(sim.mesh)
    return mesh.renumbered(node_order()) if sim.renumber else mesh


def materials(sim, mesh: TetMesh):
    """(eps, mu, sigma) per tet in SI; refuses region tags the mesh does not have."""
    tags = np.unique(mesh.regions)
    unknown = [r.tag for r in sim.regions if r.tag not in tags]
    if unknown:
        raise SetupError(f"regions: tags {unknown} do not occur in the mesh, whose tags are "
                         f"{tags.tolist()}; fix the tags or the mesh")
    eps = np.full(mesh.num_tets, sim.background.eps_r)
    mu = np.full(mesh.num_tets, sim.background.mu_r)
    sig = np.full(mesh.num_tets, sim.background.sigma)
    for r in sim.regions:
        m = mesh.regions == r.tag
        eps[m], mu[m], sig[m] = r.medium.eps_r, r.medium.mu_r, r.medium.sigma
    return eps * eps0, mu * mu0, sig


DEVICE_BYTES_PER_TET = 400
"""Rough device bytes per tetrahedron of a float32 run (fields, packed local matrices,
indices; the benchmark counts 280): the refusal before meshing uses it."""


def _kernels(sim, ops: Operators, steps: int) -> str:
    """``"xla"`` or ``"pallas"``: the scenario's ``kernels``, ``"auto"`` resolved for
    the device JAX runs on and the run's length (:func:`emjax.dga.layout.auto_kernels`)."""
    if sim.kernels != "auto":
        return sim.kernels
    return auto_kernels(gpu=jax.default_backend() == "gpu", dofs=ops.cx.num_dofs,
                        steps=steps, widths=[b.width for b in ops.buckets])


def _steps(sim, rho: float) -> tuple[float, int]:
    """(dt, steps) from the spectral radius: ``safety`` times the stable step, the
    scenario's ``steps`` or its ``duration`` in steps (refused past MAX_STEPS)."""
    dt = stable_dt(rho, sim.safety)
    if sim.steps is None and not sim.duration / dt <= MAX_STEPS:
        raise SetupError(f"duration = {sim.duration:.6g} s is {sim.duration / dt:.3g} steps of "
                         f"dt = {dt:.4g} s, more than {MAX_STEPS}; shorten the duration or "
                         "coarsen the mesh")
    return dt, sim.steps if sim.steps is not None else max(1, math.ceil(sim.duration / dt - 1e-9))


def node_order() -> str:
    """The set-up's node order (:data:`emjax.dga.mesh.NODE_ORDERS`), the backend's:
    Morton on a GPU, where the kernels run as fast on it and it costs a quarter of
    reverse Cuthill-McKee's time; reverse Cuthill-McKee on a CPU, whose steps ran 4%
    faster on it (BENCHMARKS.md)."""
    return "morton" if jax.default_backend() == "gpu" else "rcm"


def _layouts_ahead(sim, cx: Complex) -> tuple[bool, ...]:
    """The layouts whose edge tables a build needs (False: XLA's, the power iteration's;
    True: Pallas', where the run may take it: ``auto`` decides once dt is known, so here
    for the longest run the scenario could be)."""
    steps = sim.steps if sim.steps is not None else MAX_STEPS
    kernels = sim.kernels if sim.kernels != "auto" else auto_kernels(
        gpu=jax.default_backend() == "gpu", dofs=cx.num_dofs, steps=steps,
        widths=[int(cx.degree.max())])
    return (False, True) if kernels == "pallas" else (False,)


def _build(sim, st: Stages) -> tuple:
    """(mesh, complex, operators, rho, XLA's layout, its kernel base, {kernels: a future
    layout}) from nothing, each stage timed in ``st``. On an accelerator the local
    matrices' program compiles on a thread while the host renumbers the mesh and builds
    the complex (whose sorts run on the device too, their program compiled ahead on
    another); the edge tables are built on another while the operators are formed,
    and Pallas' layout, where the run may take it, during the power iteration."""
    from .generate import build_mesh

    with st("mesh generation"):
        mesh = build_mesh(sim.mesh)
        lossy = bool(np.any(materials(sim, mesh)[2] > 0))  # (tags refused here, early)
        ahead = compile_ahead(mesh.num_nodes, mesh.num_tets, lossy) \
            if device_path(mesh.num_tets) else None
        sorts = complex_ahead(mesh.num_tets) \
            if ahead is not None and device_sorts(mesh.num_nodes) else None
    if sim.renumber:
        with st("renumbering"):
            mesh = mesh.renumbered(node_order())
    with st("complex (edges)"):
        cx = build(mesh, sorts, on_device=sorts is not None)
        pallas = _layouts_ahead(sim, cx)
        tables_ahead(cx, pallas)
    with st("placement checks"):
        check_inside(cx, sim)  # sources and probes, before the power iteration
    with st("local matrices and buckets"):
        eps, mu, sig = materials(sim, mesh)
        ops = assemble(cx, eps, mu, sig, ahead=ahead, later=True)
    with st("layout"):  # the power iteration's (XLA's, whatever the run's kernels)
        lay = make_layout(ops, "xla")
        later = {}
        if True in pallas:  # the run's, should it take Pallas, beside the power iteration
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="emjax-layout")
            later["pallas"] = pool.submit(make_layout, ops, "pallas")
            pool.shutdown(wait=False)
    with st("kernel arrays"):  # formed once for the power iteration and the run
        base = kernel_base(ops, lay)
    with st("power iteration"):  # float64 whatever the run's dtype: rho ~ 1e20 1/s^2
        rho = spectral_radius(ops, lay, base)
    ops = on_host(ops)
    return mesh, cx, ops, rho, lay, base, later


def prepare(sim) -> DGASetup:
    """Lower ``sim``: the mesh, complex, operators and rho built (timed per stage in
    ``DGASetup.stages``) or read from the set-up cache (:mod:`emjax.dga.cache`); then
    the kernels (``auto``: by the run's length, known once dt is) and their layout."""
    on_demand_pool()  # before JAX's backend starts
    require_x64()  # the time step's power iteration runs in float64 for every dtype
    est = getattr(sim.mesh, "estimated_tets", lambda: 0.0)()
    need = int(est * DEVICE_BYTES_PER_TET * (2 if sim.dtype == "float64" else 1))
    refuse_if_too_large(sim.name, {"mesh and operators (estimate)": need, "total": need})
    st = Stages()
    folder, verdict, built, key, base = cache.cache_dir(), "off", None, "", None
    if folder is not None:
        with st("cache read"):
            key = cache.cache_key(sim, node_order())
            verdict, built = cache.load(folder, key)
    later: dict = {}
    if built is not None:
        mesh, cx, ops, rho, lay = built
        with st("placement checks"):
            check_inside(cx, sim)
    else:
        mesh, cx, ops, rho, lay, base, later = _build(sim, st)
    dt, steps = _steps(sim, rho)
    kernels = _kernels(sim, ops, steps)
    if lay.spec.kernels != kernels:
        with st("layout"):
            lay = later[kernels].result() if kernels in later else make_layout(ops, kernels)
            base = None if base is None else kernel_base(ops, lay)
    if folder is not None and built is None:
        with st("cache write"):
            if cache.save(folder, key, mesh, cx, ops, rho, lay) is None:
                verdict = "unwritable"
    advice.advise([advice.Signal(f"sources[{i}] {s.type}", s.waveform.sampler(),
                                 s.waveform.steady_frequency)
                   for i, s in enumerate(sim.sources)], dt, steps)  # a cut-off pulse warns
    return DGASetup(mesh=mesh, cx=cx, ops=ops, layout=lay, dt=dt, rho=rho, steps=steps,
                    kernel_base=base, dtype=kern.np_dtype(sim.dtype), safety=sim.safety,
                    stages=st, cache=verdict,
                    cache_key=key if verdict in ("hit", "miss", "rebuilt") else "")


__all__ = ["DEVICE_BYTES_PER_TET", "DGASetup", "make_mesh", "materials", "node_order",
           "prepare"]
