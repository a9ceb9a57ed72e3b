"""Validation cases: each runs the solver on a problem with a known answer.

Every case returns records ``{"case", "metric", "value", "limit", "bound", "unit", "pass"}``;
``emjax validate NAME`` prints them and the tests assert their ``pass`` fields.

- ``fdtd3d-cavity``: PEC box a x b x c; the three lowest resonances from a probe
  signal (matrix pencil) against ``f = c0/2 sqrt((m/a)^2 + (n/b)^2 + (p/c)^2)``. The
  measured shift must be the Yee dispersion shift predicted by
  ``sin(w dt/2)/(c dt) = sqrt(sum_i (sin(k_i d_i/2)/d_i)^2)`` to within 10%, and the
  error must fall at an observed order in [1.8, 2.2] over three resolutions.
- ``fdtd3d-cpml-reflection``: a dipole 3 cells from a 10-cell CPML face; the probe
  field against a domain so large that nothing returns within the window; the peak
  of |FFT(test - ref)| / |FFT(ref)| over the pulse band must be at most -70 dB.
- ``fdtd3d-energy``: a closed lossless PEC cavity in float64; after the source has
  ended the leapfrog invariant stays constant to 1e-6 relative over 10,000 steps.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from ..analysis.energy import energy_drift
from ..analysis.modes import match_modes, matrix_pencil
from ..constants import c0
from ..model import (
    CPML,
    FDTD3D,
    PEC,
    Domain,
    EnergyMonitor,
    GaussianPulse,
    PointDipole,
    Probe,
)
from ..records import Check


# ------------------------------------------------------------------ cavity
def cavity_modes(size, count: int) -> list[tuple[tuple[int, int, int], float]]:
    """The ``count`` lowest distinct resonances of a PEC box: [((m, n, p), f Hz)]."""
    out = []
    for m, n, p in itertools.product(range(6), repeat=3):
        if (m == 0) + (n == 0) + (p == 0) > 1:
            continue
        f = c0 / 2 * math.sqrt((m / size[0]) ** 2 + (n / size[1]) ** 2 + (p / size[2]) ** 2)
        out.append(((m, n, p), f))
    out.sort(key=lambda t: t[1])
    distinct = []
    for mode, f in out:
        if not distinct or f > distinct[-1][1] * (1 + 1e-9):
            distinct.append((mode, f))
    return distinct[:count]


def yee_cavity_frequency(mode, size, spacing, dt: float) -> float:
    """The Yee grid's own frequency of a cavity mode (numerical dispersion relation)."""
    s = sum((math.sin(k * math.pi / L * d / 2) / d) ** 2
            for k, L, d in zip(mode, size, spacing, strict=True))
    return 2 / dt * math.asin(c0 * dt * math.sqrt(s)) / (2 * math.pi)


def cavity_scenario(size, spacing: float, duration: float, f0: float, fwidth: float,
                    dtype: str = "float64") -> FDTD3D:
    """A PEC box with three dipoles and one probe at points off every symmetry plane."""
    src = tuple(0.137 * s for s in size)
    obs = tuple(0.711 * s for s in (size[0], size[1], size[2]))
    wave = GaussianPulse(f0=f0, fwidth=fwidth)
    return FDTD3D(
        name="cavity",
        domain=Domain(size=size, spacing=spacing, origin=(0.0, 0.0, 0.0)),
        boundary=PEC(),
        sources=[PointDipole(position=src, polarization=p, waveform=wave) for p in "xyz"],
        monitors=[Probe(name="probe", positions=[obs], components=["Ex", "Ey", "Ez"])],
        duration=duration, dtype=dtype,
    )


def cavity(size=(0.1, 0.08, 0.06), spacings=(20e-3 / 3, 5e-3, 4e-3),
           duration: float = 40e-9) -> list[Check]:
    case = "fdtd3d-cavity"
    modes = cavity_modes(size, 3)
    f_lo, f_hi = modes[0][1], modes[-1][1]
    f0, fwidth = 0.5 * (f_lo + f_hi), 0.5 * (f_hi - f_lo) + 0.2 * f_lo
    errors = []
    records = []
    for d in spacings:
        sim = cavity_scenario(size, d, duration, f0, fwidth)
        res = sim.run(progress=False)
        p = res["probe"]
        sig = sum(p.data[c][:, 0] for c in ("Ex", "Ey", "Ez"))
        t = p.coords["t_E"]
        wave = sim.sources[0].waveform
        start = int(np.searchsorted(t, 2 * wave.offset * wave.tau))
        # Keep well under Nyquist of the decimated record and above the modes we need.
        step = max(1, int(1 / (8 * (f0 + 4 * fwidth) * sim.dt)))
        x = sig[start::step]
        found = match_modes(matrix_pencil(x, sim.dt * step, order=60), [f for _, f in modes])
        errs = []
        for (mode, f_exact), m in zip(modes, found, strict=True):
            f_yee = yee_cavity_frequency(mode, size, sim.domain.spacing3, sim.dt)
            if m is None:
                records.append(Check(case, f"mode {mode} at d={d*1e3:.3g} mm found", 0, 1, "",
                                     False, bound=">="))
                errs.append(np.nan)
                continue
            predicted = abs(f_yee - f_exact)
            mismatch = abs(m.frequency - f_yee) / predicted
            records.append(Check(
                case, f"mode {mode} d={d*1e3:.3g} mm: |f - f_yee| / |f_yee - f_exact|",
                mismatch, 0.1, "", mismatch <= 0.1))
            errs.append(abs(m.frequency - f_exact) / f_exact)
        errors.append(errs)
    errors = np.array(errors)
    for k, (mode, _) in enumerate(modes):
        e = errors[:, k]
        if np.all(np.isfinite(e)) and np.all(e > 0):
            order = np.polyfit(np.log(spacings), np.log(e), 1)[0]
        else:
            order = np.nan
        records.append(Check(case, f"mode {mode}: observed order of the frequency error",
                             order, 2.0, "", 1.8 <= order <= 2.2, bound=(1.8, 2.2)))
    return records


