"""Lumped ports: S-parameters and input impedance against analytic loads.

Set-up: 1 mm cells, a z-directed LumpedPort (Z0 = 50 ohm) on one Ez edge, driven by a
baseband Gaussian pulse (fwidth 5 GHz) and run until the fields have left or decayed
(300-400 steps, float64), so the port spectra are complete at any frequency; S and Z
are read at 0.1, 0.5 and 1 GHz, where the cell is 1/300 of a wavelength or less.

- Resistive load on the port's own edge: a Box of conductivity sigma = dl / (R_L dA)
  = 1 / (R_L dx) on that edge alone. Yee's E update there is Ampere's law on the dual
  face, I = sigma E dA (E averaged over the step), V = E dl, so the edge is a discrete
  resistor of exactly R_L, in parallel with the edge's capacitance (C = eps0 dA / dl
  = 8.85 fF here, -18 kohm at 1 GHz, and the grid around it). Reference: S11 =
  (R_L - Z0) / (R_L + Z0), Z_in = R_L; tolerance 0.01 in S, 0.1% in Re Z.
- Open (vacuum) edge: |S11| = 1 (lossless but for radiation of a 1 mm dipole, ~1e-10);
  Z_in a capacitance at least the edge's own eps0 dx.
- Short: a one-cell PEC loop around the port edge: |S11| = 1, S11 -> -1 as f -> 0
  (Z_in = j omega L, L constant in f, of the order of mu0 dx).
- Two ports (Z0 = 50 and 100 ohm) joined by two PEC wires: at low f port 1 sees port 2's
  resistor: S11 = (Z02 - Z01) / (Z02 + Z01) = 1/3, S21 = 2 sqrt(Z01 Z02) / (Z01 + Z02);
  |S11|^2 + |S21|^2 <= 1 (passive; = 1 to 1e-4, nothing dissipates); a passive port's
  incident wave a = 0; the second run (exciting port 2) gives S12 = S21 (reciprocity)
  and the Touchstone file (scikit-rf, if installed) reads back equal.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import emjax as em
from emjax.analysis.sparams import combine, port_waves, s_parameters
from emjax.errors import OutputError, SetupError

D = 1e-3
FREQS = np.array([0.1e9, 0.5e9, 1e9])
WAVE = em.GaussianPulse(f0=0.0, fwidth=5e9, remove_dc=False)
EDGE = (0.0, 0.0, 0.5e-3)  # the midpoint of an Ez edge (grid nodes at whole mm)


def _port(name="p1", x=0.0, excite=True, z0=50.0):
    return em.LumpedPort(name=name, position=(x, 0.0, 0.5e-3), polarization="z",
                         impedance=z0, excite=excite, waveform=WAVE if excite else None)


def _run(structures, ports, n=12, pml=4, steps=300):
    sim = em.FDTD3D(domain=em.Domain(shape=(n, n, n), spacing=D),
                    boundary=em.CPML(thickness=pml), steps=steps, dtype="float64",
                    sources=ports, structures=structures)
    return sim, sim.run(progress=False, chunk=steps)


def _edge_block(medium):
    """A structure holding the port's Ez edge and no other sample."""
    return em.Structure(geometry=em.Box(center=EDGE, size=(0.5 * D,) * 3), medium=medium)


def test_resistive_load_on_the_port_edge():
    r_load, z0 = 25.0, 50.0
    _, res = _run([_edge_block(em.Medium(sigma=1 / (r_load * D)))], [_port()])
    sp = s_parameters(res, FREQS)
    s11, z = sp.S[:, 0, 0], sp.z_in[:, 0]
    expected = (r_load - z0) / (r_load + z0)
    print("S11", s11, "expected", expected, "Z_in", z)
    assert np.all(np.abs(s11 - expected) < 0.01), s11
    assert np.all(np.abs(z.real / r_load - 1) < 1e-3), z
    assert np.all(np.abs(z.imag) < 0.02 * r_load), z
    # the port's record: V and I on the half steps, the source voltage beside them
    md = res["p1"]
    assert md.kind == "LumpedPort" and md.attrs["impedance"] == z0
    assert md.attrs["position"] == pytest.approx(EDGE)
    i = np.argmax(np.abs(md.data["V_source"]))
    assert md.data["V"][i] == pytest.approx(md.data["V_source"][i] * r_load / (r_load + z0),
                                            rel=1e-3)


