"""3D conformal (Dey-Mittra) PEC: convergence on a spherical cavity, long-run stability at
the regular time step, and its use beside CPML, sources and monitors."""

import math
import warnings

import numpy as np
import pytest

import emjax as em
from emjax.errors import EmjaxWarning, SetupError
from emjax.fdtd.setup import prepare
from emjax.validation.cavity3d import errors, observed_order, sphere_cavity


def test_sphere_cavity_converges_at_second_order_and_beats_staircase():
    # the CI cut of the pec-sphere-cavity case: coarse grids, a shorter record
    cells = (6, 8, 10)
    conf = errors(cells, conformal=True, periods=12)
    stair = errors(cells, conformal=False, periods=12)
    assert np.all(np.isfinite(conf)) and np.all(np.isfinite(stair))
    for k in range(2):  # TM_101, TE_101
        e = np.abs(conf[:, k])
        assert np.all(np.diff(e) < 0), e
        assert observed_order(cells, e) >= 1.5, e
        assert np.all(e < np.abs(stair[:, k])), (e, stair[:, k])


@pytest.mark.parametrize("dtype, limit", [("float32", 1e-5), ("float64", 1e-12)])
def test_closed_conformal_sphere_keeps_its_invariant(dtype, limit):
    """At courant 0.99, where the enlarged small faces matter most: the leapfrog invariant
    of the conformal metric (EnergyMonitor) stays put after the source over 30,000 steps,
    and the probed field does not grow. Without the enlargement this run blows up within
    900 steps. (100,000 steps of a conformal cavity with a smoothed dielectric inside:
    tests/grid/test_smoothing.py.)"""
    sim = sphere_cavity(8, courant=0.99, dtype=dtype, margin=1)
    wave = sim.sources[0].waveform
    quiet = (wave.offset + 8) * wave.tau
    sim = sim.model_copy(update={
        "duration": None, "steps": 30_000 + math.ceil(quiet / sim.dt),
        "monitors": [em.EnergyMonitor(name="energy", interval=500), sim.monitors[0]]})
    res = sim.run(progress=False)
    w, t = res["energy"].data["energy"], res["energy"].coords["t"]
    tail = w[t > quiet].astype(np.float64)
    assert tail.size >= 59 and tail.min() > 0
    assert tail.max() <= tail[0] * (1 + limit), (tail.max() / tail[0] - 1)
    p = np.abs(res["probe"].data["Ez"][:, 0].astype(np.float64))
    tp = res["probe"].coords["t_E"]
    after = p[tp > quiet]
    window = after.size // 10
    assert after[-window:].max() <= 2.0 * after[:window].max()


def _scatterer(**kw):
    d = 5e-3
    kw = {"structures": [em.Structure(geometry=em.Sphere(center=(0.001, 0, 0), radius=0.016),
                                      medium=em.PEC())], **kw}
    return em.FDTD3D(
        domain=em.Domain(shape=(24, 24, 24), spacing=d, origin=(-0.06, -0.06, -0.06)),
        sources=[em.PointDipole(position=(-0.03, 0.005, 0.0), polarization="z",
                                waveform=em.GaussianPulse(f0=3e9, fwidth=1.5e9))],
        monitors=[em.Probe(name="p", positions=[(0.03, 0.0, 0.0)], components=["Ez"]),
                  em.DFTMonitor(name="dft", center=(0, 0, 0), size=(0.06, 0.06, 0.0),
                                frequencies=[3e9])],
        boundary=em.CPML(thickness=4), steps=120, courant=0.5, conformal_pec=True, **kw)


def test_conformal_sphere_with_cpml_sources_and_monitors():
    sim = _scatterer()
    cut = prepare(sim, align=1).conformal
    assert cut is not None and sum(len(v[1]) for v in cut[0].values()) > 100
    res = sim.run(progress=False)
    a = res["p"].data["Ez"][:, 0]
    assert np.all(np.isfinite(a)) and np.max(np.abs(a)) > 0
    assert np.all(np.isfinite(res["dft"].data["Ez"]))


def test_conformal_pec_without_pec_is_a_no_op():
    sim = _scatterer(structures=[])
    assert prepare(sim, align=1).conformal is None


def test_voxels_pec_stays_staircased_with_a_warning():
    vox = em.Voxels(origin=(-0.02, -0.02, -0.02), spacing=(0.01,) * 3,
                    labels=[[[1] * 4] * 4] * 4, media={1: em.PEC()})
    sim = _scatterer(structures=[em.Structure(geometry=vox)])
    with pytest.warns(EmjaxWarning, match="Voxels.*staircased"):
        prepare(sim, align=1)


def test_sharded_runs_refuse_conformal_pec():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(SetupError, match="conformal_pec"):
            em.fdtd.solver.run(_scatterer(), devices=2)
