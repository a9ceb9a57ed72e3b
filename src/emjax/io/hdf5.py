"""Results in one HDF5 file: scenario, metadata and every monitor's arrays.

Layout (creation order is kept, so monitors and components come back in order)::

    /                      attrs: format = "emjax-results", format_version = 1,
                                  emjax_version, scenario (JSON), metadata (JSON),
                                  monitors (JSON list of group names, in order)
    /<monitor>/            attrs: name, kind, attrs (JSON of MonitorData.attrs)
    /<monitor>/data/<key>  one dataset per component ("Ex".."Hz") or "energy"
    /<monitor>/coords/<key> one dataset per axis ("t_E", "points", "x_Ex", "f", ...)
                           each dataset: attrs units ("V/m", "s", "1", ...: the table of
                           :func:`emjax.results.units`)

Arrays are stored with their own dtype (complex natively, as h5py's (r, i) compound)
and read back bit for bit. A save goes to ``path + ".tmp"`` in the same directory and
is renamed over ``path`` only once complete, so a failed or interrupted save never
leaves a half-written file where a good one was.
"""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np

from ..errors import SetupError
from ..results import MonitorData, Results, units
from .atomic import atomic_path

FORMAT = "emjax-results"
FORMAT_VERSION = 1


def save_results(res: Results, path: str | Path, *, compression: str | None = None) -> Path:
    """Write ``res`` to ``path`` (HDF5) atomically; returns ``Path(path)``.

    ``compression`` ("gzip", "lzf" or None) applies to datasets with at least one dim.
    """
    from .. import __version__

    path = Path(path)
    groups = _group_names(res.names)
    with atomic_path(path) as tmp, h5py.File(tmp, "w", track_order=True) as f:
        f.attrs["format"] = FORMAT
        f.attrs["format_version"] = FORMAT_VERSION
        f.attrs["emjax_version"] = __version__
        f.attrs["scenario"] = res.scenario_json
        f.attrs["metadata"] = json.dumps(res.metadata)
        f.attrs["monitors"] = json.dumps(groups)
        per_length = getattr(res.scenario, "type", None) == "FDTD2D"
        for gname, md in zip(groups, res.monitors.values(), strict=True):
            _write_monitor(f.create_group(gname, track_order=True), md, compression,
                           per_length)
    return path


def load_results(path: str | Path) -> Results:
    """Read a file written by :func:`save_results`.

    Raises:
        SetupError: the file does not exist, is not HDF5, is not an emjax results file,
            or is damaged; the message names the path.
    """
    path = Path(path)
    if not path.is_file():
        raise SetupError(f"results file '{path}' does not exist (or is not a file); give the "
                         "path of an .h5 file written by Results.save")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise SetupError(f"results file '{path}' is not an HDF5 file ({e}); give a file "
                         "written by Results.save") from e
    with f:
        if f.attrs.get("format") != FORMAT or "emjax_version" not in f.attrs:
            raise SetupError(f"'{path}' is an HDF5 file but not an emjax result (no "
                             f"format = '{FORMAT}' attribute); give a file written by "
                             "Results.save")
        try:
            version = int(f.attrs["format_version"])
            if version > FORMAT_VERSION:
                raise ValueError(f"format_version {version} is newer than this emjax reads "
                                 f"({FORMAT_VERSION}); upgrade emjax")
            metadata = json.loads(_str(f.attrs["metadata"]))
            monitors = {}
            for gname in json.loads(_str(f.attrs["monitors"])):
                md = _read_monitor(f[gname])
                monitors[md.name] = md
            scenario = _scenario(_str(f.attrs["scenario"]))
        except (KeyError, ValueError, TypeError) as e:  # pydantic errors are ValueErrors
            raise SetupError(f"emjax results file '{path}' is damaged or unreadable: {e}") from e
    return Results(scenario=scenario, monitors=monitors, metadata=metadata)


# ------------------------------------------------------------- helpers
def _group_names(names: list[str]) -> list[str]:
    """HDF5 group names: the monitor names, except names HDF5 cannot hold ('.', '..')."""
    return [n if n not in (".", "..") and "/" not in n else f"monitor_{i}"
            for i, n in enumerate(names)]


def _write_monitor(g: h5py.Group, md: MonitorData, compression: str | None,
                   per_length: bool) -> None:
    """Monitor group ``g``: name, kind and attrs, then each array with its ``units``
    (``per_length``: a 2D run, energies in J/m)."""
    g.attrs["name"] = md.name
    g.attrs["kind"] = md.kind
    g.attrs["attrs"] = json.dumps(md.attrs)
    for sub, arrays in (("data", md.data), ("coords", md.coords)):
        h = g.create_group(sub, track_order=True)
        for key, a in arrays.items():
            opts = {"compression": compression} if compression and a.ndim and a.size else {}
            ds = h.create_dataset(key, data=a, **opts)
            unit = units(md, key, per_length=per_length)
            if unit is not None:
                ds.attrs["units"] = unit


def _read_monitor(g: h5py.Group) -> MonitorData:
    def read(sub: str) -> dict[str, np.ndarray]:
        return {k: np.asarray(ds[()]) for k, ds in g[sub].items()}

    return MonitorData(
        name=_str(g.attrs["name"]),
        kind=_str(g.attrs["kind"]),
        data=read("data"),
        coords=read("coords"),
        attrs=json.loads(_str(g.attrs["attrs"])),
    )


def _str(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _scenario(text: str):
    if not text:
        return None
    from ..model import load_scenario

    return load_scenario(text)


__all__ = ["FORMAT", "FORMAT_VERSION", "load_results", "save_results"]
