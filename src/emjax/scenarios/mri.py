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
(:func:`accepted_power_cw`), in a pulsed run from DFTs (:func:`power_balance`).

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
    Medium,
    Probe,
    Structure,
)

LARMOR_3T = 128e6
"""Proton Larmor frequency at 3 T in Hz (rounded, as MRI papers quote it)."""

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


def _shells(make, layers: list[tuple[str, float]]) -> list[Structure]:
    """Nested structures, outermost first: ``make(inset)`` gives the shape shrunk by
    ``inset`` metres, and each (tissue, thickness) layer fills down to the next inset."""
    out, inset = [], 0.0
    for name, thickness in layers:
        out.append(Structure(geometry=make(inset), medium=tissue(name)))
        inset += thickness
    return out


def phantom(head_center: tuple[float, float, float] = (0.0, 0.0, 0.33)) -> list[Structure]:
    """Torso, neck and head as nested tissue structures (later ones win), metres."""
    hx, hy, hz = head_center
    torso_top = hz - 0.21
    structures = _shells(
        lambda d: Ellipsoid(center=(hx, hy, torso_top - 0.90),
                            semi_axes=(0.17 - d, 0.11 - d, 0.90 - d)),
        [("skin", 0.004), ("fat", 0.012), ("muscle", 0.0)],
    )
    structures.append(Structure(  # spine
        geometry=Cylinder(center=(hx, hy - 0.06, torso_top - 0.40), radius=0.015,
                          length=0.80, axis="z"),
        medium=tissue("bone")))
    structures += _shells(
        lambda d: Cylinder(center=(hx, hy, torso_top + 0.07), radius=0.055 - d,
                           length=0.16, axis="z"),
        [("skin", 0.004), ("muscle", 0.0)],
    )
    structures.append(Structure(
        geometry=Cylinder(center=(hx, hy - 0.015, torso_top + 0.07), radius=0.012,
                          length=0.16, axis="z"),
        medium=tissue("bone")))
    structures += _shells(
        lambda d: Ellipsoid(center=head_center, semi_axes=(0.075 - d, 0.095 - d, 0.115 - d)),
        [("skin", 0.004), ("bone", 0.006), ("csf", 0.004), ("brain", 0.0)],
    )
    return structures


def _snap(value: float, lower: float, spacing: float, offset: float = 0.0) -> float:
    """``value`` moved to the nearest grid position ``lower + (i + offset) spacing``."""
    return lower + (round((value - lower) / spacing - offset) + offset) * spacing


