"""FDFD3D frequency sweeps (emjax.fdfd.sweep), a lossy sphere on a coarse grid.

- A sweep (warm-started) gives each frequency's scattered field of the separate
  single-frequency solve to the solver's tolerance, with the frequency as leading axis.
- It compiles once: after the first frequency no backend compilation happens.
- The metadata split set-up (and its stages), compile and solve times, per frequency
  and in total; the results round-trip through HDF5 with their frequency axis.
- Bad frequency lists (empty, zero, negative, NaN, inf, frequency != frequencies[0])
  are rejected naming the entry; checkpoints are refused for sweeps.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from pydantic import ValidationError

from emjax.model import Domain, Medium, Sphere, Structure
from emjax.model.fdfd import FDFD3D, PML, FDFDSolver

pytest.importorskip("emjax.fdfd.solver")

FS = [0.9e9, 1.0e9, 1.1e9]


def _sim(**kw) -> FDFD3D:
    base = dict(domain=Domain(size=(0.28, 0.28, 0.28), spacing=0.02), frequencies=FS,
                structures=[Structure(geometry=Sphere(radius=0.06),
                                      medium=Medium(eps_r=4.0, sigma=0.05))],
                boundary=PML(thickness=4), rcs=True, rcs_angles=5,
                solver=FDFDSolver(tol=1e-10, warm_start=True))
    return FDFD3D(**{**base, **kw})


@pytest.fixture(scope="module")
def sweep():
    sim = _sim()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sim, sim.run()


def test_sweep_matches_single_solves_and_compiles_once(sweep):
    sim, res = sweep
    md = res.monitors["scattered"]
    assert md.data["Ex"].shape == (3, 14, 14, 14)
    np.testing.assert_array_equal(md.coords["f"], FS)
    per = res.metadata["per_frequency"]
    assert [p["compiles"] for p in per[1:]] == [0, 0]  # the first compiled for all
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in (0, 2):
            one = sim.at(FS[i]).run()
            assert one.metadata["compiles"] == 0  # the sweep's executables serve it too
            for c in ("Ex", "Ez", "Hy"):
                a, b = md.data[c][i], one.monitors["scattered"].data[c][0]
                assert np.linalg.norm(a - b) <= 1e-7 * np.linalg.norm(b), (i, c)
            assert np.allclose(res.metadata["rcs_E_dBsm"][i], one.metadata["rcs_E_dBsm"],
                               atol=1e-6)
    # the frequencies differ: so do their fields
    assert np.linalg.norm(md.data["Ex"][0] - md.data["Ex"][2]) > 0.1 * np.linalg.norm(
        md.data["Ex"][2])


def test_sweep_metadata_and_hdf5(sweep, tmp_path):
    _, res = sweep
    m = res.metadata
    per = m["per_frequency"]
    assert [p["frequency_hz"] for p in per] == FS and m["frequencies"] == FS
    assert m["iterations"] == sum(p["iterations"] for p in per) > 0
    assert m["converged"] and all(p["relative_residual"] <= 1e-10 for p in per)
    for p in per:
        assert p["compile_time_s"] + p["solve_time_s"] == pytest.approx(p["wall_time_s"])
    assert m["compile_time_s"] == pytest.approx(sum(p["compile_time_s"] for p in per))
    stages = m["setup_stages"]  # summed over the frequencies, within their set-up
    assert set(stages) == {"geometry", "grid and media", "coefficients", "right-hand side",
                           "preconditioner"}, stages
    assert all(v >= 0 for v in stages.values())
    assert sum(stages.values()) <= m["setup_time_s"] + 1e-3
    assert np.shape(m["rcs_H_dBsm"]) == (3, 5)
    from emjax.results import Results

    path = tmp_path / "sweep.h5"
    res.save(path)
    back = Results.load(path)
    assert back.monitors["scattered"].data["Hz"].shape == (3, 14, 14, 14)
    np.testing.assert_array_equal(back.monitors["scattered"].coords["f"], FS)
    assert back.scenario.frequencies == FS


@pytest.mark.parametrize("fs, where", [
    ([], "frequencies: 0 given"),
    ([1e9, -2e9], "frequencies[1] = -2000000000.0"),
    ([0.0], "frequencies[0] = 0.0"),
    ([1e9, math.nan], "frequencies.1"),  # pydantic's own: "Input should be a finite number"
    ([math.inf], "frequencies.0"),
])
def test_bad_frequency_lists_rejected(fs, where):
    with pytest.raises(ValidationError) as e:
        _sim(frequencies=fs)
    msg = str(e.value)
    assert where in msg and ("finite" in msg or "1 to 1000" in msg)


def test_frequency_must_be_the_first_of_the_sweep():
    assert _sim().frequency == FS[0] and _sim().sweep == FS
    with pytest.raises(ValidationError, match=r"frequency = 2000000000.0 Hz differs from "
                                              r"frequencies\[0\]"):
        _sim(frequency=2e9)
    assert _sim(frequencies=None, frequency=2e9).sweep == [2e9]


def test_sweep_refuses_checkpoints(tmp_path):
    from emjax.errors import SetupError

    with pytest.raises(SetupError, match="not to a sweep of 3 frequencies"):
        _sim().run(checkpoint_every=10, checkpoint_path=tmp_path / "c.h5")
