"""z padding of the 3D FDTD arrays (``FDTDSolver(align=...)``, by default the backend's
``fdtd.setup.align_z()``) is inert.

GPUs run the step at full bandwidth only when the stored z size is a multiple of 4,
so the solver pads it there with entries beyond the upper z wall. Here the padding
is forced on the CPU (align = 4 on 13 x 14 x 15 cells: one padded entry) and every
monitor must equal the unpadded run's (align = 1): probes, DFT monitors spanning
the whole domain, snapshots, energy and near-to-far spectra, for CPML on all faces
(combined and per-face), PEC, Mur (upper z face included), a TF/SF plane wave with a
Huygens box, lossy and dielectric media in index and array storage. The padding
itself stays exactly zero; an upper PMC face is not padded; checkpoints hold the
physical shape, so a padded run resumes unpadded and back.
"""

from __future__ import annotations

import numpy as np
import pytest

import emjax as em
from emjax.fdtd.solver import FDTDSolver

D = 1e-3
CELLS = (13, 14, 15)  # 15 z cells: one padded entry at align = 4
F0 = 60e9


def _monitors(whole: bool, n2f: bool = False, light: bool = False):
    """Monitors near the upper z wall, where a leak from the padding would show first;
    the DFT and snapshot span the whole domain (``whole``) or the interior of a 3-cell
    CPML. ``light``: the probe and the DFT only (less to compile)."""
    big = tuple((n - (0 if whole else 6)) * D for n in CELLS)
    top = 0.5 * big[2]
    out = [
        em.Probe(name="p", positions=[(0.0, 0.0, top), (1e-3, -1e-3, top - 0.5e-3),
                                      (-2e-3, 1e-3, -1e-3)],
                 components=["Ex", "Ey", "Ez", "Hx", "Hy", "Hz"]),
        em.DFTMonitor(name="dft", center=(0, 0, 0), size=big, frequencies=[50e9, 70e9],
                      components=["Ex", "Ey", "Ez", "Hx", "Hy", "Hz"]),
        em.FieldSnapshot(name="snap", center=(0, 0, 0), size=(0, big[1], big[2]),
                         interval=5, components=["Ey", "Hx"]),
        em.EnergyMonitor(name="w", interval=2),
    ]
    if light:
        out = out[:2]
    if n2f:
        out.append(em.NearToFar(name="far", frequencies=[F0], margin=1))
    return out


def _sim(boundary, *, steps=30, storage="indices", strategy="combined", planewave=False,
         whole=False, light=False):
    wave = em.GaussianPulse(f0=F0, fwidth=30e9)
    if planewave:
        sources = [em.PlaneWave(theta=30, phi=20, polarization=40, waveform=wave, box_margin=2)]
        structures = [em.Structure(geometry=em.Sphere(radius=1e-3),
                                   medium=em.Medium(eps_r=3.0, sigma=0.3))]
    else:
        sources = [em.PointDipole(position=(0.4e-3, -0.3e-3, 4.2e-3), polarization="x",
                                  waveform=wave),
                   em.PointDipole(position=(-1e-3, 1e-3, 3e-3), polarization="z",
                                  waveform=wave)]
        # A lossy dielectric block reaching the upper z wall and a magnetic one below.
        structures = [
            em.Structure(geometry=em.Box(center=(0, 0, 5.5e-3), size=(6e-3, 6e-3, 6e-3)),
                         medium=em.Medium(eps_r=2.5, sigma=0.4)),
            em.Structure(geometry=em.Sphere(center=(0, 0, -3e-3), radius=2e-3),
                         medium=em.Medium(eps_r=4.0, mu_r=1.5, sigma_m=200.0)),
        ]
    return em.FDTD3D(name="pad", domain=em.Domain(shape=CELLS, spacing=D), boundary=boundary,
                     steps=steps, storage=storage, cpml_strategy=strategy, sources=sources,
                     structures=structures, monitors=_monitors(whole, n2f=planewave, light=light))


