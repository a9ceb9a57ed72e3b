"""JAX's persistent compilation cache and the stage times of a run (issue #24, item 2).

:func:`enable_compilation_cache` switches JAX's persistent compilation cache on in a
folder of the user cache (``<user cache>/emjax/jax``, e.g. ``~/.cache/emjax/jax`` on
Linux, from ``platformdirs``), like pip's cache: never inside a run's output folder.
A second run of the same scenario then loads its executables from there instead of
compiling them. Nothing here changes JAX's configuration at import: ``emjax run``
switches the cache on for the length of a run (:func:`compilation_cache`, which puts
JAX's previous settings back afterwards), Python users call
:func:`emjax.enable_compilation_cache` themselves.

JAX has no query for "did this compilation come from the cache"; it reports events
through :mod:`jax.monitoring` instead: ``/jax/compilation_cache/compile_requests_use_cache``
for every compilation that looked in the cache and ``/jax/compilation_cache/cache_hits``
for each one found there. :func:`mark` counts them (one listener, registered on first
use) and notes the time; a solver takes a mark when its construction starts, and the
driver turns the mark into the set-up time and the cache verdict of the run
(:func:`stage_report`).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import EmjaxWarning

OFF = "off"  # EMJAX_CACHE_DIR=off, `emjax run --no-cache`

_REQUEST = "/jax/compilation_cache/compile_requests_use_cache"
_HIT = "/jax/compilation_cache/cache_hits"
# The JAX options the cache uses; saved and restored around a CLI run.
_OPTIONS = ("jax_compilation_cache_dir", "jax_enable_compilation_cache",
            "jax_persistent_cache_min_compile_time_secs",
            "jax_persistent_cache_min_entry_size_bytes")


def default_cache_dir() -> Path:
    """``<user cache>/emjax/jax``: the platform's user cache folder (``platformdirs``:
    ``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS,
    ``%LOCALAPPDATA%`` on Windows)."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("emjax", appauthor=False)) / "jax"


def enable_compilation_cache(path: str | Path | None = None) -> Path | None:
    """Switch JAX's persistent compilation cache on in ``path`` (default:
    :func:`default_cache_dir`), for every compilation of this process from now on.

    Every executable is kept, however quick its compilation or small its size, so that
    a second run of a scenario compiles nothing. Returns the folder, or None when it
    cannot be created or written: then one :class:`~emjax.errors.EmjaxWarning` says so
    and JAX's settings are left as they were (runs compile as without the cache).
    """
    folder = Path(path).expanduser() if path is not None else default_cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(13, "not writable")
    except OSError as e:
        warnings.warn(f"compilation cache folder '{folder}' cannot be used "
                      f"({e.strerror or e}); running without the persistent compilation "
                      "cache (set EMJAX_CACHE_DIR to another folder, or to 'off')",
                      EmjaxWarning, stacklevel=2)
        return None
    _set({"jax_compilation_cache_dir": str(folder), "jax_enable_compilation_cache": True,
          # JAX's defaults keep only compilations over 1 s; a run's small ones
          # (the guard's reductions, the state's set-up) add up as well.
          "jax_persistent_cache_min_compile_time_secs": 0.0,
          "jax_persistent_cache_min_entry_size_bytes": -1})
    _listen()
    return folder


def disable_compilation_cache() -> None:
    """Switch the persistent compilation cache off for this process."""
    _set({"jax_compilation_cache_dir": None})


def cache_enabled() -> bool:
    """Whether JAX's persistent compilation cache is on (a folder set and enabled)."""
    import jax

    return bool(jax.config.jax_compilation_cache_dir) and bool(
        jax.config.jax_enable_compilation_cache)


@contextlib.contextmanager
def compilation_cache(setting: str | Path | None) -> Iterator[Path | None]:
    """The cache for the length of a run: on in the folder ``setting`` (None: the
    default folder; ``"off"``: off); JAX's previous settings are put back on exit, so
    a process that runs several times (tests, notebooks) keeps its own."""
    import jax

    saved = {name: getattr(jax.config, name) for name in _OPTIONS}
    try:
        with setup_cache(setting):
            if str(setting).strip().lower() == OFF:
                disable_compilation_cache()
                yield None
            else:
                yield enable_compilation_cache(setting or None)
    finally:
        _set(saved)


# ------------------------------------------------------------- the set-up cache

_setup_folder: list[Path | None] = [None]


def setup_cache_folder() -> Path | None:
    """The folder of the solvers' set-up caches (DGATD: :mod:`emjax.dga.cache`) now:
    None (off) outside :func:`setup_cache` / :func:`compilation_cache` (an ``emjax run``)."""
    return _setup_folder[-1]


