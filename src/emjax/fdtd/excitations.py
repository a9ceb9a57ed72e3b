"""Batched port excitations: every column of an N-port S-matrix from one compiled run.

With ``port_excitation = "each"`` (FDTD3D) a run is B excitations, the k-th driving only
the k-th excited port (a lumped port's edges, a waveguide port's sheets) while the other
ports stay passive, loading the structure with Z0 or their mode, and measure. The B
runs share the grid, the coefficient tables and the compiled chunk: the chunk of
:mod:`emjax.fdtd.solver` is ``jax.vmap``-ed over a leading excitation axis of the state
and of the source samples (the step count and everything else stay unbatched), so the
N columns of S cost one compilation and each step streams G excitations' fields through
the same kernels. When G copies of the state do not fit the device, the excitations run
in groups of G through the same compiled chunk, the last group padded with silent
excitations; each group is one pass of the shared driver (:func:`emjax.driver.loop.run`).

Results: every monitor's arrays gain a leading excitation axis, in the order of
``attrs["excitations"]`` (the excited ports' names); a lumped port's record holds, per
excitation, its own V, I and source voltage (zero where it is passive).
"""

from __future__ import annotations

import dataclasses
import math
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ..driver import loop
from ..driver.guard import measured
from ..driver.memory import available_bytes, refuse_if_too_large
from ..driver.monitors import step_shapes, tail_in_program
from ..errors import SetupError
from .collect import collect
from .memory import estimate
from .solver import FDTDSolver, _chunk
from .state import FDTDState

_UNBATCHED = ("n",)


def excited_sources(sim) -> list[int]:
    """Indices (into ``sim.sources``) of the excited ports: one excitation each."""
    return [i for i, s in enumerate(sim.sources) if getattr(s, "excite", False)]


