"""Dispersive media (PoleMedium) in the 2D FDTD, TMz and TEz: fdtd/dispersive.py on 2D boxes.

- Fresnel: the 3D ``debye-halfspace`` set-up in the plane (validation/fdtd2d.py,
  ``debye-halfspace-2d``): a water-like Debye half-space (eps_inf 4.9, delta_eps 74,
  tau 8.3 ps) lit at normal incidence in a guide of PEC y walls (TEz: the TEM wave of
  Ey, Hz; TMz: the one Ez row between the walls, a mode cut off at 6.7 MHz, its ky in
  the reference), 0.5-20 GHz from one pulse: |r| and phase against Fresnel within 0.005
  and 1 degree at 0.1 and 0.05 mm, the |r| error falling at order >= 1.7 (measured
  2.4e-3 -> 6.1e-4, order 1.95). A Lorentz slab (resonance at 10 GHz) in TMz against
  the transfer matrix at 0.1 mm, same limits.
- 2D equals 3D: the same quasi-1D problem (a medium of one Debye, one Lorentz and one
  Drude pole filling x > 0) in TEz and in a 3D guide of PMC y and PEC z walls with the
  same dx and dt: the probe series, normalised once on the incident run, agree to 1e-12.
- Stability: a closed PEC box holding each pole kind (lossless Drude and Lorentz
  included), TMz and TEz, 3000 steps: after the source ends the discrete energy
  (fields plus polarization, J/m) never rises by more than rounding (float64: 1e-12 of
  itself, measured 4e-15; float32: 5e-4, measured 9e-5), and the lossless poles keep
  it within 1e-10 (float64) and 1e-3 (float32). TEz around a conformal PEC disc
  too, where the monitor's sum is not the conserved quantity (it swings by half of
  itself with a constant medium): its largest value over the last quarter of the run
  is at most 1.1 times that over the first quarter (measured 1.04; Debye: 1e-3).
- Memory: the estimate's ``polarization`` equals the bytes of the state's p and j and
  does not grow with the non-dispersive area; boxes exist only on the polarization's E
  components.
- Checkpoints: a resumed dispersive run equals the whole run bit for bit.
- Time step: a pole medium counts with eps_inf in the Courant limit.
- Refused: a dispersive medium reaching into a split-field PML (SetupError naming the
  face); a dispersive background (ValidationError).
"""

from __future__ import annotations

import math
import warnings

import jax
import numpy as np
import pydantic
import pytest

import emjax as em
from emjax.errors import EmjaxWarning, SetupError
from emjax.fdtd.setup2d import estimate
from emjax.fdtd.solver2d import FDTD2DSolver
from emjax.validation.dispersion import LORENTZ_SLAB, WATER_DEBYE
from emjax.validation.fdtd2d import halfspace_reflection_2d, slab_transmission_2d

TWO_PI = 2 * np.pi
WATER = em.PoleMedium(eps_inf=WATER_DEBYE["eps_inf"], poles=[em.DebyePole(
    delta_eps=WATER_DEBYE["delta_eps"], tau=WATER_DEBYE["tau"])])
POLES = {
    "debye": WATER,
    "drude": em.PoleMedium(poles=[em.DrudePole(omega_p=TWO_PI * 15e9, gamma=0.0)]),
    "lorentz": em.PoleMedium(eps_inf=2.0, poles=[em.LorentzPole(
        delta_eps=3.0, omega_0=TWO_PI * 30e9, delta=0.0)]),
}
MIXED = em.PoleMedium(eps_inf=1.5, sigma=0.1, poles=[
    *POLES["debye"].poles, *POLES["lorentz"].poles,
    em.DrudePole(omega_p=TWO_PI * 5e9, gamma=TWO_PI * 1e9)])


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():  # coarse grids on purpose
        warnings.filterwarnings("ignore", message=".*cells per shortest wavelength",
                                category=EmjaxWarning)
        # a few steps of a pulse (memory, refusals)
        warnings.filterwarnings("ignore", message=".*the pulse is cut off",
                                category=EmjaxWarning)
        yield


def _errors(got, ref) -> tuple[float, float]:
    return (float(np.max(np.abs(np.abs(got) - np.abs(ref)))),
            float(np.max(np.abs(np.degrees(np.angle(got / ref))))))


@pytest.mark.parametrize("pol", ["TEz", "TMz"])
def test_debye_halfspace_reflects_as_fresnel_at_second_order(pol):
    spacings, errs = (1e-4, 5e-5), []
    for d in spacings:
        f, r, r_ref = halfspace_reflection_2d(WATER, d, pol)
        mag, deg = _errors(r, r_ref)
        print(f"{pol} d = {d * 1e3} mm, {len(f)} frequencies: |r| error {mag:.2e}, "
              f"phase error {deg:.3f} deg")
        assert len(f) >= 50
        assert mag <= 0.005 and deg <= 1.0, (mag, deg)
        errs.append(mag)
    order = math.log(errs[0] / errs[1]) / math.log(spacings[0] / spacings[1])
    print(f"observed order {order:.2f}")
    assert order >= 1.7


