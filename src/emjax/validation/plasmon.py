"""Validation of a plasmonic (Drude) sphere against Mie theory (issue 20).

- ``drude-sphere``: a sphere of radius a = 25 nm of a Drude metal (eps_inf 1, omega_p /
  2 pi = 1.65 PHz, gamma = 0.3 omega_qs) in vacuum. Re eps = -2 (the quasi-static
  surface-plasmon condition) at F_QS = 955 THz, where k a = 0.5; the dipole resonance
  of the Mie series lies at 873.6 THz (dynamic depolarization shifts it down), its
  extinction efficiency 5.3 there, falling to 0.65 and 1.16 at the band's ends
  (Q about 2.8). 3D FDTD (float32, staircased sphere centred on a node, ``cells`` per
  radius) with an x-polarised Gaussian plane wave along +z through a TF/SF box (pulse
  centred on F_QS, spectral sigma 0.25 F_QS: the band lies within -11 dB of its peak),
  run 30 periods of F_QS past the pulse (the plasmon's ring-down; the advice stays
  quiet). Three closed boxes, 2 cells apart: absorbed power = the net inward flux of
  the total field through a box between the sphere and the TF/SF box; scattered power =
  the outward flux of the scattered field through a box outside it (both FluxMonitor
  boxes, the Yee-exact pairing of :func:`emjax.analysis.flux.face_flux`);
  bistatic RCS from a NearToFar box (:func:`emjax.validation.scatter.rcs_errors`). The
  extinction cross-section (absorbed + scattered power over the incident intensity,
  the plane wave's own spectrum at the centre) at 71 frequencies over 0.6-1.3 F_QS
  (573-1241 THz) from one run; the CPML starts 2 radii from the centre (3 radii
  changes nothing: 1e-4 of the extinction error). Reference: the Mie series with the
  complex index sqrt(eps(f)) at each frequency (miepython, through
  :func:`emjax.analysis.mie.mie_cross_sections` and :func:`~emjax.analysis.mie.mie_rcs`).

  Metrics: the RMS relative error of the extinction over the band (limit 3%); the
  extinction peak (vertex of the parabola through the largest sample and its
  neighbours, 0.01 F_QS apart) against Mie's (found the same way 1e-4 F_QS apart),
  relative error (limit 1%); the RMS dB error of the E- and H-plane RCS (0-180 degrees,
  where Mie is within 30 dB of its maximum) at 0.75, 0.92 and 1.15 F_QS (below, at and
  above the peak; limit 0.5 dB). The limits apply at 64 cells per radius and finer
  (``absolute_at``), and each error must fall from the coarsest size to the finest.

  A staircased plasmonic sphere converges at first order in the cell size (sub-cell
  averaging, :mod:`emjax.grid.subpixel`, does not apply to pole media): the staircase
  corners add resonances that move and broaden the plasmon. Measured (H100, float32)
  at 16 / 32 / 64 cells per radius: extinction 7.05% / 3.64% / 1.77% RMS (largest
  16% / 7.9% / 3.8%, at the low end of the band), peak 0.35% / 0.043% / 0.026%, RCS at
  the peak 0.60 / 0.31 / 0.16 dB (0.14 / 0.06 / 0.03 dB below it, 0.23 / 0.09 /
  0.05 dB above); 173 s for the three runs. The collision rate sets the margin: with
  gamma = 0.2 omega_qs (Q about 3.9) the extinction error was 14.6% / 8.1% / 6.1% /
  4.3% at 12 / 24 / 32 / 48 cells per radius (about 70 needed), with 0.4 omega_qs
  3.1% / 1.7% at 24 / 48. Default sizes: 16, 32, 64 on a GPU; 4 and 8 on a CPU (40 s
  on 2 cores; extinction 23% / 13%, peak 3.7% / 0.6%, RCS at the peak 1.9 / 1.1 dB:
  there only the falls are checked).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..constants import c0, eta0
from ..records import Check, on_gpu

RADIUS = 25e-9
"""Sphere radius, m."""
EPS_INF = 1.0
"""High-frequency permittivity of the Drude metal."""
F_QS = 0.5 * c0 / (2 * math.pi * RADIUS)
"""Quasi-static surface-plasmon frequency (Re eps = -2), Hz: k a = 0.5 there."""
OMEGA_P = 2 * math.pi * F_QS * math.sqrt(EPS_INF + 2)
"""Plasma angular frequency, rad/s."""
GAMMA = 0.3 * 2 * math.pi * F_QS
"""Collision rate, rad/s."""
BAND = (0.6, 1.3)
"""The extinction band, in units of F_QS."""
BAND_STEP = 0.01
"""Frequency step of the extinction spectrum, in units of F_QS."""
RCS_FREQUENCIES = np.array([0.75, 0.92, 1.15])
"""The three RCS frequencies, in units of F_QS (below, at and above the peak)."""
FWIDTH = 0.25
"""The pulse's spectral standard deviation, in units of F_QS (centred on F_QS)."""
PERIODS = 30.0
"""Run length after the pulse, in periods of F_QS (the plasmon's ring-down)."""
CLEARANCE = 2.0
"""Distance from the sphere's centre to the CPML, in radii."""
EXT_LIMIT, PEAK_LIMIT, RCS_LIMIT = 0.03, 0.01, 0.5
"""Issue 20's limits: extinction RMS relative error over the band, relative error of the
peak frequency, RMS RCS error in dB at each of the three frequencies."""
CPU_CELLS = (4, 8)
GPU_CELLS = (16, 32, 64)
"""Cells per sphere radius of the default runs (coarse to fine)."""
ABSOLUTE_AT = 64
"""Cells per radius from which the limits apply (the staircase error is first order)."""


