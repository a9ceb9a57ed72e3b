"""Seconds per set-up stage: what a run's ``setup_stages`` metadata holds (issue #24).

Every solver's lowering times its stages with one :class:`Stages` (``with st("name"):
...``), so that ``emjax run`` and a user's ``Results.metadata["setup_stages"]`` say where
the set-up went (DGATD: mesh, complex, local matrices, power iteration, ...; FDTD3D:
grid, rasterization, coefficient tables, ...).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator


class Stages(dict):
    """Seconds per set-up stage, in the order run: ``with stages("renumbering"): ...``
    (a stage run twice adds up), or ``stages.lap("rasterization")`` at the end of a
    stage that began where the previous lap (or the object's making) ended."""

    def __init__(self) -> None:
        super().__init__()
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        """Add the time since the previous lap (or since made) to stage ``name``."""
        now = time.perf_counter()
        self[name] = self.get(name, 0.0) + now - self._last
        self._last = now

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self[name] = self.get(name, 0.0) + time.perf_counter() - t0


__all__ = ["Stages"]
