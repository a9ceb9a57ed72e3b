"""The ``mri-coil`` scenario of seed 001: a body phantom inside an 8-port head coil.

Seed 001's second benchmark is a voxelled human body in an MRI head coil driven by 8
edge sources on a 312 x 328 x 325 grid (33.4 M cells). Its model is not public, so this
phantom is synthetic: head, neck and torso built from ellipsoids and cylinders in
nested tissue layers, at 4 mm cells (the seed's denser head region needs a graded
grid, which emjax does not have).

Tissue properties at 128 MHz (the proton frequency at 3 T): the Cole-Cole fits of
S. Gabriel, R. W. Lau and C. Gabriel, Phys. Med. Biol. 41, 2271 (1996), as tabulated in
the IT'IS Foundation tissue database v4.1 (P. A. Hasgall et al., 2022), with the IT'IS
mass densities; values rounded to three figures.

The coil: 8 rungs parallel to z on a circle (radius 14 cm) around the head, each a
20 cm PEC wire fed at its middle by a z-directed current ``EdgeSource`` of 1 A peak
(a delta-gap feed: the seed's "8 edge sources"), driven in quadrature (phase step 45
degrees, so the rung currents form the rotating B1+ of a birdcage's uniform mode) by
a sinusoid at 128 MHz with a raised-cosine ramp. There are no end rings or tuning
capacitors. Accepted power follows from each feed's current and E on its edge
(:func:`port_power`): in a CW run from steady-state phasors of the port probe
(:func:`accepted_power_cw`), in a pulsed run from DFTs (:func:`power_balance`). The B1+
and SAR maps per watt accepted, and the files ``emjax run mri-coil`` writes of them, are
in :mod:`emjax.scenarios.mri_maps`.

Dispersive tissue (issue 20, built-in ``mri-coil-dispersive``,
:func:`mri_coil_dispersive`): ``media=`` swaps every tissue for another medium of the
same name; :func:`emjax.scenarios.dispersive.fitted_tissue` gives the Debye-pole fit
of Gabriel's Cole-Cole model over 30-600 MHz (fitted once per process). Driven by one
broadband pulse (:data:`BROADBAND_PULSE`) with DFTs at 64, 128 and 300 MHz on the head
box and over the whole phantom (``body``), one run gives SAR per watt accepted at the
three field strengths (:func:`emjax.scenarios.mri_maps.broadband_coil_sar`; checked by
``emjax validate dispersive-sar``). The constant table below stays the default.

Power balance (validation ``mri-power-balance``): with a pulse drive every transform
is complete and accepted = absorbed + radiated holds to rounding (3e-5 measured at
24 mm cells). A CW run's DFT monitors accumulate from t = 0 over a ramp and a cut-off
window; near the rungs, where the reactive power is hundreds of times the real
power, that window's end terms make the flux through a box off by up to 2x (measured
at 24 mm: 3.50 W against 1.75 W from the pulsed run), while the absorbed power is
off by 3% and the steady-state port phasors agree with the pulsed run to 2e-4. CW
maps are therefore normalised by :func:`accepted_power_cw`.

Memory budget (``emjax run mri-coil --dry-run``, float32, 312 x 328 x 325 cells,
10-cell CPML): fields 761 MiB, uint8 material indices for E and H 95 MiB, CPML psi
95 MiB, monitors (head DFT box 80 x 80 x 65 x 6 components, port probe) 20 MiB, XLA
workspace 47 MiB: 1.0 GiB on the device (H100: 80 GB). The balance box of
:func:`power_balance` adds 33 MiB. On the host, rasterization holds six uint8 index
arrays (200 MB) and :func:`~emjax.analysis.sar.edge_conductivity` three float64
conductivity arrays (800 MB).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ..model import (
    CPML,
    FDTD3D,
    PEC,
    Box,
    ContinuousWave,
    Cylinder,
    DFTMonitor,
    Domain,
    EdgeSource,
    Ellipsoid,
    GaussianPulse,
    LumpedPort,
    Medium,
    Probe,
    Structure,
)
from ..model.dispersion import PoleMedium

LARMOR_3T = 128e6
"""Proton Larmor frequency at 3 T in Hz (rounded, as MRI papers quote it)."""
BROADBAND_FREQUENCIES = (64e6, 128e6, 300e6)
"""Larmor frequencies at 1.5, 3 and 7 T in Hz (rounded): ``mri-coil-dispersive``'s DFTs."""
BROADBAND_PULSE = (170e6, 65e6)
"""(f0, spectral sigma) in Hz of ``mri-coil-dispersive``'s pulse. Its zero-mean form
(``remove_dc``) weighs the spectrum by f, so this centre puts 64 and 300 MHz 20 and 12
dB below the peak. A cos carrier of phase a has spectrum e^{ja} G(f - f0) + e^{-ja}
G(f + f0): at 64 MHz the second (counter-rotating) term is exp(-2 f f0 / sigma²) =
0.6% of the first, the drive's departure from pure quadrature there."""