def coil_sources(head_center: tuple[float, float, float] = (0.0, 0.0, 0.33),
                 radius: float = 0.14, rungs: int = 8, frequency: float = LARMOR_3T,
                 ramp_periods: float = 5.0, drive: str = "cw",
                 fwidth: float = 50e6) -> list[EdgeSource]:
    """``rungs`` z-directed 1 A current sources on a circle, phases stepping by 2π/rungs.

    Rung k sits at azimuth a = 2πk/rungs and carries ``sin(ωt + a)``: with the phase
    growing with azimuth the field at the centre, ``∝ Σ sin(ωt + a) (sin a, -cos a)
    = (rungs/2) (cos ωt, -sin ωt)``, rotates clockwise seen from +z, the sense of
    proton precession, so the coil drives B1+ (see :mod:`emjax.analysis.sar`; until
    issue 9 the phase was ``-a``, which drove B1-: |B1+|/|B1-| = 0.11 at the centre).
    ``drive="pulse"`` gives each rung a Gaussian pulse centred on ``frequency`` (spectral
    sigma ``fwidth`` Hz) with the same carrier phases instead: every transform of the
    run is then complete, which the power balance needs (:func:`power_balance`).
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
        out.append(EdgeSource(
            position=(hx + radius * math.cos(a), hy + radius * math.sin(a), hz),
            polarization="z", kind="current", amplitude=1.0, waveform=wave))
    return out


def coil(domain: Domain, head_center: tuple[float, float, float], radius: float = 0.14,
         rung_length: float = 0.20, rungs: int = 8, drive: str = "cw",
         frequency: float = LARMOR_3T) -> tuple[list[EdgeSource], list[Structure]]:
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
    for s in coil_sources(head_center, radius, rungs, frequency, drive=drive):
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
             drive: str = "cw", balance_box: bool = False) -> FDTD3D:
    """The seed-001 MRI benchmark as an :class:`FDTD3D` (see the module docstring).

    ``pml`` cells of CPML on every face; ``periods`` of the 128 MHz drive are simulated
    (``drive="pulse"``: a Gaussian pulse and its ring-down instead, see
    :func:`coil_sources`). Monitors: a DFT of all six components at 128 MHz on the box
    around the head, and a probe on every rung's feed edge (its E gives the port
    voltage). ``balance_box`` adds the DFT box of :func:`power_balance`.
    """
    # The head sits at z = 0.33 m (torso below, into the lower CPML) unless the grid is
    # too short: then the coil and the balance box's top (0.16 m above the head centre)
    # keep 0.03 m and 3 cells from the upper CPML.
    top = 0.5 * shape[2] * spacing - (pml + 3) * spacing
    head = (0.0, 0.0, min(0.33, top - 0.19))
    domain = Domain(shape=shape, spacing=spacing)
    sources, wires = coil(domain, head, drive=drive)
    monitors = [
        DFTMonitor(name="head", center=head, size=(0.32, 0.32, 0.26),
                   components=["Ex", "Ey", "Ez", "Hx", "Hy", "Hz"],
                   frequencies=[LARMOR_3T]),
        Probe(name="ports", positions=[s.position for s in sources], components=["Ez"]),
    ]
    if balance_box:
        lo, hi = _balance_box(domain, head)
        d = np.asarray(domain.spacing3)
        monitors.append(DFTMonitor(
            name="balance", center=tuple(0.5 * (lo + hi)), size=tuple(hi - lo + d),
            components=["Ex", "Ey", "Ez", "Hx", "Hy", "Hz"], frequencies=[LARMOR_3T]))
    if drive == "pulse":
        w = sources[0].waveform
        duration = 2 * w.offset * w.tau + 20e-9  # the pulse, then the ring-down
    else:
        duration = periods / LARMOR_3T
    return FDTD3D(
        name="mri-coil",
        domain=domain,
        structures=phantom(head) + wires,
        sources=sources,
        monitors=monitors,
        boundary=CPML(thickness=pml),
        duration=duration,
        cpml_strategy=strategy,
    )


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
    # E on each feed edge, from the balance box (the feeds sit on Ez samples).
    ez, (xs, ys, zs) = md.array("Ez")[0], md.axes("Ez")
    e_port = np.array([ez[np.argmin(np.abs(xs - p.position[0])),
                          np.argmin(np.abs(ys - p.position[1])),
                          np.argmin(np.abs(zs - p.position[2]))] for p in sim.sources])
    accepted = port_power(current_dft(sim.sources, s.dt, s.steps), e_port, d[2])
    # The same with the current's samples booked at E's times, (n + 1) dt: what ignoring
    # the leapfrog's half step costs (kept for the report).
    slipped = current_dft(sim.sources, s.dt, s.steps, kernel_shift=0.5)
    unstaggered = port_power(slipped, e_port, d[2])
    absorbed = yee_absorbed_power(md, edge_conductivity(sim), sim.domain.lower, d, lo, hi)
    radiated = box_flux(md, lo, hi, d)
    return {"accepted": accepted, "absorbed": absorbed, "radiated": radiated,
            "accepted_unstaggered": unstaggered, "shape": list(s.grid.nodes), "steps": s.steps}


def tissue_maps(sim: FDTD3D, axes: tuple[np.ndarray, np.ndarray, np.ndarray]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sigma S/m, density kg/m³, tissue id) at the points of a grid ``axes`` (m), painted
    from the scenario's structures in order (later ones win, as rasterization does);
    id -1 is air or PEC, otherwise an index into :data:`TISSUES_128MHZ`."""
    names = list(TISSUES_128MHZ)
    X, Y, Z = np.meshgrid(*axes, indexing="ij")
    ident = np.full(X.shape, -1, np.int16)
    for st in sim.structures:
        name = getattr(st.medium, "name", None)
        ident[st.geometry.inside(X, Y, Z)] = names.index(name) if name in names else -1
    sig = np.array([TISSUES_128MHZ[n][1] for n in names] + [0.0])
    rho = np.array([TISSUES_128MHZ[n][2] for n in names] + [0.0])
    return sig[ident], rho[ident], ident


