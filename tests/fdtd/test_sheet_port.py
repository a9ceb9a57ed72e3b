"""Sheet lumped ports: a LumpedPort with a size spans several parallel edges.

- Ampere's law on the sheet: a z-polarized sheet of 2 edges in series and 3 columns
  (Z0 = 50 ohm, 1 mm cells, float64, in a CPML-bounded 12^3 grid) driven by a pulse.
  From the fields alone (a snapshot of Ez, Hx, Hy every step) the current through each
  edge's dual face is I_e = dA (eps0 dE/dt - (curl H)_z), the branch current of its
  resistor and source; the port's current, the mean over the 2 cross-sections of the
  summed I_e, equals the record's I = (V_s - V) / Z0 at every step to 1e-9 of its
  peak, and the record's V equals the mean over the columns of sum E dz (E averaged
  over the step). This checks the resistance each edge gets (R_e = Z0 F / N_ser, F = 3
  columns, N_ser = 2), the source voltage it carries (V_s / N_ser) and the weights.
- The ``parallel-plate-port`` validation case on 2 mm cells up to 3 GHz (the same
  cells per wavelength as its default): |S11| of loads 0.5, 1 and 2 Z0 and of a load
  with a CPML behind it within 0.01 of the transmission-line value, the matched line
  below -30 dB, the power balance within 1e-3.
- Bad input, refused with the port named: outside the domain, corners in the CPML, an
  edge on the CPML's interface node or on a PEC wall, edges inside a PEC box (how many
  and where), a negative size, a size along the polarization that snaps to no edge.
"""

from __future__ import annotations

import numpy as np
import pytest

import emjax as em
from emjax.errors import SetupError
from emjax.fdtd.setup import prepare

D = 1e-3
WAVE = em.GaussianPulse(f0=0.0, fwidth=6e9, remove_dc=False)


def _sim(port, structures=(), boundary=None, steps=150, monitors=()):
    return em.FDTD3D(domain=em.Domain(shape=(12, 12, 12), spacing=D),
                     boundary=boundary or em.CPML(thickness=3), steps=steps, dtype="float64",
                     sources=[port], structures=list(structures), monitors=list(monitors))


def _port(position=(0.0, 0.0, 0.0), size=(0.0, 2e-3, 2e-3), **kw):
    return em.LumpedPort(name="p", position=position, size=size, polarization="z",
                         impedance=50.0, waveform=WAVE, **kw)


def test_sheet_current_is_amperes_law_on_its_edges():
    snap = em.FieldSnapshot(name="s", center=(0, 0, 0), size=(2e-3, 4e-3, 2e-3),
                            components=["Ez", "Hx", "Hy"], interval=1)
    sim = _sim(_port(), monitors=[snap])
    s = prepare(sim, align=1)
    (plan,) = s.ports
    assert (plan.n_series, plan.n_columns) == (2, 3)
    assert plan.extent == pytest.approx((0.0, 2e-3, 2e-3))
    res = sim.run(progress=False)
    md, f = res["p"], res["s"]

    def at(comp, x, y, z):  # frames of comp at the sample nearest (x, y, z)
        i = [int(np.argmin(np.abs(f.coords[f"{a}_{comp}"] - v)))
             for a, v in zip("xyz", (x, y, z), strict=True)]
        return f.data[comp][:, i[0], i[1], i[2]]

    dt, dA = sim.dt, D * D
    ys, zs = (-D, 0.0, D), (-0.5 * D, 0.5 * D)  # the 3 columns, the 2 series edges
    E = {(y, z): np.concatenate([[0.0], at("Ez", 0, y, z)]) for y in ys for z in zs}
    current = np.zeros(sim.num_steps)
    for y in ys:
        for z in zs:
            curl = ((at("Hy", D / 2, y, z) - at("Hy", -D / 2, y, z)) / D
                    - (at("Hx", 0, y + D / 2, z) - at("Hx", 0, y - D / 2, z)) / D)
            current += dA * (em.eps0 * np.diff(E[(y, z)]) / dt - curl) / len(zs)
    peak = np.max(np.abs(md.data["I"]))
    print("peak I", peak, "max |I_Ampere - I_record|", np.max(np.abs(current - md.data["I"])))
    assert peak > 1e-4  # the source drove a current (1 V into a capacitive sheet)
    np.testing.assert_allclose(current, md.data["I"], rtol=0, atol=1e-9 * peak)
    V = sum(0.5 * D * (E[(y, z)][1:] + E[(y, z)][:-1]) for y in ys for z in zs) / len(ys)
    np.testing.assert_allclose(V, md.data["V"], rtol=0, atol=1e-12 * np.max(np.abs(V)))
    np.testing.assert_allclose(md.data["I"], (md.data["V_source"] - md.data["V"]) / 50.0)
    assert md.attrs["edges"] == [2, 3] and md.attrs["size"] == pytest.approx([0, 2e-3, 2e-3])


def test_parallel_plate_line_case():
    from emjax.validation.ports import parallel_plate_port

    recs = parallel_plate_port(spacing=2e-3, f_max=3e9)
    for r in recs:
        print(r.passed, r.metric)
    assert all(r.passed for r in recs)
    matched = [r for r in recs if r.metric.startswith("matched")]
    assert len(matched) == 1 and matched[0].value < -30
    assert len(recs) == 13


def test_bad_sheet_ports_are_refused():
    with pytest.raises(ValueError, match=r"sources\[0\] LumpedPort 'p'.*outside the domain"):
        _sim(_port(position=(7e-3, 0.0, 0.0)))
    with pytest.raises(ValueError, match=r"sources\[0\] LumpedPort 'p': corner.*inside the CPML"):
        _sim(_port(size=(0.0, 8e-3, 2e-3)))
    with pytest.raises(SetupError, match=r"LumpedPort 'p': along y its edges lie on nodes 3..3"
                                         r".*within nodes 4..8 \(the CPML"):
        prepare(_sim(_port(position=(0.0, -3e-3, 0.5e-3), size=(0, 0, 0))))
    with pytest.raises(SetupError, match=r"along y its edges lie on nodes 0..2.*PEC wall"):
        prepare(_sim(_port(position=(0.0, -5e-3, 0.0)), boundary=em.PEC()))
    block = em.Structure(geometry=em.Box(center=(0, 0, 1e-3), size=(1e-3, 1e-3, 2e-3)),
                         medium=em.PEC(name="strip"))
    with pytest.raises(SetupError, match=r"LumpedPort 'p'.*: 1 of its 6 edges lie inside PEC "
                                         r"\(strip; Ez index \(6, 6, 6\)"):
        prepare(_sim(_port(), [block]))
    with pytest.raises(ValueError, match=r"LumpedPort 'p': size has y = -0.001 m.*>= 0"):
        _port(size=(0.0, -1e-3, 1e-3))
    with pytest.raises(SetupError, match=r"size 0.0003 m along its polarization z snaps to no "
                                         r"edge"):
        prepare(_sim(_port(size=(0.0, 0.0, 0.3e-3))))
