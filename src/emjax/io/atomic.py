"""Atomic writes: a file appears whole or not at all.

Every file emjax writes (results, checkpoints, scenarios) goes first to
``<path>.tmp`` in the same folder and is renamed over ``path`` when complete, so a
kill or an error mid-write leaves the previous file intact and no partial one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """The temporary path to write ``path``'s content to; renamed over ``path`` when the
    block ends, removed if it raises. Missing parent folders are created."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
