"""What ``emjax run`` writes for a run with lumped ports: the |S| figure, the Touchstone
file and the S-matrix in HDF5 (output hooks, :mod:`emjax.outputs`).

A run gives S-parameters when it has one excited port (one column of S) or was batched
(``port_excitation = "each"``: one column per excited port). With every port excited,
the full matrix goes to ``<stem>.s<N>p`` (Touchstone through scikit-rf) and to
``<stem>_sparams.h5`` (:func:`emjax.analysis.sparams.save_hdf5`), both beside the results;
any S-parameter run draws ``<stem>_sparams.png``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .outputs import register_output

if TYPE_CHECKING:
    from .analysis.sparams import SParameters
    from .results import Results


def _sparameters(res: Results) -> SParameters | None:
    """The run's S-parameters at the default frequencies, or None when it has none (no
    lumped port, or several driven at once)."""
    ports = [md for md in res.monitors.values() if md.kind == "LumpedPort"]
    if not ports:
        return None
    batched = ports[0].attrs.get("excitations") is not None
    if not batched and sum(bool(md.attrs.get("excite")) for md in ports) != 1:
        return None
    from .analysis.sparams import s_parameters

    return s_parameters(res)


@register_output("s-parameters")
def sparameter_figure(res: Results, directory: Path, stem: str) -> list[Path]:
    """``<stem>_sparams.png``: |S| in dB over the excitation's band."""
    sp = _sparameters(res)
    if sp is None:
        return []
    from .analysis.sparams import plot_s_db

    path = Path(directory) / f"{stem}_sparams.png"
    plot_s_db(sp, path)
    return [path]


@register_output("touchstone", label="S-matrix", beside_results=True)
def sparameter_files(res: Results, directory: Path, stem: str) -> list[Path]:
    """``<stem>.s<N>p`` (Touchstone, through scikit-rf) and ``<stem>_sparams.h5`` beside
    the results when every port was excited (a one-port run, or a batched run of N
    excited ports). The Touchstone file is skipped with a note when scikit-rf is
    missing."""
    sp = _sparameters(res)
    if sp is None or not sp.full:
        return []
    from .analysis.sparams import save_hdf5

    paths = [save_hdf5(sp, Path(directory) / f"{stem}_sparams.h5", overwrite=True)]
    try:
        paths.append(sp.write_touchstone(Path(directory) / f"{stem}.s{len(sp.ports)}p",
                                         overwrite=True))
    except ImportError as err:
        print(f"Touchstone file skipped: {err}", file=sys.stderr)
    return paths