TISSUES_128MHZ: dict[str, tuple[float, float, float]] = {
    # name: (eps_r, sigma in S/m, density in kg/m^3)
    "skin": (65.4, 0.521, 1109.0),
    "fat": (5.92, 0.0370, 911.0),
    "muscle": (63.5, 0.719, 1090.0),
    "bone": (14.7, 0.0672, 1908.0),
    "brain": (73.5, 0.586, 1045.0),
    "csf": (72.7, 2.07, 1007.0),
}
"""Tissue (eps_r, sigma S/m, density kg/m³) at 128 MHz; sources in the module docstring."""


def tissue(name: str) -> Medium:
    """The :class:`Medium` of a tissue of :data:`TISSUES_128MHZ`, named after it."""
    eps_r, sigma, _ = TISSUES_128MHZ[name]
    return Medium(eps_r=eps_r, sigma=sigma, name=name)


def density(medium_name: str) -> float:
    """Mass density in kg/m³ of a tissue medium by name; 0 for anything else (air)."""
    return TISSUES_128MHZ.get(medium_name, (0.0, 0.0, 0.0))[2]


TissueMedia = Callable[[str], Medium | PoleMedium]
"""A tissue name of :data:`TISSUES_128MHZ` -> the medium the phantom gives it."""


def _shells(make, layers: list[tuple[str, float]], media: TissueMedia) -> list[Structure]:
    """Nested structures, outermost first: ``make(inset)`` gives the shape shrunk by
    ``inset`` metres, and each (tissue, thickness) layer fills down to the next inset."""
    out, inset = [], 0.0
    for name, thickness in layers:
        out.append(Structure(geometry=make(inset), medium=media(name)))
        inset += thickness
    return out


def phantom(head_center: tuple[float, float, float] = (0.0, 0.0, 0.33),
            media: TissueMedia = tissue) -> list[Structure]:
    """Torso, neck and head as nested tissue structures (later ones win), metres.

    ``media`` gives each tissue's medium: :func:`tissue` (constant, 128 MHz) by default,
    :func:`~emjax.scenarios.dispersive.fitted_tissue` for dispersive tissue.
    """
    hx, hy, hz = head_center
    torso_top = hz - 0.21
    structures = _shells(
        lambda d: Ellipsoid(center=(hx, hy, torso_top - 0.90),
                            semi_axes=(0.17 - d, 0.11 - d, 0.90 - d)),
        [("skin", 0.004), ("fat", 0.012), ("muscle", 0.0)], media,
    )
    structures.append(Structure(  # spine
        geometry=Cylinder(center=(hx, hy - 0.06, torso_top - 0.40), radius=0.015,
                          length=0.80, axis="z"),
        medium=media("bone")))
    structures += _shells(
        lambda d: Cylinder(center=(hx, hy, torso_top + 0.07), radius=0.055 - d,
                           length=0.16, axis="z"),
        [("skin", 0.004), ("muscle", 0.0)], media,
    )
    structures.append(Structure(
        geometry=Cylinder(center=(hx, hy - 0.015, torso_top + 0.07), radius=0.012,
                          length=0.16, axis="z"),
        medium=media("bone")))
    structures += _shells(
        lambda d: Ellipsoid(center=head_center, semi_axes=(0.075 - d, 0.095 - d, 0.115 - d)),
        [("skin", 0.004), ("bone", 0.006), ("csf", 0.004), ("brain", 0.0)], media,
    )
    return structures


def _snap(value: float, lower: float, spacing: float, offset: float = 0.0) -> float:
    """``value`` moved to the nearest grid position ``lower + (i + offset) spacing``."""
    return lower + (round((value - lower) / spacing - offset) + offset) * spacing