def drude_medium(gamma: float = GAMMA):
    """The sphere's PoleMedium: eps_inf and one Drude pole."""
    from ..model.dispersion import DrudePole, PoleMedium

    return PoleMedium(eps_inf=EPS_INF, poles=[DrudePole(omega_p=OMEGA_P, gamma=gamma)],
                      name="drude")


def band_frequencies(step: float = BAND_STEP) -> np.ndarray:
    """The extinction band, Hz: BAND (in F_QS) in steps of ``step`` F_QS."""
    lo, hi = BAND
    return F_QS * np.round(np.arange(lo, hi + step / 2, step), 6)


def sphere_scenario(cells_per_radius: int, *, frequencies, rcs_frequencies,
                    gamma: float = GAMMA, gap: int = 2, clearance: float = CLEARANCE,
                    pml: int = 10, dtype: str = "float32", periods: float = PERIODS,
                    fwidth: float = FWIDTH):
    """The drude-sphere run (module docstring), with FluxMonitors 'abs' (net inward flux
    through the absorption box) and 'sca' (outward through the scattering box).

    The sphere (radius ``cells_per_radius`` cells, centred on the node at the origin) is
    cleared by ``gap`` cells to the absorption box, which is cleared by ``gap`` to the
    TF/SF box, then the scattering box, then the NearToFar box; the CPML starts
    ``clearance`` radii from the centre (at least ``gap`` cells past the NearToFar box).
    """
    from ..model import (
        CPML,
        FDTD3D,
        Domain,
        FluxMonitor,
        GaussianPulse,
        NearToFar,
        PlaneWave,
        Sphere,
        Structure,
    )

    d = RADIUS / cells_per_radius
    h_abs = cells_per_radius + gap          # box half-widths, cells
    h_tf, h_sca, h_n2f = h_abs + gap, h_abs + 2 * gap, h_abs + 3 * gap
    inner = max(h_n2f + gap, math.ceil(clearance * cells_per_radius))
    n = 2 * (inner + pml)
    wave = GaussianPulse(f0=F_QS, fwidth=fwidth * F_QS)
    duration = 2 * wave.offset * wave.tau + periods / F_QS
    mons = [NearToFar(name="far", frequencies=list(rcs_frequencies),
                      size=(2 * h_n2f * d,) * 3),
            # absorbed: the total field's net inward flux; scattered: outward, outside TF/SF
            FluxMonitor(name="abs", size=(2 * h_abs * d,) * 3, frequencies=list(frequencies),
                        direction="-"),
            FluxMonitor(name="sca", size=(2 * h_sca * d,) * 3, frequencies=list(frequencies))]
    sim = FDTD3D(
        name="drude-sphere", domain=Domain(shape=(n, n, n), spacing=d),
        boundary=CPML(thickness=pml), dtype=dtype, duration=duration,
        structures=[Structure(geometry=Sphere(center=(0.0, 0.0, 0.0), radius=RADIUS),
                              medium=drude_medium(gamma))],
        sources=[PlaneWave(waveform=wave, box_size=(2 * h_tf * d,) * 3,
                           reference_frequency=F_QS)],
        monitors=mons)
    return sim


