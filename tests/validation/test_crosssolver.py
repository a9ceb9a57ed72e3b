"""Cross-solver: 3D FDTD (TF/SF plane wave + DFT) against 3D FDFD on seed 000's sphere.

Set-up (coarse ``fdtd-fdfd-sphere``): radius 7.2 cm, eps_r = 4 sphere at 1 GHz, 10 mm
cells in a 40 cm cube with an 8-cell absorber (CPML in FDTD, SC-PML in FDFD), both on
the same Yee grid. FDTD runs a Gaussian plane wave for 12 ns; its DFT at 1 GHz on two
planes in the scattered-field region (forward, normal z, and side, normal x), divided
by the incident spectrum carried to the origin, is the scattered-field phasor. FDFD
solves the scattered-field system with COCG to 1e-3. Metric: relative L2 difference of
E and of H on each plane. Limit 3% (the GPU case at 5-3.33 mm has the same limit);
measured 0.4-0.6% here, and 0.2-0.3% at 8 mm.
"""

from __future__ import annotations

import pytest

pytest.importorskip("emjax.fdfd.solver")


def test_fdtd_and_fdfd_scattered_fields_agree():
    from emjax.validation.fdfd import fdtd_fdfd_sphere

    recs = fdtd_fdfd_sphere((0.010,), size=0.40, thickness=8, tol=1e-3, duration=12e-9)
    errs = [r for r in recs if "rel L2" in r["metric"]]
    assert len(errs) == 4
    for r in recs:
        print(r["metric"], f"{r['value']:.4g}", f"(limit {r['limit']:g})")
        assert r["pass"], r
