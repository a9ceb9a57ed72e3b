"""Validation of batched N-port S-parameters on the seed-001 MRI coil.

``mri-coil-smatrix``: the ``mri-coil`` phantom and 8-rung coil with every rung fed by a
50-ohm :class:`~emjax.model.LumpedPort`, one excitation per rung, all eight batched in
one compiled run (``port_excitation = "each"``, :mod:`emjax.fdtd.excitations`), a pulse
centred on 128 MHz. From the one run:

- reciprocity: the structure (isotropic tissue, PEC, CPML) is reciprocal, so
  ``max |S_ij - S_ji|`` over the band must stay below 1e-3;
- passivity: the largest singular value of S at every frequency at most 1 (no
  excitation gets back more power than it sent);
- power balance: for each excitation j, the power S says the structure took,
  ``|a_j|^2 (1 - sum_i |S_ij|^2) / 2``, against what the Yee grid's discrete Poynting
  theorem counts in the box around the coil: the tissue's loss (``sum 0.5 sigma |E|^2
  dV`` on the Yee edges, :func:`emjax.analysis.sar.yee_absorbed_power`) plus the flux out
  of it (:func:`emjax.analysis.sar.box_flux`), at 128 MHz, within 1% (the
  ``mri-power-balance`` bookkeeping, validated with current sources);
- files: the ``.s8p`` Touchstone file written through scikit-rf reads back (through
  scikit-rf) equal to the matrix kept in HDF5 (:func:`emjax.analysis.sparams.save_hdf5`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..records import Check, on_gpu

CASE = "mri-coil-smatrix"
FREQUENCIES = np.linspace(108e6, 148e6, 9)
"""S-parameter frequencies in Hz (the pulse's band around 128 MHz)."""


def coil_smatrix(spacing: float | None = None, progress: bool = False) -> dict:
    """Run the batched 8-port coil; returns the S-parameters, the power balance of each
    excitation at 128 MHz and the run's figures."""
    from ..analysis.sar import box_flux, edge_conductivity, yee_absorbed_power
    from ..analysis.sparams import port_waves, s_parameters
    from ..scenarios.mri import LARMOR_3T, _balance_box, mri_coil

    if spacing is None:
        spacing = 4e-3 if on_gpu() else 16e-3
    shape = tuple(max(24, round(n * 4e-3 / spacing)) for n in (312, 328, 325))
    sim = mri_coil(shape=shape, spacing=spacing, drive="pulse", balance_box=True,
                   frequencies=(LARMOR_3T,), port_impedance=50.0, name="mri-coil-smatrix")
    res = sim.run(progress=progress)
    sp = s_parameters(res, FREQUENCIES)
    w = port_waves(res, [LARMOR_3T])
    cols = [w.names.index(e) for e in w.excitations]
    # the power each excitation puts into the structure, by S and by the Poynting box
    from_s = np.array([0.5 * abs(w.a[0, k, j]) ** 2 * (1 - np.sum(np.abs(
        w.b[0, k] / w.a[0, k, j]) ** 2)) for k, j in enumerate(cols)])
    lo, hi = _balance_box(sim.domain, sim.monitors[0].center)
    sigma = edge_conductivity(sim)
    d = sim.domain.spacing3
    box = []
    for k in range(len(cols)):
        md = res["balance"].excitation(k)
        box.append(yee_absorbed_power(md, sigma, sim.domain.lower, d, lo, hi)
                   + box_flux(md, lo, hi, d))
    return {"sim": sim, "results": res, "sparams": sp, "from_s": from_s,
            "from_box": np.array(box), "shape": list(res.metadata["shape"]),
            "steps": int(res.metadata["steps"]), "spacing": spacing,
            "wall_time_s": float(res.metadata["wall_time_s"])}


def mri_coil_smatrix(spacing: float | None = None) -> list[Check]:
    """Records of ``mri-coil-smatrix`` (see the module docstring)."""
    from ..analysis.sparams import load_hdf5, read_touchstone, save_hdf5

    r = coil_smatrix(spacing)
    sp = r["sparams"]
    S = sp.matrix()
    tag = (f"{r['spacing'] * 1e3:.3g} mm cells, grid {'x'.join(map(str, r['shape']))}, "
           f"{r['steps']} steps, 8 excitations in one run ({r['wall_time_s']:.1f} s)")
    recip = float(np.max(np.abs(S - np.swapaxes(S, 1, 2))))
    sv = float(np.max(np.linalg.svd(S, compute_uv=False)))
    balance = np.abs(r["from_s"] - r["from_box"]) / np.abs(r["from_box"])
    worst = float(np.max(balance))
    with tempfile.TemporaryDirectory() as tmp:
        h5 = save_hdf5(sp, Path(tmp) / "coil.h5")
        ts = sp.write_touchstone(Path(tmp) / "coil.s8p")
        kept, back = load_hdf5(h5).matrix(), read_touchstone(ts).S
    files = float(np.max(np.abs(back - kept)) / np.max(np.abs(kept)))
    diag = np.abs(np.diagonal(S, axis1=1, axis2=2))
    return [
        Check(CASE, f"max |S_ij - S_ji| over {len(FREQUENCIES)} frequencies 108-148 MHz, "
              f"{tag}; |S_ii| {diag.min():.4f}-{diag.max():.4f}", recip, 1e-3, "",
              recip <= 1e-3),
        Check(CASE, "largest singular value of S over the band (passivity)", sv, 1.0, "",
              sv <= 1.0),
        Check(CASE, "power into the structure from S, |a_j|^2 (1 - sum_i |S_ij|^2) / 2, vs "
              "the Poynting box (tissue loss + flux out), 128 MHz, worst of 8 excitations; "
              f"from S {r['from_s'].min():.4g}-{r['from_s'].max():.4g} (W x DFT scale)",
              worst, 0.01, "", worst <= 0.01),
        Check(CASE, ".s8p read back through scikit-rf vs the HDF5 matrix (relative)",
              files, 1e-9, "", files <= 1e-9),
    ]


CASES: dict[str, Callable[..., list[Check]]] = {CASE: mri_coil_smatrix}

__all__ = ["CASES", "FREQUENCIES", "coil_smatrix", "mri_coil_smatrix"]