def coil_maps(res, sim: FDTD3D, monitor: str = "head") -> dict:
    """B1+ and SAR maps of an ``mri-coil`` run, normalised to 1 W of accepted power.

    Fields of the DFT ``monitor`` are moved to cell centres; accepted power comes from
    the ports (CW: steady-state phasors, :func:`accepted_power_cw`; pulse: DFTs,
    :func:`port_power` with :func:`current_dft`), and the DFT scale of a CW run is the
    current's DFT over its phasor. Returns arrays x, y, z (m), b1plus (complex,
    T/sqrt(W)), sar (local, W/kg per W), sar10g (10 g average, W/kg per W, NaN where
    undefined), sigma, rho, tissue; and scalars accepted_power_w (for the 1 A rungs),
    head_sar_w_per_kg (mass average over the tissue in the monitor), absorbed_in_box_w
    (W absorbed there per W accepted: at most 1), peak10g_w_per_kg (per W),
    b1plus_centre_ut (µT/sqrt(W)).

    Local SAR is formed on the Yee edges with their own conductivities
    (:func:`~emjax.analysis.sar.edge_power_density`). Interpolating E to the cell
    centres first carries the air's E (65 times the skin's normal to the skin) into the
    surface cells: at 16 mm cells it gave a head-average SAR 21 times too high, more
    power absorbed in the head than the coil accepted.
    """
    from ..analysis.sar import (
        b1_plus,
        cell_centres,
        edge_conductivity,
        edge_power_density,
        peak_average_sar,
        to_common_grid,
    )

    md = res[monitor]
    comps = ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz")
    axes = {c: md.axes(c) for c in comps}
    target = cell_centres(axes)
    f = to_common_grid({c: md.array(c)[0] for c in comps}, axes, target)
    dt = float(res.metadata.get("dt", sim.dt))
    steps = int(res.metadata.get("steps", sim.num_steps))
    i_dft = current_dft(sim.sources, dt, steps)
    if all(isinstance(s.waveform, ContinuousWave) for s in sim.sources):
        power = accepted_power_cw(res, sim)
        phasor = np.array([s.amplitude * np.exp(1j * (s.waveform.phase - np.pi / 2))
                           for s in sim.sources])
        scale = complex(np.mean(i_dft / phasor))
        watts = power
    else:
        ez, (xs, ys, zs) = md.array("Ez")[0], md.axes("Ez")
        e_port = np.array([ez[np.argmin(np.abs(xs - p.position[0])),
                              np.argmin(np.abs(ys - p.position[1])),
                              np.argmin(np.abs(zs - p.position[2]))] for p in sim.sources])
        power = port_power(i_dft, e_port, sim.domain.spacing3[2])
        scale = 1.0
        # per 1 A rung currents at 128 MHz: divide by the squared current spectrum
        amp = np.array([s.amplitude for s in sim.sources])
        watts = power / float(np.mean(np.abs(i_dft) / amp)) ** 2
    if not power > 0:
        raise ValueError(f"accepted power {power:.4g} W is not positive: the run did not "
                         "reach a usable state (too few steps?)")
    norm = 1.0 / (scale * np.sqrt(power))  # phasors per sqrt(W)
    b1 = b1_plus(f["Hx"] * norm, f["Hy"] * norm)
    sigma, rho, ident = tissue_maps(sim, target)
    # Loss formed on the Yee edges with their own conductivities, then moved to the
    # cell centres (edge_power_density says why not E first).
    p = edge_power_density(md, edge_conductivity(sim), sim.domain.lower,
                           sim.domain.spacing3, target) * abs(norm) ** 2
    sar = np.where(rho > 0, p / np.where(rho > 0, rho, 1.0), 0.0)
    dv = float(np.prod(sim.domain.spacing3))
    head = ident >= 0
    try:
        peak, sar10 = peak_average_sar(sar, rho, dv)
    except ValueError:  # too coarse a grid for a 10 g cube
        peak, sar10 = float("nan"), np.full(sar.shape, np.nan)
    centre = tuple(int(np.argmin(np.abs(t - c))) for t, c in zip(target, md.attrs.get(
        "center", sim.monitors[0].center), strict=True))
    return {"x": target[0], "y": target[1], "z": target[2], "b1plus": b1, "sar": sar,
            "sar10g": sar10, "sigma": sigma, "rho": rho, "tissue": ident,
            "accepted_power_w": watts,
            "head_sar_w_per_kg": (float(np.sum(p[head]) / np.sum(rho[head]))
                                  if head.any() else 0.0),
            "absorbed_in_box_w": float(np.sum(p[head]) * dv),
            "peak10g_w_per_kg": peak,
            "b1plus_centre_ut": float(abs(b1[centre]) * 1e6)}


