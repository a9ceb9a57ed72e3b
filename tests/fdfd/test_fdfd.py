"""FDFD (seed 000): operator, storage schemes, Krylov solvers, set-up checks, restart.

- The matrix-free product G x = x - A_e(A_h x) against an independent scipy.sparse
  assembly from Kronecker products of 1D difference matrices: relative 1e-13.
- The direct solve (dense LU of the assembled matrix) against COCG and BiCGSTAB run to
  1e-12: relative 1e-8 (iterative refinement with complex64 inner solves left src/ for
  benchmarks/precond_study.py).
- CAS and CIS products agree to 1e-13 (complex128); CIS coefficient memory <= 1/8 CAS.
- The symmetrized operator is complex symmetric: |x^T T y - y^T T x| <= 1e-12 |x^T T y|.
- The separable product (no 3D curl coefficients) and its one-stencil form equal mu0
  times the symmetrized CAS product to 1e-13.
- COCG with complex64 search directions and products (complex128 x, r, scalars)
  matches the direct solve to 1e-5; single-reduction COCG (cocg_sr) to 1e-8.
- Sphere RCS (reduced ``fdfd-sphere-rcs``): 8 mm cells (40^3), E- and H-plane within
  0.75 dB of Mie over 0-180 degrees (0.5 dB is the limit at the seed's 5-3.33 mm).
- Bad input: frequency <= 0 (ValidationError naming it), < 10 cells per wavelength
  (warning; SetupError under strict), a thin PML (warning naming the thickness).
- Non-convergence returns the best iterate with a warning, or ConvergenceError.
- A solve stopped after a checkpoint resumes from the stored iterate and converges to
  the same fields as an uninterrupted solve.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from pydantic import ValidationError

from emjax.errors import CheckpointError, ConvergenceError, SetupError
from emjax.model import Domain, Medium, Sphere, Structure
from emjax.model.fdfd import FDFD3D, PML, FDFDSolver

fsolver = pytest.importorskip("emjax.fdfd.solver")
import jax.numpy as jnp  # noqa: E402

from emjax.fdfd import operator, setup  # noqa: E402


def prepared(sim, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fsolver.prepare(sim, **kw)


def assemble(ce, ch, shape):
    """G = I - A_e A_h M as scipy.sparse, from 1D difference matrices (independent code)."""
    n3 = int(np.prod(shape))
    eye = [sp.identity(n, format="csr") for n in shape]

    def fwd(ax):
        mats = list(eye)
        n = shape[ax]
        mats[ax] = sp.diags([-np.ones(n), np.ones(n - 1)], [0, 1], format="csr")
        return sp.kron(sp.kron(mats[0], mats[1]), mats[2], format="csr")

    f = [fwd(a) for a in range(3)]
    b = [-m.T.tocsr() for m in f]
    # Hx = c0 dEy/dz + c1 dEz/dy, ...; Ex = c0 dHz/dy + c1 dHy/dz, ...
    h_terms = (((1, 2), (2, 1)), ((2, 0), (0, 2)), ((0, 1), (1, 0)))
    e_terms = (((2, 1), (1, 2)), ((0, 2), (2, 0)), ((1, 0), (0, 1)))
    idx = np.indices(shape)
    masks = []
    for a in range(3):
        m = np.ones(shape, bool)
        for c in range(3):
            if c != a:
                m &= idx[c] > 0
        masks.append(m)
    ah = [[None] * 3 for _ in range(3)]
    ae = [[None] * 3 for _ in range(3)]
    for h in range(3):
        for slot in range(2):
            e, ax = h_terms[h][slot]
            ah[h][e] = sp.diags(ch[h, slot].ravel()) @ f[ax]
    for a in range(3):
        for slot in range(2):
            h, ax = e_terms[a][slot]
            ae[a][h] = sp.diags((ce[a, slot] * masks[a]).ravel()) @ b[ax]
    mask = sp.diags(np.concatenate([m.ravel() for m in masks]).astype(float))
    ah, ae = sp.bmat(ah, format="csr"), sp.bmat(ae, format="csr")
    return (sp.identity(3 * n3, format="csr") - ae @ ah @ mask).tocsc()


@pytest.fixture(scope="module")
def case(small_fdfd):
    sim = small_fdfd(spacing=0.032, thickness=2)
    prep = prepared(sim, storage="arrays")
    ce, _, ch = setup.coefficient_arrays(prep.st)
    g = assemble(ce, ch, prep.st.grid.shape)
    x_direct = np.linalg.solve(g.toarray(), prep.b_seed.ravel())  # 3000 unknowns: dense LU
    return sim, prep, g, x_direct


def kops(prep):
    return {k: v for k, v in prep.ops.items() if k not in ("symmetrize", "scale")}


def test_kernels_import_without_pydantic():
    code = ("import sys, emjax.fdfd.operator, emjax.fdfd.krylov;"
            "assert 'pydantic' not in sys.modules, 'pydantic loaded'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_product_matches_sparse_assembly(case):
    _, prep, g, _ = case
    rng = np.random.default_rng(1)
    x = rng.standard_normal(g.shape[0]) + 1j * rng.standard_normal(g.shape[0])
    want = g @ x
    got = np.asarray(operator.apply_g(kops(prep), jnp.asarray(x.reshape(prep.b.shape))))
    err = np.linalg.norm(got.ravel() - want) / np.linalg.norm(want)
    print(f"matrix-free vs sparse product: {err:.2e} (limit 1e-13)")
    assert err <= 1e-13


@pytest.mark.parametrize("method", ["cocg", "cocg_sr", "bicgstab"])
def test_krylov_matches_direct_solve(case, method):
    _, prep, _, x_direct = case
    sym = method != "bicgstab"
    p = prep if sym else prepared(case[0], storage="arrays", symmetrize=False)
    e, res = fsolver.solve(p, method=method, tol=1e-12, max_iter=4000)
    err = np.linalg.norm(np.asarray(e).ravel() - x_direct) / np.linalg.norm(x_direct)
    print(f"{method}: {res.iterations} iterations, vs direct {err:.2e} (limit 1e-8)")
    assert res.flag == 1
    assert err <= 1e-8
    # the residual history ends at the tolerance and has one entry per iteration
    assert res.history.size == res.iterations and res.history[-1] <= 1e-12


def test_jacobi_same_solution(case):
    sim, _, _, x_direct = case
    p = prepared(sim, storage="arrays", preconditioner="jacobi")
    e, _ = fsolver.solve(p, tol=1e-12, max_iter=4000)
    err = np.linalg.norm(np.asarray(e).ravel() - x_direct) / np.linalg.norm(x_direct)
    assert err <= 1e-8, err


def test_symmetrized_operator_is_symmetric(case):
    _, prep, _, _ = case
    rng = np.random.default_rng(2)
    shape = prep.b.shape
    x = jnp.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
    y = jnp.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
    ops = kops(prep)
    a = complex(jnp.sum(x * operator.apply_sym(ops, y)))
    b = complex(jnp.sum(y * operator.apply_sym(ops, x)))
    assert abs(a - b) <= 1e-12 * abs(a), (a, b)


def test_cas_and_cis_agree(case):
    sim, cas, _, _ = case
    cis = prepared(sim, storage="indices")
    rng = np.random.default_rng(3)
    shape = cas.b.shape
    x = jnp.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
    for f in (operator.apply_g, operator.apply_sym):
        ya, yi = f(kops(cas), x), f(kops(cis), x)
        err = float(jnp.linalg.norm(ya - yi) / jnp.linalg.norm(ya))
        print(f"{f.__name__}: CAS vs CIS {err:.1e}; memory CAS {cas.coeff_bytes} B, "
              f"CIS {cis.coeff_bytes} B")
        assert err <= 1e-13
    assert cis.coeff_bytes <= cas.coeff_bytes / 8


def test_separable_matches_cas(case):
    from emjax.constants import mu0

    sim, cas, _, x_direct = case
    sep = prepared(sim, storage="separable")
    rng = np.random.default_rng(4)
    x = jnp.asarray(rng.standard_normal(cas.b.shape) + 1j * rng.standard_normal(cas.b.shape))
    ya = mu0 * operator.apply_sym(kops(cas), x)
    ys = operator.apply_sep(kops(sep), x)
    err = float(jnp.linalg.norm(ya - ys) / jnp.linalg.norm(ya))
    assert err <= 1e-13, err
    # the one-stencil form of the same product (H never formed as an array)
    yt = operator.apply_sep_stencil(kops(sep), x)
    err = float(jnp.linalg.norm(ya - yt) / jnp.linalg.norm(ya))
    assert err <= 1e-13, err
    e, _ = fsolver.solve(sep, tol=1e-12, max_iter=4000)
    err = np.linalg.norm(np.asarray(e).ravel() - x_direct) / np.linalg.norm(x_direct)
    assert err <= 1e-8, err


def test_mixed_precision_direction(case):
    """complex64 coefficients, p and A p with complex128 x, r and scalars: the recursive
    residual reaches 1e-8 and the solution matches the direct solve to 1e-5 (the
    complex64 product's rounding, ~1e-7, bounds the attainable accuracy)."""
    from emjax.fdfd import krylov

    sim, _, _, x_direct = case
    hi = prepared(sim, storage="separable")
    lo = prepared(sim, storage="separable", precision="complex64")
    res = krylov.solve(operator.matvec_sep_stencil, kops(lo), hi.b, method="cocg", tol=1e-8,
                       max_iter=4000, chunk=4000, dir_dtype=jnp.complex64)
    assert res.flag == krylov.CONVERGED and res.x.dtype == jnp.complex128
    e = res.x / operator._sep_factors(kops(hi), hi.b.shape[1:])[1]
    err = np.linalg.norm(np.asarray(e).ravel() - x_direct) / np.linalg.norm(x_direct)
    print(f"mixed COCG: {res.iterations} iterations, vs direct {err:.1e} (limit 1e-5)")
    assert err <= 1e-5, err


def test_sphere_rcs_against_mie_reduced():
    from emjax.validation.fdfd import sphere_rcs

    recs = sphere_rcs((0.008,), limit=0.75, thickness=8, tol=1e-4)
    for r in recs:
        print(r)
        assert r["pass"], r


def test_bad_frequency():
    for f in (0.0, -1e9):
        with pytest.raises(ValidationError, match="frequency"):
            FDFD3D(
                domain=Domain(size=(0.1, 0.1, 0.1), spacing=0.005), frequency=f)
    # frequencies the grid cannot represent, refused before their arithmetic overflows
    # (fuzz: 1e-300 and 5e-324 Hz overflowed the media's eps, 1e300 Hz k0^2)
    dom = Domain(size=(0.2, 0.2, 0.2), spacing=0.005)  # 1 to 1e9 cells: 60 Hz - 60 GHz
    for f in (5e-324, 1e-300, 59.0, 6.1e10, 1e300):
        with pytest.raises(ValidationError, match=r"cells of 0\.005 m in a free-space"):
            FDFD3D(domain=dom, frequency=f)
    for f in (61.0, 5.9e10):
        assert FDFD3D(domain=dom, frequency=f).frequency == f
    with pytest.raises(ValidationError, match=r"frequencies\[1\] = 1e\+300 Hz"):
        FDFD3D(domain=dom, frequencies=[1e9, 1e300])


def test_resolution_warning_and_strict():
    sim = FDFD3D(domain=Domain(size=(0.8, 0.8, 0.8), spacing=0.032), frequency=1e9,
                 structures=[Structure(geometry=Sphere(radius=0.072), medium=Medium(eps_r=4))])
    with pytest.warns(UserWarning, match="cells per wavelength"):
        setup.check_resolution(sim)
    strict = sim.model_copy(update={"strict": True})
    with pytest.raises(SetupError, match="cells per wavelength"):
        setup.check_resolution(strict)


def test_thin_pml_warning():
    sim = FDFD3D(domain=Domain(size=(0.2, 0.2, 0.2), spacing=0.005), frequency=1e9,
                 boundary=PML(thickness=3))
    with pytest.warns(UserWarning, match="thickness = 3 cells"):
        setup.check_resolution(sim)


def test_structure_in_pml_rejected():
    with pytest.raises(ValidationError, match="into the PML"):
        FDFD3D(domain=Domain(size=(0.2, 0.2, 0.2), spacing=0.005), frequency=1e9,
               structures=[Structure(geometry=Sphere(radius=0.09), medium=Medium(eps_r=2))])


def test_nonconvergence_best_iterate_and_error(small_fdfd, without_compilation_cache):
    sim = small_fdfd(solver=FDFDSolver(tol=1e-12, max_iter=20, progress_every=5))
    with pytest.warns(UserWarning, match="did not converge"):
        res = fsolver.run(sim)
    assert not res.metadata["converged"]
    assert res.metadata["compile_cache"] == "off"  # a run without the persistent cache
    hist = np.array(res.metadata["residual_history"])
    assert res.metadata["relative_residual"] <= hist[4::5].min() + 1e-15
    strict = sim.model_copy(update={"solver": sim.solver.model_copy(
        update={"raise_on_failure": True})})
    with pytest.raises(ConvergenceError, match="max_iter"):
        fsolver.run(strict)


@pytest.mark.parametrize("pre", ["auto", "none"])
def test_checkpoint_resume(tmp_path, pre, small_fdfd):
    """A run stopped half-way and resumed from its checkpoint reaches the uninterrupted
    solution (default fastdiag-preconditioned and plain COCG)."""
    sim = small_fdfd(solver=FDFDSolver(tol=1e-10, max_iter=4000, progress_every=2,
                                  preconditioner=pre))
    full = fsolver.run(sim)
    half = 2 * max(1, full.metadata["iterations"] // 4)  # even: a whole number of chunks
    ck = tmp_path / "ck.h5"
    stopped = sim.model_copy(update={"solver": sim.solver.model_copy(
        update={"max_iter": half})})
    with pytest.warns(UserWarning, match="did not converge"):
        fsolver.run(stopped, checkpoint_every=2, checkpoint_path=ck)
    assert ck.is_file() and not ck.with_name(ck.name + ".tmp").exists()
    again = fsolver.run(sim, resume=ck)
    assert again.metadata["converged"]
    assert again.metadata["iterations"] > half
    a = full["scattered"].data["Ex"]
    b = again["scattered"].data["Ex"]
    err = np.linalg.norm(a - b) / np.linalg.norm(a)
    assert err <= 1e-8, err
    other = small_fdfd(spacing=0.026)
    with pytest.raises(CheckpointError, match="another scenario"):
        fsolver.run(other, resume=ck)