def coil_sources(head_center: tuple[float, float, float] = (0.0, 0.0, 0.33),
                 radius: float = 0.14, rungs: int = 8, frequency: float = LARMOR_3T,
                 ramp_periods: float = 5.0, drive: str = "cw",
                 fwidth: float = 50e6, impedance: float | None = None
                 ) -> list[EdgeSource | LumpedPort]:
    """``rungs`` z-directed 1 A current sources on a circle, phases stepping by 2π/rungs.

    Rung k sits at azimuth a = 2πk/rungs and carries ``sin(ωt + a)``: with the phase
    growing with azimuth the field at the centre, ``∝ Σ sin(ωt + a) (sin a, -cos a)
    = (rungs/2) (cos ωt, -sin ωt)``, rotates clockwise seen from +z, the sense of
    proton precession, so the coil drives B1+ (see :mod:`emjax.analysis.sar`; until
    issue 9 the phase was ``-a``, which drove B1-: |B1+|/|B1-| = 0.11 at the centre).
    ``drive="pulse"`` gives each rung a Gaussian pulse centred on ``frequency`` (spectral
    sigma ``fwidth`` Hz) with the same carrier phases instead: every transform of the
    run is then complete, which the power balance needs (:func:`power_balance`).
    ``impedance`` (ohm) makes each feed a :class:`~emjax.model.LumpedPort` named
    ``rung<k>`` instead: a 1 V source in series with that Z0, measuring V and I.
    """
    if drive not in ("cw", "pulse"):
        raise ValueError(f"drive = {drive!r}: expected 'cw' or 'pulse'")
    hx, hy, hz = head_center
    out = []
    for k in range(rungs):
        a = 2 * math.pi * k / rungs
        if drive == "cw":
            wave = ContinuousWave(frequency=frequency, ramp=ramp_periods / frequency, phase=a)
        else:  # cos carrier: sin(wt + a) = cos(wt + a - pi/2)
            wave = GaussianPulse(f0=frequency, fwidth=fwidth, phase=a - math.pi / 2)
        position = (hx + radius * math.cos(a), hy + radius * math.sin(a), hz)
        if impedance is None:
            out.append(EdgeSource(position=position, polarization="z", kind="current",
                                  amplitude=1.0, waveform=wave))
        else:
            out.append(LumpedPort(name=f"rung{k}", position=position, polarization="z",
                                  impedance=impedance, amplitude=1.0, waveform=wave))
    return out


def coil(domain: Domain, head_center: tuple[float, float, float], radius: float = 0.14,
         rung_length: float = 0.20, rungs: int = 8, drive: str = "cw",
         frequency: float = LARMOR_3T, fwidth: float = 50e6,
         impedance: float | None = None
         ) -> tuple[list[EdgeSource | LumpedPort], list[Structure]]:
    """The coil on ``domain``'s grid: rung ports and the PEC rungs they feed.

    Each rung is a PEC wire (a line of Ez edges: a box thinner than a cell around one
    node line) of ``rung_length`` m along z, cut at its middle by one edge, where the
    rung's current source sits (a delta-gap feed). Positions are snapped to the grid,
    the feeds onto Ez edges, so a probe there reads the port's own edge. Without the
    wires the 1 A would flow along one edge only and charge its two ends: a 4 mm
    dipole whose port reactance (by the short-dipole formulas ~10^6 times its
    resistance) leaves the accepted power to rounding. A 20 cm rung brings the ratio
    to about 250 (measured at 24 mm cells: booking the current half a step late, a
    phase slip of 0.018 rad, moves the accepted power by 464%).
    """
    lower, d = domain.lower, domain.spacing3
    out, wires = [], []
    for s in coil_sources(head_center, radius, rungs, frequency, drive=drive, fwidth=fwidth,
                          impedance=impedance):
        x = _snap(s.position[0], lower[0], d[0])
        y = _snap(s.position[1], lower[1], d[1])
        z = _snap(s.position[2], lower[2], d[2], 0.5)
        out.append(s.model_copy(update={"position": (x, y, z)}))
        half = max(rung_length / 2, 1.5 * d[2])
        for sign in (-1.0, 1.0):
            z0, z1 = z + sign * 0.75 * d[2], z + sign * half
            wires.append(Structure(
                geometry=Box(center=(x, y, 0.5 * (z0 + z1)),
                             size=(d[0] / 2, d[1] / 2, abs(z1 - z0))),
                medium=PEC()))
    return out, wires


