"""Monitor pieces every time-domain chunk shares: snapshot frames and sampled energies.

A chunk of ``length`` steps from ``step0`` keeps the snapshot frames it takes in
buffers of ``length // interval + 1`` frames that ride in the scan carry; step ``n``
(0-based, the one that reaches ``(n + 1) dt``) writes frame ``(n + 1) // interval -
step0 // interval - 1`` when ``(n + 1) % interval == 0``. On the host the buffers are
cut to the frames actually taken (:func:`frames_taken`). Energies are sampled every
``interval`` steps, zero in between (the collectors keep the sampled steps).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence

import jax
import jax.numpy as jnp
from jax import lax

FRAMES = "snap"
"""The key of the frame buffers in a chunk's carry and in its outputs."""


def frame_buffers(length: int, intervals: Sequence[int], shapes: Sequence[Sequence[tuple]],
                  dtype) -> list[list]:
    """Zero frame buffers of a chunk: per snapshot monitor, per component."""
    return [[jnp.zeros((length // m + 1, *shape), dtype) for shape in comp_shapes]
            for m, comp_shapes in zip(intervals, shapes, strict=True)]


def store_frames(bufs: list, frames: Sequence, n, step0, interval: int) -> list:
    """``bufs`` with ``frames`` written at step ``n``'s slot when ``n`` takes a frame."""
    n1 = n + 1
    take = n1 % interval == 0
    slot = jnp.clip(n1 // interval - step0 // interval - 1, 0, bufs[0].shape[0] - 1)
    out = []
    for F, buf in zip(frames, bufs, strict=True):
        old = lax.dynamic_index_in_dim(buf, slot, keepdims=False)
        out.append(lax.dynamic_update_index_in_dim(buf, jnp.where(take, F, old), slot, 0))
    return out


def sampled(n, interval: int, value: Callable[[], jnp.ndarray], dtype) -> jnp.ndarray:
    """``value()`` at the steps ``n`` with ``(n + 1) % interval == 0``, else zero (the
    costly reduction runs only when sampled)."""
    return lax.cond((n + 1) % interval == 0, value, lambda: jnp.zeros((), dtype))


def scan_with_frames(body: Callable, state, xs, length: int, buffers: list, active=None,
                     per_step=None, unroll: int = 1):
    """``lax.scan`` of ``body(state, frames, x) -> (state, frames, ys)`` with the frame
    buffers carried beside the state; returns (state, ys) with the buffers in
    ``ys[FRAMES]``.

    ``active`` (a traced int32 <= ``length``, or None for all): where
    :func:`tail_in_program`, only the first ``active`` steps run and the outputs beyond
    them are zeros, so that a run's last, shorter chunk goes through the program
    compiled for the others (:func:`emjax.driver.loop.chunk_plan`) instead of compiling
    its own; elsewhere all ``length`` steps run. ``per_step``: the shapes of one step's
    outputs (:func:`step_shapes`), else found by tracing ``body`` once more. ``unroll``:
    steps per iteration of the scan (2 for a step that writes into scratch buffers and
    hands the old ones back, so that they return to their places each iteration and XLA
    copies nothing: :mod:`emjax.fdtd.pallas2d`)."""

    def step(carry, x):
        state, frames, ys = body(*carry, x)
        return (state, frames), ys

    if active is None or not tail_in_program():
        (state, frames), ys = lax.scan(step, (state, buffers), xs, length=length,
                                       unroll=unroll)
    else:
        (state, frames), ys = _scan_first(step, (state, buffers), xs, length, active,
                                          per_step, unroll)
    ys[FRAMES] = frames
    return state, ys


_TAIL = contextvars.ContextVar("emjax_tail_in_program", default=None)


def tail_in_program() -> bool:
    """Whether a chunk runs a given number of its steps (a while loop of ``active``
    trips) instead of all of them (``lax.scan``): on a CPU, where the two run at the
    same speed, and in a run the driver puts under :func:`tail_policy`. On an H100 the
    while loop waits on its trip test each step: 2D TMz at 512^2 took 35.8 us a step
    against 19.0, 3D at 256^3 578 against 564 (``benchmarks/chunk_tail.py``,
    BENCHMARKS.md), so there a run whose step count has no divisor near the chunk either
    compiles a second program for its last chunk or, where that costs more than the
    trip tests, runs every chunk as the while loop (:func:`emjax.driver.loop.one_program`)."""
    forced = _TAIL.get()
    return jax.default_backend() == "cpu" if forced is None else forced


@contextlib.contextmanager
def tail_policy(on: bool | None) -> Iterator[None]:
    """:func:`tail_in_program` is ``on`` inside (None: the backend's default). Chunk
    programs compiled inside carry the choice in their cache keys (the solvers key them
    by it), so a program of one kind never serves the other."""
    token = _TAIL.set(on)
    try:
        yield
    finally:
        _TAIL.reset(token)


def step_shapes(record: dict) -> dict:
    """One step's output shapes from a solver's empty host record (leaves of zero
    steps; the frame buffers left out): what :func:`scan_with_frames` allocates."""
    return jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape[1:], a.dtype),
                        {k: v for k, v in record.items() if k != FRAMES})


def _scan_first(step: Callable, carry, xs, length: int, active, shapes=None,
                unroll: int = 1):
    """:func:`lax.scan` of ``step`` over the first ``active`` entries of ``xs`` (leading
    axis ``length``), as a while loop of ``active`` trips; outputs (``length``, ...)
    with zeros beyond ``active``. ``shapes``: one step's outputs (tracing ``step``
    twice for them cost 20% of a chunk's compilation on a CPU). ``unroll`` 2: two steps
    a trip while two remain, the odd last one under a ``lax.cond`` (the scratch buffers
    of :mod:`emjax.fdtd.pallas2d` then stay in place but for that step)."""
    if shapes is None:
        x0 = jax.tree.map(lambda a: a[0], xs)
        shapes = jax.eval_shape(lambda c, x: step(c, x)[1], carry, x0)
    ys0 = jax.tree.map(lambda s: jnp.zeros((length, *s.shape), s.dtype), shapes)

    def trip(c):
        i, carry, ys = c
        x = jax.tree.map(lambda a: lax.dynamic_index_in_dim(a, i, keepdims=False), xs)
        carry, y = step(carry, x)
        ys = jax.tree.map(lambda Y, v: lax.dynamic_update_index_in_dim(Y, v, i, 0), ys, y)
        return i + 1, carry, ys

    if unroll == 1:
        _, carry, ys = lax.while_loop(lambda c: c[0] < active, trip,
                                      (jnp.int32(0), carry, ys0))
        return carry, ys
    i, carry, ys = lax.while_loop(lambda c: c[0] + 1 < active, lambda c: trip(trip(c)),
                                  (jnp.int32(0), carry, ys0))
    _, carry, ys = lax.cond(i < active, trip, lambda c: c, (i, carry, ys))
    return carry, ys


def first_steps(ys: dict, active: int) -> dict:
    """A chunk's host outputs cut to its first ``active`` steps (frame buffers apart:
    :func:`frames_taken` cuts those)."""
    cut = jax.tree.map(lambda a: a[:active], {k: v for k, v in ys.items() if k != FRAMES})
    return {**cut, FRAMES: ys[FRAMES]} if FRAMES in ys else cut


def frames_taken(ys: dict, intervals: Sequence[int], step0: int, length: int) -> dict:
    """Host outputs of a chunk with each snapshot buffer cut to the frames it took."""
    cut = []
    for m, bufs in zip(intervals, ys[FRAMES], strict=True):
        count = (step0 + length) // m - step0 // m
        cut.append([b[:count] for b in bufs])
    return dict(ys, **{FRAMES: cut})
