"""Validation of the 3D conformal PEC (:mod:`emjax.fdtd.conformal3d`).

- ``pec-sphere-cavity``: a vacuum sphere of radius a carved out of PEC (a PEC box
  filling the domain, then a vacuum Sphere), excited by a broadband z dipole off the
  centre and off every symmetry plane, with a probe elsewhere. The two lowest
  resonances, TM_101 (x = ka, root of d/dr[r j_1(kr)] = 0 at r = a: 2.7437) and TE_101
  (j_1(ka) = 0: 4.4934), both found with scipy, against the probe signal's matrix
  pencil frequencies, at courant 0.99 (the regular time step). With conformal PEC at
  30 cells per radius each error must be at most 0.1% and the observed order over 10,
  15, 20 and 30 cells per radius at least 1.8; the staircased errors are reported
  beside them (not gated).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..analysis.modes import match_modes, matrix_pencil
from ..constants import c0
from ..model import (
    FDTD3D,
    PEC,
    Box,
    Domain,
    GaussianPulse,
    Medium,
    PointDipole,
    Probe,
    Sphere,
    Structure,
)
from ..records import Check

RADIUS = 0.1
"""Sphere radius in m (the errors are relative: any size gives the same numbers)."""


def sphere_roots() -> tuple[float, float]:
    """(TM_101, TE_101) values of ka for a PEC sphere: the first root of
    d/dx[x j_1(x)] = j_1(x) + x j_1'(x) and of j_1(x), by Brent's method."""
    from scipy.optimize import brentq
    from scipy.special import spherical_jn

    tm = brentq(lambda x: spherical_jn(1, x) + x * spherical_jn(1, x, derivative=True), 2.0, 3.5)
    te = brentq(lambda x: spherical_jn(1, x), 3.5, 5.5)
    return float(tm), float(te)


def sphere_cavity(cells: float, *, conformal: bool = True, periods: float = 24.0,
                  courant: float = 0.99, dtype: str = "float32", radius: float = RADIUS,
                  margin: int = 3) -> FDTD3D:
    """A vacuum sphere of ``cells`` cells per radius in PEC, a z dipole at (0.31, 0.17,
    0.23) a from the centre and an E probe at (-0.27, 0.36, -0.19) a, running
    ``periods`` periods of TM_101. The centre sits on a node (so the grid keeps the
    sphere's cubic symmetries); ``margin`` PEC cells surround it."""
    d = radius / cells
    n = 2 * (math.ceil(cells) + margin)
    half = n // 2 * d
    tm, te = sphere_roots()
    f_tm, f_te = (x * c0 / (2 * math.pi * radius) for x in (tm, te))
    wave = GaussianPulse(f0=0.5 * (f_tm + f_te), fwidth=0.5 * (f_te - f_tm))
    src = tuple(r * radius for r in (0.31, 0.17, 0.23))
    obs = tuple(r * radius for r in (-0.27, 0.36, -0.19))
    return FDTD3D(
        name="sphere-cavity",
        domain=Domain(shape=(n, n, n), spacing=d, origin=(-half, -half, -half)),
        boundary=PEC(),
        structures=[Structure(geometry=Box(center=(0, 0, 0), size=(2 * half,) * 3), medium=PEC()),
                    Structure(geometry=Sphere(center=(0, 0, 0), radius=radius),
                              medium=Medium())],
        sources=[PointDipole(position=src, polarization="z", waveform=wave)],
        monitors=[Probe(name="probe", positions=[obs], components=["Ex", "Ey", "Ez"])],
        duration=periods / f_tm, courant=courant, dtype=dtype, conformal_pec=conformal,
    )


def resonances(sim: FDTD3D, rel_tol: float = 0.1) -> tuple[float | None, float | None]:
    """(TM_101, TE_101) frequencies in Hz of a run of :func:`sphere_cavity`, from the
    matrix pencil of its probe signal after the pulse (None: none within ``rel_tol``)."""
    res = sim.run(progress=False)
    p = res["probe"]
    sig = sum(np.asarray(p.data[c][:, 0], np.float64) for c in ("Ex", "Ey", "Ez"))
    t = p.coords["t_E"]
    wave = sim.sources[0].waveform
    start = int(np.searchsorted(t, 2 * wave.offset * wave.tau))
    step = max(1, int(1 / (8 * (wave.f0 + 4 * wave.fwidth) * sim.dt)))
    x = sig[start::step]
    tm, te = sphere_roots()
    targets = [k * c0 / (2 * math.pi * RADIUS) * RADIUS / sim.structures[1].geometry.radius
               for k in (tm, te)]
    found = match_modes(matrix_pencil(x, sim.dt * step, order=40), targets, rel_tol=rel_tol)
    return tuple(None if m is None else m.frequency for m in found)


def errors(cells, *, conformal: bool, **kw) -> np.ndarray:
    """Signed relative errors (len(cells), 2) of TM_101 and TE_101 at each resolution
    (FDTD minus exact, over exact; NaN where the mode was not found)."""
    tm, te = sphere_roots()
    out = []
    for n in cells:
        sim = sphere_cavity(n, conformal=conformal, **kw)
        a = sim.structures[1].geometry.radius
        exact = [x * c0 / (2 * math.pi * a) for x in (tm, te)]
        got = resonances(sim)
        out.append([np.nan if g is None else (g - f) / f for g, f in zip(got, exact,
                                                                            strict=True)])
    return np.array(out)


def observed_order(cells, err) -> float:
    """Least-squares slope of log(error) against log(cells per radius)."""
    if not np.all(np.isfinite(err)) or np.any(err <= 0):
        return float("nan")
    return float(-np.polyfit(np.log(cells), np.log(err), 1)[0])


def sphere_cavity_case(cells=(10, 15, 20, 30), limit: float = 1e-3,
                       min_order: float = 1.8, **kw) -> list[Check]:
    """The ``pec-sphere-cavity`` records (see the module docstring)."""
    case = "pec-sphere-cavity"
    out = []
    conf = np.abs(errors(cells, conformal=True, **kw))
    stair = np.abs(errors(cells, conformal=False, **kw))
    for k, mode in enumerate(("TM_101", "TE_101")):
        for n, e, s in zip(cells, conf[:, k], stair[:, k], strict=True):
            out.append(Check(case, f"{mode} relative error, conformal, {n} cells/radius",
                             e, limit if n == cells[-1] else None, "",
                             bool(e <= limit) if n == cells[-1] else True))
            out.append(Check(case, f"{mode} relative error, staircased, {n} cells/radius",
                             s, None, "", True))
        order = observed_order(cells, conf[:, k])
        out.append(Check(case, f"{mode} observed order, conformal", order, min_order, "",
                         bool(order >= min_order), bound=">="))
        out.append(Check(case, f"{mode} observed order, staircased",
                         observed_order(cells, stair[:, k]), None, "", True))
    return out


CASES: dict[str, Callable[..., list[Check]]] = {"pec-sphere-cavity": sphere_cavity_case}
