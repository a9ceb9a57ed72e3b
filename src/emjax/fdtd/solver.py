"""The FDTD driver: chunks of ``lax.scan`` on the device, host work between chunks.

Each chunk is one jitted call: the state (fields, psi, DFT accumulators, snapshot
buffers) goes in donated and comes out updated; probe samples and energies are the
scan's outputs; source samples and DFT phase factors are its inputs, computed on
the host in float64. Between chunks the host advances the progress bar and checks
that the fields are finite.
"""

from __future__ import annotations

import dataclasses
import math
import platform
import signal
import threading
import time
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..errors import InstabilityError, RunInterrupted
from ..grid.yee import COMPONENTS
from . import auxgrid
from .checkpoint import load_checkpoint, save_checkpoint
from .memory import check_fits, check_fits_per_device
from .setup import FDTDSetup, prepare, waveform_samples
from .tfsf import corrections
from .update3d import inject, update_E, update_H, zeros_psi

jax.config.update("jax_enable_x64", True)

_COMP = {c: i for i, c in enumerate(COMPONENTS)}


def _field3d(E, H, name: str):
    i = _COMP[name]
    return E[i] if i < 3 else H[i - 3]


_field = _field3d


class FDTDSolver:
    """A prepared FDTD3D run: initial state, chunk stepper and the full run loop.

    ``FDTDSolver(sim).run()`` is what ``sim.run()`` does; ``init_state`` and
    ``advance`` are there for users (and benchmarks) who drive their own loop.
    """

    # Kernel hooks of :func:`_chunk` (None: the 3D ones); fdtd/solver2d.py sets its own.
    step_fn = None
    field_fn = None
    names = COMPONENTS  # the state's E then H components, for instability reports

    placement = None  # emjax.parallel.Placement of a sharded run (issue #7); None: 1 device

    def __init__(self, sim, *, chunk: int | None = None, check_memory: bool = True,
                 devices=None, shard_axis: str = "x", align: int | None = None):
        """``align``: z alignment of the stored arrays (None: the backend's,
        ``setup.align_z``; tests force padding on a CPU with 4)."""
        self.chunk = chunk or _default_chunk(sim.num_steps)
        # Split along z, the padding could break the even split the user chose; the
        # shards' own z extent decides their alignment there anyway.
        if devices is not None and shard_axis in ("z", 2):
            align = 1
        if check_memory and devices is None:  # before rasterizing: refused at once
            check_fits(sim, self.chunk, align)
        elif check_memory:
            check_fits_per_device(sim, self.chunk, devices, shard_axis)
        self.setup: FDTDSetup = prepare(sim, align=align)
        self.sim = sim
        if devices is not None:  # --- sharding hook (emjax.parallel, issue #7) ---
            from ..parallel import placement

            self.placement = placement(self.setup.grid.shape, devices, shard_axis)
            self.init_state = self.placement.materialize(self.init_state)
        s = self.setup
        src_comps = sorted({e.comp for e in s.sources})
        self._src_cols = {c: [k for k, e in enumerate(s.sources) if e.comp == c] for c in src_comps}
        self._consts = None
        self._compiled: dict[int, object] = {}

    # ----------------------------------------------------------------- arrays
    def constants(self) -> dict:
        """Device arrays that do not change during a run (coefficients, indices)."""
        if self._consts is None:
            s = self.setup
            src = {}
            for c, cols in self._src_cols.items():
                pts = np.array([s.sources[k].index for k in cols], dtype=np.int32)
                src[c] = (tuple(jnp.asarray(pts[:, a]) for a in range(3)),
                          jnp.ones((len(cols),), s.dtype))
            probes = [
                [(jnp.asarray(idx), jnp.asarray(w)) for _, idx, w in comps]
                for _, comps in s.probes
            ]
            pml = s.pml
            if self.placement is not None:
                # static slab starts: a traced start along the split axis would make the
                # partitioner gather the whole field for each per_face correction
                pml = {k: dataclasses.replace(p, start=None) for k, p in pml.items()}
            self._consts = self._put({
                "cE": s.coeffs["E"], "cH": s.coeffs["H"], "pml": pml, "src": src,
                "probes": probes, "energy": s.energy_weights,
                "tfsf": [{"aux": box.aux.device(s.dtype), "terms": list(box.arrays)}
                         for _, box in s.planewaves],
            })
        return self._consts

    def init_state(self) -> dict:
        """Zero fields and psi, empty accumulators; step counter 0."""
        s = self.setup
        dt_c = jnp.complex64 if s.dtype == np.float32 else jnp.complex128
        zeros = lambda: tuple(jnp.zeros(s.grid.shape, s.dtype) for _ in range(3))  # noqa: E731
        psi_E, psi_H = zeros_psi(s.layout, s.dtype)
        dft = []
        for m, regions in s.dfts:
            nf = len(m.frequencies)
            dft.append({comp: jnp.zeros((nf, *_region_shape(sl)), dt_c) for comp, sl in regions})
        aux = [auxgrid.init(box.aux, s.dtype) for _, box in s.planewaves]
        n2f, n2f_inc = [], []
        for m, _, _, regions in s.n2f:
            nf = len(m.frequencies)
            n2f.append([jnp.zeros((nf, *_region_shape(sl)), dt_c) for _, *sl in regions])
            n_aux = s.planewaves[0][1].aux.n if s.planewaves else 0
            n2f_inc.append(jnp.zeros((nf, n_aux), dt_c))
        return {"E": zeros(), "H": zeros(), "psiE": psi_E, "psiH": psi_H, "dft": dft,
                "aux": aux, "n2f": n2f, "n2f_inc": n2f_inc, "n": jnp.zeros((), jnp.int32)}

    # ------------------------------------------------------------------ chunk
    def _chunk_inputs(self, step0: int, length: int) -> dict:
        s = self.setup
        n = np.arange(step0, step0 + length, dtype=np.float64)
        wv = waveform_samples(s.sources, (n + 0.5) * s.dt, s.dtype)
        xs = {"src": {c: wv[:, cols] for c, cols in self._src_cols.items()}, "dft": [],
              "n2f": []}
        cdt = np.complex64 if s.dtype == np.float32 else np.complex128

        def phases(freqs):
            w = 2 * np.pi * np.asarray(freqs)
            return {
                "E": (np.exp(-1j * w[None, :] * ((n + 1) * s.dt)[:, None]) * s.dt).astype(cdt),
                "H": (np.exp(-1j * w[None, :] * ((n + 0.5) * s.dt)[:, None]) * s.dt).astype(cdt),
            }

        for m, _ in s.dfts:
            xs["dft"].append(phases(m.frequencies))
        for m, *_ in s.n2f:
            xs["n2f"].append(phases(m.frequencies))
        # Plane waves: the hard source of each 1D grid, amplitude * g(t) at (n + 1) dt.
        xs["inc"] = [(pw.amplitude * pw.waveform((n + 1) * s.dt)).astype(s.dtype)
                     for pw, _ in s.planewaves]
        return xs

    def _compile(self, length: int):
        if length not in self._compiled:
            fn = partial(_chunk, setup=self.setup, length=length, step=self.step_fn,
                         field=self.field_fn)
            self._compiled[length] = jax.jit(fn, donate_argnums=(0,), **self._shardings())
        return self._compiled[length]

    def advance(self, state: dict, step0: int, length: int):
        """Run ``length`` steps from step ``step0``: (state, outputs, fields finite)."""
        fn = self._compile(length)
        return fn(state, self.constants(), self._chunk_inputs(step0, length),
                  np.int32(step0))

    # -------------------------------------------------------------------- run
    def empty_record(self) -> dict:
        """Host-side monitor data of zero steps: probe and energy series, snapshots."""
        s = self.setup
        return {
            "probe": [[np.zeros((0, w.shape[0]), s.dtype) for _, _, w in comps]
                      for _, comps in s.probes],
            "energy": [np.zeros((0,), s.dtype) for _ in s.energy],
            "snap": [[np.zeros((0, *_region_shape(sl)), s.dtype) for _, sl in regions]
                     for _, regions in s.snapshots],
        }

    def _put(self, tree):
        """``tree`` on the device, or placed on the devices of a sharded run."""
        return jax.device_put(tree) if self.placement is None else self.placement.put(tree)

    def _shardings(self) -> dict:
        """jit keywords of a sharded run: state as placed, monitor outputs replicated."""
        if self.placement is None:
            return {}
        return {"out_shardings": self.placement.chunk_out_shardings(self.init_state)}

    def run(self, *, progress: bool = True, checkpoint_every: int | None = None,
            checkpoint_path: str | Path | None = None, resume: str | Path | None = None):
        """Run all steps and return :class:`emjax.results.Results`.

        checkpoint_every: write the whole state every this many steps to
        ``checkpoint_path`` (default ``<name>.ckpt.h5``), atomically. resume: a
        checkpoint to continue from; the result is bitwise that of an uninterrupted
        run. SIGINT or SIGTERM stop the run at the next chunk end, write a checkpoint
        and raise :class:`emjax.errors.RunInterrupted` holding the partial results.
        """
        from ..results import Results

        s = self.setup
        ckpt = Path(checkpoint_path or f"{self.sim.name}.ckpt.h5")
        if resume is not None:
            step, state, record = load_checkpoint(self, resume)
            state = self._put(state)
        else:
            step, state, record = 0, self.init_state(), self.empty_record()
        pieces = {k: [v] for k, v in _leaves(record).items()}
        lengths = _chunk_plan(step, s.steps, self.chunk, checkpoint_every)
        bar = _progress(s.steps, progress)
        bar.update(step)
        t_start = time.perf_counter()
        compile_s = 0.0
        timed_s, timed_steps = 0.0, 0  # chunks that did not compile, for the cells/s figure
        stop = _StopFlag()
        try:
            with stop:
                for length in lengths:
                    t0 = time.perf_counter()
                    new = length not in self._compiled
                    state, ys, finite = self.advance(state, step, length)
                    finite = bool(finite)
                    if new:  # the first call of a length includes its compilation
                        compile_s += time.perf_counter() - t0
                    else:
                        timed_s += time.perf_counter() - t0
                        timed_steps += length
                    if not finite:
                        _raise_instability(state, step, length, self.names)
                    ys = jax.device_get(ys)
                    for k, ((m, _), bufs) in enumerate(zip(s.snapshots, ys["snap"], strict=True)):
                        count = (step + length) // m.interval - step // m.interval
                        for j, buf in enumerate(bufs):
                            pieces[("snap", k, j)].append(np.asarray(buf[:count]))
                    for key in pieces:
                        if key[0] != "snap":
                            pieces[key].append(np.asarray(ys[key[0]][key[1]][key[2]]
                                                          if key[0] == "probe"
                                                          else ys[key[0]][key[1]]))
                    step += length
                    bar.update(length)
                    if timed_steps:
                        rate = s.grid.num_cells * timed_steps / timed_s
                        bar.set_postfix_str(f"{rate / 1e6:.0f} Mcells/s")
                    done = step == s.steps
                    due = checkpoint_every and step % checkpoint_every == 0 and not done
                    if due or (stop.requested and not done):
                        record = _from_leaves(record, pieces)
                        save_checkpoint(self, ckpt, step, state, record)
                    if stop.requested and not done:
                        partial = Results(scenario=self.sim,
                                          monitors=self._collect(state, record, step),
                                          metadata={**self._metadata(step, 0.0, 0.0, 0.0),
                                                    "interrupted_at_step": step})
                        raise _interrupted(stop, step, s.steps, ckpt, partial)
        finally:
            bar.close()
        wall = time.perf_counter() - t_start
        # With a single chunk every step was timed together with compilation.
        rate = (s.grid.num_cells * timed_steps / timed_s if timed_steps
                else s.grid.num_cells * s.steps / max(wall, 1e-12))
        record = _from_leaves(record, pieces)
        monitors = self._collect(state, record, s.steps)
        return Results(scenario=self.sim, monitors=monitors,
                       metadata=self._metadata(s.steps, wall, compile_s, rate))

    def _metadata(self, steps: int, wall: float, compile_s: float, rate: float) -> dict:
        s = self.setup
        return {
            "solver": "FDTD3D", "dt": s.dt, "steps": steps, "cells": list(s.grid.cells),
            "shape": list(s.grid.nodes), "spacing": list(s.grid.spacing),
            "lower": list(s.grid.lower), "dtype": str(s.dtype), "storage": self.sim.storage,
            "cpml_strategy": self.sim.cpml_strategy, "wall_time_s": wall,
            "compile_time_s": compile_s, "cells_per_s": rate,
            **environment(),
        }

    def _collect(self, state, record, steps: int) -> dict:
        """MonitorData of every monitor after ``steps`` steps."""
        from ..results import MonitorData

        s = self.setup
        out = {}
        n = np.arange(steps, dtype=np.float64)
        t_E, t_H = (n + 1) * s.dt, (n + 0.5) * s.dt
        for k, (m, comps) in enumerate(s.probes):
            data = {c: record["probe"][k][j] for j, (c, _, _) in enumerate(comps)}
            out[m.name] = MonitorData(
                name=m.name, kind="Probe", data=data,
                coords={"t_E": t_E, "t_H": t_H, "points": np.array(m.positions)},
            )
        for k, (m, regions) in enumerate(s.dfts):
            acc = jax.device_get(state["dft"][k])
            data, coords = {}, {"f": np.asarray(m.frequencies, dtype=np.float64)}
            for comp, sl in regions:
                data[comp] = np.asarray(acc[comp])
                coords.update(_region_coords(s.grid, comp, sl))
            out[m.name] = MonitorData(name=m.name, kind="DFTMonitor", data=data, coords=coords)
        for k, (m, lo, hi, _) in enumerate(s.n2f):
            out[m.name] = self._near_to_far(state, k, m, lo, hi)
        for k, (m, regions) in enumerate(s.snapshots):
            data, coords = {}, {}
            take = np.nonzero((np.arange(steps) + 1) % m.interval == 0)[0]
            for j, (comp, sl) in enumerate(regions):
                data[comp] = record["snap"][k][j]
                coords.update(_region_coords(s.grid, comp, sl))
            # E frames are at (n+1) dt, H frames half a step earlier.
            coords["t"] = (take + 1.0) * s.dt
            out[m.name] = MonitorData(name=m.name, kind="FieldSnapshot", data=data, coords=coords)
        for k, m in enumerate(s.energy):
            take = np.nonzero((np.arange(steps) + 1) % m.interval == 0)[0]
            # Energy pairs E^n with H^(n-1/2).H^(n+1/2): the leapfrog's invariant at n dt.
            out[m.name] = MonitorData(name=m.name, kind="EnergyMonitor",
                                      data={"energy": record["energy"][k][take]},
                                      coords={"t": n[take] * s.dt})
        return out


    def _near_to_far(self, state, k: int, m, lo, hi):
        """MonitorData of NearToFar monitor k: surface fields and the incident spectrum."""
        from ..results import MonitorData
        from .neartofar import surface

        s = self.setup
        acc = [np.asarray(a) for a in jax.device_get(state["n2f"][k])]
        pts, nrm, wts, Ef, Hf = surface(lo, hi, s.grid.spacing, s.grid.lower, acc)
        bg = self.sim.background
        data = {"E": Ef, "H": Hf}
        coords = {"f": np.asarray(m.frequencies, dtype=np.float64), "points": pts,
                  "normals": nrm, "weights": wts}
        attrs = {"eps_r": bg.eps_r, "mu_r": bg.mu_r, "box_lo": list(lo), "box_hi": list(hi)}
        if s.planewaves:
            pw, box = s.planewaves[0]
            inc = np.asarray(jax.device_get(state["n2f_inc"][k]), np.complex128)
            # The incident spectrum at the TF/SF box's centre (its phase reference).
            centre = s.grid.lower + 0.5 * (np.array(box.lo) + np.array(box.hi)) * np.array(
                s.grid.spacing)
            idx, w = box.aux.interpolation(np.array([box.s_of(centre)]), "e")
            data["E_inc"] = sum(inc[:, idx[0] + j] * w[0, j] for j in range(w.shape[1]))
            attrs.update(incident_point=centre.tolist(), k_hat=pw.k_hat.tolist(),
                         e_hat=pw.e_hat.tolist())
        return MonitorData(name=m.name, kind="NearToFar", data=data, coords=coords,
                           attrs=attrs)


