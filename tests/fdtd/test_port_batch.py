"""Batched port excitations (``port_excitation = "each"``, :mod:`emjax.fdtd.excitations`).

Three lumped ports (Z0 = 50, 60, 70 ohm) joined in parallel by two PEC wires in a small
PEC box filled with a lossy medium (0.3 S/m: the fields decay within the run, and the
structure is strictly passive; a CPML 4 cells from the ports, in their near field, reads
sigma_max(S) - 1 = +2e-4 at 1 GHz, so it is not used here), float64,
a baseband pulse: the batched run must give every column of S exactly as three separate
runs each exciting one port do (the same kernels on the same numbers, so to rounding);
the S-matrix of this reciprocal, passive structure is symmetric and its singular values
are at most 1; S referred to other (complex) impedances equals the one from the port
impedance matrix Z = V I^-1 (an independent route: S = (Z - R)(Z + R)^-1 for real R, the
power-wave form for complex) and scikit-rf's renormalisation; running the excitations in
groups of one through the same compiled chunk changes nothing; the output hook writes
the .s3p and the HDF5 matrix, equal on reading back.
"""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError as ScenarioValidationError

import emjax as em
from emjax.analysis.sparams import combine, load_hdf5, port_waves, read_touchstone, s_parameters
from emjax.errors import SetupError
from emjax.fdtd.solver import run

FREQS = np.array([0.5e9, 1e9, 2e9, 4e9])
WAVE = em.GaussianPulse(f0=0.0, fwidth=5e9, remove_dc=False)
Z0 = (50.0, 60.0, 70.0)


def _sim(mode="each", excite=(True, True, True), **kw):
    ports = [em.LumpedPort(name=f"p{k + 1}", position=(-3e-3 + 3e-3 * k, 0.0, 0.5e-3),
                           polarization="z", impedance=Z0[k], excite=excite[k],
                           waveform=WAVE if excite[k] else None) for k in range(3)]
    # two PEC wires join the ports' ends: three ports in parallel, strongly coupled
    wires = [em.Structure(geometry=em.Box(center=(0.0, 0.0, z), size=(6e-3, 0, 0)),
                          medium=em.PEC()) for z in (0.0, 1e-3)]
    return em.FDTD3D(domain=em.Domain(shape=(16, 16, 14), spacing=1e-3),
                     boundary=em.PEC(), background=em.Medium(sigma=0.3), steps=240,
                     dtype="float64",
                     sources=ports, structures=wires, port_excitation=mode, **kw)


@pytest.fixture(scope="module")
def batched():
    return _sim().run(progress=False, chunk=120)


def test_batched_columns_equal_separate_runs(batched):
    sp = s_parameters(batched, FREQS)
    assert sp.excited == ("p1", "p2", "p3") and sp.full
    cols = []
    for j in range(3):
        one = _sim("simultaneous", tuple(k == j for k in range(3)))
        cols.append(s_parameters(one.run(progress=False, chunk=120), FREQS))
    single = combine(cols).matrix()
    assert np.max(np.abs(sp.matrix() - single)) <= 1e-12 * np.max(np.abs(single))
    S = sp.matrix()
    assert np.max(np.abs(S - np.swapaxes(S, 1, 2))) < 1e-6  # reciprocity
    assert np.max(np.linalg.svd(S, compute_uv=False)) <= 1.0  # passivity (lossy fill)
    assert np.min(np.abs(S[:, 1, 0])) > 0.1  # the ports do couple


