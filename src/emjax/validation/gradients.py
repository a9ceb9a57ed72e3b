"""Gradient validation: ``jax.grad`` through FDFD against central finite differences.

``grad-fdfd``: a lossy box scatterer (eps_r = 2 - 0.5j at 1 GHz, 8 x 8 x 4 cm) in an
x-polarised plane wave along +z, 20^3 cells of 2 cm, a 5-cell PML, complex128. On top
of it a design region of 8 x 8 x 4 cells (256 parameters) whose eps_r runs from 1 to
2 - 0.5j with rho, through a conic filter (radius 1.5 cells) and a tanh projection
(beta = 2). Three objectives: |E|^2 of the total field at a point 3 cells past the
region (:func:`~emjax.fdfd.adjoint.point_intensity`), the power through the z plane 3
cells past it over the interior (:func:`~emjax.fdfd.adjoint.flux_z`), and the
monostatic RCS (:func:`~emjax.fdfd.adjoint.rcs`: the scattered fields on a Huygens box
half a cell clear of the PML, around the region, through :mod:`emjax.analysis.nf2ff`
on JAX arrays). Their gradients
(one forward and one adjoint COCG solve each, :mod:`emjax.fdfd.adjoint`) along a random
direction, against central differences at steps 1e-3 .. 1e-6; every solve to a
relative residual of 1e-12. Metric: the smallest relative difference over the steps
(the sweep shows truncation error falling as h^2 until the solve's rounding takes over);
limit 1e-5 (issue 22). Also the forward solve's agreement with the solver's own
(:func:`emjax.fdfd.solver.solve`) and its residual. Measured (CPU, 20^3, about 16 s
with compilation): point intensity 6.8e-10 (h = 1e-6), flux 9.3e-10 (h = 1e-5); at h =
1e-3 both 1.1-1.3e-6 and at 1e-4 1.1-1.2e-8 (the h^2 truncation); forward vs the solver
3.5e-16, residual 3.3e-13; monostatic RCS 5.5e-11 (h = 1e-5; 4.6e-7 at h = 1e-3), and the
JAX RCS of the unmodified scatterer equals the solver's NumPy bistatic RCS (same box).
The flux, 3.74e-5 W, is close to the incident 1/(2 eta0) W/m^2
over the 16 x 16 cm window (3.4e-5 W), as it should be behind a small scatterer.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..records import Check
from ..scenarios.design import lossy_box

STEPS = (1e-3, 1e-4, 1e-5, 1e-6)


def grad_fdfd(cells: int = 20, pml: int = 5, limit: float = 1e-5) -> list[Check]:
    """Directional derivatives of three objectives vs central differences (see module)."""
    import jax
    import jax.numpy as jnp

    from ..fdfd import adjoint, solver

    case = "grad-fdfd"
    sim = lossy_box(cells, pml)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a coarse grid and a thin PML, on purpose
        prep = solver.prepare(sim)  # complex128 (switches x64 on), separable, fastdiag
    st = adjoint.from_prepared(prep)
    c = cells // 2
    reg = adjoint.design_region(st, (c - 4, c - 4, c), (c + 4, c + 4, c + 4), 1.0, 2 - 0.5j)
    probe = c + 4 + 3
    window = ((pml + 1, cells - pml - 1),) * 2
    # the Huygens box half a cell inside the PML on every face: around the design region
    lower, d = np.asarray(prep.st.grid.lower), np.asarray(st.spacing)
    box = adjoint.huygens(prep, lower + (pml + 0.5) * d, lower + (cells - pml - 0.5) * d)

    def objectives(rho):
        rho = adjoint.tanh_projection(adjoint.conic_filter(rho, 1.5), 2.0)
        es = adjoint.solve_e(reg.eps(rho, st.eps_r), st)
        hs = adjoint.magnetic_field(es, st)
        e, h = es + st.e_inc, hs + st.h_inc
        return jnp.stack([adjoint.point_intensity(e, (c, c, probe)),
                          adjoint.flux_z(e, h, probe, st.spacing, window),
                          adjoint.rcs(es, hs, box, np.pi, 0.0)])  # monostatic

    rho0 = 0.5 + 0.2 * jax.random.uniform(jax.random.PRNGKey(0), reg.shape, minval=-1)
    d = jax.random.normal(jax.random.PRNGKey(1), reg.shape)
    fwd = jax.jit(objectives)
    t0 = time.perf_counter()
    f0 = np.asarray(fwd(rho0))
    t_fwd = time.perf_counter() - t0
    t0 = time.perf_counter()
    jac = np.asarray(jax.jit(jax.jacrev(objectives))(rho0))  # (3, *reg.shape)
    t_grad = time.perf_counter() - t0
    dd = np.tensordot(jac, np.asarray(d), axes=3)
    fd = {h: (np.asarray(fwd(rho0 + h * d)) - np.asarray(fwd(rho0 - h * d))) / (2 * h)
          for h in STEPS}

    e_ref, _ = solver.solve(prep)
    e = adjoint.solve_e(st.eps_r, st)
    # the RCS objective (JAX) against the solver's bistatic RCS (NumPy), same default box
    h = adjoint.magnetic_field(e, st)
    s_jax = float(adjoint.rcs(e, h, adjoint.huygens(prep), np.pi, 0.0))
    s_np = solver.bistatic_rcs(sim, prep.st, np.asarray(e), np.asarray(h), 2)[1][-1]
    out = [
        Check(case, "forward solve vs emjax.fdfd.solver.solve (relative L2)",
              float(jnp.linalg.norm(e - e_ref) / jnp.linalg.norm(e_ref)), 1e-10, "", True),
        Check(case, "forward relative residual", adjoint.residual(st.eps_r, st, e), 1e-11, "",
              True),
        Check(case, f"monostatic RCS {s_np:.6g} m^2: JAX objective vs the solver's NumPy path",
              abs(s_jax / s_np - 1), 1e-12, "", True),
    ]
    out = [Check(r.case, r.metric, r.value, r.limit, r.unit, r.value <= r.limit) for r in out]
    for k, name in enumerate(("point intensity |E|^2", "flux through z plane",
                              "monostatic RCS")):
        errs = {h: abs(fd[h][k] - dd[k]) / abs(dd[k]) for h in STEPS}
        for h in STEPS:
            out.append(Check(case, f"{name}: FD relative difference at h = {h:g}", errs[h],
                             None, "", True))
        best = min(errs.values())
        out.append(Check(case, f"{name}: directional derivative {dd[k]:.10g} (objective "
                         f"{f0[k]:.6g}), best FD relative error over h", best, limit, "",
                         best <= limit))
    out.append(Check(case, f"objectives {cells}^3: forward (compile included)", t_fwd, None,
                     "s", True))
    out.append(Check(case, f"objectives {cells}^3: the three gradients (compile included)", t_grad,
                     None, "s", True))
    return out


CASES = {"grad-fdfd": grad_fdfd}
