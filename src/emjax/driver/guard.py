"""The NaN guard of the time loop: the fields and every monitor checked at chunk ends.

Fast path, every chunk: beside the chunk's own ``finite`` flag, a reduction
(:func:`peaks`) over what the chunk produced: the largest magnitude of the fields (the
solver's ``fields(state)``), of each scan output (probe and energy series, snapshot
frames) and of each carried accumulator (DFT, near-to-far). It runs at the end of the
chunk's own program (:func:`measured`), after the time loop: the step's kernels are
untouched and no step does more work, and a run compiles one program per chunk length
(as a separate jitted function it compiled again for every scenario: 260 compilations,
66 s of the test suite's CPU time on 2 cores). The host gets a few scalars and keeps
the field peaks.

Slow path, when anything is not finite: :meth:`Guard.error` names the first non-finite
monitor (``monitors[2] 'w'``; the first bad step of a series) and tells the likely cause
apart (:attr:`emjax.errors.InstabilityError.cause`):

* "instability": the fields grew without bound. The evidence is the ratio of the
  largest field magnitude to the largest source sample so far (the solver's
  ``drive``): a stable linear run keeps it within a modest band whatever the source
  amplitude, since everything scales with the sources; an instability makes it grow
  exponentially. It counts as grown when it exceeds its median over the earlier
  chunks by :data:`GROWTH`.
* "overflow": a value left the dtype's range while the fields stayed bounded (the
  ratio did not grow): a monitor such as the energy (E^2) in float32 with a source
  amplitude of 1e25. Without earlier chunks to compare, sources whose samples reach
  the square root of the dtype's largest value (1.8e19 in float32, whose squares
  overflow) count as the cause.
* "checkpoint": non-finite values in a resumed state or record, or in the first chunk
  after resuming.
"""

from __future__ import annotations

import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ..errors import InstabilityError

GROWTH = 1e3
"""Growth of the field-to-source ratio over its median in earlier chunks that marks an
instability (three orders of magnitude; a stable run stays well within it)."""

SERIES = ("probe", "energy")
"""Record keys whose leaves are series along the chunk's steps (axis 0)."""


def _magnitude(x):
    """Largest |x| of one array, inf when any is NaN (a max reduction may skip NaNs:
    XLA:CPU gives -inf for an all-NaN array); for complex, of the parts.

    On a CPU the NaN test is a second reduction, sum(x * 0) (NaN exactly where some
    sample is NaN or infinite), instead of a select on every sample: XLA:CPU runs the
    select-then-max at a sixth of the speed of two plain reductions (37 against 6 ms for
    the six 128^3 float32 fields, 2-core VM, BENCHMARKS.md), a cost every chunk pays.
    Accelerators keep the fused select."""
    if x.size == 0:
        return jnp.zeros((), jnp.float32)
    parts = (x.real, x.imag) if jnp.iscomplexobj(x) else (x,)
    if jax.default_backend() == "cpu":
        return jnp.max(jnp.stack([jnp.where(jnp.isnan(jnp.sum(p * 0)), jnp.inf,
                                            jnp.max(jnp.abs(p))) for p in parts]))
    return jnp.max(jnp.stack([jnp.max(jnp.where(jnp.isnan(p), jnp.inf, jnp.abs(p)))
                              for p in parts]))


def _peaks(fields, monitors):
    leaves = jax.tree_util.tree_leaves
    return [_magnitude(F) for F in leaves(fields)], [_magnitude(a) for a in leaves(monitors)]


peaks = jax.jit(_peaks)
"""(largest |value| per field array, per monitor array): the guard's reduction.
``monitors``: a chunk's scan outputs and the carried accumulators."""


def measured(chunk, fields, accumulators):
    """A solver's chunk function (``*args -> (state, ys, finite)``) that also returns
    :func:`peaks` of its result: ``(state, ys, finite, peaks)``. ``fields`` and
    ``accumulators``: the solver's views of a state (see :class:`Guard`)."""

    def chunk_and_peaks(*args):
        state, ys, finite = chunk(*args)
        return state, ys, finite, _peaks(fields(state), (ys, accumulators(state)))

    return chunk_and_peaks