def mri_coil(shape: tuple[int, int, int] = (312, 328, 325), spacing: float = 4e-3,
             pml: int = 10, periods: float = 30.0, strategy: str = "combined",
             drive: str = "cw", balance_box: bool = False, *,
             media: TissueMedia = tissue, frequencies: Sequence[float] = (LARMOR_3T,),
             f0: float = LARMOR_3T, fwidth: float = 50e6, body_box: bool = False,
             name: str = "mri-coil", port_impedance: float | None = None) -> FDTD3D:
    """The seed-001 MRI benchmark as an :class:`FDTD3D` (see the module docstring).

    ``pml`` cells of CPML on every face; ``periods`` of the 128 MHz drive are simulated
    (``drive="pulse"``: a Gaussian pulse centred on ``f0`` Hz, spectral sigma ``fwidth``
    Hz, and its ring-down instead, see :func:`coil_sources`). Monitors: a DFT of all
    six components at ``frequencies`` (Hz) on the box around the head, and a probe on
    every rung's feed edge (its E gives the port voltage). ``balance_box`` adds the DFT
    box of :func:`power_balance`, ``body_box`` a DFT of E over the whole phantom inside
    the interior (:func:`body_box`, for whole-body SAR). ``media`` gives each tissue's
    medium (:func:`phantom`). ``port_impedance`` (ohm) feeds the rungs through
    LumpedPorts of that Z0, one excitation per rung batched in one run
    (``port_excitation = "each"``): the coil's 8-port S-matrix.
    """
    # The head sits at z = 0.33 m (torso below, into the lower CPML) unless the grid is
    # too short: then the coil and the balance box's top (0.16 m above the head centre)
    # keep 0.03 m and 3 cells from the upper CPML.
    top = 0.5 * shape[2] * spacing - (pml + 3) * spacing
    head = (0.0, 0.0, min(0.33, top - 0.19))
    domain = Domain(shape=shape, spacing=spacing)
    sources, wires = coil(domain, head, drive=drive,
                          frequency=f0 if drive == "pulse" else LARMOR_3T, fwidth=fwidth,
                          impedance=port_impedance)
    frequencies = [float(f) for f in frequencies]
    monitors = [
        DFTMonitor(name="head", center=head, size=(0.32, 0.32, 0.26),
                   components=["Ex", "Ey", "Ez", "Hx", "Hy", "Hz"],
                   frequencies=frequencies),
        Probe(name="ports", positions=[s.position for s in sources], components=["Ez"]),
    ]
    d = np.asarray(domain.spacing3)
    if balance_box:
        lo, hi = _balance_box(domain, head)
        monitors.append(DFTMonitor(
            name="balance", center=tuple(0.5 * (lo + hi)), size=tuple(hi - lo + d),
            components=["Ex", "Ey", "Ez", "Hx", "Hy", "Hz"], frequencies=frequencies))
    if body_box:
        lo, hi = _body_box(domain, head, pml)
        monitors.append(DFTMonitor(
            name="body", center=tuple(0.5 * (lo + hi)), size=tuple(hi - lo),
            components=["Ex", "Ey", "Ez"], frequencies=frequencies))
    if drive == "pulse":
        w = sources[0].waveform
        duration = 2 * w.offset * w.tau + 20e-9  # the pulse, then the ring-down
    else:
        duration = periods / LARMOR_3T
    return FDTD3D(
        name=name,
        domain=domain,
        structures=phantom(head, media) + wires,
        sources=sources,
        monitors=monitors,
        boundary=CPML(thickness=pml),
        duration=duration,
        cpml_strategy=strategy,
        port_excitation="simultaneous" if port_impedance is None else "each",
    )


def mri_coil_dispersive(**options) -> FDTD3D:
    """``mri-coil`` with dispersive tissue (Debye fits of Gabriel's models over
    30-600 MHz, :mod:`emjax.scenarios.dispersive`) driven by one broadband pulse
    (:data:`BROADBAND_PULSE`), with DFTs at :data:`BROADBAND_FREQUENCIES` on the head
    box and on the whole phantom (``body``): one run gives the SAR maps of 1.5, 3 and
    7 T (:func:`emjax.scenarios.mri_maps.broadband_coil_sar`). ``options`` go to
    :func:`mri_coil` (shape, spacing, ...)."""
    from .dispersive import fitted_tissue

    f0, fwidth = BROADBAND_PULSE
    kwargs = dict(drive="pulse", media=fitted_tissue, frequencies=BROADBAND_FREQUENCIES,
                  f0=f0, fwidth=fwidth, body_box=True, name="mri-coil-dispersive")
    return mri_coil(**{**kwargs, **options})