def group_size(sim, chunk: int | None, count: int, align: int | None = None) -> int:
    """Excitations advanced together: ``sim.port_batch``, else as many as fit the free
    device memory (each a copy of the fields, psi and monitors; the coefficient tables
    once). Refuses (ResourceError) when not even one fits."""
    need = estimate(sim, chunk, align)
    shared = need.get("coefficients", 0)
    per = need["total"] - shared
    if sim.port_batch is not None:
        g = min(sim.port_batch, count)
    else:
        free, _ = available_bytes()
        g = max(1, min(count, int((free - shared) // max(per, 1))))
    refuse_if_too_large(sim.name, {**need, "excitations": per * (g - 1),
                                   "total": need["total"] + per * (g - 1)})
    return g


def state_axes() -> FDTDState:
    """vmap axes of the state: every field on axis 0 but the step count."""
    names = [f.name for f in dataclasses.fields(FDTDState)]
    return FDTDState(**{n: (None if n in _UNBATCHED else 0) for n in names})


class BatchedFDTDSolver(FDTDSolver):
    """An FDTD3D run of one excitation per excited port (``port_excitation = "each"``):
    the FDTDSolver's chunk vmapped over excitations, groups of :func:`group_size`."""

    def __init__(self, sim, *, chunk: int | None = None, check_memory: bool = True,
                 align: int | None = None):
        self.excited = excited_sources(sim)
        count = len(self.excited)
        chunk = chunk or loop.default_chunk(sim.num_steps)
        self.group = (group_size(sim, chunk, count, align) if check_memory
                      else min(sim.port_batch or count, count))
        super().__init__(sim, chunk=chunk, check_memory=False, align=align)
        self.groups = [self.excited[k:k + self.group] for k in range(0, count, self.group)]
        self.current = 0
        self._masks = [_masks(members, self.group, self.setup.sources)
                       for members in self.groups]
        self._sheet_masks = [_masks(members, self.group, self.setup.sheets)
                             for members in self.groups]

    # ----------------------------------------------------------------- chunk
    def init_state(self) -> FDTDState:
        """Zero fields for each excitation of a group; one step counter."""
        one = super().init_state()
        return FDTDState(**{
            f.name: (getattr(one, f.name) if f.name in _UNBATCHED else jax.tree.map(
                lambda a: jnp.zeros((self.group, *a.shape), a.dtype), getattr(one, f.name)))
            for f in dataclasses.fields(FDTDState)})

    def _chunk_inputs(self, step0: int, length: int, active: int | None = None) -> dict:
        xs = super()._chunk_inputs(step0, length, active)
        mask = self._masks[self.current]
        xs["src"] = {c: (mask[:, None, cols] * wv[None]).astype(wv.dtype)
                     for (c, cols), wv in zip(self._src_cols.items(), xs["src"].values(),
                                              strict=True)}
        sheet = xs["sheet"]  # the waveguide ports' sheets, switched the same way
        xs["sheet"] = (self._sheet_masks[self.current][:, None, :] * sheet[None]).astype(
            sheet.dtype)
        return xs

    def _compile(self, length: int, measure: bool = False):
        key = (length, measure, tail_in_program())  # as FDTDSolver._compile keys them
        if key not in self._compiled:
            fn = partial(_chunk, setup=self.setup, length=length, step=self.step_fn,
                         field=self.field_fn, per_step=step_shapes(super().empty_record()))
            axes = state_axes()
            xs_axes = {"src": 0, "dft": None, "n2f": None, "inc": None, "sheet": 0}
            # the record's leaves stay time-major (excitation second), as the driver joins
            # chunks along their first axis
            batched = jax.vmap(fn, in_axes=(axes, None, xs_axes, None, None),
                               out_axes=(axes, 1, 0))
            if measure:  # the peaks over every excitation at once
                batched = measured(batched, self.fields, self.accumulators)
            self._compiled[key] = jax.jit(batched, donate_argnums=(0,))
        return self._compiled[key]

    def empty_record(self) -> dict:
        return jax.tree.map(lambda a: np.zeros((0, self.group, *a.shape[1:]), a.dtype),
                            super().empty_record())

    # ------------------------------------------------------------------- run
    def run(self, *, progress: bool = True, checkpoint_every: int | None = None,
            checkpoint_path: str | Path | None = None, resume: str | Path | None = None):
        """Every group through the shared driver; Results with an excitation axis."""
        if len(self.groups) > 1 and (checkpoint_every or resume):
            raise SetupError(
                f"scenario '{self.sim.name}': checkpoints of a batched port run need all "
                f"{len(self.excited)} excitations in one group, but the device holds "
                f"{self.group} at a time; set port_batch = {len(self.excited)} on a larger "
                "device, or run without checkpoints")
        parts = []
        for g in range(len(self.groups)):
            self.current = g
            parts.append(loop.run(self, progress=progress, checkpoint_every=checkpoint_every,
                                  checkpoint_path=checkpoint_path, resume=resume))
        return _joined(parts, self)

    def collect(self, state, record, steps: int) -> dict:
        """Monitor data of each excitation of the current group, stacked (MonitorData
        arrays with a leading excitation axis)."""
        members = self.groups[self.current]
        per = []
        for b, i in enumerate(members):
            one = FDTDState(**{
                f.name: (getattr(state, f.name) if f.name in _UNBATCHED else jax.tree.map(
                    lambda a, b=b: a[b], getattr(state, f.name)))
                for f in dataclasses.fields(FDTDState)})
            rec = jax.tree.map(lambda a, b=b: a[:, b], record)
            ports = tuple(p if p.source == i else dataclasses.replace(p, voltage=None)
                          for p in self.setup.ports)
            guides = tuple(g if g.source == i else dataclasses.replace(
                g, voltage=None, attrs={**g.attrs, "excite": False})
                for g in self.setup.waveguides)
            per.append(collect(dataclasses.replace(self.setup, ports=ports, waveguides=guides),
                               self.sim, one, rec, steps))
        names = [self.sim.sources[i].name for i in members]
        return {name: stacked([p[name] for p in per], names) for name in per[0]}

    def metadata(self, steps: int, wall: float, compile_s: float, rate: float) -> dict:
        """The run's metadata with the excitations and the group size; the rate counts
        every excitation's cells."""
        meta = super().metadata(steps, wall, compile_s, rate * self.group)
        return {**meta, "excitations": [self.sim.sources[i].name for i in self.excited],
                "excitation_group": self.group}


def _masks(members: list[int], group: int, lowered) -> np.ndarray:
    """(group, len(lowered)) ones where a lowered source (an edge or a sheet) comes from
    the scenario source each excitation drives; the padding rows of a last group stay
    silent."""
    mask = np.zeros((group, len(lowered)), np.float64)
    for b, i in enumerate(members):
        mask[b] = [float(e.source == i) for e in lowered]
    return mask


def stacked(parts: list, names: list[str], join=np.stack):
    """One MonitorData from the same monitor of several excitations (``join=np.stack``:
    data on a new leading axis) or of several groups of them (``np.concatenate``);
    coords of the first, ``attrs["excitations"]`` their port names (a lumped port's
    ``excite``: whether any excitation drove it)."""
    from ..results import MonitorData

    first = parts[0]
    attrs = dict(first.attrs, excitations=list(names))
    if "excite" in attrs:
        attrs["excite"] = any(p.attrs["excite"] for p in parts)
    return MonitorData(name=first.name, kind=first.kind,
                       data={k: join([p.data[k] for p in parts]) for k in first.data},
                       coords=first.coords, attrs=attrs)


def _joined(parts: list, solver: BatchedFDTDSolver):
    """The groups' Results as one: monitors joined along the excitation axis, wall and
    compile times summed."""
    from ..results import Results

    if len(parts) == 1:
        return parts[0]
    names = [solver.sim.sources[i].name for i in solver.excited]
    monitors = {name: stacked([p.monitors[name] for p in parts], names, np.concatenate)
                for name in parts[0].monitors}
    meta = dict(parts[0].metadata)
    for key in ("wall_time_s", "compile_time_s", "setup_time_s", "stepping_time_s"):
        if all(key in p.metadata for p in parts):
            meta[key] = math.fsum(p.metadata[key] for p in parts)
    return Results(scenario=solver.sim, monitors=monitors, metadata=meta)
