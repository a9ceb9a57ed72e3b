"""FDFD preconditioned COCG (emjax.fdfd.precond), seed 000's sphere on a coarse grid.

- The fast-diagonalization preconditioner is the exact inverse of the symmetrized
  operator of a homogeneous box with the same PML: M (A x) = x to 1e-10 when every
  permittivity is replaced by shift / k0^2; M is complex symmetric to 1e-12.
- Preconditioned COCG on the sphere (eps_r = 4, lossy) converges to the same solution
  as plain COCG in at most a fifth of the iterations: both run to 1e-11, relative
  difference <= 1e-8.
- Bad input (zero shift, a one-cell axis; fastdiag without separable storage, COCG or
  complex128) raises ValueError naming the field.
"""

from __future__ import annotations

import warnings

import pytest

from emjax.model import Domain, Medium, Sphere, Structure
from emjax.model.fdfd import FDFD3D, PML, FDFDSolver

fsolver = pytest.importorskip("emjax.fdfd.solver")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from emjax.constants import c0  # noqa: E402
from emjax.fdfd import operator, precond  # noqa: E402

MV = operator.matvec_sep_stencil


def _sphere(size):
    """The coarse sphere of the module docstring in a box of ``size`` (m), unpreconditioned."""
    sim = FDFD3D(
        domain=Domain(size=size, spacing=0.02), frequency=1e9,
        structures=[Structure(geometry=Sphere(radius=0.072),
                              medium=Medium(eps_r=4.0, sigma=0.05))],
        boundary=PML(thickness=4), rcs=False, solver=FDFDSolver(tol=1e-11, max_iter=4000))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fsolver.prepare(sim, storage="separable", preconditioner="none")


@pytest.fixture(scope="module")
def prep():
    return _sphere((0.32, 0.32, 0.32))


def _pops(prep, ops, shift, kw_wall, per_x=None):
    st = prep.st
    return precond.fast_diag(st.grid.shape, st.grid.spacing, shift, kw_wall,
                             s_int=st.s_int, s_half=st.s_half,
                             r=operator._sep_factors(ops, st.grid.shape)[1], per_x=per_x)


@pytest.fixture(scope="module")
def oblong():
    """The sphere in a box of three different sides (the y matrices per x are (3, nx,
    ny, ny): a cube would hide a swapped axis)."""
    return _sphere((0.40, 0.32, 0.36))


@pytest.mark.parametrize("per_x", [False, True])
def test_exact_inverse_of_homogeneous_box(oblong, per_x):
    """M (A x) = x for the empty box, M complex symmetric, with the y transform's
    matrices shared (the CPU's default) or stored per x (the GPU's)."""
    prep = oblong
    ops = dict(fsolver._kernel_ops(prep.ops))
    k0 = prep.st.omega / c0
    shift = k0 ** 2 * (1 - 0.5j)
    ops["kt"] = jnp.asarray([-shift])  # every sample: -k0^2 eps_r -> -shift
    ops["ki"] = jnp.zeros_like(ops["ki"])
    pops = _pops(prep, ops, shift, -shift, per_x)
    assert pops["fwd"][1].ndim == (4 if per_x else 3)
    key = jax.random.split(jax.random.PRNGKey(0), 4)
    shape = (3, *prep.st.grid.shape)
    x = jax.random.normal(key[0], shape) + 1j * jax.random.normal(key[1], shape)
    u = jax.random.normal(key[2], shape) + 1j * jax.random.normal(key[3], shape)
    z = precond.apply_fast_diag(pops, MV(ops, x))
    assert float(jnp.linalg.norm(z - x) / jnp.linalg.norm(x)) <= 1e-10
    a = complex(jnp.sum(u * precond.apply_fast_diag(pops, x)))
    b = complex(jnp.sum(x * precond.apply_fast_diag(pops, u)))
    assert abs(a - b) <= 1e-12 * abs(a)


def test_preconditioned_cocg_matches_plain(prep):
    """The solver path (preconditioner='fastdiag') reaches the plain COCG solution in a
    small fraction of the iterations (the sphere is the only thing M leaves out)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pre = fsolver.prepare(prep.sim)  # the defaults: separable storage, fastdiag
    assert (pre.storage, pre.preconditioner) == ("separable", "fastdiag")
    assert "pc" in pre.ops
    e_pc, r_pc = fsolver.solve(pre, tol=1e-11, max_iter=4000)
    e, r = fsolver.solve(prep, tol=1e-11, max_iter=4000)
    assert r.flag == r_pc.flag == 1
    print(f"COCG to 1e-11: {r.iterations} iterations plain, {r_pc.iterations} with fastdiag")
    assert r_pc.iterations * 5 <= r.iterations
    err = float(jnp.linalg.norm(e_pc - e) / jnp.linalg.norm(e))
    assert err <= 1e-8, err


def test_fastdiag_needs_separable_cocg_complex128():
    base = dict(domain=Domain(size=(0.32, 0.32, 0.32), spacing=0.02), frequency=1e9,
                boundary=PML(thickness=4), rcs=False)
    with pytest.raises(ValueError, match="fastdiag"):
        FDFD3D(**base, storage="indices", solver=FDFDSolver(preconditioner="fastdiag"))
    with pytest.raises(ValueError, match="fastdiag"):
        FDFD3D(**base, storage="separable", precision="complex64",
               solver=FDFDSolver(preconditioner="fastdiag"))
    with pytest.raises(ValueError, match="fastdiag"):
        FDFDSolver(method="bicgstab", symmetrize=False, preconditioner="fastdiag")


def test_bad_input():
    with pytest.raises(ValueError, match="shift"):
        precond.fast_diag((4, 4, 4), (0.01,) * 3, 0.0, -1.0)
    with pytest.raises(ValueError, match="shape"):
        precond.fast_diag((1, 4, 4), (0.01,) * 3, 1.0, -1.0)


def test_auto_resolves_to_what_applies():
    """storage/preconditioner "auto": separable + fastdiag for non-magnetic media with
    COCG in complex128; CIS and no preconditioner where a medium is magnetic; none in
    complex64 or with BiCGSTAB; an explicit separable storage with a magnetic medium is
    refused by the model."""
    base = dict(domain=Domain(size=(0.1, 0.1, 0.1), spacing=0.01), frequency=1e9,
                boundary=PML(thickness=2), rcs=False)
    ball = Structure(geometry=Sphere(radius=0.02), medium=Medium(eps_r=3.0))
    mag = Structure(geometry=Sphere(radius=0.02), medium=Medium(eps_r=3.0, mu_r=2.0))
    sim = FDFD3D(**base, structures=[ball])
    assert (sim.resolved_storage, sim.resolved_preconditioner()) == ("separable", "fastdiag")
    assert sim.resolved_preconditioner(precision="complex64") == "none"
    assert sim.resolved_preconditioner(storage="indices") == "none"
    sim = FDFD3D(**base, structures=[mag])
    assert (sim.resolved_storage, sim.resolved_preconditioner()) == ("indices", "none")
    sim = FDFD3D(**base, structures=[ball], solver=FDFDSolver(method="bicgstab",
                                                              symmetrize=False))
    assert sim.resolved_preconditioner() == "none"
    with pytest.raises(ValueError, match="storage = 'separable' needs mu_r = 1"):
        FDFD3D(**base, structures=[mag], storage="separable")
    with pytest.raises(ValueError, match="fastdiag"):
        FDFD3D(**base, structures=[mag], solver=FDFDSolver(preconditioner="fastdiag"))
