"""The fractioned local matrices formed with jax.numpy (on an accelerator, the set-up's
device path of ``dga/mass.py``: the local program compiled ahead, node sums by
scatter-add, Gauss-Jordan inverses) against NumPy (the CPU path): the same operators to
float64 rounding, on a lossy box with two node buckets and on the cylinder's ring mesh."""

from __future__ import annotations

import numpy as np
import pytest

from emjax.constants import eps0, mu0
from emjax.dga import local, mass, structured
from emjax.dga.complex import build


def _ops(cx, sig, device: bool, monkeypatch):
    monkeypatch.setattr(mass, "_on_device", lambda: device)
    monkeypatch.setattr(mass, "DEVICE_INVERSE_FROM", 0)  # any restricted_inverse too
    monkeypatch.setattr(mass, "DEVICE_LOCAL_FROM", 0)  # and the small mesh's matrices
    n = cx.num_tets
    eps = eps0 * (1 + np.arange(n) % 3)  # three media, so the tets differ
    # the device path's local program as the set-up runs it: compiled ahead on a thread
    ahead = local.compile_ahead(cx.num_nodes, n, lossy=True) if device else None
    return mass.assemble(cx, eps, np.full(n, mu0), sig, min_count=32, ahead=ahead, later=True)


@pytest.mark.parametrize("mesh", ["box", "cylinder"])
def test_device_local_matrices_equal_numpy(mesh, monkeypatch):
    from emjax.driver.precision import require_x64

    require_x64()
    if mesh == "box":
        cx = build(structured.box((0.3, 0.2, 0.25), shape=(5, 3, 2)))
    else:
        from emjax.dga.generate import build_mesh
        from emjax.scenarios import load_builtin

        cx = build(build_mesh(load_builtin("cylinder-cavity").mesh))
    sig = np.where(np.arange(cx.num_tets) % 4 == 0, 0.02, 0.0)
    ref = _ops(cx, sig, False, monkeypatch)
    dev = mass.on_host(_ops(cx, sig, True, monkeypatch))
    for name in ("Ms1", "Mmu10"):
        a, b = getattr(ref, name), getattr(dev, name)
        assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(a)), name
    assert len(ref.buckets) == len(dev.buckets) >= 1
    for br, bd in zip(ref.buckets, dev.buckets, strict=True):
        for name in ("Minv_s", "Meps", "Msig"):
            a, b = getattr(br, name), getattr(bd, name)
            assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(a)), name
        assert np.array_equal(br.free, bd.free) and np.array_equal(br.edge, bd.edge)


def test_power_iteration_reads_the_device_matrices_as_their_copies(monkeypatch):
    """Where the set-up formed the matrices on the device, the operators hold those
    arrays while their copies go to the host on a thread, and the power iteration reads
    them there: the same numbers as the host's copies (:func:`mass.on_host`), so rho is
    the same either way (to the rounding of the Rayleigh quotient's sums, a program
    there and NumPy here)."""
    import jax

    from emjax.dga.arrays import operator_arrays
    from emjax.dga.layout import make_layout
    from emjax.dga.stability import spectral_radius
    from emjax.driver.precision import require_x64

    require_x64()
    cx = build(structured.box((0.3, 0.2, 0.25), shape=(5, 3, 2)))
    ops = _ops(cx, np.where(np.arange(cx.num_tets) % 4 == 0, 0.02, 0.0), True, monkeypatch)
    assert ops.host_later is not None and len(ops.buckets) >= 2
    assert isinstance(ops.Ms1, jax.Array) and isinstance(ops.buckets[0].Minv_p, jax.Array)
    host = mass.on_host(ops)
    assert host.host_later is None and mass.on_host(host) is host
    for a, b in zip(ops.buckets, host.buckets, strict=True):
        for name in ("Minv_p", "Meps_p", "Msig"):
            x, y = getattr(a, name), getattr(b, name)
            assert isinstance(y, np.ndarray) and np.array_equal(np.asarray(x), y), name
    assert np.array_equal(np.asarray(ops.Ms1), host.Ms1)
    lay = make_layout(ops, "xla")
    # the shapes the programs compile ahead for are the arrays' own, on both paths
    for o in (ops, host):  # (shapes without the edge tables: their thread may run on)
        shapes = jax.tree.map(lambda a: (a.shape, np.dtype(a.dtype)),
                              operator_arrays(o, lay, shapes=True))
        assert shapes == jax.tree.map(lambda a: (a.shape, np.dtype(a.dtype)),
                                      operator_arrays(o, lay))
    rho = spectral_radius(ops, lay, iters=40)  # the device's quotient program; NumPy's:
    assert rho > 0 and rho == pytest.approx(spectral_radius(host, lay, iters=40), rel=1e-13)