def test_open_edge_reflects_all_and_is_a_capacitance():
    _, res = _run([], [_port()])
    sp = s_parameters(res, FREQS)
    s11, z = sp.S[:, 0, 0], sp.z_in[:, 0]
    c = -1 / (2 * np.pi * FREQS * z.imag)
    print("|S11|", np.abs(s11), "Z_in", z, "C / (eps0 dx)", c / (em.eps0 * D))
    assert np.all(np.abs(np.abs(s11) - 1) < 1e-3), np.abs(s11)
    assert np.all(np.abs(s11 - 1) < 0.05), s11
    # the edge's own capacitance eps0 dx and the fringe of the grid around it
    assert np.all((c > em.eps0 * D) & (c < 10 * em.eps0 * D)), c
    assert np.allclose(c, c[0], rtol=1e-2), c


def test_pec_loop_short():
    loop = em.Structure(geometry=em.Box(center=(0.75e-3, 0.0, 0.5e-3),
                                        size=(1e-3, 0.5e-3, 1.5e-3)), medium=em.PEC())
    _, res = _run([loop], [_port()])
    sp = s_parameters(res, FREQS)
    s11, z = sp.S[:, 0, 0], sp.z_in[:, 0]
    inductance = z.imag / (2 * np.pi * FREQS)
    print("S11", s11, "Z_in", z, "L / (mu0 dx)", inductance / (em.mu0 * D))
    assert np.all(np.abs(np.abs(s11) - 1) < 1e-3), np.abs(s11)
    assert abs(s11[0] + 1) < 0.03, s11
    assert np.all(np.abs(z.real) < 1e-2), z
    assert np.allclose(inductance, inductance[0], rtol=1e-2), inductance
    assert 0.1 < inductance[0] / (em.mu0 * D) < 3, inductance


@pytest.fixture(scope="module")
def two_port():
    """Ports a (50 ohm, x = 0) and b (100 ohm, x = 2 mm) joined at both ends by PEC
    wires (the Ex edges at z = 0 and 1 mm): one run exciting each."""
    wires = [em.Structure(geometry=em.Box(center=(1e-3, 0.0, z), size=(1.5e-3, 0.5e-3, 0.5e-3)),
                          medium=em.PEC()) for z in (0.0, 1e-3)]
    runs = []
    for excited in ("a", "b"):
        ports = [_port("a", 0.0, excited == "a", 50.0), _port("b", 2e-3, excited == "b", 100.0)]
        runs.append(_run(wires, ports, n=16, pml=5, steps=400)[1])
    return runs


def test_two_ports_through_a_wire(two_port):
    res_a, res_b = two_port
    sp = s_parameters(res_a, FREQS)
    s11, s21 = sp.S[:, 0, 0], sp.S[:, 1, 0]
    z1, z2 = 50.0, 100.0
    power = np.abs(s11) ** 2 + np.abs(s21) ** 2
    print("S11", s11, "S21", s21, "|S11|^2 + |S21|^2", power)
    assert abs(s11[0] - (z2 - z1) / (z2 + z1)) < 0.01, s11
    assert abs(s21[0] - 2 * np.sqrt(z1 * z2) / (z1 + z2)) < 0.01, s21
    assert np.all(power <= 1 + 1e-4) and np.all(power > 1 - 1e-3), power
    waves = port_waves(res_a, FREQS)  # the passive port sends nothing in
    assert np.all(np.abs(waves.a[:, 1]) < 1e-12 * np.abs(waves.a[:, 0])), waves.a
    full = combine([sp, s_parameters(res_b, FREQS)])
    S = full.matrix()
    print("S12 - S21", S[:, 0, 1] - S[:, 1, 0])
    assert np.all(np.abs(S[:, 0, 1] - S[:, 1, 0]) < 1e-3), S
    assert abs(S[0, 1, 1] + 1 / 3) < 0.01, S[:, 1, 1]


