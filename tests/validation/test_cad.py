"""``emjax validate stl-sphere`` on the CPU: the geometry half at the acceptance size
(5 mm cells; the two FDTD runs of its RCS half take minutes of compilation and
stepping on a CPU and run on the GPU). An icosphere STL of seed 000's sphere fills
the same samples as the analytic Sphere within 0.5% and its fill fractions hold the
ball's volume within 1%; with a coarse icosphere (3 subdivisions, volume 0.86% low)
the cell check must fail, so the metric can tell meshes apart."""

from __future__ import annotations

from emjax.validation import CASES
from emjax.validation.cad import stl_sphere


def test_stl_sphere_geometry():
    assert "stl-sphere" in CASES
    recs = stl_sphere(rcs=False)
    for r in recs:
        print(r["metric"], r["value"], r["limit"])
    assert len(recs) == 2 and all(r["pass"] for r in recs)
    coarse = stl_sphere(rcs=False, subdivisions=3)
    print(coarse[0]["metric"], coarse[0]["value"])
    assert not coarse[0]["pass"]
