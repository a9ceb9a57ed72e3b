"""Atomic writes: a file appears whole or not at all.

Every file emjax writes (results, checkpoints, scenarios) goes first to
``<path>.tmp`` in the same folder and is renamed over ``path`` when complete, so a
kill or an error mid-write leaves the previous file intact and no partial one.

The temporary's name is fixed rather than unique per process: a ``<path>.tmp`` that a
killed write left behind is then known by name and removed by the next write of
``path`` (and by :func:`emjax.io.targets.check_output`, which ``emjax run`` calls on
every target before computing), instead of piling up. Two processes never write the
same target at once (multi-process runs write from process 0 only).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def temporary_path(path: str | Path) -> Path:
    """Where ``path`` is written before it is renamed into place: ``<path>.tmp``."""
    path = Path(path)
    return path.with_name(path.name + ".tmp")


def remove_stale_temporary(path: str | Path) -> None:
    """Remove the ``<path>.tmp`` a killed write of ``path`` left behind, if any."""
    tmp = temporary_path(path)
    if tmp.is_file() or tmp.is_symlink():
        tmp.unlink(missing_ok=True)


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """The temporary path to write ``path``'s content to; renamed over ``path`` when the
    block ends, removed if it raises. Missing parent folders are created, and a stale
    temporary of an earlier, killed write is replaced."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporary(path)
    tmp = temporary_path(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
