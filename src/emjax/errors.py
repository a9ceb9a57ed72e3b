"""The emjax exception family.

Every user-facing failure is one of these or a pydantic ``ValidationError``; each
message says where, what, the value and how to fix it.
"""

from __future__ import annotations


class EmjaxError(Exception):
    """Base class of every emjax error."""


class SetupError(EmjaxError, ValueError):
    """A scenario that is valid data but cannot be simulated as asked."""


class InstabilityError(EmjaxError, FloatingPointError):
    """A run produced non-finite values (inf/NaN) in its fields or a monitor.

    Attributes: ``step`` (the end of the chunk where it was found; None where there are no
    steps), ``field`` (the first non-finite field component, "" if the fields stayed
    finite), ``index`` (its grid index, or ()), ``monitor`` (the label of the first
    non-finite monitor, e.g. "monitors[2] 'w'", or None) and ``cause``, the likely cause:

    * "instability": the fields grew without bound (time step, media, PML);
    * "overflow": a value left its floating-point range while the fields stayed
      bounded (a huge source amplitude in float32, say);
    * "checkpoint": non-finite values right after resuming (a corrupted checkpoint);
    * "result": a solver returned non-finite monitor data (e.g. FDFD's solution).
    """

    CAUSES = ("instability", "overflow", "checkpoint", "result")

    def __init__(self, message: str, *, step: int | None = None, field: str = "",
                 index: tuple[int, ...] = (), cause: str = "instability",
                 monitor: str | None = None):
        if cause not in self.CAUSES:
            raise ValueError(f"cause {cause!r} is not one of {self.CAUSES}")
        super().__init__(message)
        self.step = step
        self.field = field
        self.index = index
        self.cause = cause
        self.monitor = monitor


class ResourceError(EmjaxError, MemoryError):
    """A run that would not fit in the device's memory."""


class ConvergenceError(EmjaxError, RuntimeError):
    """An iterative solver that did not reach its tolerance."""


class RunInterrupted(EmjaxError, KeyboardInterrupt):  # noqa: N818 - reads as what happened
    """A run stopped by SIGINT or SIGTERM at a chunk end, after writing a checkpoint.

    ``results`` holds the monitor data up to ``step``; ``checkpoint`` is the file to
    resume from.
    """

    def __init__(self, message: str, *, results, checkpoint, step: int):
        super().__init__(message)
        self.results = results
        self.checkpoint = checkpoint
        self.step = step


class CheckpointError(EmjaxError, ValueError):
    """A checkpoint that cannot be read or does not belong to the scenario."""


class OutputError(EmjaxError, ValueError):
    """An output target that cannot or must not be written (a directory, the input
    file, an existing file without overwrite, a folder that is not writable)."""


class MeshError(EmjaxError, ValueError):
    """A mesh file that cannot be read: missing, empty, of an unknown format or
    damaged. The message names the file and the reason."""


class EmjaxWarning(UserWarning):
    """A run that will go ahead but whose results are probably not what was meant
    (a pulse cut off, too few cells per wavelength, a DFT frequency outside the band)."""


class AdviceWarning(EmjaxWarning):
    """The run advice given before a run starts (:mod:`emjax.driver.advice`, FDFD's
    resolution and PML checks): the run goes ahead. A class of its own so that tests
    and convergence studies, which run coarse grids and short pulses on purpose, can
    leave exactly these aside while every other warning still counts."""
