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

The coil: 8 rungs parallel to z on a circle around the head, each a z-directed
current ``EdgeSource`` of 1 A peak, driven in quadrature (phase step 45 degrees, so
the rung currents form the rotating B1+ of a birdcage's uniform mode) by a sinusoid
at 128 MHz with a raised-cosine ramp. Accepted power follows from each source's
current and the DFT of E on its edge (see :func:`port_power`).
"""

from __future__ import annotations

import math

import numpy as np

from ..model import (
    CPML,
    FDTD3D,
    ContinuousWave,
    Cylinder,
    DFTMonitor,
    Domain,
    EdgeSource,
    Ellipsoid,
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


def coil_sources(head_center: tuple[float, float, float] = (0.0, 0.0, 0.33),
                 radius: float = 0.14, rungs: int = 8, frequency: float = LARMOR_3T,
                 ramp_periods: float = 5.0) -> list[EdgeSource]:
    """``rungs`` z-directed 1 A current sources on a circle, phases stepping by 2π/rungs.

    Rung k sits at azimuth 2πk/rungs and carries ``sin(ωt + 2πk/rungs)``: with the
    phase growing with azimuth the pattern rotates clockwise seen from +z, the sense of
    proton precession, so the coil drives B1+ (see :mod:`emjax.analysis.sar`).
    """
    hx, hy, hz = head_center
    out = []
    for k in range(rungs):
        a = 2 * math.pi * k / rungs
        out.append(EdgeSource(
            position=(hx + radius * math.cos(a), hy + radius * math.sin(a), hz),
            polarization="z", kind="current", amplitude=1.0,
            waveform=ContinuousWave(frequency=frequency, ramp=ramp_periods / frequency,
                                    phase=-a)))
    return out


def mri_coil(shape: tuple[int, int, int] = (312, 328, 325), spacing: float = 4e-3,
             pml: int = 10, periods: float = 30.0, strategy: str = "combined") -> FDTD3D:
    """The seed-001 MRI benchmark as an :class:`FDTD3D` (see the module docstring).

    ``pml`` cells of CPML on every face; ``periods`` of the 128 MHz drive are simulated.
    Monitors: a DFT of all six components at 128 MHz on the box around the head, and a
    probe on every rung's edge (its E gives the port voltage).
    """
    head = (0.0, 0.0, min(0.33, 0.5 * shape[2] * spacing - (pml + 40) * spacing))
    sources = coil_sources(head)
    return FDTD3D(
        name="mri-coil",
        domain=Domain(shape=shape, spacing=spacing),
        structures=phantom(head),
        sources=sources,
        monitors=[
            DFTMonitor(name="head", center=head, size=(0.32, 0.32, 0.26),
                       components=["Ex", "Ey", "Ez", "Hx", "Hy", "Hz"],
                       frequencies=[LARMOR_3T]),
            Probe(name="ports", positions=[s.position for s in sources], components=["Ez"]),
        ],
        boundary=CPML(thickness=pml),
        duration=periods / LARMOR_3T,
        cpml_strategy=strategy,
    )


def port_power(current: np.ndarray, e_dft: np.ndarray, dl: float) -> float:
    """Power in W the current sources deliver: -½ Re Σ_k (E_k dl) conj(I_k).

    current: complex phasors of each source's current in A; e_dft: the DFT of E along
    each source's edge (same DFT convention and scale as ``current``), V/m; dl: edge
    length in m. The scale of the DFT cancels in ratios against fields of the same run.
    """
    return float(-0.5 * np.real(np.sum(np.asarray(e_dft) * dl * np.conj(current))))


__all__ = ["LARMOR_3T", "TISSUES_128MHZ", "coil_sources", "density", "mri_coil", "phantom",
           "port_power", "tissue"]
