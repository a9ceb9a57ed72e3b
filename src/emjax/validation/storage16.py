"""Validation of 16-bit field storage (``storage_dtype``, :mod:`emjax.fdtd.fieldstore`;
issue #23, item 2): what rounding E and H to 16 bits after every half-step costs on the
validation cases, against the same scenario stored in float32 and against the analytic
references, with issue 23's limits:

- ``cavity``: the three lowest resonances of :func:`.fdtd3d.cavity_scenario` (PEC box,
  three dipoles, matrix pencil) within 1e-4 relative of the float32 run's.
- ``CPML reflection``: :func:`.fdtd3d.cpml_pair` (a dipole 3 cells from a 10-cell CPML,
  its reference in a large box), both runs stored in 16 bits: <= -60 dB.
- ``sphere RCS``: seed 000's dielectric sphere (:func:`.scatter.sphere_scenario`,
  smoothed), E- and H-plane RCS within 0.1 dB RMS of the float32 run's (inside the
  30 dB window of the Mie reference).
- ``TF/SF leakage``: :func:`.scatter.leakage_scenario` (plane wave along +z in an empty
  CPML box): peak scattered-field over total-field energy <= -60 dB.

The checks report what each storage reaches; rounding noise grows with the steps
(about 2^-9 relative per half-step for bfloat16, 2^-12 for float16), and is largest
where a field is far above its neighbours' (the near field of a point source).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..analysis.modes import match_modes, matrix_pencil
from ..analysis.nf2ff import to_db
from ..model import FDTD3D
from ..records import Check, on_gpu
from .fdtd3d import cavity_modes, cavity_scenario, cpml_pair, reflection_db
from .scatter import leakage_scenario, measure_leakage, sphere_scenario

STORAGES = ("bfloat16", "float16")


def stored(sim: FDTD3D, storage_dtype: str | None) -> FDTD3D:
    """``sim`` with its fields stored in ``storage_dtype`` (None: in dtype)."""
    return FDTD3D.model_validate({**sim.model_dump(), "storage_dtype": storage_dtype})


def _cavity_frequencies(storage_dtype: str | None, size, spacing: float) -> list[float]:
    modes = cavity_modes(size, 3)
    f_lo, f_hi = modes[0][1], modes[-1][1]
    f0, fwidth = 0.5 * (f_lo + f_hi), 0.5 * (f_hi - f_lo) + 0.2 * f_lo
    sim = stored(cavity_scenario(size, spacing, 40e-9, f0, fwidth, dtype="float32"),
                 storage_dtype)
    p = sim.run(progress=False)["probe"]
    sig = sum(p.data[c][:, 0].astype(np.float64) for c in ("Ex", "Ey", "Ez"))
    wave = sim.sources[0].waveform
    start = int(np.searchsorted(p.coords["t_E"], 2 * wave.offset * wave.tau))
    step = max(1, int(1 / (8 * (f0 + 4 * fwidth) * sim.dt)))
    found = match_modes(matrix_pencil(sig[start::step], sim.dt * step, order=60),
                        [f for _, f in modes])
    return [m.frequency if m is not None else math.nan for m in found]


def _rcs_db(res) -> np.ndarray:
    """E- and H-plane RCS (dB m^2) at 1 GHz, 0..180 degrees by 1."""
    th = np.radians(np.arange(0.0, 180.5, 1.0))
    return np.stack([to_db(res["far"].rcs(th, phi, 1e9)) for phi in (0.0, math.pi / 2)])


def storage16(spacing: float | None = None, leakage_n: int | None = None) -> list[Check]:
    """Every check for bfloat16 and float16 storage. ``spacing``: the sphere's cells (m;
    default 3.33 mm on a GPU, 5 mm on a CPU); ``leakage_n``: the leakage box's cells
    per side (default 40 on a GPU, 32 on a CPU)."""
    case = "fdtd3d-storage16"
    gpu = on_gpu()
    spacing = spacing or (10e-3 / 3 if gpu else 5e-3)
    leakage_n = leakage_n or (40 if gpu else 32)
    size, cell = (0.1, 0.08, 0.06), 5e-3
    base_f = _cavity_frequencies(None, size, cell)
    sphere = sphere_scenario(spacing, subpixel=True)
    base_rcs = _rcs_db(stored(sphere, None).run(progress=False))
    window = base_rcs >= base_rcs.max(axis=1, keepdims=True) - 30.0
    test, ref = cpml_pair()
    out = []
    for sd in STORAGES:
        f = _cavity_frequencies(sd, size, cell)
        worst = max(abs(a - b) / b for a, b in zip(f, base_f, strict=True))
        out.append(Check(case, f"{sd}: cavity resonances against float32 (3 modes, "
                         f"{cell * 1e3:.3g} mm)", worst, 1e-4, "", worst <= 1e-4))
        r = reflection_db(stored(test, sd).run(progress=False),
                          stored(ref, sd).run(progress=False), test.sources[0].waveform,
                          test.dt)
        out.append(Check(case, f"{sd}: CPML reflection (10 cells, dipole 3 cells away)", r,
                         -60.0, "dB", r <= -60.0))
        diff = _rcs_db(stored(sphere, sd).run(progress=False)) - base_rcs
        for k, plane in enumerate("EH"):
            rms = float(np.sqrt(np.mean(diff[k][window[k]] ** 2)))
            out.append(Check(case, f"{sd}: {plane}-plane RCS against float32, RMS "
                             f"({spacing * 1e3:.3g} mm)", rms, 0.1, "dB", rms <= 0.1))
        db = measure_leakage(stored(leakage_scenario(leakage_n), sd))
        out.append(Check(case, f"{sd}: TF/SF leakage ({leakage_n}^3, along +z)", db, -60.0,
                         "dB", db <= -60.0))
    return out


CASES: dict[str, Callable[..., list[Check]]] = {"fdtd3d-storage16": storage16}
