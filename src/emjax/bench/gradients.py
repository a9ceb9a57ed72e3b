"""Benchmark of gradients (issue 22): what a gradient costs against the forward run.

``emjax bench grad-fdfd``: the ``grad-fdfd`` validation problem (a lossy box scatterer,
eps_r 2 - 0.5j at 1 GHz, in an x-polarised plane wave; a design region of 8 x 8 x 4
cells in front of it, filtered and projected) on 96^3 cells on a GPU (24^3 on a CPU),
the solver's default precision and tolerance (COCG with the fast-diagonalization
preconditioner to 1e-6). Timed after a warm-up call, median of three: the objective
(|E|^2 at a point behind the region: one forward solve) and its value and gradient
with respect to the 256 parameters (the forward solve plus one adjoint solve,
:mod:`emjax.fdfd.adjoint`). Issue 22 asks the gradient for at most 2.2x the forward.
"""

from __future__ import annotations

import statistics
import time
import warnings
from collections.abc import Callable

from ..records import Measurement
from .common import on_gpu


def grad_fdfd(cells: int | None = None) -> list[Measurement]:
    """Forward objective against value-and-gradient, both compiled once."""
    import jax
    import jax.numpy as jnp

    from ..fdfd import adjoint, solver
    from ..model.fdfd import FDFDSolver
    from ..scenarios.design import lossy_box

    cells = cells or (96 if on_gpu() else 24)
    pml = 10 if cells >= 48 else 5
    sim = lossy_box(cells, pml).model_copy(update={"solver": FDFDSolver()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the validation's coarse grid, on purpose
        prep = solver.prepare(sim)
    st = adjoint.from_prepared(prep)
    c = cells // 2
    reg = adjoint.design_region(st, (c - 4, c - 4, c), (c + 4, c + 4, c + 4), 1.0, 2 - 0.5j)

    def objective(rho):
        rho = adjoint.tanh_projection(adjoint.conic_filter(rho, 1.5), 2.0)
        e = adjoint.solve_e(reg.eps(rho, st.eps_r), st) + st.e_inc
        return adjoint.point_intensity(e, (c, c, c + 7))

    rho = jnp.full(reg.shape, 0.5)
    fwd, both = jax.jit(objective), jax.jit(jax.value_and_grad(objective))

    def timed(fn) -> float:
        jax.block_until_ready(fn(rho))  # compile and warm up
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            jax.block_until_ready(fn(rho))
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    t_f, t_g = timed(fwd), timed(both)
    size = f"{cells}^3"
    return [
        Measurement("grad-fdfd", size, "objective (one forward solve)", t_f, "s"),
        Measurement("grad-fdfd", size, "value and gradient, 256 parameters", t_g, "s"),
        Measurement("grad-fdfd", size, "gradient / forward", t_g / t_f, ""),
    ]


CASES: dict[str, Callable[..., list[Measurement]]] = {"grad-fdfd": grad_fdfd}