def test_other_references_from_the_impedance_matrix(batched):
    w = port_waves(batched, FREQS)
    V, I = np.swapaxes(w.V, 1, 2), np.swapaxes(w.I, 1, 2)  # (nf, port, excitation)
    Z = V @ np.linalg.inv(I)
    eye = np.eye(3)
    s50 = s_parameters(batched, FREQS, z_ref=50.0)
    assert np.allclose(s50.S, (Z - 50 * eye) @ np.linalg.inv(Z + 50 * eye), atol=1e-12)
    net = s_parameters(batched, FREQS).network()
    net.renormalize(np.full(3, 50.0))
    assert np.allclose(net.s, s50.S, atol=1e-10)
    zc = np.array([50 + 20j, 40 - 10j, 75.0])  # power waves: S = F (Z - R*)(Z + R)^-1 F^-1
    F = np.diag(1 / (2 * np.sqrt(zc.real)))
    ref = F @ (Z - np.diag(zc.conj())) @ np.linalg.inv(Z + np.diag(zc)) @ np.linalg.inv(F)
    assert np.allclose(s_parameters(batched, FREQS, z_ref=zc).S, ref, atol=1e-10)
    with pytest.raises(em.errors.SetupError, match="z_ref"):
        s_parameters(batched, FREQS, z_ref=(50.0, -1.0, 50.0))


def test_groups_of_one_equal_one_batch(batched):
    grouped = _sim(port_batch=1).run(progress=False, chunk=120)
    assert grouped.metadata["excitation_group"] == 1
    a, b = batched["p2"], grouped["p2"]
    assert a.attrs["excitations"] == b.attrs["excitations"] == ["p1", "p2", "p3"]
    assert np.array_equal(a.data["V"], b.data["V"])
    one = a.excitation("p2")
    assert one.data["V"].shape == a.data["V"].shape[1:]
    assert np.any(one.data["V_source"]) and not np.any(a.excitation(0).data["V_source"])


def test_output_hook_writes_matrix_files(batched, tmp_path):
    from emjax.port_outputs import sparameter_files

    paths = sparameter_files(batched, tmp_path, "three")
    assert sorted(p.name for p in paths) == ["three.s3p", "three_sparams.h5"]
    kept, back = load_hdf5(tmp_path / "three_sparams.h5"), read_touchstone(tmp_path / "three.s3p")
    assert np.allclose(back.S, kept.matrix(), rtol=1e-12, atol=1e-15)
    assert np.allclose(back.z0, Z0)


def test_each_refuses_what_it_cannot_batch():
    dip = em.PointDipole(position=(0, 0, 0), polarization="z", waveform=WAVE)
    doc = _sim().model_dump()
    with pytest.raises(ScenarioValidationError, match="on in every one"):
        em.FDTD3D.model_validate({**doc, "sources": [*doc["sources"], dip.model_dump()]})
    with pytest.raises(ScenarioValidationError, match="excite = true"):
        _sim(excite=(False, False, False))
    with pytest.raises(SetupError, match="one device"):
        run(_sim(), devices=1)


def test_preview_marks_every_port():
    ax = _sim().plot(z=0.5e-3)
    ax = getattr(ax, "axes", [ax])[0] if not hasattr(ax, "get_children") else ax
    gids = {a.get_gid() for a in ax.get_children()}
    assert {"source:0", "source:1", "source:2"} <= gids


def test_batched_waveguide_ports_equal_separate_runs():
    """Two TE10 WaveguidePorts around an eps_r 2.2 block (WR-90 at 12 cells across): the
    batched run's sheets are switched per excitation like lumped ports' edges."""
    from emjax.validation.waveguide import wr90_scenario

    sim, *_ = wr90_scenario(12, block=10e-3, duration=4e-9)
    wave, freqs = sim.sources[0].waveform, np.linspace(8.5e9, 11.5e9, 5)

    def driving(excited):
        return [s.model_copy(update={"excite": k in excited,
                                     "waveform": wave if k in excited else None})
                for k, s in enumerate(sim.sources)]

    each = sim.model_copy(update={"port_excitation": "each", "sources": driving((0, 1))})
    sp = s_parameters(each.run(progress=False), freqs)
    cols = [s_parameters(sim.model_copy(update={"sources": driving((j,))}).run(
        progress=False), freqs) for j in range(2)]
    single = combine(cols).matrix()
    assert np.max(np.abs(sp.matrix() - single)) <= 1e-9
    assert np.max(np.abs(sp.S[:, 0, 1] - sp.S[:, 1, 0])) < 1e-4  # reciprocity
