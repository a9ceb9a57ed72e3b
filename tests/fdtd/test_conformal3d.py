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


def _invariant(solver, E0, E1):
    """dt^2 times the locally implicit scheme's invariant between E^n = E0 and E^{n+1} =
    E1 (J): ``|v|^2_M - |L v|^2_{M_mu, uncut} / 4 + |L w|^2_{M_mu} / 4`` with v = E1 - E0,
    w = E1 + E0 and L the H update's response to E (-dt M_mu^-1 G, cut faces by their
    Dey-Mittra circulation): the e-form ``(M + dt^2 K_S / 4) D2 u = -dt^2 K u`` of
    conformal_implicit, computed with the solver's own kernels."""
    import jax.numpy as jnp

    from emjax.fdtd import conformal_implicit as ci
    from emjax.fdtd.update3d import update_H, zeros_psi

    s, c = solver.setup, solver.constants()
    arrays, static = s.conformal[0]["arrays"], s.conformal[0]["static"]
    _, psi_H = zeros_psi(s.layout, s.dtype)
    zero = tuple(jnp.zeros(s.grid.shape, s.dtype) for _ in range(3))

    def L(e):
        h, _ = update_H(e, zero, c["cH"], c["pml"], psi_H, s.layout)
        return ci.explicit_h(h, zero, ci.circulation(e, c["cut"], static), c["cut"], static)

    uncut = [np.ones(s.grid.shape, bool) for _ in range(3)]
    for (comp, _), idx in zip(static["faces"], arrays["f_index"], strict=True):
        uncut[comp][idx] = False
    wE = [np.asarray(w, np.float64) for w in s.energy_weights["E"]]
    wH = [np.asarray(w, np.float64) for w in s.energy_weights["H"]]
    v = [np.asarray(b, np.float64) - np.asarray(a, np.float64) for a, b in zip(E0, E1, strict=True)]
    w = [np.asarray(b, np.float64) + np.asarray(a, np.float64) for a, b in zip(E0, E1, strict=True)]
    Lv = [np.asarray(x, np.float64) for x in L(tuple(jnp.asarray(x, s.dtype) for x in v))]
    Lw = [np.asarray(x, np.float64) for x in L(tuple(jnp.asarray(x, s.dtype) for x in w))]
    return (2 * sum(np.sum(a * x * x) for a, x in zip(wE, v, strict=True))
            - 0.5 * sum(np.sum((a * x * x)[m]) for a, x, m in zip(wH, Lv, uncut, strict=True))
            + 0.5 * sum(np.sum(a * x * x) for a, x in zip(wH, Lw, strict=True)))


@pytest.mark.parametrize("dtype, limit, chunks", [("float32", 2e-5, 4),
                                                   ("float64", 1e-10, 2)])
def test_closed_conformal_sphere_keeps_its_invariant(dtype, limit, chunks):
    """At courant 0.99, where explicit small cut faces are most unstable: after the
    source, the locally implicit scheme's invariant (:func:`_invariant`) stays put over
    5,000-step chunks (20,000 steps in float32, 30,000 until CI's 10 minutes grew
    tight; 10,000 in float64: 6e-12 there, the cut faces' solve meeting its 1e-8 per
    step; a wrong invariant moves by 1e-4), and the
    EnergyMonitor's leapfrog energy (not the scheme's exact invariant) stays within a
    narrow band (5.3e-4 peak to peak; limit 1e-3). (40,000 steps of a conformal cavity
    with a smoothed dielectric inside: tests/grid/test_smoothing.py.)"""
    from emjax.fdtd.solver import FDTDSolver

    sim = sphere_cavity(8, courant=0.99, dtype=dtype, margin=1)
    wave = sim.sources[0].waveform
    quiet = math.ceil((wave.offset + 8) * wave.tau / sim.dt)
    chunk = 5000
    sim = sim.model_copy(update={
        "duration": None, "steps": quiet + chunks * chunk,
        "monitors": [em.EnergyMonitor(name="energy", interval=500), sim.monitors[0]]})
    solver = FDTDSolver(sim)
    state, *_ = solver.advance(solver.init_state(), 0, quiet)
    inv, energy, step = [], [], quiet
    for _ in range(chunks):
        E0 = [np.asarray(x) for x in state.E]  # the chunks donate their state
        state, ys, _ = solver.advance(state, step, 1)
        inv.append(_invariant(solver, E0, [np.asarray(x) for x in state.E]))
        state, ys, _ = solver.advance(state, step + 1, chunk - 1)
        e = np.asarray(ys["energy"][0], np.float64)
        energy.append(e[e != 0])
        step += chunk
    inv, energy = np.array(inv), np.concatenate(energy)
    assert inv.min() > 0 and np.abs(inv / inv[0] - 1).max() <= limit, inv / inv[0] - 1
    assert energy.size >= 10 * chunks - 1 and energy.min() > 0
    assert np.ptp(energy) <= 1e-3 * energy.mean(), np.ptp(energy) / energy.mean()


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
        boundary=em.CPML(thickness=4), steps=120, conformal_pec=True, **kw)


