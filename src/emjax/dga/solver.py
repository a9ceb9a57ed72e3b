"""The DGATD driver: chunks of ``lax.scan``, monitors, checkpoints.

Set-up: :func:`emjax.dga.setup.prepare` (mesh, operators, dt, layout). The loop is the
shared driver's (:func:`emjax.driver.loop.run`): each chunk one jitted ``lax.scan``
with the state donated, waveforms as scan inputs, probe samples and energies as
outputs, the NaN guard, progress bar and atomic checkpoints between chunks; resuming is
bitwise exact.

Time sampling: u^n at n dt, f^{n+1/2} at (n + 1/2) dt; sources are sampled at
(n + 1/2) dt; probes record e at (n + 1) dt and h at (n + 1/2) dt.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..driver import loop, monitors
from ..driver.compile_cache import mark
from ..driver.environment import environment
from ..driver.guard import measured
from ..driver.monitors import frame_buffers, frames_taken, sampled, scan_with_frames, store_frames
from ..driver.stages import Stages
from ..errors import InstabilityError
from . import cache
from . import step as kern
from .arrays import energy_arrays, kernel_arrays, source_columns, sparse_arrays
from .complex import OTHERS, build, hexahedra, local_edge_index
from .layout import Layout
from .mass import Operators
from .placement import locate, snap_edge
from .setup import DGASetup, make_mesh, materials, prepare  # noqa: F401  (materials: API)
from .snapshots import write_snapshots  # noqa: F401  (the solver's API)


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class DGAState:
    """What a DGATD run carries from step to step: u, the fractioned edge unknowns
    (e along half edges, the layout's order; V); f, the fractioned dual-edge unknowns
    (h, the layout's order; A); n, the step count (int32). u is at n dt, f at
    (n - 1/2) dt after n steps."""

    u: jax.Array
    f: Any
    n: jax.Array


def probe_arrays(ops: Operators, lay: Layout, points, dtype, what: str = "point") -> dict:
    """Indices (in the layout's u and flat f) and 3x3 reconstruction matrices of e and
    h at ``points`` (``what`` names them in a refusal)."""
    cx = ops.cx
    t, i = locate(cx, points, what)
    a, at = hexahedra(cx, t)  # the located tets only
    LE = local_edge_index()
    ue, fh = [], []
    for tt, ii in zip(t, i, strict=True):
        row_u, row_f = [], []
        for j in OTHERS[ii]:
            e = cx.tet_edges[tt, LE[ii, j]]
            row_u.append(lay.he_pos[e, 0 if ii < j else 1])
            row_f.append(lay.f_pos[j, tt])
        ue.append(row_u), fh.append(row_f)
    k = np.arange(t.size)
    We = np.swapaxes(np.linalg.inv(a[k, i]), 1, 2)
    Wh = np.swapaxes(np.linalg.inv(at[k, i]), 1, 2)
    return {"ue": np.array(ue, np.int32), "fh": np.array(fh, np.int32),
            "We": We.astype(dtype), "Wh": Wh.astype(dtype)}


class DGASolver:
    """A prepared DGATD run: ``init_state``, ``advance`` (one chunk), ``run``."""

    def __init__(self, sim, *, chunk: int | None = None, setup: DGASetup | None = None):
        self.born = mark()  # the set-up time starts here (a setup given: after it)
        self.sim = sim
        self.setup = setup or prepare(sim)
        self.chunk = chunk or loop.default_chunk(self.setup.steps)
        s, ops = self.setup, self.setup.ops
        self.layout = s.layout
        self.spec = s.layout.spec
        self._compiled: dict[tuple[int, bool, bool], object] = {}  # (length, measured, tail)
        cur = [k for k, src in enumerate(sim.sources) if src.kind == "current"]
        soft = [k for k, src in enumerate(sim.sources) if src.kind == "soft"]
        self._cur, self._soft = cur, soft
        snapped = [snap_edge(s.cx, ops.pec, src.position, src.direction, f"sources[{k}] at")
                   for k, src in enumerate(sim.sources)]
        self.source_edges = snapped
        lay, st = s.layout, s.stages
        if sim.formulation == "dense":
            K = self._dense_arrays(st)
        else:
            with st("kernel arrays"):
                K = sparse_arrays(ops, lay, s.dt, s.dtype)
        s.kernel_base = None  # the float64 base is no longer needed
        with st("kernel arrays"):
            gpos = K.pop("gpos", None)
            if cur:
                e = np.array([snapped[k][0] for k in cur])
                if sim.formulation == "sparse":
                    K["Qsrc"] = source_columns(ops, lay, s.dt, e, s.dtype)
                else:
                    K["src_g"] = gpos[e].astype(np.int32)
            if soft:
                e = np.array([snapped[k][0] for k in soft])
                K["soft_pos"] = lay.he_pos[e].T.astype(np.int32)
        self._amp = np.array([snapped[k][1] * src.amplitude for k, src in enumerate(sim.sources)])
        self._waves = [src.waveform.sampler() for src in sim.sources]
        with st("monitor arrays"):
            consts = {"K": K,
                      "probes": [probe_arrays(ops, lay, p.positions, s.dtype,
                                              f"probes '{p.name}': point") for p in sim.probes]}
            if sim.snapshots:
                consts["snap"] = self._snapshot_arrays()
        if sim.energy:  # packed, kept in the set-up cache per dtype
            consts["E"] = cache.kept(s.cache_key, cache.energy_key(s.dtype),
                                     lambda: energy_arrays(ops, s.dtype), st, "monitor arrays")
        with st("device transfer"):
            self.consts = jax.block_until_ready(jax.device_put(consts))
        nbytes = sum(x.nbytes for x in jax.tree_util.tree_leaves(self.consts))
        self._capture = jax.default_backend() == "cpu" and nbytes < 64 * 2**20

    def _dense_arrays(self, st: Stages) -> dict:
        """The dense kernels' arrays: from the set-up cache where it holds them for this
        dt, dtype and layout, else built (and kept there when the cache is on)."""
        s = self.setup
        return cache.kept(s.cache_key, cache.kernel_key(s.dt, s.dtype, s.layout.spec.kernels),
                          lambda: kernel_arrays(s.ops, s.layout, s.dt, s.dtype,
                                                base=s.kernel_base), st, "kernel arrays")

    # ---------------------------------------------------------------- state
    def init_state(self) -> DGAState:
        s = self.setup
        return DGAState(u=jnp.zeros((s.ops.nu,), s.dtype), f=self.spec.f_zeros(s.dtype),
                        n=jnp.zeros((), jnp.int32))

    def empty_record(self) -> dict:
        dt, nt = self.setup.dtype, self.setup.cx.num_tets
        return {
            "probe": [[np.zeros((0, len(p.positions), 3), dt)] * 2 for p in self.sim.probes],
            "energy": [np.zeros((0,), dt) for _ in self.sim.energy],
            "snap": [[np.zeros((0, 3, nt), dt)] * 2 for _ in self.sim.snapshots],
        }

    def _snapshot_arrays(self) -> dict:
        """Tet averages: e = sum over 12 half edges, h = sum over 4 half dual edges."""
        cx = self.setup.cx
        a, at = hexahedra(cx)
        We = np.swapaxes(np.linalg.inv(a), 2, 3) / 4  # (nt, 4, 3, 3)
        Wh = np.swapaxes(np.linalg.inv(at), 2, 3) / 4
        LE = local_edge_index()
        idx = np.zeros((cx.num_tets, 4, 3), np.int64)
        Mh = np.zeros((cx.num_tets, 3, 4))
        for i in range(4):
            for m, j in enumerate(OTHERS[i]):
                idx[:, i, m] = self.layout.he_pos[cx.tet_edges[:, LE[i, j]], 0 if i < j else 1]
                Mh[:, :, j] += Wh[:, i, :, m]
        dt = self.setup.dtype
        return {"idx": np.moveaxis(idx.reshape(-1, 12), 0, 1).astype(np.int32),
                "Me": np.moveaxis(We.transpose(0, 2, 1, 3).reshape(-1, 3, 12), 0, 2).astype(dt),
                "Mh": np.moveaxis(Mh, 0, 2).astype(dt)}

    # ---------------------------------------------------------------- chunk
    def _inputs(self, step0: int, length: int, active: int | None = None) -> dict:
        s = self.setup
        t = (loop.input_steps(step0, length, active) + 0.5) * s.dt
        w = np.stack([g(t) * a for g, a in zip(self._waves, self._amp, strict=True)], axis=1) \
            if self._waves else np.zeros((length, 0))
        with np.errstate(over="ignore"):  # inf in float32: the guard names the cause
            return {k: w[:, c].astype(s.dtype) for k, c in (("cur", self._cur),
                                                            ("soft", self._soft))}

    def compiled(self, length: int) -> bool:
        """Whether the driver's (measured) chunk of ``length`` steps is compiled."""
        return (length, True, monitors.tail_in_program()) in self._compiled

    def advance(self, state: dict, step0: int, length: int, measure: bool = False,
                active: int | None = None):
        """(state, outputs, fields finite)[, the guard's peaks with ``measure``] after
        the first ``active`` (default all) steps of a chunk of ``length``."""
        length, sim = loop.program_length(length, active), self.sim
        key = (length, measure, monitors.tail_in_program())  # a scan or a while program
        if key not in self._compiled:
            fn = partial(_chunk, dense=sim.formulation == "dense",
                         energy=tuple(m.interval for m in sim.energy),
                         snapshots=tuple(m.interval for m in sim.snapshots), spec=self.spec,
                         length=length, has_cur=bool(self._cur), has_soft=bool(self._soft),
                         per_step=monitors.step_shapes(self.empty_record()))
            fn = measured(fn, self.fields, self.accumulators) if measure else fn
            # XLA:CPU runs the gathers 3-4x faster with the index arrays as constants
            consts = self.consts if self._capture else None
            self._compiled[key] = jax.jit(
                (lambda st, xs, n0, na, fn=fn: fn(st, consts, xs, n0, na)) if self._capture
                else (lambda st, xs, n0, na, c, fn=fn: fn(st, c, xs, n0, na)),
                donate_argnums=(0,))
        args = (state, self._inputs(step0, length, active), np.int32(step0),
                np.int32(length if active is None else active), self.consts)
        return self._compiled[key](*args[:4 if self._capture else 5])

    # ---------------------------------------------------------------- run
    def run(self, *, progress: bool = True, checkpoint_every: int | None = None,
            checkpoint_path: str | Path | None = None, resume: str | Path | None = None):
        """All steps; returns :class:`emjax.results.Results` (checkpoints as for FDTD:
        :func:`emjax.driver.loop.run`)."""
        return loop.run(self, progress=progress, checkpoint_every=checkpoint_every,
                        checkpoint_path=checkpoint_path, resume=resume)

    @property
    def rate_unit(self) -> tuple[int, str]:
        return self.setup.cx.num_dofs, "MDoF/s"

    def place(self, state):
        return state

    def record_pieces(self, ys, step0: int, length: int):
        """A chunk's host outputs in the record's structure (frames taken only)."""
        return frames_taken(ys, [m.interval for m in self.sim.snapshots], step0, length)

    @property
    def stability_hint(self) -> str:
        s = self.setup
        return f"lower 'safety' (now {s.safety}, dt = {s.dt:.4g} s) or check the mesh and media"

    def instability(self, state, step0: int, length: int) -> InstabilityError:
        """Where the fields went non-finite: u (edges) or f (dual edges), first index."""
        for k, a in enumerate(jax.tree_util.tree_leaves((state.u, state.f))):
            bad = ~np.isfinite(np.asarray(a))
            if bad.any():
                name = "u" if k == 0 else f"f[{k - 1}]"
                where = tuple(np.argwhere(bad)[0].tolist())
                return InstabilityError(f"{name} is not finite at index {where}",
                                        step=step0 + length, field=name, index=where)
        return InstabilityError("the fields are not finite", step=step0 + length)

    # The NaN guard's view of the run (emjax.driver.guard); no monitor rides in the state.
    def fields(self, state) -> tuple:
        return (state.u, state.f)

    def accumulators(self, state) -> dict:
        return {}

    def monitor_labels(self) -> dict[str, list[str]]:
        """``probes[i] 'name'``, ``energy[i] 'name'``, ``snapshots[i] 'name'``."""
        from ..driver.guard import label

        return {key: [label(group, i, m.name) for i, m in enumerate(getattr(self.sim, group))]
                for key, group in (("probe", "probes"), ("energy", "energy"),
                                   ("snap", "snapshots"))}

    def drive(self, step0: int, length: int) -> np.ndarray:
        """The largest |source sample| (A or V) of each step, float64, shape (length,)."""
        t = (np.arange(step0, step0 + length, dtype=np.float64) + 0.5) * self.setup.dt
        cols = [np.abs(g(t) * a) for g, a in zip(self._waves, self._amp, strict=True)]
        return np.max(cols, axis=0) if cols else np.zeros(length)

    def metadata(self, steps: int, wall: float, compile_s: float, rate: float) -> dict:
        s = self.setup
        q = s.mesh.quality()
        return {"solver": "DGATD", "dt": s.dt, "rho": s.rho, "steps": steps,
                "tets": s.cx.num_tets, "edges": s.cx.num_edges, "nodes": s.cx.num_nodes,
                "dofs": s.cx.num_dofs, "dtype": self.sim.dtype,
                "formulation": self.sim.formulation, "kernels": s.layout.spec.kernels,
                "edge_mean": q["edge_mean"],
                "source_edges": [int(e) for e, _ in self.source_edges],
                "wall_time_s": wall, "compile_time_s": compile_s, "dofs_per_s": rate,
                "setup_stages": dict(s.stages), "setup_cache": s.cache, **environment()}

    def collect(self, state, record, steps: int) -> dict:
        del state  # every DGATD monitor is a series on the host
        from ..results import MonitorData

        dt = self.setup.dt
        n = np.arange(steps, dtype=np.float64)
        out = {}
        names = ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz")
        for k, p in enumerate(self.sim.probes):
            e, h = record["probe"][k]
            both = np.concatenate([e, h], axis=2)
            data = {c: both[:, :, names.index(c)] for c in p.components}
            out[p.name] = MonitorData(name=p.name, kind="Probe", data=data, coords={
                "t_E": (n + 1) * dt, "t_H": (n + 0.5) * dt, "points": np.array(p.positions)})
        for k, m in enumerate(self.sim.energy):
            take = np.nonzero((np.arange(steps) + 1) % m.interval == 0)[0]
            out[m.name] = MonitorData(name=m.name, kind="EnergyMonitor",
                                      data={"energy": record["energy"][k][take]},
                                      coords={"t": n[take] * dt})
        for k, m in enumerate(self.sim.snapshots):
            take = np.nonzero((np.arange(steps) + 1) % m.interval == 0)[0]
            e, h = record["snap"][k]
            out[m.name] = MonitorData(name=m.name, kind="FieldSnapshot",
                                      data={"E": e, "H": h}, coords={"t": (take + 1.0) * dt})
        return out


def _chunk(state: DGAState, consts, xs, step0, active, *, dense: bool,
           energy: tuple[int, ...], snapshots: tuple[int, ...], spec, length: int,
           has_cur: bool, has_soft: bool, per_step=None):
    """The first ``active`` of ``length`` leapfrog steps with monitors; pure, jitted by
    the caller. ``dense``:
    the per-tetrahedron kernels (else the sparse reference); ``energy``, ``snapshots``:
    the sampling intervals of the energy and snapshot monitors."""
    K = consts["K"]

    def body(carry: DGAState, frames: list, x):
        u, f = carry.u, carry.f
        f_new = kern.faraday(u, f, K, spec) if dense else kern.faraday_sparse(u, f, K)
        cur = x["cur"] if has_cur else None
        u_new = (kern.ampere(u, f_new, K, spec, cur) if dense
                 else kern.ampere_sparse(u, f_new, K, cur))
        if has_soft:
            u_new = kern.soft(u_new, K, x["soft"])
        ys = {"probe": [list(kern.probe(u_new, f_new, P)) for P in consts["probes"]],
              "energy": []}
        for interval in energy:
            ys["energy"].append(sampled(
                carry.n, interval,
                lambda u=u, f=f, f_new=f_new: kern.energy(u, f, f_new, consts["E"], spec),
                u.dtype))
        if snapshots:
            S = consts["snap"]
            e = jnp.sum(S["Me"] * u_new[S["idx"]][None], axis=1)
            h = jnp.sum(S["Mh"] * kern.f_rows(f_new, spec)[None], axis=1)
            frames = [store_frames(bufs, (e, h), carry.n, step0, interval)
                      for interval, bufs in zip(snapshots, frames, strict=True)]
        return DGAState(u=u_new, f=f_new, n=carry.n + 1), frames, ys

    buffers = frame_buffers(length, snapshots, [[(3, spec.nt)] * 2 for _ in snapshots],
                            state.u.dtype)
    state, ys = scan_with_frames(body, state, xs, length, buffers, active, per_step)
    finite = jnp.isfinite(sum(jnp.sum(jnp.abs(a))
                              for a in jax.tree_util.tree_leaves((state.u, state.f))))
    return state, ys, finite


def estimate(sim) -> dict[str, int]:
    """Device bytes of a run (fields, operators, monitors), from the mesh alone."""
    from .mass import choose_buckets

    mesh = make_mesh(sim)
    cx = build(mesh)
    isz = 4 if sim.dtype == "float32" else 8
    nt = cx.num_tets
    w = choose_buckets(cx.degree)
    nu = int(w.sum())
    mat = int((w.astype(np.int64) ** 2).sum())
    P = int(cx.tets_per_edge.max())
    packed = int((w.astype(np.int64) * (w + 1) // 2).sum())
    out = {"fields": (nu + 4 * nt) * isz,
           "faraday": nt * (10 * isz + 48),  # packed matrices, hs/he
           "ampere": packed * isz + nu * 4 + 6 * nt * 4,  # node matrices, gidx, edge codes
           "energy": (10 * nt + packed) * isz if sim.energy else 0,  # packed matrices
           "scan_buffers": 2 * (nu + 4 * nt) * isz}
    if sim.formulation == "sparse":
        out["sparse_matrices"] = (48 * nt + mat * P) * (isz + 8)
    out["total"] = int(sum(out.values()))
    return out


def run(sim, *, progress: bool = True, chunk: int | None = None, **kwargs):
    """Run a DGATD scenario; returns :class:`emjax.results.Results`."""
    return DGASolver(sim, chunk=chunk).run(progress=progress, **kwargs)
