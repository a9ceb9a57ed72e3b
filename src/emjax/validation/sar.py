"""Validation of SAR and power bookkeeping (issue 9, seed 001's bio-EM case).

Every case returns records ``{"case", "metric", "value", "limit", "bound", "unit", "pass"}``.

- ``sar-sphere``: a homogeneous muscle-like sphere (radius 2 cm, eps_r 72, sigma 0.72
  S/m) lit by an x-polarised plane wave along +z (TF/SF), a Gaussian pulse centred
  on 128 MHz (3 T), DFT at 128 MHz, float64. References:

  * the exact Lorenz-Mie internal field (:func:`emjax.analysis.sar.sphere_internal_field`,
    checked against miepython's absorption efficiency to 1e-12). With eps_c =
    72 - 101j the sphere is far from quasi-static in one respect: |k_in a| = 0.60
    (the internal wavelength is 24 cm, Re k_in a = 0.53), and the field induced by
    the incident H (Faraday, the eddy term ~ k0 r E0 / 2) is not screened by
    |eps_c + 2| = 125 as the electric term is: at r = a/2 it reaches 55% of the
    quasi-static 3 E0 / (eps_c + 2), and the absorbed power is 1.53 times
    the quasi-static value (Mie 1.056e-8 W against 6.92e-9 W for E0 = 1 V/m). The
    quasi-static value holds on the axis of the incident H (the y axis through the
    centre), where the eddy term vanishes: exact Mie sits 2.3% above it at the centre.
    So the issue's 5% quasi-static check is made at the centre (and is passed there);
    the field over the inner half-radius, SAR and absorbed power are checked against
    Mie instead.
  * the run's own power balance: the net Poynting flux into a closed box around the
    sphere inside the TF/SF box (Yee-exact pairing, :func:`emjax.analysis.sar.box_flux`)
    against ``Σ 0.5 sigma |E|² dV`` over the sphere's E edges (the integral of SAR).

  Metrics: centre field against Mie (limit 5%) and against quasi-static (5%, the
  issue's bound); the largest vector error over cell centres with r <= a/2 against Mie,
  relative to the centre value (5%); the largest local-SAR error there (10%); absorbed
  power against Mie (5%: staircasing changes the volume); absorbed power against the
  flux balance (2%). The Mie and quasi-static limits hold at 1 mm cells (radius 20
  cells): the staircased sphere's error is first order (centre 8.8% at 4 mm, 4.2% at
  2 mm), so they are checked at <= 1 mm, and the errors must fall between the two
  finest sizes; the balance is checked at every size (2e-5 measured at 4 and 2 mm).
  Sizes 2 and 1 mm on a GPU; 4 and 2 mm on a CPU (a minute or two).
- ``mri-power-balance``: the ``mri-coil`` phantom and coil (:mod:`emjax.scenarios.mri`),
  driven by a Gaussian pulse centred on 128 MHz so that every transform is complete:
  accepted power from the rung ports ``-0.5 Re Σ E dl I*`` against the power absorbed
  inside a box around the coil (SAR integrated over its E edges) plus the Poynting
  flux out of that box (limit 3%). Then the CW scenario itself (``emjax run mri-coil``):
  accepted power from its steady-state port phasors against the pulsed run's, per A²
  of rung current (limit 1%: this is what normalises the CW B1+ and SAR maps), and
  |B1+| / |B1-| at the head centre (at least 2: the drive rotates with the protons).
  Full 312 x 328 x 325 grid at 4 mm and 30 CW periods on a GPU; on a CPU the same
  phantom and coil at 16 mm cells and 15 periods (about two minutes).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..analysis.sar import (
    box_flux,
    edge_conductivity,
    quasi_static_internal_field,
    sphere_absorbed_power,
    sphere_internal_field,
    to_common_grid,
    yee_absorbed_power,
)
from ..constants import c0, eps0
from ..model import (
    CPML,
    FDTD3D,
    DFTMonitor,
    Domain,
    GaussianPulse,
    Medium,
    PlaneWave,
    Sphere,
    Structure,
)
from ..records import Check, on_gpu

F0 = 128e6
"""Frequency of the checks, Hz (proton Larmor frequency at 3 T)."""
SPHERE_RADIUS = 0.02
SPHERE_EPS_R = 72.0
SPHERE_SIGMA = 0.72


def sphere_eps_c(frequency: float = F0) -> complex:
    """Complex relative permittivity of the test sphere (exp(+j omega t) convention)."""
    return SPHERE_EPS_R - 1j * SPHERE_SIGMA / (2 * math.pi * frequency * eps0)


# ------------------------------------------------------------------ sphere
def sphere_scenario(spacing: float = 2e-3, *, flux_gap: int = 3, tfsf_gap: int = 3,
                    margin: int = 3, pml: int = 8, dtype: str = "float64") -> tuple[FDTD3D, float]:
    """The sar-sphere run and the half-width (m) of its flux box.

    The sphere (centred on a grid node at the origin) is cleared by ``flux_gap`` cells
    to the flux box, which is cleared by ``tfsf_gap`` cells to the TF/SF box, which
    sits ``margin`` cells inside the ``pml``-cell CPML. The DFT monitor holds all six
    components over the flux box and half a cell beyond it.
    """
    a = SPHERE_RADIUS
    nr = math.ceil(a / spacing - 1e-9)
    hf = nr + flux_gap          # flux box half-width, cells
    ht = hf + tfsf_gap          # TF/SF box half-width, cells
    n = 2 * (ht + margin + pml)
    # A broad pulse (sigma 100 MHz) ends sooner than a narrow one; its 128 MHz content
    # is near the peak of the spectrum.
    wave = GaussianPulse(f0=F0, fwidth=100e6)
    duration = 2 * wave.offset * wave.tau + 3e-9  # the pulse, then the sphere's ring-down
    sim = FDTD3D(
        name="sar-sphere",
        domain=Domain(shape=(n, n, n), spacing=spacing),
        structures=[Structure(geometry=Sphere(center=(0.0, 0.0, 0.0), radius=a),
                              medium=Medium(eps_r=SPHERE_EPS_R, sigma=SPHERE_SIGMA,
                                            name="muscle-like"))],
        sources=[PlaneWave(waveform=wave, box_size=(2 * ht * spacing,) * 3,
                           reference_frequency=F0)],
        monitors=[DFTMonitor(name="box", size=((2 * hf + 1) * spacing,) * 3,
                             frequencies=[F0])],
        boundary=CPML(thickness=pml), duration=duration, dtype=dtype,
    )
    return sim, hf * spacing


def incident_at_centre(solver, frequency: float = F0) -> complex:
    """DFT (V/m*s) of the incident plane wave at the origin, at E's sample times.

    The 1D grid's hard source at s0 carries ``amplitude g((n+1) dt)``; the wave reaches
    the origin ``(s(0) - s0) / c`` later (the grid's phase velocity differs from c by
    (k d)^2 / 24 ~ 1e-6 at 128 MHz and a few mm, negligible here).
    """
    s = solver.setup
    pw, box = s.planewaves[0]
    n = np.arange(s.steps, dtype=np.float64)
    t = (n + 1) * s.dt
    w = 2 * math.pi * frequency
    g = pw.amplitude * pw.waveform(t)
    dist = float(box.s_of(np.zeros((1, 3)))[0]) - box.aux.s0
    return complex(np.sum(g * np.exp(-1j * w * t)) * s.dt * np.exp(-1j * w * dist / c0))


def sphere_metrics(spacing: float = 2e-3, dtype: str = "float64") -> dict[str, float]:
    """Run the sphere and return its measured quantities (see the module docstring)."""
    from ..fdtd.solver import FDTDSolver

    sim, hf = sphere_scenario(spacing, dtype=dtype)
    solver = FDTDSolver(sim)
    res = solver.run(progress=False)
    md = res["box"]
    e_inc = incident_at_centre(solver)
    a, eps_c, d = SPHERE_RADIUS, sphere_eps_c(), spacing

    # Fields on the cell centres of the inner half-radius, normalised to the incident wave.
    axes = {c: md.axes(c) for c in ("Ex", "Ey", "Ez")}
    half = math.ceil(a / 2 / d) + 1  # cell centres (the origin is a node) within a/2
    c1 = (np.arange(-half, half) + 0.5) * d
    cen = (c1[np.abs(c1) <= a / 2 + 1e-12],) * 3
    E = to_common_grid({c: md.array(c)[0] for c in axes}, axes, cen)
    E = np.stack([E["Ex"], E["Ey"], E["Ez"]]) / e_inc
    X, Y, Z = np.meshgrid(*cen, indexing="ij")
    inner = (a / 2) ** 2 >= X**2 + Y**2 + Z**2
    pts = np.stack([X[inner], Y[inner], Z[inner]], axis=-1)
    ref = sphere_internal_field(pts, a, eps_c, F0)
    got = E[:, inner]
    centre_ref = sphere_internal_field(np.zeros((1, 3)), a, eps_c, F0)[0, 0]
    # The centre: the E nodes' own Ex samples either side of the origin (x = +-d/2).
    ex = md.array("Ex")[0]
    xs, ys, zs = md.axes("Ex")
    i = np.argmin(np.abs(xs - d / 2))
    j, k = np.argmin(np.abs(ys)), np.argmin(np.abs(zs))
    e_centre = 0.5 * (ex[i, j, k] + ex[i - 1, j, k]) / e_inc
    qs = quasi_static_internal_field(eps_c)

    sar_ref = np.sum(np.abs(ref) ** 2, axis=0)
    sar_got = np.sum(np.abs(got) ** 2, axis=0)
    sigma = edge_conductivity(sim)
    lower, dd = sim.domain.lower, sim.domain.spacing3
    lo, hi = (-hf,) * 3, (hf,) * 3
    p_abs = yee_absorbed_power(md, sigma, lower, dd, lo, hi) / abs(e_inc) ** 2
    p_flux = -box_flux(md, lo, hi, dd) / abs(e_inc) ** 2
    p_mie = sphere_absorbed_power(a, eps_c, F0)
    return {
        "centre_vs_mie": abs(e_centre - centre_ref) / abs(centre_ref),
        "centre_vs_qs": abs(abs(e_centre) - abs(qs)) / abs(qs),
        "mie_vs_qs": abs(abs(centre_ref) - abs(qs)) / abs(qs),
        "field_vs_mie": float(np.max(np.linalg.norm(got - ref, axis=0)) / abs(centre_ref)),
        "sar_vs_mie": float(np.max(np.abs(sar_got - sar_ref) / sar_ref)),
        "p_abs": p_abs, "p_flux": p_flux, "p_mie": p_mie,
        "balance": abs(p_abs - p_flux) / p_flux,
        "p_abs_vs_mie": abs(p_abs - p_mie) / p_mie,
        "steps": solver.setup.steps, "cells": solver.setup.grid.num_cells,
    }


def sar_sphere(spacings=None, *, limits: dict[str, float] | None = None,
               dtype: str = "float64", absolute_at: float = 1e-3) -> list[Check]:
    """Records of ``sar-sphere``.

    spacings: cell sizes in m, coarse to fine (default 2 and 1 mm on a GPU, 4 and 2 mm
    on a CPU). The power balance is checked at every size; the Mie and quasi-static
    limits (``limits`` overrides them) at sizes <= ``absolute_at`` (1 mm: the staircased
    sphere's error is first order, 4.2% at the centre at 2 mm), and between the two
    finest sizes the centre and absorbed-power errors against Mie must fall.
    """
    case = "sar-sphere"
    if spacings is None:
        spacings = (2e-3, 1e-3) if on_gpu() else (4e-3, 2e-3)
    if isinstance(spacings, float | int):
        spacings = (float(spacings),)
    lim = {"centre_vs_mie": 0.05, "centre_vs_qs": 0.05, "field_vs_mie": 0.05,
           "sar_vs_mie": 0.10, "p_abs_vs_mie": 0.05, "balance": 0.02, **(limits or {})}
    recs, runs = [], []
    for d in spacings:
        m = sphere_metrics(d, dtype)
        runs.append(m)
        gate = d <= absolute_at * (1 + 1e-9)
        tag = f"{d * 1e3:.3g} mm cells, {m['cells']} cells x {m['steps']} steps, {dtype}"
        later = f" (limit applies at <= {absolute_at * 1e3:.3g} mm)" if not gate else ""
        labels = {
            "centre_vs_mie": "|E(centre) - Mie| / |Mie|",
            "centre_vs_qs": "| |E(centre)| - |3 E0/(eps_c+2)| | / quasi-static "
                            f"(exact Mie itself is {100 * m['mie_vs_qs']:.2f}% off it)",
            "field_vs_mie": "max |E - E_Mie| / |E_Mie(centre)| over r <= a/2",
            "sar_vs_mie": "max |SAR - SAR_Mie| / SAR_Mie over r <= a/2",
            "p_abs_vs_mie": f"absorbed power {m['p_abs']:.5g} W vs Mie {m['p_mie']:.5g} W "
                            "(E0 = 1 V/m)",
            "balance": "absorbed power (SAR summed on E edges) vs net flux into the box "
                       f"{m['p_flux']:.5g} W",
        }
        for k, label in labels.items():
            ok = m[k] <= lim[k] or (not gate and k != "balance")
            note = later if k != "balance" else ""
            recs.append(Check(case, f"{label}, {tag}{note}", m[k], lim[k], "", ok))
    if len(runs) > 1:
        a, b = runs[-2], runs[-1]
        for k in ("centre_vs_mie", "p_abs_vs_mie"):
            ratio = b[k] / a[k]
            recs.append(Check(case, f"{k} at {spacings[-1] * 1e3:.3g} mm / at "
                              f"{spacings[-2] * 1e3:.3g} mm (must fall)", ratio, 1.0, "",
                              ratio < 1.0, bound="<"))
    return recs


# ------------------------------------------------------------- MRI coil
def mri_power_balance(spacing: float | None = None, limit: float = 0.03,
                      cw_periods: float | None = None) -> list[Check]:
    """Records of ``mri-power-balance`` (see the module docstring)."""
    from ..analysis.sar import b1_minus, b1_plus
    from ..scenarios.mri import accepted_power_cw, current_dft, mri_coil, power_balance

    case = "mri-power-balance"
    gpu = on_gpu()
    if spacing is None:
        spacing = 4e-3 if gpu else 16e-3
    if cw_periods is None:
        cw_periods = 30.0 if gpu else 15.0
    b = power_balance(spacing=spacing)
    err = abs(b["accepted"] - (b["absorbed"] + b["radiated"])) / b["accepted"]
    wrong = abs(b["accepted_unstaggered"] - (b["absorbed"] + b["radiated"])) / b["accepted"]
    tag = (f"{spacing * 1e3:.3g} mm cells, grid {'x'.join(map(str, b['shape']))}, "
           f"{b['steps']} steps; accepted {b['accepted']:.4g}, absorbed {b['absorbed']:.4g}, "
           f"radiated {b['radiated']:.4g} (W x DFT scale)")
    recs = [Check(case, f"|accepted - (absorbed + radiated)| / accepted, pulsed, {tag}; "
                  f"with the current's samples booked at E's times the mismatch is "
                  f"{100 * wrong:.3g}%", err, limit, "", err <= limit)]
    # The CW run (the scenario as `emjax run mri-coil` runs it): its steady-state port
    # phasors must give the accepted power of the pulsed run (per A^2 of rung current),
    # and the quadrature drive must favour B1+ over B1- at the head centre.
    sim = mri_coil(shape=tuple(b["shape"]), spacing=spacing, periods=cw_periods)
    res = sim.run(progress=False)
    p_cw = accepted_power_cw(res, sim)
    pulsed = mri_coil(shape=tuple(b["shape"]), spacing=spacing, drive="pulse")
    i_dft = current_dft(pulsed.sources, pulsed.dt, pulsed.num_steps)
    p_pulse = b["accepted"] / float(np.mean(np.abs(i_dft))) ** 2
    dev = abs(p_cw - p_pulse) / p_pulse
    recs.append(Check(case, f"CW accepted power {p_cw:.5g} W (steady-state port phasors, "
                      f"{cw_periods:g} periods) vs pulsed {p_pulse:.5g} W, 1 A rungs",
                      dev, 0.01, "", dev <= 0.01))
    md = res["head"]
    c = sim.monitors[0].center
    idx = [tuple(int(np.argmin(np.abs(ax - c[a]))) for a, ax in enumerate(md.axes(h)))
           for h in ("Hx", "Hy")]
    hx, hy = md.array("Hx")[0][idx[0]], md.array("Hy")[0][idx[1]]
    ratio = float(abs(b1_plus(hx, hy)) / abs(b1_minus(hx, hy)))
    recs.append(Check(case, "|B1+| / |B1-| at the head centre (CW, quadrature drive; "
                      "below 1 if the rotation sense were reversed)", ratio, 2.0, "",
                      ratio >= 2.0, bound=">="))
    return recs


CASES: dict[str, Callable[..., list[Check]]] = {
    "sar-sphere": sar_sphere,
    "mri-power-balance": mri_power_balance,
}

__all__ = ["CASES", "F0", "incident_at_centre", "mri_power_balance", "sar_sphere",
           "sphere_eps_c", "sphere_metrics", "sphere_scenario"]