def write_coil_outputs(res, sim: FDTD3D, directory, stem: str = "mri-coil") -> list:
    """PNG slices of |B1+| and local SAR, and an HDF5 file of both, per 1 W accepted.

    Writes ``<stem>_b1plus.png``, ``<stem>_sar.png`` (axial, coronal and sagittal cuts
    through the head monitor's centre) and ``<stem>_b1_sar.h5`` into ``directory``;
    returns their paths.
    """
    from pathlib import Path

    import h5py
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    maps = coil_maps(res, sim)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    x, y, z = maps["x"], maps["y"], maps["z"]
    c = [len(x) // 2, len(y) // 2, len(z) // 2]
    paths = []
    for key, label, data in (
            ("b1plus", "|B1+| (µT/√W)", np.abs(maps["b1plus"]) * 1e6),
            ("sar", "local SAR (W/kg per W accepted)", maps["sar"])):
        fig = Figure(figsize=(12, 4), layout="constrained")
        FigureCanvasAgg(fig)
        cuts = ((data[:, :, c[2]], x, y, "x (m)", "y (m)", f"axial z = {z[c[2]]:.3f} m"),
                (data[:, c[1], :], x, z, "x (m)", "z (m)", f"coronal y = {y[c[1]]:.3f} m"),
                (data[c[0], :, :], y, z, "y (m)", "z (m)", f"sagittal x = {x[c[0]]:.3f} m"))
        # SAR peaks in a few voxels (skin near the rungs): clip the scale at the 99.5th
        # percentile of the tissue values so that the head's pattern shows.
        vmax = float(np.nanpercentile(data[maps["tissue"] >= 0], 99.5)
                     if key == "sar" and (maps["tissue"] >= 0).any() else np.nanmax(data))
        vmax = vmax or 1.0
        for k, (a, u, v, lu, lv, title) in enumerate(cuts):
            ax = fig.add_subplot(1, 3, k + 1)
            im = ax.pcolormesh(u, v, a.T, shading="nearest", vmin=0, vmax=vmax, cmap="inferno")
            ax.set_aspect("equal")
            ax.set(xlabel=lu, ylabel=lv, title=title)
        fig.colorbar(im, ax=fig.axes, label=label, shrink=0.8)
        fig.suptitle(f"{stem}: {label}; accepted power {maps['accepted_power_w']:.3g} W "
                     "for 1 A rungs")
        path = out / f"{stem}_{key}.png"
        fig.savefig(path, format="png", dpi=110)
        paths.append(path)
    path = out / f"{stem}_b1_sar.h5"
    with h5py.File(path, "w") as h:
        for key in ("x", "y", "z", "b1plus", "sar", "sar10g", "sigma", "rho", "tissue"):
            h.create_dataset(key, data=maps[key], compression="gzip" if maps[key].ndim == 3
                             else None)
        h["b1plus"].attrs["unit"] = "T/sqrt(W)"
        h["sar"].attrs["unit"] = h["sar10g"].attrs["unit"] = "W/kg per W accepted"
        h["tissue"].attrs["names"] = ",".join(TISSUES_128MHZ)
        for key in ("accepted_power_w", "head_sar_w_per_kg", "absorbed_in_box_w",
                    "peak10g_w_per_kg", "b1plus_centre_ut"):
            h.attrs[key] = maps[key]
    paths.append(path)
    return paths


__all__ = [
    "LARMOR_3T",
    "TISSUES_128MHZ",
    "accepted_power_cw",
    "coil",
    "coil_maps",
    "coil_sources",
    "current_dft",
    "density",
    "mri_coil",
    "phantom",
    "port_power",
    "power_balance",
    "steady_phasors",
    "tissue",
    "tissue_maps",
    "write_coil_outputs",
]
