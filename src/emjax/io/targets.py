"""Output targets, checked before anything is computed.

A run that computes for an hour and then cannot write its results has lost them, so
every file emjax is going to write is checked first: :func:`check_output` for a file,
:func:`check_folder` for a folder files go into. Both create missing folders, and
test that the folder takes a file by writing and removing a probe file (permission
bits alone do not say what root, ACLs or a read-only mount allow). A path that is a
folder, lies under a regular file or is one of the run's input files is refused; an
existing file is replaced only when the caller says so (``overwrite=True``, ``emjax
run --overwrite``). Each refusal is an :class:`~emjax.errors.OutputError` that names
the path, what is wrong and the fix.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..errors import OutputError
from .atomic import remove_stale_temporary


def check_output(path: str | Path, *, overwrite: bool = False,
                 inputs: Iterable[str | Path] = (), what: str = "path",
                 flag: str = "overwrite=True", instead: str | None = None) -> Path:
    """``path`` as a :class:`~pathlib.Path` once it is safe to write; OutputError if not.

    Creates the missing parent folders and removes a temporary file a killed write of
    ``path`` left behind (``<path>.tmp``, :mod:`emjax.io.atomic`). ``inputs``: files
    the run reads (scenario, checkpoint to resume), never to be written over. ``what``
    names the target in messages (``-o``, ``--checkpoint``, ``path``); ``flag`` is how
    the caller asks for a replacement (``--overwrite``, ``overwrite=True``); ``instead``
    what to change for another path (default ``what``).
    """
    instead = instead or what
    path = file_path(path, what=what)
    check_folder(path.parent, what=f"{what} '{path}'", create=True)
    if path.is_dir():
        raise OutputError(f"{what} '{path}' is a folder; name a file (e.g. "
                          f"'{path / 'results.h5'}'), or choose another {instead}")
    for source in inputs:
        if _same_file(path, Path(source)):
            raise OutputError(f"{what} '{path}' is an input of this run ('{source}'); "
                              f"writing it would destroy it: choose another {instead}")
    if (path.exists() or path.is_symlink()) and not overwrite:
        raise OutputError(f"{what} '{path}' already exists; pass {flag} to replace it, or "
                          f"choose another {instead}")
    remove_stale_temporary(path)
    return path


def file_path(path: str | Path, *, what: str = "path") -> Path:
    """``path`` as a Path, refused (OutputError) when its text names a folder (empty, or
    ending in a separator), which ``Path`` would silently turn into a file name."""
    raw = os.fspath(path)
    if not raw or raw.endswith(("/", os.sep)):
        raise OutputError(f"{what} '{raw}' names a folder; name a file (e.g. "
                          f"'{Path(raw or '.') / 'results.h5'}')")
    return Path(raw)


def check_folder(folder: str | Path, *, what: str = "folder", create: bool = True) -> Path:
    """``folder`` once it exists (created if ``create``) and takes a new file.

    ``what`` names the target in messages (``--figures``, or the file that goes into
    the folder). OutputError if a part of the path is a regular file, the folder cannot
    be created, or a probe file cannot be written in it.
    """
    folder = Path(folder)
    blocker = _file_in_the_way(folder)
    if blocker is not None:
        raise OutputError(f"{what}: '{blocker}' is a file, not a folder, so nothing can be "
                          f"written under it; choose another place")
    if not folder.is_dir():
        if not create:
            raise OutputError(f"{what}: folder '{folder}' does not exist")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"{what}: cannot create folder '{folder}' "
                              f"({e.strerror or e}); choose another place") from None
    try:  # the only sure test of "may I write here"
        fd, probe = tempfile.mkstemp(prefix=".emjax-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise OutputError(f"{what}: cannot write in folder '{folder}' ({e.strerror or e}); "
                          "choose a writable folder") from None
    return folder


def _file_in_the_way(folder: Path) -> Path | None:
    """The nearest existing ancestor of ``folder`` (itself included) if it is not a
    folder, else None."""
    for p in (folder, *folder.parents):
        if p.exists():
            return None if p.is_dir() else p
    return None


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one file (links and ``..`` resolved)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return a.resolve() == b.resolve()


__all__ = ["check_folder", "check_output", "file_path"]
