"""Conservation checks on an EnergyMonitor's record.

A closed lossless cavity's leapfrog energy, once its source has ended, must stay
constant; :func:`energy_drift` measures how far it moves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..results import MonitorData


def energy_drift(md: MonitorData, after: float) -> tuple[float, int]:
    """(max - min) / mean of ``md``'s energy (J) over its samples at t > ``after`` (s),
    and how many samples that is."""
    e, t = md.data["energy"], md.coords["t"]
    tail = e[t > after]
    return float((tail.max() - tail.min()) / tail.mean()), int(tail.size)


__all__ = ["energy_drift"]
