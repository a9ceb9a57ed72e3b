"""The wall-time estimate of ``emjax run --dry-run`` (:mod:`emjax.bench.walltime`): its
plumbing, not its timing. The roofline figure is steps x bytes per step / (efficiency
x bandwidth); the bytes grow with the cells and the precision; FDFD3D says it is not
estimated; the dry run prints the line."""

from __future__ import annotations

import pytest

from emjax.bench.walltime import EFFICIENCY, estimate_wall_time, format_duration, step_bytes

BW = (1e10, "test device")  # 10 GB/s, given: nothing is measured


def _cube(n: int, **kw):
    import emjax as em

    return em.FDTD3D(domain=em.Domain(shape=(n, n, n), spacing=1e-3), steps=50,
                     boundary=em.PEC(), **kw)


def test_fdtd3d_roofline_and_its_scaling():
    import jax

    sim = _cube(8)
    est = estimate_wall_time(sim, bandwidth=BW)
    eff = EFFICIENCY[("gpu" if jax.default_backend() == "gpu" else "cpu", "FDTD3D")]
    assert est.steps == 50 and est.bytes_per_step == step_bytes(sim)
    assert est.seconds == pytest.approx(50 * step_bytes(sim) / (eff * BW[0]), rel=1e-12)
    assert step_bytes(_cube(16)) == pytest.approx(8 * step_bytes(sim))  # per cell
    assert step_bytes(_cube(8, dtype="float64")) > 1.9 * step_bytes(sim)
    assert step_bytes(_cube(8, storage="arrays")) > step_bytes(sim)
    line = est.line()
    assert line.startswith("estimated wall time: ") and "roofline" in line and "given" in line
    halves = estimate_wall_time(sim, bandwidth=BW, devices=2)
    assert halves.seconds == pytest.approx(est.seconds / 2) and "per device (2)" in halves.how


def test_fdtd2d_dgatd_and_fdfd():
    import emjax as em

    sim2 = em.FDTD2D(domain=em.Domain2D(shape=(32, 32), spacing=1e-3), steps=10,
                     boundary=em.PEC())
    assert estimate_wall_time(sim2, bandwidth=BW).seconds > 0
    assert step_bytes(sim2) == pytest.approx(32 * 32 * (4 * 9 + 2))
    from emjax.scenarios import load_builtin

    fdfd = load_builtin("head-900mhz")
    dga = em.DGATD(mesh=em.BoxMesh(size=(1, 1, 1), edge_length=0.5), steps=7)
    need = {"fields": 100, "faraday": 50, "ampere": 30, "energy": 0, "scan_buffers": 200,
            "total": 380}
    est = estimate_wall_time(dga, need=need, bandwidth=BW)
    assert est.steps == 7 and est.bytes_per_step == 2 * 100 + 50 + 30
    none = estimate_wall_time(fdfd, bandwidth=BW)
    assert none.seconds is None and "not estimated" in none.line()
    assert [format_duration(s) for s in (0.5, 42, 430, 25000, 3e5)] == [
        "500 ms", "42 s", "7.17 min", "6.94 h", "3.47 d"]


def test_dry_run_prints_the_estimate(tmp_path, capsys):
    from emjax import cli

    scen = tmp_path / "s.toml"
    _cube(8).save(scen)
    rc = cli.main(["run", str(scen), "--dry-run"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "estimated wall time: " in out and "measured on" in out, out


def test_dgatd_by_duration_takes_its_steps_from_the_setup(monkeypatch):
    """A DGATD run given by duration: the steps come from the prepared solver's setup
    (its power iteration), as ``emjax run`` would run them."""
    from types import SimpleNamespace

    import emjax as em
    from emjax import registry

    dga = em.DGATD(mesh=em.BoxMesh(size=(1, 1, 1), edge_length=0.5), duration=1e-8)
    monkeypatch.setattr(registry, "prepare",
                        lambda sim: SimpleNamespace(setup=SimpleNamespace(steps=123)))
    need = {"fields": 10, "faraday": 5, "ampere": 3, "total": 18}
    assert estimate_wall_time(dga, need=need, bandwidth=BW).steps == 123