def test_conformal_sphere_with_cpml_sources_and_monitors():
    sim = _scatterer()
    cut = prepare(sim, align=1).conformal
    assert cut is not None and cut[0]["A"].shape[0] > 100
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


def _cavity_system(dtype="float64"):
    from emjax.fdtd.solver import FDTDSolver

    solver = FDTDSolver(sphere_cavity(6, courant=0.99, dtype=dtype, margin=1, periods=1))
    return solver, solver.setup.conformal[0]


def test_implicit_faces_follow_the_e_update():
    """R (the E update's dependence on the cut faces' H) built in the set-up equals what
    the solver's own E update does with a unit H on a cut face, and W C R (C: the
    explicit Dey-Mittra circulation, W: A / db) is symmetric: the energy structure that
    makes the scheme stable."""
    import jax.numpy as jnp
    import scipy.sparse as sp

    from emjax.fdtd import conformal_implicit as ci
    from emjax.fdtd.update3d import update_E, zeros_psi

    solver, system = _cavity_system()
    s, c = solver.setup, solver.constants()
    arrays, static = system["arrays"], system["static"]
    psi_E, _ = zeros_psi(s.layout, s.dtype)
    zero = tuple(jnp.zeros(s.grid.shape, s.dtype) for _ in range(3))
    rng = np.random.default_rng(1)
    offs = np.cumsum([0] + [n for _, n in static["faces"]])
    for k in rng.choice(offs[-1], 12, replace=False):
        g = int(np.searchsorted(offs, k, side="right") - 1)
        comp = static["faces"][g][0]
        where = tuple(int(i[k - offs[g]]) for i in arrays["f_index"][g])
        H = list(zero)
        H[comp] = H[comp].at[where].set(1.0)
        E, _ = update_E(zero, tuple(H), c["cE"], c["pml"], psi_E, s.layout)
        got = np.asarray(ci._gather(E, arrays, static))
        want = np.zeros_like(got)
        np.add.at(want, arrays["eid"][k], arrays["rval"][k])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
        # the rest of E: only regular faces' edges moved, none of the system's missing
        total = sum(float(jnp.sum(jnp.abs(x))) for x in E)
        assert total == pytest.approx(np.abs(got).sum(), rel=1e-12)
    nf, ne = arrays["eid"].shape[0], sum(n for _, n in static["edges"])
    rows = np.repeat(np.arange(nf), 4)
    C = sp.csr_matrix((arrays["cval"].ravel(), (rows, arrays["eid"].ravel())), (nf, ne))
    R = sp.csr_matrix((arrays["rval"].ravel(), (arrays["eid"].ravel(), rows)), (ne, nf))
    WCR = (sp.diags(arrays["w"]) @ C @ R).toarray()
    assert np.abs(WCR - WCR.T).max() <= 1e-12 * np.abs(WCR).max()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_chebyshev_solve_meets_the_direct_solve(dtype):
    """The fixed-degree solve meets its tolerance (per dtype) against scipy's direct
    solve of the same system."""
    import jax.numpy as jnp
    import scipy.sparse.linalg as sla

    from emjax.fdtd import conformal_implicit as ci

    _, system = _cavity_system(dtype)
    A = system["A"]
    b = np.random.default_rng(2).standard_normal(A.shape[0])
    want = sla.spsolve(A.tocsc(), b)
    arrays = {k: v for k, v in system["arrays"].items()}
    got = np.asarray(ci.solve(jnp.asarray(b.astype(dtype)), arrays, system["static"]))
    rounding = 10 * np.finfo(dtype).eps
    assert np.linalg.norm(got - want) <= (ci.TOLERANCE[dtype] + rounding) * np.linalg.norm(want)
