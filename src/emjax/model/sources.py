"""Sources: currents and lumped voltage sources on single Yee edges, lumped ports (one
edge or a sheet of parallel edges); rectangular waveguide ports; plane waves."""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import Field, model_validator

from .base import Axis, EmModel, Name, Vec3
from .waveforms import Waveform

PortName = Annotated[Name, Field(description="Port name, unique among ports and monitors; "
                                  "keys its record in the results.")]


class PointDipole(EmModel):
    """An electric current element on the Yee edge nearest ``position``.

    The current moment is ``amplitude * waveform(t)`` in A*m, spread over the cell
    volume: ``J = I dl / (dx dy dz)``.
    """

    type: Literal["PointDipole"] = "PointDipole"
    position: Vec3 = Field(..., description="Location in m; snapped to the nearest edge.")
    polarization: Axis = Field(..., description="Direction of the current: 'x', 'y' or 'z'.")
    amplitude: float = Field(1.0, description="Current moment scale in A*m.")
    waveform: Waveform


class EdgeSource(EmModel):
    """A lumped source on one Yee edge, as the MRI coil of seed 001 uses.

    ``kind="current"`` drives ``amplitude * waveform(t)`` amperes along the edge.
    ``kind="voltage"`` is a voltage source of ``amplitude * waveform(t)`` volts in series
    with ``resistance`` ohms (a matched port by default); the resistor loads the edge.
    """

    type: Literal["EdgeSource"] = "EdgeSource"
    position: Vec3 = Field(..., description="Location in m; snapped to the nearest edge.")
    polarization: Axis = Field(..., description="Edge direction: 'x', 'y' or 'z'.")
    kind: Literal["current", "voltage"] = Field("voltage", description="Current or voltage.")
    amplitude: float = Field(1.0, description="Peak current in A or voltage in V.")
    resistance: float = Field(50.0, gt=0, description="Series resistance in ohm (voltage only).")
    waveform: Waveform


class LumpedPort(EmModel):
    """A lumped port on one Yee edge, or on a sheet or box of parallel edges (``size``):
    a voltage source of ``amplitude * waveform(t)``
    volts in series with its reference impedance ``impedance`` (Z0, ohm), which also
    measures its own voltage and current every step (what openEMS's ``AddLumpedPort``
    and Tidy3D's ``LumpedPort`` are). ``excite = false`` makes it a passive port: only
    the resistor Z0 loads the edge, and it measures what arrives.

    With ``size`` zero (the default) it is the voltage :class:`EdgeSource` with a name;
    a nonzero ``size`` spreads it over every edge of the box ``position +- size / 2``
    (snapped to the grid nodes, both ends included across ``polarization``), as
    openEMS's lumped port between ``start`` and ``stop``: N_ser edges in series along
    ``polarization``, columns of them side by side, the resistance Z0 and the source
    voltage shared out so that the whole sheet is one source V_s in series with Z0
    (``fdtd/ports.py`` gives the rule and the V and I it measures). A sheet spanning a
    parallel-plate line's cross-section launches its TEM wave. The name keys its
    record in the results, from which
    :func:`emjax.analysis.sparams.s_parameters` forms Z_in and S referred to Z0. The
    port's voltage is E along the edge times its length, positive along
    ``polarization``; its current flows into the structure (out of the source's +
    terminal), so an open edge reads V = the source's voltage, I = 0. The edge's own
    capacitance (``eps dA / dl``: 8.85 fF for a 1 mm vacuum cell, -18 kohm at 1 GHz)
    and whatever medium fills it belong to the structure the port sees.
    """

    type: Literal["LumpedPort"] = "LumpedPort"
    name: PortName
    position: Vec3 = Field(..., description="Location (the sheet's centre) in m; snapped "
                           "to the nearest edge (grid nodes for a sheet's ends).")
    polarization: Axis = Field(..., description="Edge direction: 'x', 'y' or 'z'; the "
                               "port voltage is positive along it.")
    size: Vec3 = Field((0.0, 0.0, 0.0), description="Extent in m of the sheet or box of "
                       "edges (>= 0 each; along polarization: the length the edges span in "
                       "series); zero: one edge.")
    impedance: float = Field(50.0, gt=0, description="Reference impedance Z0 in ohm: the "
                             "source's series resistance, and what S refers to.")
    amplitude: float = Field(1.0, description="Open-circuit source voltage peak in V.")
    excite: bool = Field(True, description="Drive the port (true) or only load and "
                         "measure (false).")
    waveform: Waveform | None = Field(None, description="Time signal of the source voltage "
                                      "(needed when excite is true).")

    @model_validator(mode="after")
    def _excited_has_waveform(self) -> LumpedPort:
        bad = [f"{ax} = {v:g}" for ax, v in zip("xyz", self.size, strict=True) if v < 0]
        if bad:
            raise ValueError(f"LumpedPort '{self.name}': size has {', '.join(bad)} m; each "
                             "extent must be >= 0 (0: one edge along that axis)")
        if self.excite and self.waveform is None:
            raise ValueError(f"LumpedPort '{self.name}': excite = true needs a 'waveform'; add "
                             "one or set excite = false for a passive port")
        return self