def _leaves(record: dict) -> dict:
    """Flat view of a record: ("probe", k, j), ("energy", k, 0), ("snap", k, j) -> array."""
    out = {}
    for k, comps in enumerate(record["probe"]):
        for j, a in enumerate(comps):
            out[("probe", k, j)] = a
    for k, a in enumerate(record["energy"]):
        out[("energy", k, 0)] = a
    for k, comps in enumerate(record["snap"]):
        for j, a in enumerate(comps):
            out[("snap", k, j)] = a
    return out


def _from_leaves(template: dict, pieces: dict) -> dict:
    """A record whose arrays are the concatenated pieces (and the pieces collapsed)."""
    out = {"probe": [list(c) for c in template["probe"]], "energy": list(template["energy"]),
           "snap": [list(c) for c in template["snap"]]}
    for key, parts in pieces.items():
        arr = np.concatenate(parts) if len(parts) > 1 else parts[0]
        parts[:] = [arr]
        kind, k, j = key
        if kind == "energy":
            out["energy"][k] = arr
        else:
            out[kind][k][j] = arr
    return out


def _chunk_plan(start: int, steps: int, chunk: int, every: int | None) -> list[int]:
    """Chunk lengths from ``start`` to ``steps`` that end on every checkpoint step."""
    ends = sorted({*(range(every, steps, every) if every else ()), steps})
    out, at = [], start
    for end in ends:
        if end <= at:
            continue
        out += _chunk_lengths(end - at, chunk)
        at = end
    return out


