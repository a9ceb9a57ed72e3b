"""Differentiable FDFD (emjax.fdfd.adjoint), on a 12^3 grid in complex128.

- The symmetrized separable operator is complex symmetric: x^T T y = y^T T x to 1e-12
  for random complex x, y and a random complex eps_r (what lets the adjoint solve reuse
  the forward COCG).
- jax.grad of |E|^2 at a point, through the filter, projection and a lossy design
  region, against a central finite difference along a random direction: <= 1e-5.
- Bad input: a design region in the PML or outside the grid, parameters of the wrong
  shape, a non-separable preparation: SetupError naming the value.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from emjax.errors import SetupError
from emjax.model import Box, Domain, Medium, Structure
from emjax.model.fdfd import FDFD3D, PML, FDFDSolver

fsolver = pytest.importorskip("emjax.fdfd.solver")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from emjax.fdfd import adjoint, operator  # noqa: E402

LOSSY = Medium(eps_r=2.0, sigma=0.5 * 2 * np.pi * 1e9 * 8.8541878128e-12)  # 2 - 0.5j at 1 GHz


def _sim(**kw):
    return FDFD3D(domain=Domain(size=(0.24, 0.24, 0.24), spacing=0.02), frequency=1e9,
                  structures=[Structure(geometry=Box(center=(0, 0, -0.03),
                                                     size=(0.06, 0.06, 0.04)), medium=LOSSY)],
                  boundary=PML(thickness=3), rcs=False,
                  solver=FDFDSolver(tol=1e-12, max_iter=2000), **kw)


@pytest.fixture(scope="module")
def prep():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coarse grid, thin PML: on purpose
        return fsolver.prepare(_sim())


def _crandn(key, shape):
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, shape) + 1j * jax.random.normal(k2, shape)


def test_operator_is_complex_symmetric(prep):
    st = adjoint.from_prepared(prep)
    shape = (3, *st.shape)
    keys = jax.random.split(jax.random.PRNGKey(3), 3)
    ops = dict(st.ops, kw=-st.k0 ** 2 * (1.5 + _crandn(keys[0], shape)))
    x, y = _crandn(keys[1], shape), _crandn(keys[2], shape)
    mv = jax.jit(operator.matvec_sep_stencil)
    ax, ay = mv(ops, x), mv(ops, y)
    xty, ytx = complex(jnp.sum(x * ay)), complex(jnp.sum(y * ax))
    assert abs(xty - ytx) <= 1e-12 * abs(xty)
    # and not Hermitian: the conjugated form differs (PML, loss)
    xhy, yhx = complex(jnp.sum(jnp.conj(x) * ay)), complex(jnp.sum(jnp.conj(y) * ax))
    assert abs(xhy - np.conj(yhx)) > 1e-3 * abs(xhy)


def test_gradient_matches_finite_difference(prep):
    st = adjoint.from_prepared(prep)
    reg = adjoint.design_region(st, (4, 4, 6), (8, 8, 8), 1.0, 2 - 0.5j)

    def f(rho):
        rho = adjoint.tanh_projection(adjoint.conic_filter(rho, 1.5), 2.0)
        return adjoint.point_intensity(adjoint.solve_e(reg.eps(rho, st.eps_r), st) + st.e_inc,
                                       (6, 6, 9))

    rho0 = 0.5 + 0.2 * jax.random.uniform(jax.random.PRNGKey(0), reg.shape, minval=-1)
    d = jax.random.normal(jax.random.PRNGKey(1), reg.shape)
    dd = float(jnp.sum(jax.jit(jax.grad(f))(rho0) * d))
    fj, h = jax.jit(f), 1e-5
    fd = (float(fj(rho0 + h * d)) - float(fj(rho0 - h * d))) / (2 * h)
    print(f"directional derivative {dd:.12g}, finite difference {fd:.12g}")
    assert abs(dd) > 1e-3 * float(fj(rho0))  # a derivative worth checking
    assert abs(fd - dd) <= 1e-5 * abs(dd)


def test_bad_input(prep):
    st = adjoint.from_prepared(prep)
    with pytest.raises(SetupError, match=r"axis x .*allowed 3 <= lo < hi <= 9"):
        adjoint.design_region(st, (2, 4, 4), (6, 6, 6), 1.0, 2.0)  # in the PML
    with pytest.raises(SetupError, match="axis z"):
        adjoint.design_region(st, (4, 4, 4), (6, 6, 20), 1.0, 2.0)  # beyond the grid
    with pytest.raises(SetupError, match="lo = "):
        adjoint.design_region(st, (4, 4), (6, 6), 1.0, 2.0)
    reg = adjoint.design_region(st, (4, 4, 4), (6, 6, 7), 1.0, 2.0)
    with pytest.raises(SetupError, match=r"shape \(2, 2, 2\).*needs \(2, 2, 3\)"):
        reg.eps(jnp.zeros((2, 2, 2)), st.eps_r)
    with pytest.raises(SetupError, match="eps_r: shape"):
        adjoint.solve_e(st.eps_r[:, :-1], st)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        other = fsolver.prepare(_sim(), storage="arrays")
    with pytest.raises(SetupError, match=r"storage='separable'.*'arrays'"):
        adjoint.from_prepared(other)