def _run(sim, align, monkeypatch, **kw):
    solver = FDTDSolver(sim, chunk=kw.pop("chunk", 30), align=align)
    return solver, solver.run(progress=False, **kw)


def _assert_equal(a, b):
    """Every monitor array equal to 1e-6 of its peak (in practice bit for bit)."""
    assert a.names == b.names
    for name in a.names:
        for comp, x in a[name].data.items():
            y = b[name].data[comp]
            assert x.shape == y.shape, (name, comp, x.shape, y.shape)
            peak = float(np.abs(y).max())
            assert peak > 0, (name, comp)
            err = float(np.abs(x - y).max())
            assert err <= 1e-6 * peak, f"{name}/{comp}: {err:.3g} of peak {peak:.3g}"


def _padding_is_zero(solver, state):
    nz = solver.setup.grid.nodes[2]
    for F in (*state.E, *state.H):
        assert not np.asarray(F)[:, :, nz:].any()


CASES = {
    "cpml-combined": dict(boundary=em.CPML(thickness=3)),
    "cpml-per-face-arrays": dict(boundary=em.CPML(thickness=3), strategy="per_face",
                                 storage="arrays"),
    "pec-arrays": dict(boundary=em.PEC(), storage="arrays", whole=True),
    "mur": dict(boundary=em.Boundaries(x=(em.Mur(), em.CPML(thickness=3)), y=em.Mur(),
                                       z=(em.PEC(), em.Mur()))),
    "planewave-n2f": dict(boundary=em.CPML(thickness=3), planewave=True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_padded_equals_unpadded(case, monkeypatch):
    sim = _sim(**CASES[case])
    plain_solver, plain = _run(sim, 1, monkeypatch)
    padded_solver, padded = _run(sim, 4, monkeypatch)
    assert plain_solver.setup.grid.pad_z == 0
    assert padded_solver.setup.grid.shape == (*CELLS[:2], 16)
    assert padded.metadata["shape"] == list(CELLS)
    _assert_equal(padded, plain)
    # The padding holds exact zeros after a run (E masked, H fed only by zero E). The
    # driver's own (measured) chunk of 30 steps, which run() compiled: no second program.
    state, *_ = padded_solver.advance(padded_solver.init_state(), 0, 30, measure=True)
    _padding_is_zero(padded_solver, state)


def test_pmc_high_z_is_not_padded(monkeypatch):
    # Upper PMC: the z axis is extended (16 stored) and must stay so; lower PMC pads.
    for faces, stored in (((em.PEC(), em.PMC()), 16), ((em.PMC(), em.PEC()), 16)):
        sim = _sim(em.Boundaries(x=em.CPML(thickness=3), y=em.PEC(), z=faces), light=True)
        solver, padded = _run(sim, 4, monkeypatch)
        assert solver.setup.grid.shape[2] == stored
        assert solver.setup.grid.pad_z == (0 if isinstance(faces[1], em.PMC) else 1)
        _assert_equal(padded, _run(sim, 1, monkeypatch)[1])


def test_checkpoint_is_physical_and_portable(tmp_path, monkeypatch):
    import h5py

    sim = _sim(em.CPML(thickness=3), light=True)
    plain, whole = _run(sim, 1, monkeypatch, chunk=15)
    ck = tmp_path / "pad.ckpt.h5"
    padded, _ = _run(sim, 4, monkeypatch, chunk=15, checkpoint_every=15, checkpoint_path=ck)
    with h5py.File(ck) as f:  # no padded array in the file
        shapes = [f["state"][k].shape for k in f["state"]]
    assert (*CELLS[:2], 16) not in shapes and CELLS in shapes
    # resumed unpadded and padded: the uninterrupted answer (each by the solver of that
    # alignment above, whose chunk is compiled; run() reads the whole state from the file)
    for solver in (plain, padded):
        _assert_equal(solver.run(progress=False, resume=ck), whole)
