"""`emjax validate mode-solver` is registered, and its coarsest grids already meet the
limits (the full case, ten seconds, runs in `emjax validate`)."""

from __future__ import annotations

from emjax.validation import CASES
from emjax.validation.eigenmode import (
    HADLEY,
    MICROSTRIP,
    hadley_strip,
    hammerstad_jensen,
    microstrip,
)


def test_mode_solver_case_is_registered():
    assert "mode-solver" in CASES


def test_hammerstad_jensen_quoted_values():
    # eps_r 9.8, w/h 1: eps_eff 6.58 and Z0 49.3 ohm (alumina, the textbook 50-ohm line)
    eps_eff, z0 = hammerstad_jensen(9.8, 1.0)
    assert abs(eps_eff - 6.58) < 0.01 and abs(z0 - 49.3) < 0.1


def test_coarse_grids_meet_the_limits():
    n = hadley_strip(0.1e-6).real
    assert abs(n / HADLEY["n_eff"] - 1) < 5e-4
    eps_eff, _ = microstrip(8, half_width=10.0, height=10.0)
    assert abs(eps_eff / hammerstad_jensen(MICROSTRIP["eps_r"], MICROSTRIP["u"])[0] - 1) < 0.02