@pytest.mark.parametrize("kernels", ["xla", "pallas"])
def test_packed_energy_equals_dense_quadratic_form(kernels):
    """The energy monitor's packed mass matrices (10 of 16 entries per tet, w (w + 1) / 2
    of w^2 per node) give the dense forms u M^eps u + f_old M^mu f_new and the column-sum
    divergences, float64, to rounding; buckets of even and odd width, both u orders."""
    import jax
    import jax.numpy as jnp

    from emjax.dga import step
    from emjax.dga.arrays import energy_arrays
    from emjax.dga.generate import build_mesh
    from emjax.dga.layout import make_layout
    from emjax.driver.precision import require_x64
    from emjax.scenarios import load_builtin

    require_x64()
    mesh = load_builtin("cylinder-cavity").mesh.model_copy(update={"edge_length": 0.3})
    cx = build(build_mesh(mesh))  # the ring mesh: nodes of odd and even degree
    n = cx.num_tets
    ops = mass.assemble(cx, eps0 * (1 + np.arange(n) % 3), np.full(n, mu0), np.zeros(n),
                        min_count=8, min_share=0.01)
    widths = {b.width % 2 for b in ops.buckets}
    assert widths == {0, 1}, [b.width for b in ops.buckets]  # both packings exercised
    lay = make_layout(ops, kernels)
    rng = np.random.default_rng(1)
    uc = rng.standard_normal(ops.nu)
    fo, fn = rng.standard_normal((2, 4, n))
    blocks = [uc[b.offset:b.offset + b.width * b.count].reshape(b.width, b.count)
              for b in ops.buckets]
    dense = 0.5 * (np.einsum("kmt,kt,mt->", ops.Mmu, fo, fn)
                   + sum(np.einsum("ijv,iv,jv->", b.Meps, ub, ub)
                         for b, ub in zip(ops.buckets, blocks, strict=True)))
    E = energy_arrays(ops, np.float64)
    assert E["Mmu"].size == 10 * n
    assert sum(M.size for M in E["Meps"]) == sum(
        b.width * (b.width + 1) // 2 * b.count for b in ops.buckets)
    u, f_old, f_new = (jnp.asarray(x) for x in (lay.u_from_canonical(uc),
                                               lay.f_from_canonical(fo), lay.f_from_canonical(fn)))
    got = float(jax.jit(step.energy, static_argnums=4)(u, f_old, f_new, E, lay.spec))
    scale = 0.5 * (np.einsum("kmt,kt,mt->", np.abs(ops.Mmu), np.abs(fo), np.abs(fn))
                   + sum(np.einsum("ijv,iv,jv->", np.abs(b.Meps), np.abs(ub), np.abs(ub))
                         for b, ub in zip(ops.buckets, blocks, strict=True)))
    assert abs(got - dense) <= 1e-14 * scale, (got, dense)
    D = {**E, "interior": [np.ones(b.count, bool) for b in ops.buckets]}
    q, b = jax.jit(lambda u, f: step.divergence(u, f, D, lay.spec))(u, f_new)  # D: constants
    q_ref = np.concatenate([np.einsum("ijv,jv->v", bk.Meps, ub)
                            for bk, ub in zip(ops.buckets, blocks, strict=True)])
    b_ref = np.einsum("kmt,mt->t", ops.Mmu, fn)
    tol = 1e-14 * max(np.abs(ops.Mmu).max(), max(np.abs(bk.Meps).max() for bk in ops.buckets))
    assert np.max(np.abs(np.asarray(q) - q_ref)) <= 8 * tol * np.abs(uc).max()
    assert np.max(np.abs(np.asarray(b) - b_ref)) <= 8 * tol * np.abs(fn).max()


def test_device_set_up_equals_numpy(small_dgatd, monkeypatch):
    """The whole set-up on the device path (the local program compiled ahead on a
    thread, node sums and inverses on the device, edge tables and Pallas' layout on
    threads) against the NumPy path: the same operators to rounding and the same time
    step, a lossy region included."""
    import emjax as em
    from emjax.dga.setup import prepare

    sim = small_dgatd(kernels="pallas",
                      regions=[em.Region(tag=0, medium=em.Medium(eps_r=2.0, sigma=0.05))])
    ref = prepare(sim)
    monkeypatch.setattr(mass, "_on_device", lambda: True)
    monkeypatch.setattr(mass, "DEVICE_LOCAL_FROM", 0)
    dev = prepare(sim)
    assert dev.layout.spec == ref.layout.spec and dev.steps == ref.steps
    assert dev.rho == pytest.approx(ref.rho, rel=1e-12)
    for name in ("Ms1", "Mmu10"):
        a, b = getattr(ref.ops, name), getattr(dev.ops, name)
        assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(a)), name
    for br, bd in zip(ref.ops.buckets, dev.ops.buckets, strict=True):
        for name in ("Minv_s", "Meps", "Msig"):
            a, b = getattr(br, name), getattr(bd, name)
            assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(a)), name
    for name in ("u_perm", "he_pos", "hs", "he"):
        assert np.array_equal(getattr(ref.layout, name), getattr(dev.layout, name)), name
    # the lossy buckets' Crank-Nicolson factors at dt: the device's SPD inverse
    monkeypatch.setattr(mass, "DEVICE_INVERSE_FROM", 0)
    b = dev.ops.buckets[0]
    Pm, Q = mass.lossy_factors(b, dev.dt)
    monkeypatch.setattr(mass, "_on_device", lambda: False)
    Pm_ref, Q_ref = mass.lossy_factors(b, dev.dt)
    for a, r in ((Pm, Pm_ref), (Q, Q_ref)):
        assert np.max(np.abs(a - r)) <= 1e-12 * np.max(np.abs(r))