def _body_box(domain: Domain, head: tuple[float, float, float], pml: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """Corners (m, on grid nodes) of the box around the whole phantom (x within
    0.17 m and y within 0.11 m of the head's axis, z up to the crown), cut one cell
    inside the CPML: the tissue that the SAR maps can see."""
    lower, d, n = np.asarray(domain.lower), np.asarray(domain.spacing3), domain.cells
    inner_lo = lower + (pml + 1) * d
    inner_hi = lower + (np.asarray(n) - pml - 1) * d
    want_lo = np.array([head[0] - 0.17, head[1] - 0.11, -np.inf])
    want_hi = np.array([head[0] + 0.17, head[1] + 0.11, head[2] + 0.115])
    lo = np.maximum(want_lo, inner_lo)
    hi = np.minimum(want_hi, inner_hi)
    lo = lower + np.floor((lo - lower) / d + 1e-9) * d
    hi = lower + np.ceil((hi - lower) / d - 1e-9) * d
    return np.maximum(lo, inner_lo), np.minimum(hi, inner_hi)


def _balance_box(domain: Domain, head: tuple[float, float, float],
                 half: tuple[float, float, float] = (0.18, 0.18, 0.16)
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Corners (m, on grid nodes) of the closed box of the power balance: around the
    coil, cutting the neck."""
    lower, d = domain.lower, domain.spacing3
    lo = np.array([_snap(head[a] - half[a], lower[a], d[a]) for a in range(3)])
    hi = np.array([_snap(head[a] + half[a], lower[a], d[a]) for a in range(3)])
    return lo, hi


def port_power(current: np.ndarray, e_dft: np.ndarray, dl: float) -> float:
    """Power in W the current sources deliver: -½ Re Σ_k (E_k dl) conj(I_k).

    current: complex phasors of each source's current in A; e_dft: the DFT of E along
    each source's edge (same DFT convention and scale as ``current``), V/m; dl: edge
    length in m. The scale of the DFT cancels in ratios against fields of the same run.
    The two must refer to each quantity's own sample times (E at (n+1) dt, the source
    current at (n+½) dt, see :func:`current_dft`): a port's reactance is hundreds of
    times its resistance, so half a step of phase (ω dt / 2 = 0.003 rad at 4 mm) would
    shift the accepted power by about that ratio times 0.3%.
    """
    return float(-0.5 * np.real(np.sum(np.asarray(e_dft) * dl * np.conj(current))))


def port_field(md, sources: Sequence[EdgeSource], frequency_index: int = 0) -> np.ndarray:
    """The DFT of Ez (V/m*s) on each feed edge, from a DFT monitor that holds the feeds
    (the head or balance box; the feeds sit on Ez samples)."""
    ez, (xs, ys, zs) = md.array("Ez")[frequency_index], md.axes("Ez")
    return np.array([ez[np.argmin(np.abs(xs - p.position[0])),
                        np.argmin(np.abs(ys - p.position[1])),
                        np.argmin(np.abs(zs - p.position[2]))] for p in sources])


def accepted_power(res, sim: FDTD3D, monitor: str = "head") -> np.ndarray:
    """Accepted power of a pulsed run at each frequency of the DFT ``monitor``, in W
    times the squared DFT scale (:func:`port_power` of :func:`port_field` and
    :func:`current_dft`); shape (nf,)."""
    md = res[monitor]
    dt = float(res.metadata.get("dt", sim.dt))
    steps = int(res.metadata.get("steps", sim.num_steps))
    return np.array([
        port_power(current_dft(sim.sources, dt, steps, float(f)),
                   port_field(md, sim.sources, i), sim.domain.spacing3[2])
        for i, f in enumerate(np.atleast_1d(md.coords["f"]))])


def current_dft(sources: list[EdgeSource], dt: float, steps: int,
                frequency: float = LARMOR_3T, kernel_shift: float = 0.0) -> np.ndarray:
    """DFT (A*s) of each source's current as the FDTD injects it: samples
    ``amplitude * waveform((n + ½) dt)`` for n < steps, with the kernel of
    :class:`~emjax.model.DFTMonitor` at those times. ``kernel_shift`` (steps) moves the
    kernel off them: ½ books the current at E's times (n + 1) dt, the leapfrog slip
    this function exists to avoid, kept to show what it costs."""
    t = (np.arange(steps, dtype=np.float64) + 0.5) * dt
    kernel = np.exp(-2j * np.pi * frequency * (t + kernel_shift * dt)) * dt
    return np.array([np.sum(s.amplitude * s.waveform(t) * kernel) for s in sources])


def steady_phasors(t: np.ndarray, x: np.ndarray, frequency: float = LARMOR_3T,
                   periods: float = 5.0) -> np.ndarray:
    """Steady-state phasors of sampled signals: ``x(t) ~ Re(X exp(jωt))`` fitted by least
    squares over the last ``periods`` periods. t: (nt,) s; x: (nt, ...). Returns X
    (...), complex, peak amplitude (the CW counterpart of :func:`current_dft`)."""
    t = np.asarray(t, float)
    sel = t >= t[-1] - periods / frequency
    w = 2 * np.pi * frequency
    A = np.stack([np.cos(w * t[sel]), -np.sin(w * t[sel])], axis=1)
    xs = np.asarray(x, float)[sel].reshape(int(sel.sum()), -1)
    coef, *_ = np.linalg.lstsq(A, xs, rcond=None)
    return (coef[0] + 1j * coef[1]).reshape(np.asarray(x).shape[1:])


def accepted_power_cw(res, sim: FDTD3D) -> float:
    """Accepted power in W of a CW ``mri-coil`` run: steady-state phasors of the port
    probe (E at (n+1) dt) and of the source currents (known amplitude and phase)."""
    md = res["ports"]
    e = steady_phasors(md.time("Ez"), md.array("Ez"))
    cur = []
    for s in sim.sources:
        w = s.waveform  # sin(ωt + φ) = Re(exp(j(φ - π/2)) exp(jωt))
        cur.append(s.amplitude * np.exp(1j * (w.phase - np.pi / 2)))
    return port_power(np.array(cur), e, sim.domain.spacing3[2])


def power_balance(spacing: float = 4e-3, shape: tuple[int, int, int] | None = None,
                  pml: int = 10, progress: bool = False) -> dict:
    """Run ``mri-coil`` with a pulse drive and a balance box; return its power budget.

    Returns {"accepted", "absorbed", "radiated"} in W times the (common) squared DFT
    scale, "accepted_unstaggered" (the current's samples booked at E's times, (n + 1) dt,
    instead of their own: a wrong bookkeeping kept for comparison), and the run's
    "shape" and "steps".
    accepted: :func:`port_power` from the DFT of E on the feed edges and
    :func:`current_dft`; absorbed: ``Σ 0.5 sigma |E|² dV`` over the E edges in the box
    (SAR integrated on the Yee samples); radiated: the Poynting flux out of the box
    (:func:`emjax.analysis.sar.box_flux`), which includes what flows down the neck.
    ``shape`` defaults to the 4 mm grid scaled to ``spacing``.
    """
    from ..analysis.sar import box_flux, edge_conductivity, yee_absorbed_power
    from ..fdtd.solver import FDTDSolver

    if shape is None:
        shape = tuple(max(24, round(n * 4e-3 / spacing)) for n in (312, 328, 325))
    sim = mri_coil(shape=shape, spacing=spacing, pml=pml, drive="pulse", balance_box=True)
    solver = FDTDSolver(sim)
    res = solver.run(progress=progress)
    s = solver.setup
    md = res["balance"]
    head = sim.monitors[0].center
    lo, hi = _balance_box(sim.domain, head)
    d = sim.domain.spacing3
    e_port = port_field(md, sim.sources)  # E on each feed edge, from the balance box
    accepted = port_power(current_dft(sim.sources, s.dt, s.steps), e_port, d[2])
    # The same with the current's samples booked at E's times, (n + 1) dt: what ignoring
    # the leapfrog's half step costs (kept for the report).
    slipped = current_dft(sim.sources, s.dt, s.steps, kernel_shift=0.5)
    unstaggered = port_power(slipped, e_port, d[2])
    absorbed = yee_absorbed_power(md, edge_conductivity(sim), sim.domain.lower, d, lo, hi)
    radiated = box_flux(md, lo, hi, d)
    return {"accepted": accepted, "absorbed": absorbed, "radiated": radiated,
            "accepted_unstaggered": unstaggered, "shape": list(s.grid.nodes), "steps": s.steps}


__all__ = [
    "BROADBAND_FREQUENCIES",
    "BROADBAND_PULSE",
    "LARMOR_3T",
    "TISSUES_128MHZ",
    "TissueMedia",
    "accepted_power",
    "accepted_power_cw",
    "coil",
    "coil_sources",
    "current_dft",
    "density",
    "mri_coil",
    "mri_coil_dispersive",
    "phantom",
    "port_field",
    "port_power",
    "power_balance",
    "steady_phasors",
    "tissue",
]
