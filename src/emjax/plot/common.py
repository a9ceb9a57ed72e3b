"""What every emjax figure shares: a standalone Agg Figure, PNG saving, and quantities
written with engineering prefixes by matplotlib's :class:`~matplotlib.ticker.EngFormatter`
(axes in m, s or Hz read "20 mm", "2 ns", "1 GHz"; titles use the same formatter, so a
title and its axes agree). matplotlib loads on the first call.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _figure(size: tuple[float, float]) -> Figure:
    """A Figure on its own Agg canvas (never pyplot: headless, no global figure list)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _finish(fig: Figure, path: str | Path | None) -> Figure:
    """Save ``fig`` as PNG at ``path`` (when given) and return it."""
    if path is not None:
        fig.savefig(Path(path), format="png", dpi=110)
    return fig


def eng(value: float, unit: str, digits: int = 4, sep: str = " ", *,
        places: int | None = None) -> str:
    """``value`` in ``unit`` with an engineering prefix, rounded to ``digits``
    significant digits ("-3.75 mm", "1 GHz", "2.857 ns"), or with ``places`` decimals
    when given; an ASCII hyphen for the sign (titles and file names)."""
    from matplotlib.ticker import EngFormatter

    value = float(value) if places is not None else float(f"{float(value):.{digits}g}")
    text = EngFormatter(unit=unit, places=places, sep=sep).format_eng(value)
    return text.replace("\u2212", "-")


def eng_axes(ax: Any, x: str | None = None, y: str | None = None) -> None:
    """EngFormatter with unit ``x`` (``y``) on the x (y) axis of ``ax``; None leaves it."""
    from matplotlib.ticker import EngFormatter

    if x is not None:
        ax.xaxis.set_major_formatter(EngFormatter(unit=x))
    if y is not None:
        ax.yaxis.set_major_formatter(EngFormatter(unit=y))


def _unit(component: str) -> str:
    """The field unit of a component name ("Ez" V/m, "Hx" A/m)."""
    return {"E": "V/m", "H": "A/m"}.get(component[:1], "")