def measure(cells_per_radius: int, *, frequencies=None, rcs_frequencies=None,
            **kw) -> dict:
    """Run the sphere (``kw`` goes to :func:`sphere_scenario`) and return a dict:
    ``f`` (Hz, default the band); ``ext``, ``abs``, ``sca`` the extinction, absorption
    and scattering cross-sections in m^2 at ``f``; ``intensity`` the incident intensity
    spectrum (W/m^2 times the DFT scale squared, s^2); ``rcs`` {frequency (Hz, default
    RCS_FREQUENCIES): {"E"/"H": (RMS, max) dB error against Mie}}; ``steps``,
    ``cells``, ``wall_s`` (set-up, compile and run, s) and ``res`` (the Results)."""
    import time

    from ..fdtd.solver import FDTDSolver
    from .sar import incident_at_centre
    from .scatter import rcs_errors

    f = band_frequencies() if frequencies is None else np.asarray(frequencies, float)
    f_rcs = RCS_FREQUENCIES * F_QS if rcs_frequencies is None else rcs_frequencies
    sim = sphere_scenario(cells_per_radius, frequencies=f, rcs_frequencies=f_rcs, **kw)
    t0 = time.perf_counter()
    solver = FDTDSolver(sim)
    res = solver.run(progress=False)
    wall = time.perf_counter() - t0
    # The incident intensity at each frequency, from the plane wave's own samples.
    inc = np.array([incident_at_centre(solver, v) for v in f])
    intensity = np.abs(inc) ** 2 / (2 * eta0)
    # per unit incident intensity: the absorbed power (net inward flux of the total
    # field inside the TF/SF box) and the scattered (outward, outside it)
    absorbed, scattered = (res[k].data["flux"] / intensity for k in ("abs", "sca"))
    medium = drude_medium(kw.get("gamma", GAMMA))
    rcs = {float(v): rcs_errors(res, RADIUS, complex(medium.eps(v)), float(v))
           for v in f_rcs}
    return {"f": f, "abs": absorbed, "sca": scattered, "ext": absorbed + scattered,
            "intensity": intensity, "rcs": rcs, "steps": sim.num_steps,
            "cells": int(np.prod(sim.domain.cells)), "wall_s": wall, "res": res}


def mie_reference(frequencies, gamma: float = GAMMA):
    """(extinction, scattering, absorption) cross-sections in m^2 of the Drude sphere
    from the Mie series (:func:`emjax.analysis.mie.mie_cross_sections`)."""
    from ..analysis.mie import mie_cross_sections

    f = np.asarray(frequencies, float)
    return mie_cross_sections(RADIUS, drude_medium(gamma).eps(f), f)


def peak_frequency(f: np.ndarray, y: np.ndarray) -> float:
    """The frequency of the maximum of samples ``y`` at uniformly spaced ``f``: the
    vertex of the parabola through the largest sample and its two neighbours."""
    i = int(np.argmax(y))
    if i == 0 or i == y.size - 1:
        raise ValueError(f"the maximum lies at the end of the frequency list ({f[i]:.6g} "
                         "Hz): widen the band")
    a, b, c = y[i - 1], y[i], y[i + 1]
    return float(f[i] + 0.5 * (f[1] - f[0]) * (a - c) / (a - 2 * b + c))


