"""Validation of plane waves (TF/SF) and far fields (near-to-far) in 3D FDTD.

Every case returns records ``{"case", "metric", "value", "limit", "bound", "unit", "pass"}``.

- ``fdtd3d-tfsf-leakage``: an empty CPML-bounded box, a broadband Gaussian plane wave
  (centre at 30 cells per wavelength, spectral sigma f0/3, so content to ~2.4 f0)
  through a TF/SF box. Metric: the largest field energy ever found in the scattered-
  field region (every Yee sample outside the box and outside the CPML) against the
  largest in the total-field region, in dB. Limit -60 dB, for incidence along +z and
  for an oblique one (theta 40, phi 30, polarization 30 degrees).
- ``fdtd3d-sphere-rcs``: seed 000's sphere (radius 7.2 cm, eps_r = 4) at 1 GHz in a
  32 cm domain with a 10-cell CPML; x-polarised plane wave along +z; bistatic RCS in
  the E-plane (phi = 0) and H-plane (phi = 90 deg) from a NearToFar box against the
  Mie series (:mod:`emjax.analysis.mie`), every 1 deg. Metric: RMS and largest dB
  error over angles where the Mie RCS is within 30 dB of its maximum. Limits at the
  finest cell (3.33 mm): RMS <= 0.5 dB, max <= 1.5 dB; the RMS error must fall from
  each resolution to the next. Cell sizes 5, 4, 3.33 mm on a GPU; 5 and 4 mm on a CPU
  (minutes), where the absolute limits are checked at the finest cell run. The
  sphere's eps is averaged over each cut cell (``FDTD3D.subpixel``,
  :mod:`emjax.grid.subpixel`); on a GPU the staircased sphere runs too (its errors
  measured smaller, 0.07-0.19 dB RMS, but not falling with resolution: backscatter
  moves 0.4 dB per 1% of eps here, and staircasing changes the volume by a fraction
  of a percent from one grid to the next).
- ``fdtd3d-pec-sphere-rcs``: the same for a PEC sphere of radius 9.5 cm (ka = 1.99) in
  a 36 cm domain.
- ``fdtd3d-dipole-radiation``: a z-directed point dipole at the centre of a CPML box,
  20 cells per wavelength; the far-field pattern |E|(theta) / |E|(90 deg) against
  sin(theta) for theta in [10, 170] deg in two phi planes (limit 0.2 dB), and the
  power radiated to the far zone (sphere quadrature of the transform of one box)
  against the Poynting flux through a second, smaller closed box (limit 1%).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from ..analysis.nf2ff import to_db
from ..constants import c0, eps0, mu0
from ..model import (
    CPML,
    FDTD3D,
    PEC,
    Domain,
    GaussianPulse,
    Medium,
    NearToFar,
    PlaneWave,
    PointDipole,
    Sphere,
    Structure,
)
from ..records import Check, on_gpu


# ----------------------------------------------------------------- leakage
def leakage_scenario(n: int = 40, theta: float = 0.0, phi: float = 0.0,
                     polarization: float = 0.0, dtype: str = "float32",
                     cells_per_wavelength: float = 30.0, steps: int | None = None,
                     thickness: int = 8, margin: int = 5) -> FDTD3D:
    """An empty n^3 box (1 mm cells, ``thickness``-cell CPML) with a plane wave whose
    TF/SF box lies ``margin`` cells inside the CPML."""
    d = 1e-3
    f0 = c0 / (cells_per_wavelength * d)
    wave = GaussianPulse(f0=f0, fwidth=f0 / 3)
    sim = FDTD3D(name="tfsf-leakage", domain=Domain(shape=(n, n, n), spacing=d),
                 boundary=CPML(thickness=thickness), steps=1, dtype=dtype,
                 sources=[PlaneWave(theta=theta, phi=phi, polarization=polarization,
                                    waveform=wave, box_margin=margin)])
    if steps is None:  # the pulse, then the crossing of the diagonal, then as much again
        steps = math.ceil((2 * wave.offset * wave.tau + 2 * math.sqrt(3) * n * d / c0)
                          / sim.dt)
    return FDTD3D.model_validate({**sim.model_dump(), "steps": steps})


def tf_masks(shape, lo, hi) -> list[np.ndarray]:
    """Per component (Ex..Hz), True where the sample lies in the TF/SF box."""
    from ..grid.yee import COMPONENTS, OFFSETS

    out = []
    for comp in COMPONENTS:
        m = np.ones(shape, bool)
        for a in range(3):
            i = np.arange(shape[a])
            stag = OFFSETS[comp][a] == 0.5
            inside = (i >= lo[a]) & ((i < hi[a]) if stag else (i <= hi[a]))
            sh = [1, 1, 1]
            sh[a] = shape[a]
            m = m & inside.reshape(sh)
        out.append(m)
    return out


def measure_leakage(sim: FDTD3D, chunk: int = 25) -> float:
    """Peak scattered-field-region energy over peak total-field energy, in dB."""
    from ..fdtd.solver import FDTDSolver

    solver = FDTDSolver(sim, chunk=chunk)
    s = solver.setup
    box = s.planewaves[0][1]
    shape = s.grid.shape
    tf = tf_masks(shape, box.lo, box.hi)
    inner = np.zeros(shape, bool)
    (xl, xh), (yl, yh), (zl, zh) = sim.pml_cells()
    nodes = s.grid.nodes  # physical; shape carries the accelerator's z padding
    inner[xl + 1:nodes[0] - xh - 1, yl + 1:nodes[1] - yh - 1, zl + 1:nodes[2] - zh - 1] = True
    state, step = solver.init_state(), 0
    peak_tf = peak_sf = 0.0
    while step < s.steps:
        length = min(chunk, s.steps - step)  # the last chunk through the same program
        state, _, _ = solver.advance(state, step, min(chunk, s.steps), active=length)
        step += length
        e_tf = e_sf = 0.0
        fields = (*s.fields.load(state.E, "E"), *s.fields.load(state.H, "H"))
        for c, (F, m) in enumerate(zip(fields, tf, strict=True)):
            w = eps0 if c < 3 else mu0
            F2 = w * np.asarray(F, np.float64) ** 2
            e_tf += float(F2[m].sum())
            e_sf += float(F2[inner & ~m].sum())
        peak_tf, peak_sf = max(peak_tf, e_tf), max(peak_sf, e_sf)
    return float(10 * np.log10(max(peak_sf, 1e-300) / peak_tf))


def tfsf_leakage(n: int = 40, limit_db: float = -60.0) -> list[Check]:
    case = "fdtd3d-tfsf-leakage"
    out = []
    for label, angles in (("along +z, x-polarised", (0.0, 0.0, 0.0)),
                          ("oblique theta 40 phi 30 pol 30 deg", (40.0, 30.0, 30.0))):
        db = measure_leakage(leakage_scenario(n, *angles))
        out.append(Check(case, f"SF/TF peak energy, {label} ({n}^3, float32)", db,
                         limit_db, "dB", db <= limit_db))
    return out


# -------------------------------------------------------------- sphere RCS
def sphere_scenario(spacing: float, *, pec: bool = False, duration: float | None = None,
                    dtype: str = "float32", thickness: int = 10, subpixel: bool = False,
                    size: float | None = None) -> FDTD3D:
    """Seed 000's sphere (or a PEC sphere of ka ~ 2) with a plane wave and a NearToFar box.

    Dielectric: radius 7.2 cm, eps_r 4, 32 cm domain; PEC: radius 9.5 cm, 36 cm domain.
    The TF/SF box clears the sphere by 1.3 cm and the Huygens box clears that by 1 cm.
    """
    a = 0.095 if pec else 0.072
    L = size or (0.36 if pec else 0.32)
    medium = PEC() if pec else Medium(eps_r=4.0, name="sphere")
    return FDTD3D(
        name="pec-sphere-rcs" if pec else "sphere-rcs",
        domain=Domain(size=(L, L, L), spacing=spacing),
        boundary=CPML(thickness=thickness),
        structures=[Structure(geometry=Sphere(radius=a), medium=medium)],
        sources=[PlaneWave(waveform=GaussianPulse(f0=1e9, fwidth=0.4e9),
                           box_size=(2 * a + 0.026,) * 3)],
        monitors=[NearToFar(name="far", frequencies=[1e9], size=(2 * a + 0.046,) * 3)],
        duration=duration or (15e-9 if pec else 20e-9), dtype=dtype, subpixel=subpixel,
    )


def rcs_errors(res, radius: float, eps_r, frequency: float = 1e9,
               window_db: float = 30.0) -> dict[str, tuple[float, float]]:
    """{plane: (RMS dB error, max dB error)} of the E- and H-plane RCS against Mie."""
    from ..analysis.mie import mie_rcs

    th = np.radians(np.arange(0.0, 180.5, 1.0))
    out = {}
    for plane, phi in (("E", 0.0), ("H", math.pi / 2)):
        got = to_db(res["far"].rcs(th, phi, frequency))
        ref = to_db(mie_rcs(radius, eps_r, frequency, th, plane))
        sel = ref >= ref.max() - window_db
        err = got[sel] - ref[sel]
        out[plane] = (float(np.sqrt(np.mean(err**2))), float(np.abs(err).max()))
    return out


def _order(spacings, errors) -> float:
    """Least-squares slope of log error against log cell size."""
    return float(np.polyfit(np.log(spacings), np.log(errors), 1)[0])


def _sphere_case(case: str, pec: bool, spacings, *, subpixel: bool, label: str,
                 assert_falls: bool = True, rms_limit: float = 0.5,
                 max_limit: float = 1.5, limit_at: float | None = None,
                 min_order: float | None = None) -> list[Check]:
    """Records per plane and cell size; the limits hold at ``limit_at`` (m; default the
    finest cell run); with ``assert_falls`` the RMS error of each plane must fall at
    every refinement and, given ``min_order`` and three or more sizes, its observed
    order (least squares) must reach it."""
    if spacings is None:
        spacings = (5e-3, 4e-3, 10e-3 / 3) if on_gpu() else (5e-3, 4e-3)
    radius, eps_r = (0.095, None) if pec else (0.072, 4.0)
    at = spacings[-1] if limit_at is None or limit_at not in spacings else limit_at
    recs, rms = [], {"E": [], "H": []}
    for d in spacings:
        res = sphere_scenario(d, pec=pec, subpixel=subpixel).run(progress=False)
        errs = rcs_errors(res, radius, eps_r)
        gated = d == at
        for plane, (r, m) in errs.items():
            rms[plane].append(r)
            tag = f"{plane}-plane at {d * 1e3:.3g} mm, {label}"
            recs.append(Check(case, f"RMS RCS error, {tag}", r,
                              rms_limit if gated else float("nan"), "dB",
                              r <= rms_limit or not gated))
            recs.append(Check(case, f"max RCS error, {tag}", m,
                              max_limit if gated else float("nan"), "dB",
                              m <= max_limit or not gated))
    if len(spacings) > 1:
        for plane, e in rms.items():
            falls = all(b < a for a, b in itertools.pairwise(e))
            recs.append(Check(case, f"{plane}-plane RMS error finest / coarsest, {label} "
                              f"(falls at each refinement: {falls})", e[-1] / e[0], 1.0, "",
                              falls or not assert_falls, bound="<"))
            if len(spacings) > 2:
                order = _order(spacings, e)
                need = min_order if (assert_falls and min_order) else float("nan")
                recs.append(Check(case, f"{plane}-plane observed order of the RMS error, "
                                  f"{label}", order, need, "", math.isnan(need) or order >= need,
                                  bound=">="))
    return recs


def sphere_rcs(spacings=None) -> list[Check]:
    """Smoothed sphere (:mod:`emjax.grid.subpixel`: the anisotropic tensor, diagonal and
    off-diagonal): on a GPU at 5, 4, 3.33 and 2.5 mm, RMS error <= 0.1 dB at 3.33 mm,
    falling at every refinement with an observed order >= 1.7 in both planes (issue
    25); the staircased sphere at the same cells for comparison (not gated: its errors
    wander with the grid). On a CPU 5 and 4 mm, smoothed only."""
    case = "fdtd3d-sphere-rcs"
    if spacings is None:
        spacings = (5e-3, 4e-3, 10e-3 / 3, 2.5e-3) if on_gpu() else (5e-3, 4e-3)
    recs = _sphere_case(case, False, spacings, subpixel=True, label="smoothed eps",
                        rms_limit=0.1, max_limit=0.3, limit_at=10e-3 / 3, min_order=1.7)
    if on_gpu():
        recs += _sphere_case(case, False, spacings, subpixel=False, label="staircased",
                             assert_falls=False)
    return recs


def pec_sphere_rcs(spacings=None) -> list[Check]:
    return _sphere_case("fdtd3d-pec-sphere-rcs", True, spacings, subpixel=False,
                        label="staircased PEC")


# --------------------------------------------------------- dipole radiation
def dipole_scenario(n: int = 40, cells_per_wavelength: float = 20.0,
                    dtype: str = "float64") -> FDTD3D:
    """A z dipole at the centre of an n^3 box (1 mm cells, 8-cell CPML) and two
    NearToFar boxes, 2 and 5 cells inside the CPML."""
    d = 1e-3
    f = c0 / (cells_per_wavelength * d)
    return FDTD3D(
        name="dipole-radiation", domain=Domain(shape=(n, n, n), spacing=d),
        boundary=CPML(thickness=8), dtype=dtype, duration=12 / f,
        sources=[PointDipole(position=(0.0, 0.0, 0.0), polarization="z",
                             waveform=GaussianPulse(f0=f, fwidth=f / 2))],
        monitors=[NearToFar(name="far", frequencies=[f], margin=2),
                  NearToFar(name="flux", frequencies=[f], margin=5)],
    )


def dipole_metrics(res) -> tuple[float, float]:
    """(largest pattern deviation from sin(theta) in dB, relative power mismatch)."""
    th = np.radians(np.linspace(10, 170, 81))
    dev = 0.0
    for phi in (0.0, math.radians(40.0)):
        Et, Ep = res["far"].far_field(th, phi)
        E = np.sqrt(np.abs(Et) ** 2 + np.abs(Ep) ** 2)
        db = 20 * np.log10(E / E[40]) - 20 * np.log10(np.sin(th))
        dev = max(dev, float(np.abs(db).max()))
    p_far = res["far"].radiated_power()
    p_flux = res["flux"].surface_power()
    return dev, abs(p_far / p_flux - 1)


def dipole_radiation(n: int = 40) -> list[Check]:
    case = "fdtd3d-dipole-radiation"
    dev, mismatch = dipole_metrics(dipole_scenario(n).run(progress=False))
    return [
        Check(case, "far-field pattern vs sin(theta), theta 10-170 deg", dev, 0.2, "dB",
              dev <= 0.2),
        Check(case, "|P(far-field transform) / P(flux through a closed box) - 1|",
              mismatch, 0.01, "", mismatch <= 0.01),
    ]


CASES: dict[str, Callable[..., list[Check]]] = {
    "fdtd3d-tfsf-leakage": tfsf_leakage,
    "fdtd3d-sphere-rcs": sphere_rcs,
    "fdtd3d-pec-sphere-rcs": pec_sphere_rcs,
    "fdtd3d-dipole-radiation": dipole_radiation,
}