@contextlib.contextmanager
def setup_cache(setting: str | Path | None) -> Iterator[Path | None]:
    """The set-up cache on for the block: ``setting`` a folder (the cache is then its
    ``dga`` subfolder, as ``$EMJAX_CACHE_DIR`` names the compilation cache's folder), None
    (``<user cache>/emjax/dga``, beside JAX's ``<user cache>/emjax/jax``) or ``"off"``.
    Its writes have ended when the block ends."""
    if str(setting).strip().lower() == OFF:
        folder = None
    elif setting:
        folder = Path(setting).expanduser() / "dga"
    else:
        folder = default_cache_dir().parent / "dga"
    _setup_folder.append(folder)
    try:
        yield folder
    finally:
        _setup_folder.pop()
        for finish in _on_leave:  # writes still in flight end with the block
            finish()


_on_leave: list = []


def at_block_end(finish) -> None:
    """Run ``finish()`` as every :func:`setup_cache` block ends: a solver's cache that
    writes on a thread of its own (:mod:`emjax.dga.cache`) registers the wait for its
    writes, so that the folder is complete, and may be removed, once the block ends."""
    _on_leave.append(finish)


def _set(options: dict) -> None:
    """Update JAX's options and make its cache start over from them (it reads the
    folder once, at the first compilation after a reset)."""
    import jax
    from jax.experimental.compilation_cache import compilation_cache as cc

    for name, value in options.items():
        jax.config.update(name, value)
    cc.reset_cache()


# ------------------------------------------------------------- the counts

_lock = threading.Lock()
_counts = {_REQUEST: 0, _HIT: 0}
_listening = False


def _on_event(event: str, **kwargs) -> None:
    del kwargs
    if event in _counts:
        with _lock:
            _counts[event] += 1


def _listen() -> None:
    global _listening
    with _lock:
        if _listening:
            return
        import jax.monitoring

        jax.monitoring.register_event_listener(_on_event)
        _listening = True


@dataclass(frozen=True)
class Mark:
    """A moment of a run: ``perf_counter`` time and the cache counts so far."""

    time: float
    requests: int
    hits: int


_COMPILE_EVENTS = ("/jax/core/compile/jaxpr_trace_duration",
                   "/jax/core/compile/jaxpr_to_mlir_module_duration",
                   "/jax/core/compile/backend_compile_duration")
_compiles = {"count": 0, "seconds": 0.0}
_timing = False


def _on_duration(event: str, duration: float, **kwargs) -> None:
    del kwargs
    if event in _COMPILE_EVENTS:
        with _lock:
            _compiles["seconds"] += duration
            if event == _COMPILE_EVENTS[-1]:
                _compiles["count"] += 1


def compile_counter() -> tuple[int, float]:
    """(backend compilations, seconds spent tracing, lowering and compiling) in this
    process since the counter's first use (one :mod:`jax.monitoring` duration listener,
    registered then); differences of two readings measure what happened between them."""
    global _timing
    with _lock:
        if not _timing:
            import jax.monitoring

            jax.monitoring.register_event_duration_secs_listener(_on_duration)
            _timing = True
        return _compiles["count"], _compiles["seconds"]


def mark() -> Mark:
    """Now, with the compilations that looked in the cache and those found there."""
    _listen()
    with _lock:
        return Mark(time.perf_counter(), _counts[_REQUEST], _counts[_HIT])


def cache_report(born: Mark) -> dict:
    """Whether the compilations since ``born`` came from the persistent cache:
    ``compile_cache`` ``"off"``, ``"miss"`` (some compilation was not in the cache),
    ``"hit"`` (every one was) or ``"none"`` (the cache is on, but nothing was compiled
    through it: all in memory already, or a backend that cannot keep executables),
    with ``compile_cache_hits`` and ``compile_cache_misses``."""
    now = mark()
    requests, hits = now.requests - born.requests, now.hits - born.hits
    if not cache_enabled():
        verdict = OFF
    else:
        verdict = "miss" if requests > hits else "hit" if hits else "none"
    return {"compile_cache": verdict, "compile_cache_hits": hits,
            "compile_cache_misses": requests - hits}


def stage_report(born: Mark | None, start: float, wall: float, compile_s: float) -> dict:
    """The stage times and the cache verdict (:func:`cache_report`) of a run whose
    solver was built from ``born`` (None: unknown) and whose loop started at ``start``
    (``perf_counter``) and ran ``wall`` s, ``compile_s`` s of them in chunks that
    compiled.

    ``setup_time_s``: construction (lowering) to the first chunk; ``stepping_time_s``:
    the loop less its compiling chunks.
    """
    out = {"setup_time_s": None if born is None else max(start - born.time, 0.0),
           "stepping_time_s": max(wall - compile_s, 0.0)}
    return out if born is None else {**out, **cache_report(born)}

__all__ = [
    "at_block_end",
    "cache_enabled",
    "compilation_cache",
    "compile_counter",
    "default_cache_dir",
    "disable_compilation_cache",
    "enable_compilation_cache",
    "setup_cache",
    "setup_cache_folder",
]