def mie_peak(gamma: float = GAMMA, step: float = 1e-4) -> float:
    """The extinction peak of the Mie series, Hz, found as :func:`peak_frequency` does
    on a grid ``step`` F_QS fine over the band."""
    f = band_frequencies(step)
    return peak_frequency(f, mie_reference(f, gamma)[0])


def _falls(case: str, what: str, cells, values) -> list[Check]:
    """The ratio of ``what`` at the finest resolution to the coarsest (must be < 1)."""
    if len(values) < 2:
        return []
    ratio = values[-1] / values[0]
    return [Check(case, f"{what}: at {cells[-1]} / at {cells[0]} cells per radius (must "
                  "fall)", ratio, 1.0, "", ratio < 1.0, bound="<")]


def drude_sphere(cells=None, *, dtype: str = "float32",
                 absolute_at: int = ABSOLUTE_AT) -> list[Check]:
    """Records of ``drude-sphere`` (module docstring). cells: cells per radius, coarse
    to fine (default GPU_CELLS on a GPU, CPU_CELLS on a CPU). The issue's limits apply
    at ``absolute_at`` cells per radius and finer (the staircase error is first order:
    3.6% extinction error at 32); each error must fall from the coarsest size to the
    finest."""
    case = "drude-sphere"
    if cells is None:
        cells = GPU_CELLS if on_gpu() else CPU_CELLS
    if isinstance(cells, int):
        cells = (cells,)
    f = band_frequencies()
    ext_mie = mie_reference(f)[0]
    f_mie = mie_peak()
    band = f"{f[0] / 1e12:.0f}-{f[-1] / 1e12:.0f} THz"
    recs, ext_err, peak_err, rcs_err = [], [], [], []
    for n in cells:
        m = measure(n, frequencies=f, dtype=dtype)
        gate = n >= absolute_at
        later = "" if gate else f" (limits apply at >= {absolute_at} cells per radius)"
        lim = (lambda x: x) if gate else (lambda x: np.inf)  # reported, not gated
        tag = f"{n} cells per radius, {m['cells']} cells x {m['steps']} steps, {dtype}"
        rel = m["ext"] / ext_mie - 1
        rms = float(np.sqrt(np.mean(rel**2)))
        f_peak = peak_frequency(f, m["ext"])
        peak = abs(f_peak / f_mie - 1)
        ext_err.append(rms)
        peak_err.append(peak)
        recs.append(Check(case, f"extinction RMS relative error vs Mie, {f.size} frequencies "
                          f"{band} (largest {np.abs(rel).max():.3g}), {tag}{later}", rms,
                          lim(EXT_LIMIT), "", rms <= EXT_LIMIT or not gate))
        recs.append(Check(case, f"extinction peak {f_peak / 1e12:.2f} THz vs Mie "
                          f"{f_mie / 1e12:.2f} THz, relative error, {tag}{later}", peak,
                          lim(PEAK_LIMIT), "", peak <= PEAK_LIMIT or not gate))
        worst = 0.0
        for v, errs in m["rcs"].items():
            for plane, (r, _) in errs.items():
                worst = max(worst, r)
                recs.append(Check(case, f"RCS RMS error vs Mie, {plane}-plane at "
                                  f"{v / 1e12:.0f} THz ({v / F_QS:.2f} F_QS), {tag}{later}",
                                  r, lim(RCS_LIMIT), "dB", r <= RCS_LIMIT or not gate))
        rcs_err.append(worst)
    return (recs + _falls(case, "extinction RMS error", cells, ext_err)
            + _falls(case, "peak frequency error", cells, peak_err)
            + _falls(case, "largest RCS RMS error", cells, rcs_err))


CASES: dict[str, Callable[..., list[Check]]] = {"drude-sphere": drude_sphere}

__all__ = ["CASES", "band_frequencies", "drude_medium", "drude_sphere", "measure", "mie_peak",
           "mie_reference", "peak_frequency", "sphere_scenario"]
