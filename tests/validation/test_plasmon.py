"""The drude-sphere case (issue 20) at a CPU size, and the pieces it is built of.

Set-up (:mod:`emjax.validation.plasmon`): a Drude sphere (radius 25 nm, eps_inf 1,
omega_p / 2 pi = 1.65 PHz, gamma = 0.3 omega_sp; Re eps = -2 at F_QS = 955 THz, k a =
0.5 there) lit by a TF/SF plane wave; extinction = absorption (net inward Yee flux of the
total field through a closed box around the sphere) + scattering (outward flux of the
scattered field through a box outside the TF/SF box), per unit incident intensity, at
71 frequencies over 0.6-1.3 F_QS from one run; bistatic RCS from a NearToFar box.
Reference: the Mie series with the Drude eps(f) (miepython).

At 4 cells per radius (the coarse CPU size; a staircased plasmonic sphere is first order
in the cell size, the issue's limits hold at 64 cells per radius on a GPU) the run is
checked against limits that fit that size: the extinction peak within 5% (measured
3.7%), the band-integrated extinction within 10% (measured -7.0%: staircasing moves
and broadens the resonance but keeps most of its oscillator strength), the RCS below
the resonance (0.75 F_QS) within 0.3 dB RMS (measured 0.13 and 0.08 dB), and the Yee
box flux of the scattered field equal to the NearToFar far-zone power within 1%
(measured 0.1%). About 20 s on 2 CPU cores.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from emjax.analysis.mie import mie_cross_sections
from emjax.constants import c0
from emjax.validation import plasmon


def test_band_holds_the_surface_plasmon_resonance():
    f = plasmon.band_frequencies()
    eps = plasmon.drude_medium().eps(f)
    assert eps.real[0] < -2 < eps.real[-1]
    assert np.all(eps.imag < 0)  # passive, e^{+j omega t}
    assert f[0] < plasmon.mie_peak() < f[-1]


def test_mie_cross_sections_small_absorbing_sphere_is_quasi_static():
    """ka = 0.01: C_abs = -4 pi k a^3 Im((eps - 1) / (eps + 2)) (e^{+j omega t}) to 1e-3,
    and the same absorption as the SAR module's Mie power."""
    from emjax.analysis.sar import sphere_absorbed_power
    from emjax.constants import eta0

    a, eps = 1e-9, -2.5 - 0.4j
    f = 0.01 * c0 / (2 * math.pi * a)
    k = 2 * math.pi * f / c0
    ext, sca, ab = mie_cross_sections(a, eps, f)
    qs = -4 * math.pi * k * a**3 * ((eps - 1) / (eps + 2)).imag
    assert abs(ab / qs - 1) < 1e-3, (ab, qs)
    assert sca < 1e-4 * ext
    assert abs(ab / (2 * eta0 * sphere_absorbed_power(a, eps, f)) - 1) < 1e-9
    with pytest.raises(ValueError, match="positive imaginary part"):
        mie_cross_sections(a, -2.5 + 0.4j, f)


def test_peak_frequency_is_the_parabola_vertex():
    f = np.linspace(1.0, 2.0, 11)
    assert plasmon.peak_frequency(f, -(f - 1.437) ** 2) == pytest.approx(1.437, abs=1e-12)
    with pytest.raises(ValueError, match="widen the band"):
        plasmon.peak_frequency(f, f)


def test_drude_sphere_coarse_run_against_mie():
    m = plasmon.measure(4)
    f = m["f"]
    ext, _, _ = plasmon.mie_reference(f)
    peak = plasmon.peak_frequency(f, m["ext"]) / plasmon.mie_peak() - 1
    integrated = np.trapezoid(m["ext"], f) / np.trapezoid(ext, f) - 1
    print(f"peak {peak:+.4f}, integrated extinction {integrated:+.4f}, "
          f"{m['cells']} cells x {m['steps']} steps, {m['wall_s']:.1f} s")
    assert abs(peak) < 0.05
    assert abs(integrated) < 0.10
    below = m["rcs"][float(plasmon.RCS_FREQUENCIES[0] * plasmon.F_QS)]
    print("RCS RMS / max dB at 0.75 F_QS:", below)
    assert max(r for r, _ in below.values()) < 0.3
    # the scattered power through the Yee box against the NearToFar far-zone power
    res, inc = m["res"], m["intensity"]
    for v in plasmon.RCS_FREQUENCIES * plasmon.F_QS:
        i = int(np.argmin(np.abs(f - v)))
        far = res["far"].radiated_power(float(v)) / inc[i]
        assert abs(m["sca"][i] / far - 1) < 0.01, (v, m["sca"][i], far)


def test_case_records_gate_the_limits_at_the_fine_size(monkeypatch):
    """The records' logic on stand-in measurements (no run): a coarse size that misses
    the limits still passes, the fine size is held to them, and the falls are checked."""
    f = plasmon.band_frequencies()
    ext = plasmon.mie_reference(f)[0]

    def fake(n, frequencies, dtype):
        err = 0.5 / n  # 12.5% at 4 cells per radius, 0.8% at 64
        rcs = {float(v): {"E": (err, 2 * err), "H": (err, 2 * err)}
               for v in plasmon.RCS_FREQUENCIES * plasmon.F_QS}
        return {"ext": ext * (1 + err * np.cos(8 * f / f[-1])), "rcs": rcs, "cells": 1,
                "steps": 1}

    monkeypatch.setattr(plasmon, "measure", fake)
    recs = plasmon.drude_sphere((4, 64))
    assert len(recs) == 2 * 8 + 3
    assert all(r["pass"] for r in recs), [dict(r) for r in recs if not r["pass"]]
    recs = plasmon.drude_sphere((4,), absolute_at=4)
    assert not all(r["pass"] for r in recs)
