"""FieldSnapshot and DFTMonitor data as XDMF 3 + HDF5, for ParaView and VisIt.

``write_xdmf(md, "snap.xmf")`` writes ``snap.h5`` (the arrays) and ``snap.xmf`` (XML
that points into it). The XML holds one Temporal collection: one entry per snapshot
(Time = t in s) or, for a DFT monitor, per frequency (Time = f in Hz, so that the time
slider steps through frequencies). Each entry is a 3DRectMesh with VXVYVZ geometry and
one node-centred scalar Attribute per component; a DFT monitor gives three per
component: ``<c>_abs`` (modulus), ``<c>_re`` and ``<c>_im``.

Yee components sit on staggered positions. By default (``merge=None``) components share
one grid only when their axes coincide, so every value is drawn where it was sampled;
otherwise each component gets its own grid and an entry is a Spatial collection of
them. ``merge=True`` puts all components on the first one's axes whenever their shapes
agree (positions off by up to half a cell, handy for vector glyphs); ``merge=False``
always writes one grid per component.

XDMF's 3DRectMesh wants arrays with x varying fastest, shape (nz, ny, nx), whereas
emjax arrays are (nx, ny, nz) with z fastest; each frame is therefore written
transposed, at ``/fields/<attribute>/<frame:06d>``, with axes at ``/coords/<grid>/x``
(and ``y``, ``z``), all in metres. Topology and DataItem dimensions are "nz ny nx".
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import h5py
import numpy as np

from ..results import MonitorData

_Grid = tuple[str, tuple[np.ndarray, np.ndarray, np.ndarray], list[tuple[str, np.ndarray]]]


def write_xdmf(monitor: MonitorData, path: str | Path, *, merge: bool | None = None) -> Path:
    """Write ``path`` (XDMF 3 XML) and ``path.with_suffix('.h5')``; returns ``Path(path)``.

    Args:
        monitor: a FieldSnapshot (real, (nsnap, n1, n2, n3) per component) or a DFTMonitor
            (complex, (nf, n1, n2, n3) per component), with axes ``x_<c>``, ``y_<c>``,
            ``z_<c>`` in m.
        path: the XML file, e.g. "out/snap.xmf"; must not end in ".h5".
        merge: None: one grid for components whose axes coincide, else one each;
            True: one grid on the first component's axes when all shapes agree;
            False: one grid per component.
    """
    path = Path(path)
    if monitor.kind not in ("FieldSnapshot", "DFTMonitor"):
        raise ValueError(f"write_xdmf takes a FieldSnapshot or DFTMonitor; "
                         f"{monitor.kind} '{monitor.name}' has no grid to draw")
    if path.suffix == ".h5":
        raise ValueError(f"XDMF path '{path}' ends in .h5, the name its data file takes; "
                         "give it an .xmf or .xdmf suffix")
    h5path = path.with_suffix(".h5")
    if monitor.kind == "FieldSnapshot":
        times, time_unit = monitor.coords["t"], "s"
    else:
        times, time_unit = monitor.coords["f"], "Hz"
    grids = _grids(monitor, merge)
    nframes = len(times)

    with h5py.File(h5path, "w", track_order=True) as f:
        f.attrs["monitor"] = monitor.name
        f.attrs["kind"] = monitor.kind
        for gname, axes, attrs in grids:
            for ax, c in zip("xyz", axes, strict=True):
                f.create_dataset(f"coords/{gname}/{ax}", data=np.asarray(c, np.float64))
            for aname, arr in attrs:
                for k in range(nframes):
                    f.create_dataset(f"fields/{aname}/{k:06d}", data=arr[k].T)

    root = ET.Element("Xdmf", Version="3.0")
    dom = ET.SubElement(root, "Domain")
    coll = ET.SubElement(dom, "Grid", Name=monitor.name, GridType="Collection",
                         CollectionType="Temporal")
    ET.SubElement(coll, "Information", Name="TimeUnit", Value=time_unit)
    h5name = h5path.name
    for k in range(nframes):
        if len(grids) == 1:
            parent = coll
        else:
            parent = ET.SubElement(coll, "Grid", Name=f"{monitor.name}_{k:06d}",
                                   GridType="Collection", CollectionType="Spatial")
            ET.SubElement(parent, "Time", Value=repr(float(times[k])))
        for gname, axes, attrs in grids:
            nx, ny, nz = (len(c) for c in axes)
            dims = f"{nz} {ny} {nx}"
            g = ET.SubElement(parent, "Grid", Name=f"{gname}_{k:06d}", GridType="Uniform")
            if len(grids) == 1:
                ET.SubElement(g, "Time", Value=repr(float(times[k])))
            ET.SubElement(g, "Topology", TopologyType="3DRectMesh", Dimensions=dims)
            geo = ET.SubElement(g, "Geometry", GeometryType="VXVYVZ")
            for ax, c in zip("xyz", axes, strict=True):
                _item(geo, f"{h5name}:/coords/{gname}/{ax}", str(len(c)), np.dtype(np.float64))
            for aname, arr in attrs:
                a = ET.SubElement(g, "Attribute", Name=aname, AttributeType="Scalar",
                                  Center="Node")
                _item(a, f"{h5name}:/fields/{aname}/{k:06d}", dims, arr.dtype)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    path.write_text('<?xml version="1.0" ?>\n<!DOCTYPE Xdmf SYSTEM "Xdmf.dtd" []>\n'
                    + text + "\n")
    return path


def _item(parent: ET.Element, ref: str, dims: str, dtype: np.dtype) -> None:
    dtype = np.dtype(dtype)
    number = {"f": "Float", "i": "Int", "u": "UInt"}[dtype.kind]
    it = ET.SubElement(parent, "DataItem", Dimensions=dims, NumberType=number,
                       Precision=str(dtype.itemsize), Format="HDF")
    it.text = ref


def _grids(md: MonitorData, merge: bool | None) -> list[_Grid]:
    """[(grid name, (x, y, z) axes in m, [(attribute name, (nframes, n1, n2, n3))])]."""
    comps = list(md.data)
    if not comps:
        raise ValueError(f"{md.kind} '{md.name}' holds no components to write")
    axes = {c: md.axes(c) for c in comps}
    for c in comps:
        shape = md.data[c].shape[1:]
        if md.data[c].ndim != 4 or shape != tuple(len(a) for a in axes[c]):
            raise ValueError(f"{md.kind} '{md.name}': {c} has shape {md.data[c].shape}, axes "
                             f"of lengths {tuple(len(a) for a in axes[c])}; expected "
                             "(nframes, len(x), len(y), len(z))")

    def attrs_of(c: str) -> list[tuple[str, np.ndarray]]:
        a = md.data[c]
        if md.kind == "DFTMonitor":
            return [(f"{c}_abs", np.abs(a)), (f"{c}_re", a.real.copy()),
                    (f"{c}_im", a.imag.copy())]
        return [(c, a)]

    first = axes[comps[0]]
    same_shape = all(md.data[c].shape == md.data[comps[0]].shape for c in comps)
    same_axes = same_shape and all(_close(axes[c], first) for c in comps)
    if merge is None:
        merge = same_axes
    if merge and same_shape:
        return [("grid", first, [x for c in comps for x in attrs_of(c)])]
    return [(c, axes[c], attrs_of(c)) for c in comps]


def _close(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> bool:
    out = True
    for u, v in zip(a, b, strict=True):
        span = float(np.ptp(v)) if len(v) > 1 else max(abs(float(v[0])), 1.0)
        out &= u.shape == v.shape and bool(np.allclose(u, v, rtol=0, atol=1e-9 * span))
    return out


__all__ = ["write_xdmf"]
