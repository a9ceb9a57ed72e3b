"""Fuzzed scenario documents: each one runs or is refused by one of our errors.

Hypothesis draws small valid scenario documents (dicts), optionally damages them
(wrong types, missing and unknown keys, out-of-range values, NaN and infinities,
objects moved outside the domain, enormous grids, enormous step counts, truncated
text) and writes them as TOML or JSON. Every document must then either load and run
(kept tiny: a few cells, at most ``MAX_RUN_STEPS`` steps) or raise an
:class:`emjax.errors.EmjaxError` or a pydantic ``ValidationError`` with a message;
anything else, and any example slower than ``HANG_S``, fails the test. A subset goes
through the command line (``emjax.cli.main``), which must exit 0, 1 or 2 with a
one-paragraph message and never print a traceback.

Adding a scenario kind: write a strategy of small valid documents for it and put it
in ``VALID_DOCS``; the damage is generic (it walks any document), and
``test_every_scenario_kind_is_fuzzed`` fails until the kind is there.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import signal
import tempfile
import typing
from collections import Counter
from datetime import timedelta
from pathlib import Path

import numpy as np
import pydantic
import pytest
import tomli_w
from hypothesis import HealthCheck, example, find, given, settings
from hypothesis import strategies as st

from emjax import cli
from emjax.errors import EmjaxError
from emjax.model import load as load_module
from emjax.model import load_scenario
from emjax.model.scenario import MAX_STEPS

OURS = (EmjaxError, pydantic.ValidationError)
pytestmark = pytest.mark.filterwarnings("ignore::emjax.errors.EmjaxWarning")
MAX_RUN_STEPS = 24  # loaded scenarios run at most this many steps (cheap on these grids)
MAX_RUN_ITERS = 20  # and at most this many Krylov iterations
HANG_S = 60  # an example slower than this is a hang
DEADLINE = timedelta(seconds=30)  # hypothesis' own per-example limit (includes compilation)

# --------------------------------------------------------------------------------------
# Valid documents, one strategy per scenario kind (keep them tiny: they get compiled)
# --------------------------------------------------------------------------------------

_unit = st.floats(0.0, 1.0)
_FREQS = st.floats(0.2e9, 20e9)


def _point(draw, lo, hi) -> list[float]:
    """A point of the box [lo, hi] (per-axis bounds)."""
    return [lo[a] + draw(_unit) * (hi[a] - lo[a]) for a in range(3)]


@st.composite
def _waveform(draw) -> dict:
    kind = draw(st.sampled_from(["GaussianPulse", "RickerWavelet", "ContinuousWave"]))
    if kind == "GaussianPulse":
        w = {"type": kind, "f0": draw(_FREQS), "fwidth": draw(_FREQS)}
        if draw(st.booleans()):
            w["remove_dc"] = draw(st.booleans())
            w["offset"] = draw(st.floats(0.5, 6.0))
        return w
    if kind == "RickerWavelet":
        w = {"type": kind, "fp": draw(_FREQS)}
        if draw(st.booleans()):
            w["delay"] = draw(st.floats(0.0, 1e-9))
        return w
    return {"type": kind, "frequency": draw(_FREQS), "ramp": draw(st.floats(0.0, 1e-9)),
            "phase": draw(st.floats(-3.0, 3.0))}


@st.composite
def _medium(draw, pec_ok: bool = True, poles_ok: bool = True) -> dict:
    """A constant medium, PEC (``pec_ok``) or a dispersive PoleMedium (``poles_ok``)."""
    if pec_ok and draw(st.integers(0, 4)) == 0:
        return {"type": "PEC"}
    if poles_ok and draw(st.integers(0, 5)) == 0:
        return draw(_pole_medium())
    m = {"type": "Medium", "eps_r": draw(st.floats(1.0, 9.0))}
    if draw(st.booleans()):
        m["sigma"] = draw(st.floats(0.0, 0.5))
        m["mu_r"] = draw(st.floats(1.0, 2.0))
        m["sigma_m"] = draw(st.floats(0.0, 50.0))
    return m


@st.composite
def _pole_medium(draw) -> dict:
    """A passive dispersive medium: eps_inf, a static sigma and one to three poles."""
    poles = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["Debye", "Drude", "Lorentz"]))
        if kind == "Debye":
            poles.append({"type": kind, "delta_eps": draw(st.floats(0.1, 60.0)),
                          "tau": draw(st.floats(1e-12, 1e-9))})
        elif kind == "Drude":
            poles.append({"type": kind, "omega_p": draw(st.floats(1e9, 1e12)),
                          "gamma": draw(st.floats(1e8, 1e11))})
        else:
            poles.append({"type": kind, "delta_eps": draw(st.floats(0.1, 5.0)),
                          "omega_0": draw(st.floats(1e9, 1e11)),
                          "delta": draw(st.floats(1e7, 1e10))})
    return {"type": "PoleMedium", "eps_inf": draw(st.floats(1.0, 5.0)),
            "sigma": draw(st.floats(0.0, 0.1)), "poles": poles}


@st.composite
def _geometry(draw, lo, hi, d) -> dict:
    kind = draw(st.sampled_from(["Box", "Sphere", "Cylinder", "Ellipsoid", "Voxels"]))
    c = _point(draw, lo, hi)
    r = lambda: draw(st.floats(0.3, 2.0)) * d  # noqa: E731
    if kind == "Box":
        return {"type": kind, "center": c, "size": [r(), r(), r()]}
    if kind == "Sphere":
        return {"type": kind, "center": c, "radius": r()}
    if kind == "Cylinder":
        axis = draw(st.one_of(st.sampled_from(["x", "y", "z"]),
                              st.lists(st.floats(0.1, 1.0), min_size=3, max_size=3)))
        return {"type": kind, "center": c, "radius": r(), "length": r(), "axis": axis}
    if kind == "Ellipsoid":
        return {"type": kind, "center": c, "semi_axes": [r(), r(), r()]}
    n = draw(st.integers(1, 2))
    labels = [[[draw(st.integers(0, 2)) for _ in range(n)] for _ in range(n)] for _ in range(n)]
    return {"type": kind, "origin": c, "spacing": [d, d, d], "labels": labels,
            "media": {"1": draw(_medium()), "2": draw(_medium())}}


@st.composite
def fdtd3d_docs(draw) -> dict:
    """A small valid FDTD3D document using (between examples) every component type."""
    d = draw(st.sampled_from([0.5e-3, 1e-3, 2e-3]))
    per_axis = draw(st.booleans())
    dxyz = [d * draw(st.sampled_from([0.8, 1.0, 1.25])) if per_axis else d for _ in range(3)]
    bkind = draw(st.sampled_from(["PEC", "PMC", "CPML", "Mur", "Boundaries"]))
    t = draw(st.integers(1, 2))
    if bkind == "Boundaries":
        face = st.one_of(st.just({"type": "PEC"}), st.just({"type": "PMC"}),
                         st.just({"type": "Mur"}), st.just({"type": "CPML", "thickness": t}))
        pairs = [draw(st.one_of(face, st.lists(face, min_size=2, max_size=2)))
                 for _ in range(3)]
        boundary = {"type": "Boundaries", "x": pairs[0], "y": pairs[1], "z": pairs[2]}
        faces = [(p, p) if isinstance(p, dict) else tuple(p) for p in pairs]
    else:
        boundary = {"type": bkind, "thickness": t} if bkind == "CPML" else {"type": bkind}
        faces = [(boundary, boundary)] * 3
    pml = [[f.get("thickness", 0) if f["type"] == "CPML" else 0 for f in pair]
           for pair in faces]
    cells = [draw(st.integers(max(3, 3 * max(p)), max(3, 3 * max(p)) + 3)) for p in pml]
    dom: dict = {"spacing": dxyz if per_axis else d}
    extent = [n * dx for n, dx in zip(cells, dxyz, strict=True)]
    if draw(st.booleans()):
        dom["shape"] = cells
    else:  # a size that rounds to the same cells
        dom["size"] = [e + draw(st.floats(-0.3, 0.3)) * dx
                       for e, dx in zip(extent, dxyz, strict=True)]
    lower = [-e / 2 for e in extent]
    if draw(st.booleans()):
        lower = [draw(st.floats(-0.01, 0.01)) for _ in range(3)]
        dom["origin"] = lower
    upper = [lo + e for lo, e in zip(lower, extent, strict=True)]
    ilo = [lower[a] + pml[a][0] * dxyz[a] for a in range(3)]
    ihi = [upper[a] - pml[a][1] * dxyz[a] for a in range(3)]

    doc: dict = {"type": "FDTD3D", "domain": dom, "boundary": boundary}
    if draw(st.booleans()):
        doc["name"] = draw(st.sampled_from(["fuzz", "case-1", "a.b_c"]))
    if draw(st.booleans()):
        doc["background"] = draw(_medium(pec_ok=False, poles_ok=False))
    doc["structures"] = []
    # Structures may reach out of the domain or lie wholly outside it.
    out_lo = [lo - (hi - lo) for lo, hi in zip(lower, upper, strict=True)]
    out_hi = [hi + (hi - lo) for lo, hi in zip(lower, upper, strict=True)]
    for _ in range(draw(st.integers(0, 3))):
        g = draw(_geometry(out_lo, out_hi, min(dxyz)))
        s = {"geometry": g}
        if g["type"] != "Voxels":
            s["medium"] = draw(_medium())
        doc["structures"].append(s)
    doc["sources"] = []
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["PointDipole", "EdgeSource"]))
        s = {"type": kind, "position": _point(draw, ilo, ihi),
             "polarization": draw(st.sampled_from("xyz")), "waveform": draw(_waveform())}
        if kind == "EdgeSource":
            s["kind"] = draw(st.sampled_from(["current", "voltage"]))
            s["resistance"] = draw(st.floats(1.0, 100.0))
        doc["sources"].append(s)
    doc["monitors"] = []
    comps = st.lists(st.sampled_from(["Ex", "Ey", "Ez", "Hx", "Hy", "Hz"]), min_size=1,
                     max_size=3, unique=True)
    for k in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["Probe", "DFTMonitor", "FieldSnapshot", "EnergyMonitor",
                                     "FluxMonitor"]))
        m: dict = {"type": kind, "name": f"m{k}"}
        if kind == "Probe":
            m["positions"] = [_point(draw, ilo, ihi) for _ in range(draw(st.integers(1, 2)))]
            m["components"] = draw(comps)
        elif kind == "FluxMonitor":
            a, b = _point(draw, ilo, ihi), _point(draw, ilo, ihi)
            ax = draw(st.integers(0, 2)) if draw(st.booleans()) else -1  # -1: a box
            if ax >= 0:
                b[ax] = a[ax]
            # a plane has one zero extent, a box none: a tangential extent that came out
            # zero spans the interior instead (thinner than a cell: refused at run)
            for k in range(3):
                if k != ax and a[k] == b[k]:
                    a[k], b[k] = ilo[k], ihi[k]
            m["center"] = [(x + y) / 2 for x, y in zip(a, b, strict=True)]
            m["size"] = [abs(x - y) for x, y in zip(a, b, strict=True)]
            m["frequencies"] = draw(st.lists(_FREQS, min_size=1, max_size=2))
            m["direction"] = draw(st.sampled_from(["+", "-"]))
        elif kind in ("DFTMonitor", "FieldSnapshot"):
            a, b = _point(draw, ilo, ihi), _point(draw, ilo, ihi)
            if draw(st.booleans()):  # a plane
                ax = draw(st.integers(0, 2))
                b[ax] = a[ax]
            m["center"] = [(x + y) / 2 for x, y in zip(a, b, strict=True)]
            m["size"] = [abs(x - y) for x, y in zip(a, b, strict=True)]
            m["components"] = draw(comps)
            if kind == "DFTMonitor":
                m["frequencies"] = draw(st.lists(_FREQS, min_size=1, max_size=2))
            else:
                m["interval"] = draw(st.integers(1, 3))
        else:
            m["interval"] = draw(st.integers(1, 2))
        doc["monitors"].append(m)
    if draw(st.booleans()):
        doc["steps"] = draw(st.integers(1, MAX_RUN_STEPS))
    else:  # a few time steps' worth (dt is about 0.5 to 2 ps here)
        doc["duration"] = draw(st.floats(1e-13, 3e-12))
    if draw(st.booleans()):
        doc["courant"] = draw(st.floats(0.1, 1.0))
    for key, opts in (("dtype", ["float32", "float64"]), ("storage", ["indices", "arrays"]),
                      ("cpml_strategy", ["combined", "per_face"])):
        if draw(st.booleans()):
            doc[key] = draw(st.sampled_from(opts))
    return doc


@st.composite
def fdtd2d_docs(draw) -> dict:
    """A small valid FDTD2D document (TMz or TEz) on the plane z = 0."""
    d = draw(st.sampled_from([0.5e-3, 1e-3, 2e-3]))
    pol = draw(st.sampled_from(["TMz", "TEz"]))
    t = draw(st.integers(1, 2))
    bkind = draw(st.sampled_from(["PEC", "CPML", "SplitPML", "Boundaries2D"]))
    face = st.sampled_from([{"type": "PEC"}, {"type": "CPML", "thickness": t},
                            {"type": "SplitPML", "thickness": t}])
    if bkind == "Boundaries2D":
        pairs = [draw(st.one_of(face, st.lists(face, min_size=2, max_size=2))) for _ in "xy"]
        boundary = {"type": bkind, "x": pairs[0], "y": pairs[1]}
        faces = [(p, p) if isinstance(p, dict) else tuple(p) for p in pairs]
    else:
        boundary = {"type": bkind} if bkind == "PEC" else {"type": bkind, "thickness": t}
        faces = [(boundary, boundary)] * 2
    pml = [[f.get("thickness", 0) for f in pair] for pair in faces]
    cells = [draw(st.integers(max(3, 3 * max(p)), max(3, 3 * max(p)) + 5)) for p in pml]
    lower = [-n * d / 2 for n in cells]
    ilo = [lower[a] + pml[a][0] * d for a in range(2)]
    ihi = [-lower[a] - pml[a][1] * d for a in range(2)]
    pt2 = lambda: [ilo[a] + draw(_unit) * (ihi[a] - ilo[a]) for a in range(2)]  # noqa: E731
    doc: dict = {"type": "FDTD2D", "polarization": pol, "boundary": boundary,
                 "domain": {"shape": cells, "spacing": d}, "structures": [], "sources": [],
                 "monitors": []}
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["Rectangle", "Circle", "Polygon", "Sphere"]))
        c = pt2()
        g: dict = {"type": kind}
        if kind == "Rectangle":
            g |= {"center": c, "size": [draw(st.floats(0.5, 3)) * d for _ in "xy"]}
        elif kind == "Circle":
            g |= {"center": c, "radius": draw(st.floats(0.5, 3)) * d}
        elif kind == "Polygon":
            g["vertices"] = [c, [c[0] + 2 * d, c[1]], [c[0], c[1] + 2 * d]]
        else:
            g |= {"center": [*c, 0.0], "radius": draw(st.floats(0.5, 3)) * d}
        doc["structures"].append({"geometry": g, "medium": draw(_medium())})
    comps = ["Ez", "Hx", "Hy"] if pol == "TMz" else ["Hz", "Ex", "Ey"]
    for _ in range(draw(st.integers(0, 2))):
        electric = draw(st.booleans())
        along = ("z" if electric else draw(st.sampled_from("xy"))) if pol == "TMz" else (
            draw(st.sampled_from("xy")) if electric else "z")
        doc["sources"].append({"type": "LineSource", "position": pt2(), "polarization": along,
                               "current": "electric" if electric else "magnetic",
                               "waveform": draw(_waveform())})
    for k in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["Probe", "DFTMonitor", "FieldSnapshot", "EnergyMonitor"]))
        m: dict = {"type": kind, "name": f"m{k}"}
        if kind == "Probe":
            m |= {"positions": [[*pt2(), 0.0]], "components": [draw(st.sampled_from(comps))]}
        elif kind != "EnergyMonitor":
            m |= {"center": [*pt2(), 0.0], "size": [0.0, 0.0, 0.0],
                  "components": [draw(st.sampled_from(comps))]}
            m |= {"frequencies": [draw(_FREQS)]} if kind == "DFTMonitor" else {"interval": 1}
        doc["monitors"].append(m)
    doc["steps"] = draw(st.integers(1, MAX_RUN_STEPS))
    return doc


@st.composite
def dgatd_docs(draw) -> dict:
    """A small valid DGATD document on a structured box mesh."""
    h = draw(st.sampled_from([2e-3, 2.5e-3]))
    size = [h * draw(st.integers(2, 3)) for _ in range(3)]
    inner = lambda: [draw(st.floats(0.3, 0.7)) * s for s in size]  # noqa: E731
    doc: dict = {"type": "DGATD", "mesh": {"type": "box", "size": size, "edge_length": h},
                 "steps": draw(st.integers(1, MAX_RUN_STEPS))}
    if draw(st.booleans()):
        doc["background"] = draw(_medium(pec_ok=False, poles_ok=False))
    doc["sources"] = [{"type": "MeshEdgeSource", "position": inner(),
                       "kind": draw(st.sampled_from(["current", "soft"])),
                       "waveform": draw(_waveform())}]
    doc["probes"] = [{"type": "Probe", "name": "p", "positions": [inner()]}]
    if draw(st.booleans()):
        doc["energy"] = [{"type": "EnergyMonitor", "name": "e"}]
    if draw(st.booleans()):
        doc["snapshots"] = [{"name": "s", "interval": 1}]
    if draw(st.booleans()):
        doc["formulation"] = draw(st.sampled_from(["dense", "sparse"]))
    return doc


@st.composite
def fdfd3d_docs(draw) -> dict:
    """A small valid FDFD3D document: 5^3 or 7^3 cells (PML 1 or 2 cells), at most two
    lossy dielectric objects inside the interior, a plane wave, a short Krylov solve.

    The grid is one of two shapes and the Krylov chunk one of two lengths so that the
    jitted solver compiles once per (shape, method, storage, precision) and is reused
    by the later documents."""
    t = draw(st.integers(1, 2))
    cells = [2 * t + 3] * 3  # the fewest the model accepts: 3 interior cells per axis
    d = draw(st.sampled_from([1e-3, 2e-3, 5e-3]))
    per_axis = draw(st.booleans())
    dxyz = [d * draw(st.sampled_from([0.8, 1.0, 1.25])) if per_axis else d for _ in range(3)]
    dom: dict = {"shape": cells, "spacing": dxyz if per_axis else d}
    if draw(st.booleans()):
        dom["origin"] = [draw(st.floats(-0.01, 0.01)) for _ in range(3)]
        lower = dom["origin"]
    else:
        lower = [-n * dx / 2 for n, dx in zip(cells, dxyz, strict=True)]
    # Interior centre and half widths; objects stay within 0.8 of them (out of the PML).
    mid = [lo + n * dx / 2 for lo, n, dx in zip(lower, cells, dxyz, strict=True)]
    half = [(n - 2 * t) * dx / 2 for n, dx in zip(cells, dxyz, strict=True)]
    h = min(half)
    # up to 60 GHz, and at least one cell per free-space wavelength (the model's floor)
    f_max = min(60e9, 0.999 * 2.99792458e8 / max(dxyz))
    doc: dict = {"type": "FDFD3D", "domain": dom, "frequency": draw(st.floats(1e9, f_max)),
                 "boundary": {"type": "PML", "thickness": t}, "structures": []}
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["Sphere", "Box", "Cylinder", "Ellipsoid", "Voxels"]))
        c = [m + draw(st.floats(-0.3, 0.3)) * hw for m, hw in zip(mid, half, strict=True)]
        r = lambda: draw(st.floats(0.05, 0.25)) * h  # noqa: E731
        medium = draw(_medium(pec_ok=False))
        if kind == "Sphere":
            g = {"type": kind, "center": c, "radius": r()}
        elif kind == "Box":
            g = {"type": kind, "center": c, "size": [2 * r(), 2 * r(), 2 * r()]}
        elif kind == "Ellipsoid":
            g = {"type": kind, "center": c, "semi_axes": [r(), r(), r()]}
        elif kind == "Cylinder":
            axis = draw(st.one_of(st.sampled_from(["x", "y", "z"]),
                                  st.lists(st.floats(0.1, 1.0), min_size=3, max_size=3)))
            g = {"type": kind, "center": c, "radius": r(), "length": 2 * r(), "axis": axis}
        else:
            n = draw(st.integers(1, 2))
            sp = 0.25 * h
            labels = [[[draw(st.integers(0, 2)) for _ in range(n)] for _ in range(n)]
                      for _ in range(n)]
            g = {"type": kind, "origin": [x - sp for x in c], "spacing": [sp] * 3,
                 "labels": labels, "media": {"1": medium, "2": draw(_medium(pec_ok=False))}}
        doc["structures"].append({"geometry": g} if kind == "Voxels"
                                 else {"geometry": g, "medium": medium})
    if draw(st.booleans()):
        doc["incident"] = {"type": "PlaneWave", "theta": draw(st.floats(0.0, 180.0)),
                           "phi": draw(st.floats(-360.0, 360.0)),
                           "polarization": draw(st.floats(-360.0, 360.0)),
                           "amplitude": draw(st.floats(0.1, 10.0))}
    if draw(st.booleans()):
        method = draw(st.sampled_from(["cocg", "bicgstab", "cocg_sr"]))
        doc["solver"] = {"type": "FDFDSolver", "method": method,
                         "tol": draw(st.floats(1e-6, 0.5)),
                         "max_iter": draw(st.integers(1, MAX_RUN_ITERS)), "progress_every": 5,
                         "preconditioner": draw(st.sampled_from(["auto", "none", "jacobi"])),
                         "symmetrize": True if method != "bicgstab" else draw(st.booleans()),
                         "raise_on_failure": draw(st.booleans())}
    media = [m for s_ in doc["structures"] for m in
             ([s_["medium"]] if "medium" in s_ else s_["geometry"]["media"].values())]
    magnetic = any(isinstance(m, dict) and (m.get("mu_r", 1) != 1 or m.get("sigma_m", 0) != 0)
                   for m in media)
    storages = ["auto", "indices", "arrays"] + ([] if magnetic else ["separable"])
    for key, opts in (("storage", storages),
                      ("precision", ["complex128", "complex64"]), ("rcs", [True, False]),
                      ("subpixel", [False, True]), ("slice_axis", ["x", "y", "z"])):
        if draw(st.booleans()):
            doc[key] = draw(st.sampled_from(opts))
    if doc.get("rcs", True):
        doc["rcs_angles"] = draw(st.integers(2, 9))
    return doc


VALID_DOCS: dict[str, st.SearchStrategy[dict]] = {
    "FDTD3D": fdtd3d_docs(),
    "FDTD2D": fdtd2d_docs(),
    "DGATD": dgatd_docs(),
    "FDFD3D": fdfd3d_docs(),
}
"""Scenario kind -> strategy of small valid documents. Add new kinds here."""

KNOWN_GAPS: dict[str, dict[str, str]] = {
}
"""Defects not yet fixed in a kind's model or solver (owner, message): damage touching
these keys is skipped for that kind. Delete an entry when its fix lands."""

# --------------------------------------------------------------------------------------
# Damage: generic, it walks any document
# --------------------------------------------------------------------------------------

_BAD_VALUES = [
    math.nan, math.inf, -math.inf, 0, 0.0, -1, -1.5, 1e300, -1e300, 5e-324, 1e-300,
    10**20, -(10**20), 2**64, 2**31, True, False, "x", "", "1e-3", [], [1.0], [1, 2, 3, 4],
    {}, {"type": "Nope"}, None,
]
_HUGE_STEPS = [10**9 + 1, 10**12, 2**63, 10**30]
_HUGE_DURATIONS = [1.0, 1e10, 1e300]


def _paths(doc, prefix=()) -> list[tuple]:
    """Paths (key/index tuples) of every node below the root."""
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc)
    for k, v in items:
        out.append((*prefix, k))
        if isinstance(v, dict | list):
            out += _paths(v, (*prefix, k))
    return out


def _numbers(v) -> bool:
    """A point or a list of points: numbers, possibly nested one level."""
    flat = [x for p in v for x in (p if isinstance(p, list) else [p])] if isinstance(v, list) \
        else []
    return bool(flat) and all(isinstance(x, int | float) and not isinstance(x, bool)
                              for x in flat)


def _parent(doc, path):
    for k in path[:-1]:
        doc = doc[k]
    return doc


@st.composite
def _damage(draw, doc: dict, skip: tuple[str, ...] = ()) -> tuple[dict, str]:
    """One random defect applied to a copy of ``doc``: (new document, what was done).

    Paths through a key in ``skip`` are left alone (see KNOWN_GAPS).
    """
    doc = copy.deepcopy(doc)
    paths = [p for p in _paths(doc) if not set(skip) & set(map(str, p))]
    kinds = ["replace", "replace", "replace", "delete", "unknown_key", "huge_grid",
             "huge_steps", "outside", "retag", "hostile_name", "huge_amplitude",
             "mesh_bytes"]
    if {"steps", "duration"} & set(skip):
        kinds.remove("huge_steps")
    if {"edge_length", "spacing"} & set(skip):
        kinds.remove("huge_grid")
    kind = draw(st.sampled_from(kinds))
    if not paths:
        return doc, "none"
    if kind == "replace":
        path = draw(st.sampled_from(paths))
        value = draw(st.sampled_from(_BAD_VALUES))
        _parent(doc, path)[path[-1]] = copy.deepcopy(value)
        return doc, f"{kind} {path} = {value!r}"
    if kind == "delete":
        path = draw(st.sampled_from(paths))
        del _parent(doc, path)[path[-1]]
        return doc, f"{kind} {path}"
    if kind == "unknown_key":
        dicts = [()] + [p for p in paths if isinstance(_parent(doc, p)[p[-1]], dict)]
        path = draw(st.sampled_from(dicts))
        target = _parent(doc, path)[path[-1]] if path else doc
        target["bogus"] = 1
        return doc, f"{kind} at {path}"
    if kind == "huge_grid" and isinstance(doc.get("mesh"), dict):
        doc["mesh"]["edge_length"] = draw(st.sampled_from([1e-6, 1e-9, 1e-300]))
        return doc, f"{kind} {doc['mesh']}"
    if kind == "huge_grid" and isinstance(doc.get("domain"), dict):
        dom = doc["domain"]
        n = draw(st.sampled_from([10**5, 10**6, 2**31 - 1, 2**31, 10**12]))
        dims = 2 if doc.get("type") == "FDTD2D" else 3  # (shape may be damaged already)
        if draw(st.booleans()) or "size" not in dom:
            dom.pop("size", None)
            dom["shape"] = [n] * (dims - 1) + [draw(st.sampled_from([n, 4]))]
        else:  # the same size at an absurdly fine spacing
            dom["spacing"] = draw(st.sampled_from([1e-9, 1e-15, 1e-300, 5e-324]))
        return doc, f"{kind} {dom}"
    if kind == "huge_steps":
        doc.pop("steps", None)
        doc.pop("duration", None)
        if draw(st.booleans()):
            doc["steps"] = draw(st.sampled_from(_HUGE_STEPS))
        else:
            doc["duration"] = draw(st.sampled_from(_HUGE_DURATIONS))
        return doc, f"{kind} steps={doc.get('steps')} duration={doc.get('duration')}"
    if kind == "outside":
        # Sources and monitors (structures may lie outside: valid documents have some).
        points = [p for p in paths if p[-1] in ("position", "center", "positions")
                  and p[0] != "structures" and _numbers(_parent(doc, p)[p[-1]])]
        if points:
            path = draw(st.sampled_from(points))
            shift = draw(st.sampled_from([1.0, -1.0, 1e3]))
            parent = _parent(doc, path)
            v = parent[path[-1]]
            def moved(x):  # points, lists of points, nested as the document has them
                return [moved(y) for y in x] if isinstance(x, list) else x + shift

            parent[path[-1]] = moved(v)
            return doc, f"{kind} {path} + {shift}"
    if kind == "hostile_name":
        names = [p for p in paths if p[-1] == "name"] + [("name",)]
        path = draw(st.sampled_from(names))
        _parent(doc, path)[path[-1]] = draw(st.sampled_from(HOSTILE_NAMES))
        return doc, f"{kind} {path} = {_parent(doc, path)[path[-1]]!r:.60}"
    if kind == "huge_amplitude":
        # a source's amplitude, whether the document sets one or not
        sources = [(*p, "amplitude") for p in paths
                   if (p == ("incident",) or (len(p) == 2 and p[0] == "sources"))
                   and isinstance(_parent(doc, p)[p[-1]], dict)]
        if sources:
            path = draw(st.sampled_from(sources))
            value = draw(st.sampled_from([1e25, 1e30, 3e38, 1e300, -1e38]))
            _parent(doc, path)[path[-1]] = value
            return doc, f"{kind} {path} = {value!r}"
    if kind == "mesh_bytes" and isinstance(doc.get("mesh"), dict):
        doc["mesh"] = {"type": "file", "path": str(_junk_file(draw))}
        return doc, f"{kind} {doc['mesh']['path']}"
    if kind == "retag":
        tags = [p for p in paths if p[-1] == "type"]
        if tags:
            path = draw(st.sampled_from(tags))
            tag = draw(st.sampled_from(["Box", "Sphere", "Medium", "PEC", "CPML", "Probe",
                                        "PointDipole", "GaussianPulse", "FDTD3D", "Nope"]))
            _parent(doc, path)[path[-1]] = tag
            return doc, f"{kind} {path} = {tag}"
    return doc, "none"


HOSTILE_NAMES = ["../x", "../../x", "/tmp/x", "a/b", "a\\b", "", ".hidden", ".", "..",
                 "x" * 5000, "nul\x00x", "c:x", "con", "-", "name with space", "ü", "a\nb",
                 "~", "$HOME", "*", "x" * 101]
"""Scenario and monitor names that must never become a path (most are refused)."""

_JUNK_DIR = Path(tempfile.mkdtemp(prefix="emjax-fuzz-meshes-"))
_junk_count = [0]


def _junk_file(draw) -> Path:
    """A mesh file of random bytes (sometimes empty, sometimes a damaged XML or gmsh
    header), with a mesh suffix, in a folder of this test session."""
    head = draw(st.sampled_from([b"", b"<?xml version='1.0'?><VTKFile type='Unstructured",
                                 b"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n"]))
    body = draw(st.binary(max_size=600))
    suffix = draw(st.sampled_from([".msh", ".vtu", ".vtk", ".xdmf", ".mesh"]))
    _junk_count[0] += 1
    path = _JUNK_DIR / f"junk{_junk_count[0]}{suffix}"
    path.write_bytes(head + body)
    return path


def _deep(draw, text: str, suffix: str) -> str:
    """``text`` with one more key whose value nests thousands deep (arrays or tables)."""
    n = draw(st.sampled_from([100, 1000, 20000]))
    if suffix == ".toml":
        return text + ("\ndeep = " + "[" * n + "]" * n if draw(st.booleans())
                       else "\ndeep = " + "{a = " * n + "1" + "}" * n) + "\n"
    open_, close = ("[", "]") if draw(st.booleans()) else ('{"a":', "}")
    inner = open_ * n + ("" if open_ == "[" else "1") + close * n
    body = text.rstrip()
    return body[:-1] + f', "deep": {inner}}}' if body.endswith("}") else inner


def _to_toml(doc: dict) -> str | None:
    """TOML text of ``doc``, or None where TOML cannot express it (null, odd keys)."""
    try:
        return tomli_w.dumps(doc)
    except (TypeError, ValueError):
        return None


@st.composite
def documents(draw, kinds: tuple[str, ...] | None = None) -> tuple[str, str, str]:
    """(text, suffix, description): a valid or damaged document of one of ``kinds``
    (default: any kind), as text."""
    kind = draw(st.sampled_from(list(kinds or VALID_DOCS)))
    doc = draw(VALID_DOCS[kind])
    what = [kind]
    # One document in twenty stays valid; the rest carry one to three defects, some of
    # which leave it valid (an optional key deleted, an object moved within the domain).
    # (Hypothesis favours the first entry of sampled_from: 0 comes last.)
    for _ in range(draw(st.sampled_from([*[1] * 6, *[2] * 6, *[3] * 4, 0, 0, 0]))):
        doc, how = draw(_damage(doc, tuple(KNOWN_GAPS.get(kind, ()))))
        what.append(how)
    fmt = draw(st.sampled_from(["toml", "json", "json1"]))
    text = _to_toml(doc) if fmt == "toml" else None
    if text is None:
        fmt = "json" if fmt == "toml" else fmt
        text = json.dumps(doc, indent=None if fmt == "json1" else 2)  # NaN/Infinity allowed
    suffix = ".toml" if fmt == "toml" else ".json"
    if draw(st.sampled_from([False] * 24 + [True])):
        text = _deep(draw, text, suffix)
        what.append("deeply nested")
    if draw(st.sampled_from([False] * 19 + [True])):  # cut the text short
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]
        what.append("truncated")
    return text, suffix, "; ".join(what)


# --------------------------------------------------------------------------------------
# What every document must do
# --------------------------------------------------------------------------------------


class Hang(Exception):  # noqa: N818 - reads as what happened
    pass


@contextlib.contextmanager
def _watchdog(seconds: int):
    """Raise :class:`Hang` in this (main) thread after ``seconds``."""

    def fire(signum, frame):
        raise Hang(f"example still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _check_message(err: BaseException) -> None:
    msg = cli.error_message(err)
    assert msg.strip(), f"{type(err).__name__} with an empty message"


def outcome(text: str) -> str:
    """'refused' (our error at load), 'refused at run' (our error from the solver) or 'ran'."""
    try:
        sim = load_scenario(text)
    except OURS as e:
        _check_message(e)
        return "refused"
    assert sim.summary()
    try:  # a mesh file is read (and refused) by the estimate
        need = sim.estimate()
    except EmjaxError as e:
        _check_message(e)
        return "refused at run"
    assert need["total"] > 0 and all(v >= 0 for v in need.values()), need
    steps = getattr(sim, "num_steps", getattr(sim, "steps", None))
    if steps is not None:  # absurd step counts are refused by the model
        assert steps <= MAX_STEPS, f"{sim.type}: {steps} steps were accepted"
    if "steps" in type(sim).model_fields and (steps is None or steps > MAX_RUN_STEPS):
        sim = cli.with_steps(sim, MAX_RUN_STEPS)
    solver = getattr(sim, "solver", None)
    if getattr(solver, "max_iter", 0) > MAX_RUN_ITERS:  # FDFD: a short solve, like the steps
        sim = sim.model_copy(update={"solver": solver.model_copy(
            update={"max_iter": MAX_RUN_ITERS})})
    try:
        res = sim.run(progress=False)
    except EmjaxError as e:
        _check_message(e)
        return "refused at run"
    for m in getattr(sim, "monitors", ()):
        assert m.name in res.monitors
    for name, md in res.monitors.items():
        for key, a in md.data.items():
            a = np.asarray(a)
            if a.dtype.kind in "fc":
                assert np.all(np.isfinite(a)), f"monitor '{name}' {key} holds inf/NaN"
    return "ran"


# Drawn afresh on every run (no derandomize): a failure prints the seed to reproduce it
# (`--hypothesis-seed=N`).
_SETTINGS = dict(derandomize=False, deadline=DEADLINE, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
N_DOCS = 70
"""Documents per scenario kind and test run, drawn afresh on every run, so the documents
seen grow with the runs (250, then 200 as the suite grew; 100 since the ports, CAD,
examples and docs tests joined; 70 since the suite reached CI's 10 minutes, 2026-11-28.
60 let FDFD3D run only 1 of 60 in one CI run (2026-11-27): hypothesis's first draws are
simple ones, and far more of them are refused than of a long run's (20% of 700 FDFD3D
documents ran)."""
N_DOCS_OF = {"FDTD3D": 110, "FDTD2D": 110, "DGATD": 35, "FDFD3D": 50}
"""Per-kind exceptions to N_DOCS: the FDTD documents run least often (7.7% of 700
FDTD3D documents ran, 14% of 1500 FDTD2D, 2026-11-27), so they keep 200 for 'some ran'
to hold without luck (140 since 2026-11-28, 110 since 2026-11-29; the simplest valid
document is always drawn); they are the cheap kinds. DGATD documents
run most often and cost most (48 s for 100 on the 2-core VM): 35 (30 let only 3 run
once, 2026-11-27). FDFD3D documents compile a solver per (shape, method, storage,
precision, preconditioner) they draw: 10-43 s for 70 on the 2-core VM, so 50
(2026-11-29)."""
MIN_RAN = 1
"""Documents that must run per kind: the kind's simplest valid document is always
drawn (an explicit example); how many random ones run is luck (DGATD: 3 of 60 in one CI
run, 2026-11-27, where 5 were asked for), so it is printed, not asserted."""
N_CLI_DOCS = 50
"""Documents through ``emjax run`` per test run (100 until 2026-11-28, 60 until
2026-11-29)."""


@pytest.mark.parametrize("kind", sorted(VALID_DOCS))
def test_fuzzed_documents_run_or_are_refused(kind):
    """N_DOCS documents of each kind (one test per kind, so that test workers share
    them)."""
    seen: Counter = Counter()
    fmts: Counter = Counter()
    n_docs = N_DOCS_OF.get(kind, N_DOCS)

    # The kind's simplest valid document, always among the drawn ones: it must run.
    minimal = json.dumps(find(VALID_DOCS[kind], lambda d: True,
                              settings=settings(database=None)))

    @settings(max_examples=n_docs, **_SETTINGS)
    @given(documents((kind,)))
    @example((minimal, ".json", f"{kind}: the simplest valid document"))
    def one(example):
        text, suffix, what = example
        try:
            with _watchdog(HANG_S):
                result = outcome(text)
        except BaseException as e:
            if isinstance(e, OURS):
                raise
            e.add_note(f"document ({what}):\n{text}")
            raise
        seen[result] += 1
        fmts[suffix] += 1

    one()
    total = sum(seen.values())
    print(f"{kind}: {total} documents: {dict(seen)}; {dict(fmts)}")
    assert total >= n_docs, seen
    # Both sides were exercised: documents that ran and documents refused at load (a
    # third at least). (Half refused at load or at run failed once in 23 FDFD3D runs:
    # hypothesis' mix of damaged documents varies, 30-65 of 71 refused; 2026-11-29.)
    assert seen["ran"] >= MIN_RAN and seen["refused"] >= n_docs // 3, seen
    assert fmts[".toml"] >= n_docs // 10 and fmts[".json"] >= n_docs // 10, fmts


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(args)
    return rc, out.getvalue(), err.getvalue()


VALID_TEXT = """type = "FDTD2D"
polarization = "TMz"
steps = 4
domain = { shape = [8, 8], spacing = 1e-3 }
boundary = { type = "PEC" }
[[monitors]]
type = "EnergyMonitor"
name = "w"
"""
"""A document that loads and runs, drawn first by the command-line fuzz."""

TARGETS = {"fresh": ("out.h5", True), "new folders": ("new/sub/out.h5", True),
           "a folder": ("afolder", False), "under a file": ("afile/out.h5", False),
           "the input": (None, False), "existing": ("old.h5", False),
           "existing, --overwrite": ("old.h5", True)}
"""Output targets the command line is given: (path in the folder, may be written)."""


def _one_error(err: str) -> bool:
    """One paragraph after any warnings, or (an invalid scenario) one line, then one
    indented line per problem."""
    lines = [ln for ln in err.splitlines()
             if ln.strip() and not ln.startswith("emjax run: warning:")]
    return (len(lines) >= 1 and lines[0].startswith("emjax run: error:")
            and all(ln.startswith("  ") for ln in lines[1:]))


def test_fuzzed_documents_through_the_command_line():
    seen: Counter = Counter()

    # half the runs write a fresh file, so that some documents run end to end
    targets = st.sampled_from(["fresh"] * (len(TARGETS) - 1) + sorted(TARGETS))

    # a quarter of the runs draw their figures (the figures of odd documents are part
    # of what is tested, but drawing took two thirds of this test's time)
    @settings(max_examples=N_CLI_DOCS, **_SETTINGS)
    @given(documents(), st.booleans(), targets, st.sampled_from([True, True, True, False]))
    @example((VALID_TEXT, ".toml", "valid"), False, "fresh", False)  # end to end, always
    def one(example, dry, target, no_figures):
        text, suffix, what = example
        with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
            path = Path(tmp) / f"doc{suffix}"
            path.write_text(text)
            (Path(tmp) / "afolder").mkdir()
            (Path(tmp) / "afile").write_text("a file")
            (Path(tmp) / "old.h5").write_text("an older result")
            name, writable = TARGETS[target]
            output = path if name is None else Path(tmp) / name
            before = {p.name: p.stat().st_mtime_ns for p in Path(tmp).iterdir()}
            args = ["run", str(path), "-o", str(output), "--no-progress"]
            args += ["--dry-run"] if dry else ["--steps", str(MAX_RUN_STEPS)]
            args += ["--overwrite"] if "overwrite" in target else []
            args += ["--no-figures"] if no_figures and not dry else []
            try:
                with _watchdog(HANG_S):
                    rc, out, err = _cli(args)
            except BaseException as e:
                e.add_note(f"document ({what}), output {target}:\n{text}")
                raise
            # nothing but the results and figures beside them; no temporaries
            new = {p.name for p in Path(tmp).iterdir()} - set(before)
            assert new <= {"out.h5", "new"} or rc == 0, (new, rc, err)
            assert not list(Path(tmp).rglob("*.tmp")), list(Path(tmp).rglob("*"))
            if not writable and not dry:
                assert rc == 2, (target, rc, err)
                assert {p.name: p.stat().st_mtime_ns for p in Path(tmp).iterdir()
                        if p.name in before} == before, target
            assert "Traceback" not in err + out, err
            try:  # from the file, as the command line loads it (data files are checked)
                load_scenario(path)
                loads = True
            except OURS:
                loads = False
            if not loads:
                assert rc == 2 and "emjax run: error:" in err, (rc, err, what)
                assert _one_error(err), err
            elif dry and rc == 2:  # refused by the estimate (it reads mesh files)
                assert "emjax run: error:" in err and _one_error(err), err
            elif dry:
                assert rc in (0, 1) and "device memory needed" in out, (rc, out, err)
            else:
                assert rc in (0, 2), (rc, err)
                if rc == 0:
                    assert writable and output.is_file()
                else:
                    assert "emjax run: error:" in err, err
                    assert _one_error(err), err
            seen[(loads, dry, rc)] += 1

    one()
    print(f"command line: (loads, dry run, exit status) -> count: {dict(seen)}")
    assert sum(seen.values()) >= N_CLI_DOCS, seen
    assert any(rc == 2 for *_, rc in seen) and seen[(True, False, 0)] >= 1, seen


def test_every_scenario_kind_is_fuzzed():
    """Each kind in the Scenario union has a generator of valid documents here."""
    union = typing.get_args(load_module.Scenario)[0]
    classes = typing.get_args(union) or (union,)
    kinds = {c.model_fields["type"].default for c in classes}
    missing = kinds - set(VALID_DOCS)
    assert not missing, f"add a strategy of small valid documents for {sorted(missing)}"


@pytest.mark.parametrize("kind", sorted(VALID_DOCS))
def test_generators_make_valid_documents(kind):
    """The undamaged documents load (so damage, not the generator, causes refusals)."""

    @settings(max_examples=60, database=None, deadline=None)
    @given(VALID_DOCS[kind])
    def one(doc):
        sim = load_scenario(copy.deepcopy(doc))
        assert sim.type == kind
        assert getattr(sim, "num_steps", 1) <= 4 * MAX_RUN_STEPS
        if hasattr(sim, "domain"):
            assert math.prod(sim.domain.cells) <= 12**3

    one()
