"""The `emjax validate` cases, asserted (each case's docstring in emjax.validation).

- fdtd3d-cavity: three lowest PEC-cavity resonances equal the Yee dispersion
  prediction to 10% of the dispersion shift; observed order of the error in [1.8, 2.2].
- fdtd3d-energy: the leapfrog invariant of a closed lossless cavity stays constant to
  1e-6 over 10,000 steps in float64.
- fdtd3d-cpml-reflection: a 10-cell CPML reflects at most -70 dB over the pulse band,
  for both CPML strategies (slow: a 220^3 reference run).
"""

from __future__ import annotations

import pytest

from emjax.validation import run_case


def _assert_all_pass(records):
    assert records, "no records"
    failed = [r for r in records if not r["pass"]]
    for r in records:
        print(f"{r['metric']}: {r['value']:.4g} (limit {r['limit']:.4g} {r['unit']})")
    assert not failed, "\n".join(f"{r['metric']}: {r['value']:.4g} vs {r['limit']}"
                                 for r in failed)


def test_cavity_resonances_and_order():
    _assert_all_pass(run_case("fdtd3d-cavity"))


def test_energy_conservation():
    _assert_all_pass(run_case("fdtd3d-energy"))


@pytest.mark.slow
def test_cpml_reflection():
    _assert_all_pass(run_case("fdtd3d-cpml-reflection"))