# --------------------------------------------------------- CPML reflection
def cpml_pair(interior: int = 20, thickness: int = 10, d: float = 1e-3, steps: int = 300,
              dtype: str = "float32", strategy: str = "combined", **cpml_kw):
    """(test, reference) scenarios for the CPML reflection test.

    The test box has ``interior`` cells between CPMLs of ``thickness`` cells; the dipole
    sits 3 cells and the probe 2 cells from the low-x interface. The reference puts
    the same source and probe in a cube about the source whose walls lie so far that
    no reflection from them reaches the probe in ``steps`` steps.
    """
    n = interior + 2 * thickness
    wave = GaussianPulse(f0=c0 / (20 * d) * 0.6, fwidth=c0 / (20 * d) * 0.2)
    lower = -thickness * d  # interior starts at x = 0
    src = (3 * d, 0.5 * interior * d, 0.5 * interior * d)
    obs = (2 * d, 0.75 * interior * d, 0.3 * interior * d)

    def make(ncells: int, origin, name: str, cpml_strategy: str) -> FDTD3D:
        origin = origin if isinstance(origin, tuple) else (origin,) * 3
        return FDTD3D(
            name=name, domain=Domain(shape=(ncells,) * 3, spacing=d, origin=origin),
            boundary=CPML(thickness=thickness, **cpml_kw), steps=steps, dtype=dtype,
            cpml_strategy=cpml_strategy,
            sources=[PointDipole(position=src, polarization="z", waveform=wave)],
            monitors=[Probe(name="probe", positions=[obs], components=["Ez", "Ex"])],
        )

    test = make(n, lower, "cpml-test", strategy)
    # A cube about the source (the same node lattice) whose walls are so far that
    # nothing reflected there reaches the probe within ``steps``: source -> wall ->
    # probe >= c steps dt, with 4 cells to spare.
    gap = math.dist(src, obs) / d
    half = math.ceil((c0 * steps * test.dt / d + gap) / 2) + 4
    # (its walls reflect nothing in time: the backend's fastest CPML form, "auto", 1.8x
    # "combined"'s speed on a CPU, where this 190^3 run is most of the case's time)
    ref = make(2 * half, tuple(x - half * d for x in src), "cpml-reference", "auto")
    return test, ref


def reflection_db(test_res, ref_res, wave, dt: float, comp: str = "Ez") -> float:
    """Peak |FFT(test - ref)| / |FFT(ref)| in dB over the band where the source spectrum
    is within 20 dB of its peak."""
    a = test_res["probe"].data[comp][:, 0].astype(np.float64)
    b = ref_res["probe"].data[comp][:, 0].astype(np.float64)
    nfft = 8 * a.size
    f = np.fft.rfftfreq(nfft, dt)
    R = np.abs(np.fft.rfft(a - b, nfft)) / np.maximum(np.abs(np.fft.rfft(b, nfft)), 1e-300)
    band = np.exp(-((f - wave.f0) ** 2) / (2 * wave.fwidth**2)) >= 0.1
    return float(20 * np.log10(R[band].max()))


def cpml_reflection(limit_db: float = -70.0,
                    strategies=("combined", "per_face", "auto")) -> list[Check]:
    """Each CPML strategy's reflection ("auto": the backend's, named as it ran)."""
    case = "fdtd3d-cpml-reflection"
    out = []
    _, ref = cpml_pair()
    ref_res = ref.run(progress=False)
    for strategy in strategies:
        test, _ = cpml_pair(strategy=strategy)
        res = test.run(progress=False)
        r = reflection_db(res, ref_res, test.sources[0].waveform, test.dt)
        name = strategy if strategy != "auto" else f"auto: {res.metadata['cpml_strategy']}"
        out.append(Check(case, f"peak reflection, 10-cell CPML ({name})", r, limit_db,
                         "dB", r <= limit_db))
    return out


# ------------------------------------------------------------------ energy
def energy(steps: int = 10_000, limit: float = 1e-6) -> list[Check]:
    """``steps`` steps after the source has ended (its pulse below 1e-14 of its peak)."""
    case = "fdtd3d-energy"
    size = (0.05, 0.04, 0.03)
    wave = GaussianPulse(f0=5e9, fwidth=2e9)
    domain = Domain(size=size, spacing=2.5e-3, origin=(0, 0, 0))
    quiet = (wave.offset + 8) * wave.tau
    sim = FDTD3D(name="energy", domain=domain, boundary=PEC(), steps=1)
    sim = FDTD3D(
        name="energy", domain=domain,
        boundary=PEC(), steps=steps + math.ceil(quiet / sim.dt) + 1, dtype="float64",
        sources=[PointDipole(position=(0.013, 0.011, 0.007), polarization="z", waveform=wave)],
        monitors=[EnergyMonitor(name="energy")],
    )
    res = sim.run(progress=False)
    drift, n = energy_drift(res["energy"], quiet)
    return [Check(case, f"relative energy variation over {n} steps (float64)",
                  drift, limit, "", drift <= limit)]

CASES: dict[str, Callable[..., list[Check]]] = {
    "fdtd3d-cavity": cavity,
    "fdtd3d-cpml-reflection": cpml_reflection,
    "fdtd3d-energy": energy,
}