class WaveguidePort(EmModel):
    """A port on a rectangular waveguide's cross-section: it launches one TE_mn or TM_mn
    mode into the device and splits the fields on its plane into that mode's forward
    and backward waves (what openEMS's ``AddRectWaveGuidePort`` and Meep's mode
    monitors do).

    The rectangle (``center``, ``size``; one zero extent, whose axis is the normal) is
    the guide's inside, assumed bounded by PEC walls and filled with one lossless
    medium. Its tangential axes (u, v) follow the normal cyclically (normal z: u = x,
    v = y; x: u = y, v = z; y: u = z, v = x); ``m`` counts half-waves along u, ``n``
    along v (WR-90 normal to z with its broad side along x: TE10). ``mode = "solved"``
    instead takes the profile of the 2D eigenmode solver (``emjax.eigenmode``) on the
    rasterized cross-section inside the rectangle (its rim PEC, or PMC where it lies on
    a PMC domain face; lossless, non-dispersive media and PEC inside, the same on the
    source and port planes), so that a coax or a microstrip gets its (quasi-)TEM mode
    (``emjax.fdtd.modeport``). ``direction`` is
    the side the device lies on: the mode is launched that way, and a = the wave going
    in, b = the wave coming out. ``amplitude * waveform(t)`` is the launched wave's
    modal voltage in V (E_t = V e(u, v), e normalized to unit integral of |e|^2; the
    wave carries |V|^2 / (2 Re Z_w) W per phasor); for a TM mode, whose admittance is
    infinite at cut-off, it is the modal current times |Z_w| at the waveform's centre
    frequency (the voltage then follows Z_w(f): ``emjax.fdtd.waveguide.launch``).
    Lowered by ``emjax.fdtd.waveguide``; its record (kind "WaveguidePort") feeds
    :func:`emjax.analysis.sparams.s_parameters`, whose frequencies are chosen after the
    run (default: the band of the waveform above the mode's cut-off).
    """

    type: Literal["WaveguidePort"] = "WaveguidePort"
    name: PortName
    center: Vec3 = Field(..., description="Centre of the port rectangle in m; along the normal "
                         "it is the measuring plane (snapped to the nearest E-node plane).")
    size: Vec3 = Field(..., description="Extent in m: the guide's inner width and height, and "
                       "0 along the normal.")
    direction: Literal["+", "-"] = Field(..., description="Side of the plane the device lies "
                                         "on, along the normal: '+' or '-'.")
    mode: Literal["TE", "TM", "solved"] = Field(
        "TE", description="Mode family: analytic 'TE' or 'TM' of an empty rectangular "
        "guide, or 'solved': mode 'mode_index' of the 2D eigenmode solver on the port's "
        "own cross-section (any media and PEC inside the rectangle: coax, microstrip).")
    mode_index: int = Field(0, ge=0, le=32, description="'solved' only: which mode, by "
                            "descending effective index (0 = fundamental).")
    mode_frequency: float | None = Field(None, gt=0, description="'solved' only: the "
                                         "frequency in Hz of the mode's profile; default "
                                         "the centre of the launched waveform.")
    m: int = Field(1, ge=0, le=64, description="Half-waves along u (the first tangential axis).")
    n: int = Field(0, ge=0, le=64, description="Half-waves along v (the second tangential "
                   "axis).")
    amplitude: float = Field(1.0, description="Peak modal voltage of the launched wave in V.")
    excite: bool = Field(True, description="Launch the mode (true) or only measure (false).")
    waveform: Waveform | None = Field(None, description="Time signal of the launched wave "
                                      "(needed when excite is true).")
    reference_offset: float = Field(0.0, description="Shift in m of the reference plane from "
                                    "the port plane along 'direction' (into the device when "
                                    "positive); the waves are phase-shifted by the mode's "
                                    "beta(f) (de-embedding).")

    @property
    def normal(self) -> int:
        """The normal axis: 0, 1 or 2."""
        return next(a for a in range(3) if self.size[a] == 0)

    @property
    def corners(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The rectangle's lowest and highest corners in m."""
        c, s = np.array(self.center), np.array(self.size)
        return tuple((c - s / 2).tolist()), tuple((c + s / 2).tolist())

    @model_validator(mode="after")
    def _check(self) -> WaveguidePort:
        what = f"WaveguidePort '{self.name}'"
        zero = [a for a in range(3) if self.size[a] == 0]
        if len(zero) != 1 or any(v < 0 for v in self.size):
            raise ValueError(f"{what}: size {tuple(self.size)} m must have exactly one zero "
                             "extent (the normal) and two positive ones (the guide's width "
                             "and height)")
        if self.mode != "solved" and (self.mode_index != 0 or self.mode_frequency is not None):
            raise ValueError(f"{what}: mode_index and mode_frequency apply to mode = 'solved' "
                             f"only; mode {self.mode!r} takes m and n")
        if self.mode == "TE" and self.m == 0 and self.n == 0:
            raise ValueError(f"{what}: TE00 does not exist; give m or n >= 1 (TE10 is the "
                             "fundamental mode of a guide wider along u)")
        if self.mode == "TM" and (self.m == 0 or self.n == 0):
            raise ValueError(f"{what}: TM{self.m}{self.n} does not exist; a TM mode needs m "
                             ">= 1 and n >= 1 (TM11 is the lowest)")
        if self.excite and self.waveform is None:
            raise ValueError(f"{what}: excite = true needs a 'waveform'; add one or set "
                             "excite = false for a passive port")
        return self


class PlaneWave(EmModel):
    """A uniform plane wave: E = amplitude * e_hat * waveform(t - k_hat.r / c).

    The propagation direction ``k_hat`` has polar angle ``theta`` from +z and azimuth
    ``phi`` from +x (degrees). ``polarization`` is the angle of E from the unit vector
    theta_hat towards phi_hat (degrees), so theta = phi = polarization = 0 is an
    x-polarised wave travelling along +z, and polarization = 90 there gives y.
    FDTD injects it through a total-field/scattered-field surface; FDFD uses it as the
    incident field at the scenario's frequency (``waveform`` may then be left out).
    """

    type: Literal["PlaneWave"] = "PlaneWave"
    theta: float = Field(0.0, ge=0, le=180, description="Polar angle of k from +z, degrees.")
    phi: float = Field(0.0, ge=-360, le=360, description="Azimuth of k from +x, degrees.")
    polarization: float = Field(
        0.0, ge=-360, le=360, description="Angle of E from theta_hat towards phi_hat, degrees."
    )
    amplitude: float = Field(1.0, description="Peak electric field in V/m.")
    waveform: Waveform | None = Field(None, description="Time signal (needed by FDTD).")
    box_center: Vec3 | None = Field(
        None, description="FDTD: centre of the TF/SF box in m; default the interior's centre.")
    box_size: Vec3 | None = Field(
        None, description="FDTD: extent of the TF/SF box in m (snapped to grid nodes); "
        "default the interior (inside any CPML) less box_margin cells on each side.")
    box_margin: int = Field(
        6, ge=2, description="FDTD: cells between the CPML (or wall) and the default box.")
    reference_frequency: float | None = Field(
        None, gt=0, description="FDTD: frequency in Hz at which the 1D incident grid's "
        "dispersion matches the 3D grid's along k; default the waveform's centre.")

    @property
    def k_hat(self) -> np.ndarray:
        """Unit propagation vector."""
        t, p = math.radians(self.theta), math.radians(self.phi)
        return np.array([math.sin(t) * math.cos(p), math.sin(t) * math.sin(p), math.cos(t)])

    @property
    def e_hat(self) -> np.ndarray:
        """Unit electric-field vector, perpendicular to ``k_hat``."""
        t, p, a = (math.radians(v) for v in (self.theta, self.phi, self.polarization))
        theta_hat = np.array([math.cos(t) * math.cos(p), math.cos(t) * math.sin(p), -math.sin(t)])
        phi_hat = np.array([-math.sin(p), math.cos(p), 0.0])
        return math.cos(a) * theta_hat + math.sin(a) * phi_hat

    @property
    def h_hat(self) -> np.ndarray:
        """Unit magnetic-field vector, ``k_hat x e_hat``."""
        return np.cross(self.k_hat, self.e_hat)


Source = Annotated[PointDipole | EdgeSource | LumpedPort | WaveguidePort | PlaneWave,
                   Field(discriminator="type")]


def amplitude_problems(sources, dtype: str) -> list[str]:
    """Source amplitudes past the largest number of the run's ``dtype``: their samples
    could not even be stored (waveforms peak at 1), refused before any set-up."""
    top = float(np.finfo(dtype).max)
    return [f"sources[{i}].amplitude = {s.amplitude:.6g} is beyond the largest {dtype} "
            f"({top:.3g}); lower it or use dtype = 'float64'"
            for i, s in enumerate(sources) if not abs(s.amplitude) <= top]


def excitation_problems(sources, port_excitation: str) -> list[str]:
    """port_excitation = 'each' needs an excited port and no source outside the ports
    (a dipole or plane wave would be on in every excitation and mix into every column)."""
    if port_excitation != "each":
        return []
    problems = []
    if not any(getattr(s, "excite", False) for s in sources):
        problems.append("port_excitation = 'each' needs at least one port with excite = true "
                        "(one excitation per excited port); add one or use 'simultaneous'")
    for i, s in enumerate(sources):
        if not hasattr(s, "excite"):
            problems.append(
                f"sources[{i}] {s.type}: port_excitation = 'each' drives one port per "
                "excitation, and this source would be on in every one of them; remove it or "
                "use port_excitation = 'simultaneous'")
    return problems
