"""Memory estimates of 3D FDTD (issue #8): `emjax run --dry-run` against what a run
allocates, and refusal before allocation.

What a run allocates, measured on the CPU: the bytes of the arrays a solver places
(state and constants) and XLA's own memory analysis of the compiled chunk (arguments
+ outputs - donated aliases + temporaries). The scenario is the `emjax bench scale`
one: vacuum, 10-cell CPML on every face, a dipole. (With structures the CPU backend
materialises the gathered coefficient arrays that a GPU fuses, so only vacuum is
comparable here; the GPU's peak is checked by `emjax bench scale`.)

2048^3 float32 cannot be allocated here; its estimate is checked by arithmetic: each
item is the bytes of the arrays the solver builds (the same formulas the small grids
verify against the placed arrays), and the run is refused before rasterization.
"""

from __future__ import annotations

import time

import pytest

from emjax import cli
from emjax.bench.parallel import THICKNESS, scenario
from emjax.driver.memory import available_bytes
from emjax.errors import EmjaxWarning, ResourceError
from emjax.fdtd import cpml, memory
from emjax.fdtd.solver import FDTDSolver
from emjax.parallel import per_device_bytes


@pytest.mark.parametrize("n", [40, 64])
def test_estimate_matches_allocation(n):
    sim = scenario((n, n, n), 8)
    # a bare 8-step memory check: the coarse grid and the cut-off pulse are expected
    with pytest.warns(EmjaxWarning, match="cells per shortest wavelength"), \
            pytest.warns(EmjaxWarning, match="the pulse is cut off"):
        sol = FDTDSolver(sim, chunk=4)
    state, consts = sol.init_state(), sol.constants()
    placed = sum(per_device_bytes([state, consts]).values())
    ma = sol._compile(4).lower(*sol.chunk_args(state, 0, 4)) \
        .compile().memory_analysis()
    xla = (ma.argument_size_in_bytes + ma.output_size_in_bytes - ma.alias_size_in_bytes
           + ma.temp_size_in_bytes)
    est = memory.estimate(sim, chunk=4)
    arrays = est["fields"] + est["coefficients"] + est["psi"] + est["monitors"]
    # The array items are the placed arrays (up to a few scalars and source tables).
    assert abs(arrays / placed - 1) < 0.01, (arrays, placed)
    # With the working space: within 10% of all XLA allocates for the chunk.
    assert abs(est["total"] / xla - 1) < 0.10, (est, xla)


N_BIG = 2048


def _big(tmp_path):
    path = tmp_path / "big.toml"
    scenario((N_BIG,) * 3, 100).save(path)
    return path


def test_dry_run_2048_cubed_by_arithmetic(tmp_path, capsys):
    path = _big(tmp_path)
    t = time.perf_counter()
    rc = cli.main(["run", str(path), "--dry-run"])
    seconds = time.perf_counter() - t
    out = capsys.readouterr().out
    n, item, t_ = N_BIG, 4, THICKNESS
    fields = 6 * n**3 * item  # Ex..Hz, float32
    # per face: 4 psi components on a t-cell slab, z slabs stored a multiple of
    # SLAB_ALIGN entries thick
    psi = sum(2 * 4 * cpml.stored_thickness(a, t_, n) * n**2 * item for a in range(3))
    need = memory.estimate(scenario((n,) * 3, 100))
    assert need["fields"] == fields and need["psi"] == psi and need["coefficients"] == 0
    # All a run allocates beyond the arrays is XLA's working space, psi/2 on a GPU
    # (measured): about 1% of the total here.
    assert need["total"] == fields + psi + psi // 2 + need["monitors"]
    assert need["workspace"] < 0.015 * need["total"]
    total_mib = f"{need['total'] / 2**20:12.1f} MiB"
    assert "device memory needed" in out and total_mib in out, out
    free, _ = available_bytes()
    assert rc == (0 if need["total"] <= free else 1)
    assert ("does NOT fit" in out) == (rc == 1)
    print(f"--dry-run of {n}^3: {need['total'] / 2**30:.1f} GiB in {seconds:.2f} s")


def test_too_large_run_is_refused_before_allocation(tmp_path, monkeypatch):
    """On an 80 GiB device, 2048^3 float32 (~200 GiB) is refused with both figures,
    before the grid is rasterized (any allocation would fail this test)."""
    monkeypatch.setattr("emjax.driver.memory.available_bytes",
                        lambda: (80 * 2**30, "an 80 GiB GPU"))

    def no_allocation(*a, **k):
        raise AssertionError("rasterized before refusing")

    monkeypatch.setattr("emjax.fdtd.solver.prepare", no_allocation)
    sim = scenario((N_BIG,) * 3, 100)
    t = time.perf_counter()
    with pytest.raises(ResourceError) as err:
        sim.run(progress=False)
    seconds = time.perf_counter() - t
    msg = str(err.value)
    assert "80 GiB GPU has 80.00 GiB free" in msg
    assert f"{memory.estimate(sim)['total'] / 2**30:.2f} GiB" in msg
    print(f"refused in {seconds:.3f} s: {msg}")