def test_touchstone_round_trip_and_figures(two_port, tmp_path):
    pytest.importorskip("skrf")
    from emjax.analysis.sparams import read_touchstone

    full = combine([s_parameters(r, FREQS) for r in two_port])
    path = full.write_touchstone(tmp_path / "loop.s2p")
    back = read_touchstone(path)
    assert np.allclose(back.frequencies, FREQS)
    assert np.allclose(back.z0, [50.0, 100.0])
    assert np.allclose(back.S, full.matrix(), rtol=1e-9, atol=1e-12)
    # the figures draw these numbers: |S| in dB per entry, S11 and S22 on the Smith chart
    from emjax.analysis.sparams import plot_s_db, plot_smith

    lines = plot_s_db(full, tmp_path / "s.png").axes[0].lines
    assert [line.get_label() for line in lines] == ["S11", "S21", "S12", "S22"]
    assert np.allclose(lines[1].get_ydata(), 20 * np.log10(np.abs(full.S[:, 1, 0])))
    lines = plot_smith(full).axes[0].lines
    assert np.allclose(lines[-1].get_xdata(), full.S[:, 1, 1].real)
    assert (tmp_path / "s.png").stat().st_size > 0


def test_results_file_keeps_the_port_records(two_port, tmp_path):
    res = two_port[0]
    res.save(tmp_path / "ports.h5")
    back = em.Results.load(tmp_path / "ports.h5")
    assert np.array_equal(s_parameters(back, FREQS).S, s_parameters(res, FREQS).S)


def test_bad_ports_are_refused(two_port):
    from emjax.fdtd.setup import prepare

    sim = em.FDTD3D(domain=em.Domain(shape=(12, 12, 12), spacing=D),
                    boundary=em.CPML(thickness=4), steps=300, sources=[_port()],
                    structures=[_edge_block(em.PEC())])
    with pytest.raises(SetupError, match=r"sources\[0\] LumpedPort 'p1'.*inside PEC"):
        prepare(sim)
    with pytest.raises(ValueError, match="excite = true needs a 'waveform'"):
        em.LumpedPort(name="p", position=EDGE, polarization="z")
    res = two_port[0]  # the same records, both marked excited: their waves mix
    both = em.Results(scenario=None, monitors={
        name: dataclasses.replace(md, attrs={**md.attrs, "excite": True})
        for name, md in res.items()})
    with pytest.raises(SetupError, match="one excited port per run"):
        s_parameters(both, FREQS)
    with pytest.raises(OutputError, match=r"ports \['b'\] were not excited"):
        s_parameters(res, FREQS).matrix()


def test_run_outputs_of_a_one_port_run(tmp_path):
    """emjax run's hooks: the |S| figure and, for one port, a Touchstone file that reads
    back as the run's S11 (and the matrix in HDF5)."""
    from emjax.analysis.sparams import read_touchstone
    from emjax.outputs import write_outputs

    pytest.importorskip("skrf")
    _, res = _run([_edge_block(em.Medium(sigma=1 / (25.0 * D)))], [_port()])
    written = dict((p.name, label) for label, p in write_outputs(
        res, figures=tmp_path / "fig", results_dir=tmp_path, stem="run"))
    assert written["run_sparams.png"] == "figure"
    assert written["run.s1p"] == written["run_sparams.h5"] == "S-matrix"
    back = read_touchstone(tmp_path / "run.s1p")
    assert np.allclose(back.S[:, 0, 0], s_parameters(res, back.frequencies).S[:, 0, 0],
                       atol=1e-9)
