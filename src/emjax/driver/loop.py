"""The time loop of every time-domain solver: chunks on the device, host work between.

A solver hands :func:`run` an object that follows :class:`Stepper`: its initial state,
one jitted call per chunk of ``lax.scan`` steps (state donated, probe samples and
energies as the scan's outputs), and the functions that turn what came back into
results. The driver owns the rest, once for all solvers: the chunk plan (chunks end
on every checkpoint step), the progress bar and its rate, the compile-time split, the
NaN guard of the fields and of every monitor (:mod:`emjax.driver.guard`: one small
reduction per chunk; the error names the monitor, the steps and the likely cause),
SIGINT/SIGTERM (stop at the next chunk end, write a checkpoint, raise
:class:`~emjax.errors.RunInterrupted` with the partial results), periodic atomic
checkpoints and bitwise-exact resume. A solver that notes ``born``
(:func:`emjax.driver.compile_cache.mark`) when its construction starts gets the stage
times in its metadata: ``setup_time_s``, ``compile_time_s``, ``stepping_time_s``, and
whether its compilations hit JAX's persistent cache (``compile_cache``).

The record is the host side of the monitors: a pytree (nested lists and dicts) of
NumPy arrays whose leaves grow along their first axis, one piece per chunk.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Protocol

import jax
import numpy as np

from ..errors import InstabilityError, RunInterrupted, SetupError
from .checkpoint import load_checkpoint, save_checkpoint
from .compile_cache import stage_report
from .guard import Guard
from .monitors import first_steps, tail_in_program, tail_policy


class Stepper(Protocol):
    """What a time-domain solver gives the driver.

    ``sim``: the scenario (its ``name``, ``to_json``); ``setup.steps``: the run's
    steps; ``chunk``: the chunk length asked for; ``rate_unit``: (work per step,
    label) for the progress bar, e.g. (cells, "Mcells/s"); ``stability_hint``: what
    to change when the fields grow without bound. The NaN guard
    (:mod:`emjax.driver.guard`) reads ``fields``, ``accumulators`` (carried monitor
    data in the record's layout, ``{"dft": [per monitor], ...}``), ``monitor_labels``
    (``{record key: [label per monitor]}``) and ``drive`` (the largest |source sample|
    of each step, float64, in field units where the solver has them).
    """

    sim: Any
    setup: Any
    chunk: int
    rate_unit: tuple[int, str]
    stability_hint: str

    def init_state(self) -> Any: ...
    def empty_record(self) -> Any: ...
    def compiled(self, length: int) -> bool: ...  # the measured chunk of that length
    def advance(self, state: Any, step0: int, length: int, measure: bool = False,
                active: int | None = None) -> tuple[Any, ...]: ...
    def record_pieces(self, ys: Any, step0: int, length: int) -> Any: ...
    def instability(self, state: Any, step0: int, length: int) -> InstabilityError: ...
    def collect(self, state: Any, record: Any, steps: int) -> dict: ...
    def metadata(self, steps: int, wall: float, compile_s: float, rate: float) -> dict: ...
    def place(self, state: Any) -> Any: ...
    def fields(self, state: Any) -> Any: ...
    def accumulators(self, state: Any) -> dict: ...
    def monitor_labels(self) -> dict[str, list[str]]: ...
    def drive(self, step0: int, length: int) -> np.ndarray: ...


def run(solver: Stepper, *, progress: bool = True, checkpoint_every: int | None = None,
        checkpoint_path: str | Path | None = None, resume: str | Path | None = None):
    """Run all of ``solver``'s steps; returns :class:`emjax.results.Results`.

    checkpoint_every: write the whole state every this many steps to
    ``checkpoint_path`` (default ``<name>.ckpt.h5``), atomically. resume: a checkpoint
    to continue from; the result is bitwise that of an uninterrupted run.
    """
    check_every(checkpoint_every)
    total = solver.setup.steps
    ckpt = Path(checkpoint_path or f"{solver.sim.name}.ckpt.h5")
    if resume is not None:
        step, state, record = load_checkpoint(solver, resume)
        state = solver.place(state)
        guard = Guard(solver, step, resume)
        guard.check_resumed(state, record)
    else:
        step, state, record = 0, solver.init_state(), solver.empty_record()
        guard = Guard(solver)
    pieces = _Pieces(record)
    work, unit = solver.rate_unit
    clock = _Clock()
    bar = progress_bar(total, progress)
    bar.update(step)
    stop = StopFlag()
    plan = chunk_plan(step, total, solver.chunk, checkpoint_every)
    # decided on the whole run's plan, so that a resumed run steps as the first did
    whole = one_program(chunk_plan(0, total, solver.chunk, checkpoint_every), total)
    try:
        with stop, tail_policy(True) if whole else nullcontext():
            for length, active in plan:
                t0 = time.perf_counter()
                new = not solver.compiled(program_length(length, active))
                state, ys, _, measured = solver.advance(state, step, length, measure=True,
                                                        active=active)
                measured = jax.device_get(measured)
                clock.add(time.perf_counter() - t0, active, compiling=new)
                ys = first_steps(jax.device_get(ys), active)
                guard.check(state, ys, step, active, measured)
                pieces.add(solver.record_pieces(ys, step, active))
                step += active
                bar.update(active)
                if clock.steps:
                    bar.set_postfix_str(f"{work * clock.rate() / 1e6:.0f} {unit}")
                done = step == total
                due = checkpoint_every and step % checkpoint_every == 0 and not done
                if due or (stop.requested and not done):
                    save_checkpoint(solver, ckpt, step, state, pieces.record())
                if stop.requested and not done:
                    raise _interrupted(solver, stop.requested, state, pieces.record(), step,
                                       ckpt)
    finally:
        bar.close()
    wall = clock.wall()
    # With a single chunk every step was timed together with its compilation.
    rate = work * (clock.rate() if clock.steps else total / max(wall, 1e-12))
    solver.state = state
    # set-up (from the solver's construction), stepping and the compilation cache's verdict
    stages = stage_report(getattr(solver, "born", None), clock.start, wall, clock.compile_s)
    return _results(solver, solver.collect(state, pieces.record(), total),
                    {**solver.metadata(total, wall, clock.compile_s, rate), **stages})


def check_every(checkpoint_every) -> None:
    """Refuse a checkpoint interval that is not a positive whole number (None: none)."""
    if checkpoint_every is None:
        return
    if isinstance(checkpoint_every, bool) or not isinstance(checkpoint_every, int | np.integer) \
            or checkpoint_every < 1:
        raise SetupError(f"checkpoint_every = {checkpoint_every!r}: give a positive number of "
                         "steps (iterations for FDFD), or None for no checkpoints")


def _results(solver: Stepper, monitors: dict, metadata: dict):
    from ..results import Results

    return Results(scenario=solver.sim, monitors=monitors, metadata=metadata)


def _interrupted(solver: Stepper, signame: str, state, record, step: int,
                 ckpt: Path) -> RunInterrupted:
    """The error a run raises when SIGINT/SIGTERM stopped it, with the partial results."""
    partial = _results(solver, solver.collect(state, record, step),
                       {**solver.metadata(step, 0.0, 0.0, 0.0), "interrupted_at_step": step})
    return RunInterrupted(
        f"run stopped by {signame} at step {step} of {solver.setup.steps}; checkpoint "
        f"written to '{ckpt}'. Resume with `emjax run --resume {ckpt}` or "
        f"run(resume='{ckpt}')", results=partial, checkpoint=ckpt, step=step)


class _Clock:
    """Wall time since start, split into chunks that compiled and chunks that did not."""

    def __init__(self):
        self.start = time.perf_counter()
        self.compiling_s = 0.0  # chunks that compiled: their compilation and their steps
        self.compiled_steps = 0
        self.timed_s = 0.0
        self.steps = 0  # steps of chunks that did not compile

    def add(self, seconds: float, length: int, *, compiling: bool) -> None:
        if compiling:  # the first call of a chunk length includes its compilation
            self.compiling_s += seconds
            self.compiled_steps += length
        else:
            self.timed_s += seconds
            self.steps += length

    def rate(self) -> float:
        """Steps per second of the chunks that did not compile."""
        return self.steps / self.timed_s

    @property
    def compile_s(self) -> float:
        """The compiling chunks' time less their steps at the others' rate (a chunk of
        1000 steps of mri-coil on an H100 spends 1 s stepping after it compiled); all
        of it when no chunk ran without compiling."""
        stepping = self.compiled_steps / self.rate() if self.steps else 0.0
        return max(self.compiling_s - stepping, 0.0)

    def wall(self) -> float:
        return time.perf_counter() - self.start


class _Pieces:
    """The record as a list of per-chunk pieces for each leaf, joined on demand."""

    def __init__(self, record):
        leaves, self.treedef = jax.tree_util.tree_flatten(record)
        self.parts = [[np.asarray(a)] for a in leaves]

    def add(self, piece) -> None:
        leaves = self.treedef.flatten_up_to(piece)
        for parts, a in zip(self.parts, leaves, strict=True):
            parts.append(np.asarray(a))

    def record(self):
        """The record so far; joined leaves replace their pieces."""
        for parts in self.parts:
            if len(parts) > 1:
                parts[:] = [np.concatenate(parts)]
        return jax.tree_util.tree_unflatten(self.treedef, [p[0] for p in self.parts])


def default_chunk(steps: int) -> int:
    """Steps per chunk when the user gives none: about 20 chunks, 16 to 1000 steps."""
    return int(min(max(math.ceil(steps / 20), 16), 1000))


WHILE_STEP_S = 17e-6
"""Seconds a step of a while-loop chunk costs beyond a scan's on a GPU (its trip test:
14-17 us on an H100, ``benchmarks/chunk_tail.py``)."""
TAIL_COMPILE_S = 1.0
"""Seconds below which a second chunk program's compilation is taken to cost (1.5 s for
the built-in ``cylinder-cavity``, 4.6 s for a 2.46M-DoF gmsh mesh on an H200)."""


def one_program(plan: list[tuple[int, int]], steps: int) -> bool:
    """Whether a run of ``plan`` (:func:`chunk_plan`) on a backend that runs a program's
    steps only in full should run every chunk as a while loop of its active steps
    (:func:`~emjax.driver.monitors.tail_policy`): when it has a short chunk, which would
    compile a program of its own, and the ``steps`` trip tests (:data:`WHILE_STEP_S`
    each) cost less than that compilation (:data:`TAIL_COMPILE_S`)."""
    short = any(active < length for length, active in plan)
    return (not tail_in_program() and short and steps * WHILE_STEP_S <= TAIL_COMPILE_S)


def program_length(length: int, active: int | None) -> int:
    """The length of the program that runs the first ``active`` steps of a chunk of
    ``length``: ``length`` where :func:`~emjax.driver.monitors.tail_in_program`, else
    ``active`` (a program of its own)."""
    return length if active is None or tail_in_program() else active


def input_steps(step0: int, length: int, active: int | None = None) -> np.ndarray:
    """The steps whose inputs (source samples, DFT phases) a chunk of ``length`` from
    ``step0`` takes, as float64: those beyond its first ``active`` repeat the last
    active one (never used; a waveform evaluated past the run's end may overflow)."""
    n = np.arange(step0, step0 + length)
    if active is not None:
        n = np.minimum(n, step0 + max(active, 1) - 1)
    return n.astype(np.float64)


def chunk_plan(start: int, steps: int, chunk: int, every: int | None
               ) -> list[tuple[int, int]]:
    """The chunks from ``start`` to ``steps`` as (length, active) pairs: each runs the
    first ``active`` steps of a program of ``length``
    (:func:`emjax.driver.monitors.scan_with_frames`); chunks end on every checkpoint
    step. The length is a divisor of ``steps`` between ``chunk / 2`` and ``chunk`` where
    there is one (equal chunks), else ``chunk``: every chunk has that length, the last
    ones running fewer steps, so that a run compiles one program (where the backend
    runs a program's steps only in full, :func:`program_length` gives those chunks one
    of their own)."""
    length = max(1, min(chunk, steps))
    length = next((c for c in range(length, max(length // 2, 1) - 1, -1) if steps % c == 0),
                  length)
    ends = sorted({*(range(every, steps, every) if every else ()), steps})
    out, at = [], start
    for end in ends:
        if end <= at:
            continue
        full, rest = divmod(end - at, length)
        out += [(length, length)] * full + ([(length, rest)] if rest else [])
        at = end
    return out


class StopFlag:
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


def progress_bar(total: int, enabled: bool, unit: str = "step"):
    """A tqdm bar (silent when ``enabled`` is False); every long run shows one."""
    from tqdm.auto import tqdm

    return tqdm(total=total, unit=unit, disable=not enabled, leave=False, dynamic_ncols=True)