def _interrupted(stop, step: int, total: int, ckpt, partial) -> RunInterrupted:
    """The error a run raises when SIGINT/SIGTERM stopped it at a checkpoint, carrying
    the partial results (every time-domain solver)."""
    return RunInterrupted(
        f"run stopped by {stop.requested} at step {step} of {total}; checkpoint written to "
        f"'{ckpt}'. Resume with `emjax run --resume {ckpt}` or run(resume='{ckpt}')",
        results=partial, checkpoint=ckpt, step=step)


class _StopFlag:
    """Turns SIGINT and SIGTERM into a request to stop at the next chunk end."""

    def __init__(self):
        self.requested: str | None = None
        self._old: dict = {}

    def _handler(self, signum, frame):
        del frame
        self.requested = signal.Signals(signum).name

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc):
        for sig, old in self._old.items():
            signal.signal(sig, old)
        return False


def _step3d(carry, consts, x, setup: FDTDSetup):
    """One 3D leapfrog step with TF/SF and sources: (E, H, psi_E, psi_H, aux)."""
    lay = setup.layout
    E, H = carry["E"], carry["H"]
    aux = carry["aux"]
    xH = _tfsf_terms(setup, consts, aux, "H")
    H_new, psi_H = update_H(E, H, consts["cH"], consts["pml"], carry["psiH"], lay, xH)
    aux = [auxgrid.step_h(c["aux"], a) for c, a in zip(consts["tfsf"], aux, strict=True)]
    xE = _tfsf_terms(setup, consts, aux, "E")
    E_new, psi_E = update_E(E, H_new, consts["cE"], consts["pml"], carry["psiE"], lay, xE)
    aux = [auxgrid.step_e(c["aux"], a, v)
           for c, a, v in zip(consts["tfsf"], aux, x["inc"], strict=True)]
    if consts["src"]:
        E_new = inject(E_new, consts["src"], x["src"])
    return E_new, H_new, psi_E, psi_H, aux