def test_lorentz_slab_transmits_as_transfer_matrix():
    s = LORENTZ_SLAB
    medium = em.PoleMedium(eps_inf=s["eps_inf"], poles=[em.LorentzPole(
        delta_eps=s["delta_eps"], omega_0=TWO_PI * s["f_0"], delta=TWO_PI * s["delta_f"])])
    f, t, t_ref = slab_transmission_2d(medium, 1e-4, s["thickness"], "TMz")
    mag, deg = _errors(t, t_ref)
    print(f"{len(f)} frequencies, min |t| {np.abs(t_ref).min():.3f}: |t| error {mag:.2e}, "
          f"phase error {deg:.3f} deg")
    assert np.abs(t_ref).min() < 0.2  # the resonance is in the band
    assert mag <= 0.005 and deg <= 1.0, (mag, deg)


def _guide_probe(filled: bool, three_d: bool, d: float = 1e-4) -> np.ndarray:
    """Tangential H at x = 0 of the quasi-1D problem, MIXED filling x > 0: TEz (PEC y
    walls, cells d x d / sqrt(2): the 3D dt) or 3D (PMC y, PEC z walls, cubes d)."""
    n_vac, n_med, pml = 20, 30, 10
    wave = em.GaussianPulse(f0=0.0, fwidth=7.8e9)
    common = {"duration": 0.35e-9, "dtype": "float64"}
    origin_x = -(n_vac + 0.5) * d  # x = 0 is an H plane
    if three_d:
        sim = em.FDTD3D(
            domain=em.Domain(shape=(n_vac + n_med, 2, 1), spacing=d, origin=(origin_x, 0, 0)),
            boundary=em.Boundaries(x=em.CPML(thickness=pml), y=em.PMC(), z=em.PEC()),
            structures=[em.Structure(geometry=em.Box(center=(1.0, 0, 0), size=(2.0, 1.0, 1.0)),
                                     medium=MIXED)] if filled else [],
            # one dipole on each Ez row: the TEM wave alone
            sources=[em.PointDipole(position=(-5 * d, y, 0.5 * d), polarization="z",
                                    waveform=wave) for y in (0.0, d, 2 * d)],
            monitors=[em.Probe(name="h", positions=[(0.0, d, 0.5 * d)], components=["Hy"])],
            **common)
    else:
        dy = d / math.sqrt(2)
        sim = em.FDTD2D(
            polarization="TEz", domain=em.Domain2D(shape=(n_vac + n_med, 1), spacing=(d, dy),
                                                    origin=(origin_x, 0)),
            boundary=em.Boundaries2D(x=em.CPML(thickness=pml), y=em.PEC()),
            structures=[em.Structure2D(geometry=em.Rectangle(center=(1.0, 0), size=(2.0, 1.0)),
                                       medium=MIXED)] if filled else [],
            sources=[em.LineSource(position=(-5 * d, 0.5 * dy), polarization="y",
                                   waveform=wave)],
            monitors=[em.Probe(name="h", positions=[(0.0, 0.5 * dy, 0.0)], components=["Hz"])],
            **common)
    data = sim.run(progress=False)["h"].data
    return next(iter(data.values()))[:, 0].astype(np.float64)


def test_tez_equals_3d_on_the_same_1d_problem():
    inc3, inc2 = _guide_probe(False, True), _guide_probe(False, False)
    assert inc3.shape == inc2.shape
    scale = np.dot(inc3, inc2) / np.dot(inc2, inc2)  # the sources' normalisations differ
    tot3, tot2 = _guide_probe(True, True), _guide_probe(True, False)
    peak = np.abs(inc3).max()
    err_inc = np.abs(inc3 - scale * inc2).max() / peak
    err_tot = np.abs(tot3 - scale * tot2).max() / peak
    reflected = np.abs(tot3 - inc3).max() / peak
    print(f"2D vs 3D: incident {err_inc:.1e}, with the medium {err_tot:.1e} "
          f"(reflected wave {reflected:.2f} of the incident peak)")
    assert reflected > 0.1  # the medium is there
    assert err_inc <= 1e-12 and err_tot <= 1e-12


def _cavity(medium, pol: str = "TMz", steps: int = 3000, dtype: str = "float32",
            pec_disc: bool = False, shape=(14, 12)) -> em.FDTD2D:
    structures = [em.Structure2D(medium=medium, geometry=em.Rectangle(
        center=(0.5e-3, 0), size=(6.5e-3, 5.5e-3)))]
    if pec_disc:
        structures.append(em.Structure2D(medium=em.PEC(), geometry=em.Circle(
            center=(1.2e-3, 0.3e-3), radius=1.7e-3)))
    return em.FDTD2D(
        domain=em.Domain2D(shape=shape, spacing=1e-3), boundary=em.PEC(), steps=steps,
        polarization=pol, dtype=dtype, structures=structures,
        sources=[em.LineSource(position=(-4.1e-3, 1.3e-3), polarization="z" if pol == "TMz"
                               else "y", waveform=em.GaussianPulse(f0=25e9, fwidth=10e9))],
        monitors=[em.EnergyMonitor(name="w"),
                  em.Probe(name="p", positions=[(1e-3, 0, 0)])])