def first_non_finite(named_fields, step: int) -> InstabilityError:
    """Where a chunk ending at ``step`` went non-finite: the first bad component of
    ``named_fields`` ((name, array) pairs), its first non-finite grid index and where
    the largest finite value sits (:meth:`Guard.error` adds the step range and cause)."""
    for name, F in named_fields:
        a = np.asarray(F)
        bad = ~np.isfinite(a)
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            big = tuple(int(i) for i in np.unravel_index(
                np.argmax(np.where(bad, 0, np.abs(a))), a.shape))
            return InstabilityError(
                f"{name} is not finite at grid index {where} (largest finite |{name}| at "
                f"{big})", step=step, field=name, index=where)
    return InstabilityError("the fields are not finite", step=step)


def label(group: str, index: int, name: str) -> str:
    """``group[index] 'name'``: how messages name a monitor (``monitors[2] 'w'``)."""
    return f"{group}[{index}] '{name}'"


class Guard:
    """The field peaks of the chunks so far and the diagnosis when something is not
    finite. ``resumed``: the checkpoint a resumed run started from, at step ``start``."""

    def __init__(self, solver, start: int = 0, resumed: str | Path | None = None):
        self.solver = solver
        self.start = start
        self.resumed = resumed
        self.ends: list[int] = []
        self.peaks: list[float] = []

    def check(self, state, ys, step0: int, length: int, measured) -> None:
        """Record the chunk's field peak, or raise the error of a non-finite chunk.
        ``ys``: the chunk's outputs on the host. (The peaks decide, not the chunk's own
        ``finite`` flag: a sum of |E| can overflow while every value is finite.)"""
        field_peaks, monitor_peaks = (np.asarray(p, np.float64) for p in measured)
        peak = float(field_peaks.max(initial=0.0))
        if math.isfinite(peak) and np.isfinite(monitor_peaks).all():
            self.ends.append(step0 + length)
            self.peaks.append(peak)
            return
        raise self.error(state, ys, step0, length, math.isfinite(peak), peak)

    def check_resumed(self, state, record) -> None:
        """Refuse a resumed state or record holding non-finite values, before any step."""
        field_peaks, _ = jax.device_get(peaks(self.solver.fields(state), ()))
        finite = np.isfinite(np.asarray(field_peaks, np.float64)).all()
        bad = _non_finite({**record, **jax.device_get(self.solver.accumulators(state))},
                          self.solver.monitor_labels(), None, 0)
        if finite and not bad:
            return
        what = bad[0][1] if bad else "the fields"
        raise InstabilityError(
            f"checkpoint '{self.resumed}' holds non-finite values (inf/NaN) in {what} at "
            f"step {self.start}: it is probably corrupted; rerun from the start or from an "
            "earlier checkpoint", step=self.start, cause="checkpoint",
            monitor=bad[0][1] if bad else None)

    # ------------------------------------------------------------ slow path
    def error(self, state, ys, step0: int, length: int, fields_finite: bool,
              peak: float) -> InstabilityError:
        """The error of a chunk with non-finite fields or monitor values."""
        solver = self.solver
        end = step0 + length
        where = solver.instability(state, step0, length) if not fields_finite else None
        acc = jax.device_get(solver.accumulators(state))
        bad = _non_finite({**ys, **acc}, solver.monitor_labels(), step0, length)
        first, monitor, big = bad[0] if bad else (end, None, 0.0)
        others = f" (also {', '.join(b[1] for b in bad[1:4])})" if len(bad) > 1 else ""
        dtype = np.dtype(getattr(solver.setup, "dtype", np.float32))
        limit = float(np.finfo(dtype).max)
        drive = float(np.max(np.abs(solver.drive(0, end)), initial=0.0))
        # with the fields non-finite, whether they were growing in the chunks before
        growth = self._growth(peak, end, len(self.ends)) if fields_finite else \
            self._growth(self.peaks[-1], self.ends[-1], len(self.ends) - 1) if self.ends else None
        span = f"between steps {step0} and {end}"
        kw = {"step": end, "field": where.field if where else "",
              "index": where.index if where else (), "monitor": monitor}
        if self.resumed is not None and step0 == self.start:
            what = where.args[0] if where else f"{monitor or 'a monitor'} holds non-finite values"
            return InstabilityError(
                f"non-finite values right after resuming from checkpoint '{self.resumed}' "
                f"({span}): {what}{others}. The checkpoint may be corrupted: rerun from the "
                "start or an earlier checkpoint; if it is intact, the run is unstable: "
                f"{solver.stability_hint}", cause="checkpoint", **kw)
        grew = growth is not None and growth >= GROWTH
        overflow = not grew and (growth is not None or drive >= math.sqrt(limit))
        if fields_finite and overflow:
            was = f"; its largest finite magnitude was {big:.3g}" if big > 0 else ""
            return InstabilityError(
                f"{monitor or 'a monitor'} overflowed {dtype.name} at step {first} ({span}) "
                f"while the fields stayed bounded (largest field magnitude {peak:.3g}, no "
                f"growth against the sources; {dtype.name} holds up to {limit:.3g}){was}"
                f"{others}. Lower the source amplitude (largest source sample {drive:.3g}) "
                "or use dtype = \"float64\"", cause="overflow", **kw)
        note = getattr(solver, "storage_note", "")  # fields kept in fewer bits
        if overflow:
            return InstabilityError(
                f"the fields overflowed {dtype.name} {span}: {where.args[0]}; the largest "
                f"source sample is {drive:.3g} and the largest {dtype.name} {limit:.3g}. "
                f"Lower the source amplitude or use dtype = \"float64\"{note}",
                cause="overflow", **kw)
        found = where.args[0] if where else (
            f"{monitor} is not finite from step {first}{others}, the fields grew "
            f"{growth:.3g} times against the sources (largest field magnitude {peak:.3g})"
            if growth is not None else f"{monitor} is not finite from step {first}{others}")
        return InstabilityError(f"the run went unstable {span}: {found}; "
                                f"{solver.stability_hint}{note}", cause="instability", **kw)

    def _growth(self, peak: float, end: int, earlier: int) -> float | None:
        """The field-to-source ratio at ``end`` over its median in the first ``earlier``
        chunks checked (None without such chunks whose fields were non-zero)."""
        if earlier < 1:
            return None
        so_far = np.maximum.accumulate(np.abs(self.solver.drive(0, end)))
        scale = lambda e: so_far[e - 1] if so_far[e - 1] > 0 else 1.0  # noqa: E731
        before = [p / scale(e) for e, p in zip(self.ends[:earlier], self.peaks[:earlier],
                                               strict=True) if p > 0]
        if not before:
            return None
        return (peak / scale(end)) / float(np.median(before))


def _non_finite(arrays: dict, labels: dict, step0: int | None, length: int) -> list:
    """(first bad step, monitor label, largest finite magnitude) of every monitor with
    non-finite data, first bad step first. ``arrays``: record-like ``{key: [per monitor
    pytree]}``; ``labels``: ``{key: [label per monitor]}``; series (:data:`SERIES`) of a
    chunk from ``step0`` give their first bad step, other monitors ``step0 + length``."""
    out = []
    for key, names in labels.items():
        for name, tree in zip(names, arrays.get(key, ()), strict=False):
            leaves = [np.asarray(a) for a in jax.tree_util.tree_leaves(tree)]
            bad = [~np.isfinite(a) for a in leaves]
            if not any(b.any() for b in bad):
                continue
            first = (step0 or 0) + length
            if key in SERIES and step0 is not None:
                rows = [np.nonzero(b.reshape(len(b), -1).any(axis=1))[0] for b in bad if b.size]
                first = step0 + 1 + min(int(r[0]) for r in rows if r.size)
            big = max((float(np.max(np.abs(np.where(b, 0, a)), initial=0.0))
                       for a, b in zip(leaves, bad, strict=True)), default=0.0)
            out.append((first, name, big))
    return sorted(out, key=lambda b: b[0])