def _chunk(state, consts, xs, step0, *, setup: FDTDSetup, length: int, step=None, field=None):
    """``length`` steps of the leapfrog with monitors; pure, jitted by the caller.

    ``step(carry, consts, x) -> (E, H, psi_E, psi_H, aux)`` advances the fields and
    ``field(E, H, name)`` returns a component as a 3D array; None selects the 3D
    kernels (the 2D solver passes its own).
    """
    step = step or partial(_step3d, setup=setup)
    _field = field or _field3d

    def body(carry, x):
        E, H = carry["E"], carry["H"]
        E_new, H_new, psi_E, psi_H, aux = step(carry, consts, x)
        ys = {"probe": [], "energy": []}
        for (_, comps), cst in zip(setup.probes, consts["probes"], strict=True):
            vals = []
            for (comp, _, w), (idx, wd) in zip(comps, cst, strict=True):
                F = _field(E_new, H_new, comp)
                g = F[idx[:, 0], idx[:, 1], idx[:, 2]].reshape(w.shape)
                vals.append(jnp.sum(g * wd, axis=1))
            ys["probe"].append(vals)
        dft = []
        for (_, regions), acc, ph in zip(setup.dfts, carry["dft"], x["dft"], strict=True):
            new = {}
            for comp, sl in regions:
                p = ph["E"] if _COMP[comp] < 3 else ph["H"]
                F = _field(E_new, H_new, comp)[sl]
                new[comp] = acc[comp] + p[:, None, None, None] * F[None]
            dft.append(new)
        n2f, n2f_inc = [], []
        for (_, _, _, regions), acc, inc, ph in zip(setup.n2f, carry["n2f"], carry["n2f_inc"],
                                                     x["n2f"], strict=True):
            new = []
            for (c, *sl), a in zip(regions, acc, strict=True):
                F = _field(E_new, H_new, COMPONENTS[c])[tuple(sl)]
                p = ph["E"] if c < 3 else ph["H"]
                new.append(a + p[:, None, None, None] * F[None])
            n2f.append(new)
            # The incident wave's spectrum along its 1D grid (for RCS normalisation).
            n2f_inc.append(inc + ph["E"][:, None] * aux[0]["e"][None, :] if aux else inc)
        snap = []
        for (m, regions), bufs in zip(setup.snapshots, carry["snap"], strict=True):
            n1 = carry["n"] + 1
            take = n1 % m.interval == 0
            slot = jnp.clip(n1 // m.interval - step0 // m.interval - 1, 0, bufs[0].shape[0] - 1)
            new = []
            for (comp, sl), buf in zip(regions, bufs, strict=True):
                F = _field(E_new, H_new, comp)[sl]
                old = lax.dynamic_index_in_dim(buf, slot, keepdims=False)
                new.append(lax.dynamic_update_index_in_dim(buf, jnp.where(take, F, old), slot, 0))
            snap.append(new)
        w = consts["energy"]
        for m in setup.energy:
            ys["energy"].append(lax.cond(
                (carry["n"] + 1) % m.interval == 0,
                lambda: _energy(E, H, H_new, w),
                lambda: jnp.zeros((), setup.dtype),
            ))
        carry = {"E": E_new, "H": H_new, "psiE": psi_E, "psiH": psi_H, "dft": dft,
                 "aux": aux, "n2f": n2f, "n2f_inc": n2f_inc, "n": carry["n"] + 1, "snap": snap}
        return carry, ys

    state = dict(state, snap=[
        [jnp.zeros((length // m.interval + 1, *_region_shape(sl)), setup.dtype)
         for _, sl in regions]
        for m, regions in setup.snapshots
    ])
    state, ys = lax.scan(body, state, xs, length=length)
    ys["snap"] = state.pop("snap")
    finite = jnp.all(jnp.array([jnp.isfinite(jnp.sum(jnp.abs(F))) for F in state["E"]]))
    return state, ys, finite


def _tfsf_terms(setup: FDTDSetup, consts, aux, field: str):
    """Per component, the TF/SF curl corrections of every plane wave (None if none)."""
    if not setup.planewaves:
        return None
    out = ([], [], [])
    for (_, box), c, a in zip(setup.planewaves, consts["tfsf"], aux, strict=True):
        for comp, terms in enumerate(corrections(box.terms, c["terms"], a, field)):
            out[comp].extend(terms)
    return out


def _energy(E, H_old, H_new, w):
    """(sum eps E.E + sum mu H_old.H_new) dV / 2, weights pre-halved and scaled by dV."""
    total = sum(jnp.sum(wi * F * F) for wi, F in zip(w["E"], E, strict=True))
    total = total + sum(
        jnp.sum(wi * a * b) for wi, a, b in zip(w["H"], H_old, H_new, strict=True)
    )
    return total


def _raise_instability(state, step0: int, length: int, names=COMPONENTS):
    for name, F in zip(names, (*state["E"], *state["H"]), strict=True):
        a = np.asarray(F)
        bad = ~np.isfinite(a)
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            big = tuple(int(i) for i in np.unravel_index(
                np.argmax(np.where(bad, 0, np.abs(a))), a.shape))
            raise InstabilityError(
                f"the run went unstable between steps {step0} and {step0 + length}: "
                f"{name} is not finite at grid index {where} (largest finite |{name}| at "
                f"{big}); lower the Courant factor or check media and sources",
                step=step0 + length, field=name, index=where,
            )
    raise InstabilityError(
        f"the run went unstable between steps {step0} and {step0 + length}",
        step=step0 + length, field="?", index=(),
    )


def _region_shape(sl) -> tuple[int, ...]:
    return tuple(s.stop - s.start for s in sl)


def _region_coords(grid, comp: str, sl) -> dict[str, np.ndarray]:
    return {f"{ax}_{comp}": grid.axis_coords(comp, a)[sl[a]] for a, ax in enumerate("xyz")}


def _default_chunk(steps: int) -> int:
    return int(min(max(math.ceil(steps / 20), 16), 1000))


def _chunk_lengths(steps: int, chunk: int) -> list[int]:
    """Split ``steps`` into chunks of one length where a divisor near ``chunk`` exists."""
    chunk = max(1, min(chunk, steps))
    for c in range(chunk, max(chunk // 2, 1) - 1, -1):
        if steps % c == 0:
            return [c] * (steps // c)
    full, rest = divmod(steps, chunk)
    return [chunk] * full + ([rest] if rest else [])


def _progress(total: int, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="step", disable=not enabled, leave=False, dynamic_ncols=True)


def environment() -> dict:
    """Device and versions, for results and benchmark records."""
    from .. import __version__

    dev = jax.devices()[0]
    return {
        "device": f"{dev.platform}:{getattr(dev, 'device_kind', '')}",
        "backend": jax.default_backend(),
        "num_devices": jax.device_count(),
        "versions": {"emjax": __version__, "jax": jax.__version__, "numpy": np.__version__,
                     "python": platform.python_version()},
    }


def run(sim, *, progress: bool = True, chunk: int | None = None, devices=None,
        shard_axis: str = "x", **kwargs):
    """Run an FDTD3D scenario; returns :class:`emjax.results.Results`.

    ``devices``: None (one device), a count, or device ids/devices to shard the grid
    over along ``shard_axis`` (see :mod:`emjax.parallel`). ``kwargs`` go to
    :meth:`FDTDSolver.run` (checkpoint_every, checkpoint_path, resume).
    """
    return FDTDSolver(sim, chunk=chunk, devices=devices, shard_axis=shard_axis).run(
        progress=progress, **kwargs)