@pytest.mark.parametrize("pol, pec_disc, dtype", [
    ("TMz", False, "float64"), ("TMz", False, "float32"), ("TEz", False, "float64"),
    ("TEz", False, "float32"), ("TEz", True, "float32")],
    ids=["TMz-float64", "TMz-float32", "TEz-float64", "TEz-float32",
         "TEz-conformal-PEC-float32"])
@pytest.mark.parametrize("kind", list(POLES))
def test_closed_cavity_energy_never_rises(kind, pol, pec_disc, dtype):
    sim = _cavity(POLES[kind], pol, pec_disc=pec_disc, dtype=dtype)
    W = sim.run(progress=False)["w"].data["energy"].astype(np.float64)
    wave = sim.sources[0].waveform
    n0 = int((wave.offset + 8) * wave.tau / sim.dt) + 1  # the source is over (< 1e-14)
    after = W[n0:]
    rise = np.max(np.maximum.accumulate(after[::-1])[::-1][1:] - after[:-1]) / after[0]
    print(f"{kind} {pol} {dtype}: energy {after[0]:.4g} -> {after[-1]:.4g} J/m, largest "
          f"rise {rise:.2e}")
    assert after[0] > 0 and np.all(np.isfinite(W))
    if pec_disc:
        # the monitor's sum is not the Dey-Mittra cells' invariant (a constant medium's
        # swings by half of itself there too): no growth from the first quarter to the
        # last beyond that swing (measured <= 1.04 for the lossless poles)
        q = len(after) // 4
        growth = after[-q:].max() / after[:q].max()
        print(f"conformal PEC: largest energy of the last quarter / first {growth:.4f}")
        assert growth <= (1e-3 if kind == "debye" else 1.1)
        return
    assert rise <= (1e-12 if dtype == "float64" else 5e-4)
    if kind != "debye":  # lossless poles: conserved
        assert abs(after[-1] / after[0] - 1) <= (1e-10 if dtype == "float64" else 1e-3)
    else:
        assert after[-1] < 0.5 * after[0]


@pytest.mark.parametrize("pol, n_comp", [("TMz", 1), ("TEz", 2)])
def test_polarization_bytes_counted_and_box_only(pol, n_comp):
    small = _cavity(MIXED, pol, steps=5)
    big = small.model_copy(update={"domain": em.Domain2D(shape=(40, 50), spacing=1e-3)})
    solver = FDTD2DSolver(small)
    boxes = solver.setup.dispersive.boxes
    assert sorted(b.comp for b in boxes) == list(solver.setup.layout.comps[0])
    assert len(boxes) == n_comp and all(len(b.shape) == 2 for b in boxes)
    actual = sum(a.nbytes for a in jax.tree_util.tree_leaves(solver.init_state().disp))
    cells = sum(math.prod(b.shape) for b in boxes)
    # Lorentz: P and J; Debye: P; Drude: J -> 4 arrays per cell and component
    assert actual == cells * 4 * 4
    assert estimate(small)["polarization"] == actual
    assert estimate(big)["polarization"] == actual
    assert "polarization" not in estimate(_cavity(em.Medium(eps_r=2), pol, steps=5))


def test_resume_is_bitwise_exact(resumed_equals_whole):
    whole = resumed_equals_whole(FDTD2DSolver, _cavity(MIXED, "TEz", steps=60, pec_disc=True))
    assert np.abs(whole["p"].data["Hz"]).max() > 0


def test_unsupported_places_are_refused():
    wide = em.Structure2D(medium=WATER, geometry=em.Rectangle(size=(30e-3, 4e-3)))
    sim = _cavity(WATER, steps=5, shape=(24, 20)).model_copy(
        update={"boundary": em.SplitPML(thickness=4), "structures": [wide]})
    with pytest.raises(SetupError, match=r"dispersive and reaches into the split-field PML "
                                         r"on the low x face.*CPML"):
        sim.run(progress=False)
    sim.model_copy(update={"boundary": em.CPML(thickness=4)}).run(progress=False)  # runs
    with pytest.raises(pydantic.ValidationError, match="background"):
        em.FDTD2D.model_validate({**_cavity(WATER, steps=5).model_dump(),
                                  "background": WATER.model_dump()})


def test_time_step_counts_eps_inf():
    """A pole medium faster than the background (eps_inf 1 in eps_r 4) sets dt, as in 3D."""
    drude = em.PoleMedium(poles=[em.DrudePole(omega_p=TWO_PI * 15e9, gamma=1e9)])
    dom = em.Domain2D(shape=(10, 10), spacing=1e-3)
    disc = em.Structure2D(geometry=em.Circle(radius=2e-3), medium=drude)
    sim = em.FDTD2D(domain=dom, steps=5, boundary=em.PEC(), background=em.Medium(eps_r=4.0),
                    structures=[disc])
    vacuum = em.FDTD2D(domain=dom, steps=5, boundary=em.PEC())
    assert sim.dt == pytest.approx(vacuum.dt, rel=1e-15)
