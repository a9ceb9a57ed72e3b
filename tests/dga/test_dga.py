"""Fractioned DGATD (seed 004): meshes, operators, leapfrog, scenario, CLI.

Physics asserted: uniform-field energies exact (patch test), flux divergence kept at
rounding level, box-cavity eigenfrequencies against the analytic TE101 with second-
order convergence and eps_r = 2.25, time-domain modes against eigsh of the same
operator after the leapfrog correction (1e-4), the power-iteration step against the
dense largest eigenvalue, dense kernels against the sparse formulation, bitwise
checkpoint resume, bounded energy over a long run.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import emjax as em
from emjax.constants import c0, eps0, mu0
from emjax.dga import structured
from emjax.dga.complex import build
from emjax.dga.mass import assemble
from emjax.dga.mesh import TetMesh
from emjax.errors import SetupError
from emjax.validation import dga as vd

UNIT = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float)


def test_kernel_modules_import_no_pydantic():
    code = ("import sys; import emjax.dga.step, emjax.dga.mass, emjax.dga.complex, "
            "emjax.dga.mesh, emjax.dga.stability, emjax.dga.structured, emjax.dga.layout, "
            "emjax.dga.edges, emjax.dga.arrays, emjax.dga.pallas, emjax.dga.local; "
            "assert 'pydantic' not in sys.modules, 'pydantic loaded'")
    subprocess.run([sys.executable, "-c", code], check=True)
    code = ("import sys; import emjax.model.dga; "
            "assert 'jax' not in sys.modules and 'emjax.dga.layout' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- meshes
def test_orientation_fixed_and_strict():
    m = TetMesh(UNIT, [[0, 2, 1, 3]])
    assert m.flipped == 1 and m.volumes[0] > 0
    with pytest.raises(SetupError, match="inverted"):
        TetMesh(UNIT, [[0, 2, 1, 3]], orient="strict")


def test_degenerate_refused():
    nodes = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float)
    with pytest.raises(SetupError, match="degenerate"):
        TetMesh(nodes, [[0, 1, 2, 3]])


def test_folded_refused():
    # two tets on the same side of their shared face (0, 1, 2)
    nodes = np.vstack([UNIT, [[0.2, 0.2, 0.5]]])
    with pytest.raises(SetupError, match="folded"):
        TetMesh(nodes, [[0, 1, 2, 3], [0, 1, 2, 4]])


def test_non_manifold_refused():
    nodes = np.vstack([UNIT, [[0.3, 0.3, -1]], [[0.2, 0.2, 2]]])
    with pytest.raises(SetupError, match="non-manifold"):  # face shared by three tets
        TetMesh(nodes, [[0, 1, 2, 3], [0, 1, 2, 4], [0, 1, 2, 5]])
    # two tets sharing only an edge: that boundary edge bounds four triangles
    nodes2 = np.vstack([UNIT, [[0, -1, -1], [0.5, -1, -2]]])
    with pytest.raises(SetupError, match="non-manifold boundary"):
        TetMesh(nodes2, [[0, 1, 2, 3], [0, 1, 4, 5]])


def test_topology_checks_without_int64_face_keys():
    """Meshes of 1.7M+ nodes key faces by their rows (nn^3 overflows an int64 key): the
    same refusals as the keyed path, and a sound mesh passes."""
    from emjax.dga import structured
    from emjax.dga.mesh import _check_topology

    def big(nodes):  # the same mesh, nodes padded past 2^62^(1/3) (unused rows)
        out = np.zeros((1_700_000, 3))
        out[:len(nodes)] = nodes
        return out

    folded = np.vstack([UNIT, [[0.2, 0.2, 0.5]]])
    with pytest.raises(SetupError, match="folded"):
        _check_topology(big(folded), np.array([[0, 1, 2, 3], [0, 1, 2, 4]]))
    three = np.vstack([UNIT, [[0.3, 0.3, -1]], [[0.2, 0.2, 2]]])
    with pytest.raises(SetupError, match="shared by 3"):
        _check_topology(big(three), np.array([[0, 1, 2, 3], [0, 1, 2, 4], [0, 1, 2, 5]]))
    edge = np.vstack([UNIT, [[0, -1, -1], [0.5, -1, -2]]])
    with pytest.raises(SetupError, match="non-manifold boundary"):
        _check_topology(big(edge), np.array([[0, 1, 2, 3], [0, 1, 4, 5]]))
    m = structured.box((0.3, 0.2, 0.25), shape=(3, 2, 2))
    _check_topology(big(m.nodes), m.tets)


def test_complex_boundary_without_int64_face_keys():
    """The complex's boundary faces of a mesh of 1.7M+ nodes are keyed by their rows
    (nn^3 overflows an int64 key): the same boundary nodes and edges as the keyed path."""
    from emjax.dga import structured
    from emjax.dga.complex import _boundary

    m = structured.distort(structured.cylinder(1.0, 0.5, rings=4, layers=2, renumber=False))
    tets = np.sort(m.tets, axis=1)
    nn, big = m.num_nodes, 2_200_000  # the same tets on the last nodes of a larger mesh
    shift = big - nn
    nb, bkey = _boundary(tets, nn)
    nb_big, bkey_big = _boundary(tets + shift, big)
    assert np.array_equal(nb_big[shift:], nb) and not nb_big[:shift].any()
    assert 0 < nb.sum() < nn
    assert np.array_equal(np.stack([bkey_big // big, bkey_big % big], 1) - shift,
                          np.stack([bkey // nn, bkey % nn], 1))


@pytest.mark.parametrize("which", ["box", "ring", "shuffled"])
def test_complex_sorts_on_the_device_equal_numpy(which):
    """The set-up's device path sorts the edge and face keys in JAX (a program compiled
    ahead from the tet count): every array of the complex equal to NumPy's, bit for bit,
    on a box, the cylinder's ring mesh and a distorted one numbered at random."""
    from emjax.dga import structured
    from emjax.dga.complex import build, compile_ahead, device_sorts
    from emjax.dga.mesh import TetMesh
    from emjax.driver.precision import require_x64

    require_x64()
    if which == "box":
        m = structured.box((0.3, 0.2, 0.25), shape=(4, 3, 2))
    else:
        m = structured.cylinder(1.0, 0.5, rings=4, layers=2, renumber=False)
    if which == "shuffled":
        m = structured.distort(m)
        perm = np.random.default_rng(5).permutation(m.num_nodes)
        nodes = np.empty_like(m.nodes)
        nodes[perm] = m.nodes
        m = TetMesh(nodes, perm[m.tets][np.random.default_rng(6).permutation(m.num_tets)])
    assert device_sorts(m.num_nodes)
    ref = build(m)
    got = build(m, compile_ahead(m.num_tets), on_device=True)
    for name in ref.__dataclass_fields__:
        a, b = getattr(ref, name), getattr(got, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert 0 < ref.edge_boundary.sum() < ref.num_edges


def test_xla_edge_tables_hold_each_edges_tets_in_order():
    """XLA's edge tables, checked edge by edge against a loop: the bucket of each edge
    (its width the smallest that holds its tets), G's order (bucket by bucket, edges
    ascending within), and in the edge's column its entries' codes 16 t + 8 neg + j in
    entry order, then the padding 7."""
    from emjax.dga import edges as ed

    cx = build(structured.distort(structured.cylinder(1.0, 0.5, rings=4, layers=2,
                                                      renumber=False)))
    gpos, tables = ed._tables(cx, pallas=False)
    width = ed.choose_buckets(cx.tets_per_edge)
    widths = sorted(set(width.tolist()))
    assert [t.shape[0] for t in tables["ebk"]] == widths
    expected_order = [e for w in widths for e in range(cx.num_edges) if width[e] == w]
    assert np.array_equal(np.argsort(gpos), expected_order)
    assert sorted(gpos.tolist()) == list(range(1, cx.num_edges + 1))
    entries: dict[int, list[int]] = {}
    for t in range(cx.num_tets):
        for j in range(6):
            code = 16 * t + 8 * int(cx.orientation[t] < 0) + j
            entries.setdefault(int(cx.tet_edges[t, j]), []).append(code)
    starts = np.cumsum([0] + [int((width == w).sum()) for w in widths])
    for e in range(cx.num_edges):
        k = widths.index(int(width[e]))
        column = tables["ebk"][k][:, gpos[e] - 1 - starts[k]]
        want = entries[e] + [7] * (widths[k] - len(entries[e]))
        assert column.dtype == np.int32 and column.tolist() == want, e


def test_unknown_region_tag_refused():
    sim = em.DGATD(mesh=em.BoxMesh(size=(0.3, 0.2, 0.2), edge_length=0.1),
                   regions=[em.Region(tag=7, medium=em.Medium(eps_r=2))], steps=2)
    with pytest.raises(SetupError, match=r"tags \[7\] do not occur"):
        sim.run(progress=False)


def test_structured_meshes_and_renumbering():
    box = structured.box((1.0, 0.8, 0.6), shape=(5, 4, 3))
    assert box.volumes.sum() == pytest.approx(0.48, rel=1e-13)
    cyl = structured.cylinder(1.0, 0.5, rings=6, layers=3)
    n = 36  # inscribed polygon of 6 * rings sides
    assert cyl.volumes.sum() == pytest.approx(0.5 * n / 2 * math.sin(2 * math.pi / n), 1e-12)
    r = cyl.renumbered()
    assert r.volumes.sum() == pytest.approx(cyl.volumes.sum(), 1e-13)
    bw = lambda m: np.max(m.tets.max(1) - m.tets.min(1))  # noqa: E731
    assert bw(r) < bw(cyl.permuted_random())
    q = box.quality()
    assert q["dihedral_min"] == pytest.approx(45.0) and q["dihedral_max"] == pytest.approx(90.0)
    # edge_length means the mean edge for the structured meshers too
    from emjax.dga.generate import build_mesh
    from emjax.dga.mesh import mean_edge

    for spec in (em.CylinderMesh(radius=1.0, height=0.5, edge_length=0.1),
                 em.BoxMesh(size=(1.0, 0.5, 0.75), edge_length=0.1)):
        m = build_mesh(spec)
        assert abs(mean_edge(m.nodes, m.tets) / 0.1 - 1) < 0.1, spec.type


def test_mesh_file_roundtrip(tmp_path):
    pytest.importorskip("meshio")
    m = structured.box((0.3, 0.2, 0.2), shape=(3, 2, 2))
    m = TetMesh(m.nodes, m.tets, (m.nodes[m.tets].mean(1)[:, 0] > 0.15).astype(int))
    path = tmp_path / "box.vtu"
    m.write(path)
    sim = em.DGATD(mesh=em.MeshFile(path=str(path)), steps=3,
                   regions=[em.Region(tag=1, medium=em.Medium(eps_r=3))])
    from emjax.dga.solver import prepare

    s = prepare(sim)
    assert s.mesh.num_tets == m.num_tets and set(np.unique(s.mesh.regions)) == {0, 1}


def test_gmsh_cylinder_edge_length():
    pytest.importorskip("gmsh")
    from emjax.dga.generate import build_mesh
    from emjax.dga.mesh import mean_edge

    m = build_mesh(em.CylinderMesh(radius=1.0, height=0.5, edge_length=0.3, mesher="gmsh"))
    assert abs(mean_edge(m.nodes, m.tets) / 0.3 - 1) < 0.1
    assert m.volumes.sum() == pytest.approx(math.pi * 0.5, rel=0.05)


@pytest.mark.parametrize("spec, volume", [
    (em.BoxMesh(size=(0.6, 0.4, 0.5), edge_length=0.12, mesher="gmsh"), 0.12),
    (em.SphereMesh(radius=0.5, edge_length=0.15), 4 / 3 * math.pi * 0.125),
])
def test_gmsh_box_and_sphere_calibrated(spec, volume):
    pytest.importorskip("gmsh")
    from emjax.dga.generate import build_mesh
    from emjax.dga.mesh import mean_edge

    m = build_mesh(spec)
    assert abs(mean_edge(m.nodes, m.tets) / spec.edge_length - 1) < 0.1
    assert m.volumes.sum() == pytest.approx(volume, rel=0.05)
    assert m.quality()["radius_ratio_min"] > 0.05  # gmsh's Delaunay: no slivers


# -------------------------------------------------------------- operators
def test_patch_uniform_field_energy_exact():
    for r in vd.patch():
        assert r["pass"], r


def test_divergence_stays_at_rounding():
    for r in vd.divergence(steps=200):
        assert r["pass"], r
        assert r["value"] < 1e-11


def _box_ops(shape, size, eps_r=1.0):
    cx = build(structured.box(size, shape=shape))
    return assemble(cx, np.full(cx.num_tets, eps_r * eps0), np.full(cx.num_tets, mu0))


def test_box_cavity_eigen_second_order_and_dielectric():
    from emjax.dga.stability import eigenfrequencies

    a, b, c, eps_r = 1.0, 0.5, 0.75, 2.25
    f101 = c0 / (2 * math.sqrt(eps_r)) * math.sqrt(1 / a**2 + 1 / c**2)
    errs = []
    for n in (2, 3):
        f = eigenfrequencies(_box_ops((4 * n, 2 * n, 3 * n), (a, b, c), eps_r), [f101], 4)
        errs.append(abs(f[np.argmin(abs(f - f101))] - f101) / f101)
    order = math.log(errs[0] / errs[1]) / math.log(3 / 2)
    print(f"TE101 errors {errs}, order {order:.2f}")
    assert 1.7 <= order <= 2.5
    assert errs[1] < 5e-3


def test_power_iteration_matches_dense_spectrum():
    import scipy.linalg

    from emjax.dga.stability import pencil

    sim = em.DGATD(mesh=em.BoxMesh(size=(0.3, 0.2, 0.25), edge_length=0.1), steps=1,
                   dtype="float64")
    from emjax.dga.solver import prepare

    s = prepare(sim)
    S, M, _ = pencil(s.ops)
    lam = scipy.linalg.eigh(S.toarray(), M.toarray(), eigvals_only=True)
    assert s.rho == pytest.approx(lam.max(), rel=2e-3)
    assert s.dt == pytest.approx(0.9 * 2 / math.sqrt(s.rho), rel=1e-12)


def test_every_kernel_choice_gets_the_same_time_step(monkeypatch):
    """The power iteration runs on the XLA kernels whatever the run's kernels are, so a
    Pallas run and an XLA run of one scenario step with the same dt, bit for bit; and
    the Rayleigh quotient's program (packed matrices) equals the dense forms."""
    from emjax.dga import cache
    from emjax.dga.arrays import kernel_arrays, operator_arrays
    from emjax.dga.layout import make_layout
    from emjax.dga.solver import prepare
    from emjax.dga.stability import _power_iteration, _rayleigh, rayleigh_forms

    monkeypatch.setattr(cache, "cache_dir", lambda: None)
    sim = em.DGATD(mesh=em.BoxMesh(size=(0.3, 0.2, 0.25), edge_length=0.08), steps=1,
                   dtype="float32")
    x, p = (prepare(sim.model_copy(update={"kernels": k})) for k in ("xla", "pallas"))
    assert x.layout.spec.kernels == "xla" and p.layout.spec.kernels == "pallas"
    assert x.rho == p.rho and x.dt == p.dt

    lay = make_layout(x.ops, "xla")
    K1, E = operator_arrays(x.ops, lay)
    v0 = np.random.default_rng(3).standard_normal(x.ops.nu) * lay.free(x.ops)
    v, f = _power_iteration(v0, K1, lay.spec, 5)
    # the packed node matrices made the kernels' own in the program: kernel_arrays' K
    K_ref = kernel_arrays(x.ops, lay, 1.0, np.float64, lossless=True)
    v_ref, f_ref = _power_iteration(v0, K_ref, lay.spec, 5)
    assert np.array_equal(v, v_ref) and np.array_equal(f, f_ref)
    num, den = (float(a) for a in _rayleigh(v, f, E, lay.spec))
    host = rayleigh_forms(np.asarray(v), np.asarray(f), E, lay.spec, np)  # the CPU path's
    assert host == pytest.approx((num, den), rel=1e-13)
    u, fc = lay.u_canonical(np.asarray(v)), lay.f_canonical(np.asarray(f))
    ref_den = sum(np.einsum("iv,ijv,jv->", ub, b.Meps, ub) for b, ub in
                  ((b, u[b.offset:b.offset + b.width * b.count].reshape(b.width, b.count))
                   for b in x.ops.buckets))
    assert num == pytest.approx(np.einsum("kt,kmt,mt->", fc, x.ops.Mmu, fc), rel=1e-12)
    assert den == pytest.approx(ref_den, rel=1e-12) and num / den > 0


def _small_sim(formulation="dense", steps=30, **kw):
    return em.DGATD(
        name="small", mesh=em.CylinderMesh(radius=0.3, height=0.2, edge_length=0.1),
        sources=[em.MeshEdgeSource(position=(0.1, 0.05, 0.1),
                                   waveform=em.GaussianPulse(f0=500e6, fwidth=300e6)),
                 em.MeshEdgeSource(position=(-0.1, 0.05, 0.1), kind="soft", amplitude=0.01,
                                   waveform=em.GaussianPulse(f0=500e6, fwidth=300e6))],
        probes=[em.Probe(name="p", positions=[(-0.12, -0.08, 0.07)])],
        energy=[em.EnergyMonitor(name="W", interval=3)],
        steps=steps, dtype="float64", formulation=formulation, **kw)


def test_dense_equals_sparse_with_lossy_region():
    kw = {"background": em.Medium(sigma=0.002)}
    a = _small_sim("dense", **kw).run(progress=False)
    b = _small_sim("sparse", **kw).run(progress=False)
    for c in ("Ex", "Ez", "Hy"):
        x, y = a["p"].data[c], b["p"].data[c]
        assert np.max(np.abs(x - y)) <= 1e-10 * np.max(np.abs(x)), c
    assert np.max(np.abs(a["p"].data["Ez"])) > 0


def test_pallas_kernels_run_like_xla(tmp_path):
    """The Pallas kernels (here in Pallas' interpreter; u in warp tiles, edge sums from
    the sliced table): probes, energy, sparse formulation and a resumed checkpoint give
    the XLA kernels' results (lossy region, current and soft sources)."""
    from emjax.dga.solver import DGASolver

    kw = {"background": em.Medium(sigma=0.002), "steps": 24}
    ref = DGASolver(_small_sim(kernels="xla", **kw), chunk=12).run(progress=False)
    # one solver, so that the interpreter's kernels compile once (one chunk length)
    sol = DGASolver(_small_sim(kernels="pallas", **kw), chunk=12)
    got = sol.run(progress=False)
    for c in ("Ex", "Ez", "Hy"):
        x, y = ref["p"].data[c], got["p"].data[c]
        assert np.max(np.abs(x - y)) <= 1e-12 * np.max(np.abs(x)), c
    w_ref, w = ref["W"].data["energy"], got["W"].data["energy"]
    assert np.max(np.abs(w - w_ref)) <= 1e-12 * np.max(np.abs(w_ref))
    # the same set-up (layout, dt): the interpreter's power iteration runs once
    sparse = DGASolver(_small_sim("sparse", kernels="pallas", **kw), setup=sol.setup,
                       chunk=12).run(progress=False)
    x, y = ref["p"].data["Hy"], sparse["p"].data["Hy"]
    assert np.max(np.abs(x - y)) <= 1e-10 * np.max(np.abs(x))
    ck = tmp_path / "pallas.h5"
    sol.run(progress=False, checkpoint_every=12, checkpoint_path=ck)  # holds step 12
    again = sol.run(progress=False, resume=ck)
    assert np.array_equal(again["p"].data["Hy"], got["p"].data["Hy"])


def _tiled_box_ops(sigma: bool):
    """A 180-tet box whose nodes fall in two buckets (widths 8 and 14, 36 nodes each: a
    full warp tile and a partial one in each), some dual volumes lossy."""
    cx = build(structured.box((0.3, 0.2, 0.25), shape=(5, 3, 2)))
    sig = np.where(np.arange(cx.num_tets) % 3 == 0, 0.01, 0.0) if sigma else None
    ops = assemble(cx, np.full(cx.num_tets, 2 * eps0), np.full(cx.num_tets, mu0), sig,
                   min_count=32)
    assert len(ops.buckets) == 2, ops.buckets  # the concatenate / chained launches
    assert all(b.count > 32 and b.count % 32 for b in ops.buckets)
    assert ops.lossy == sigma
    return ops


@pytest.mark.parametrize("dtype, steps, lossy, tol",
                         [(np.float64, 30, True, 1e-12), (np.float32, 5, False, 1e-5)])
def test_kernels_agree_with_sparse_reference(dtype, steps, lossy, tol):
    """The XLA kernels, the Pallas kernels (interpreter) and the seed's sparse "SpMV"
    matrices advance the same fields with a current source to rounding, from the same
    canonical random state: float64 with lossy dual volumes over 30 steps to 1e-12,
    float32 lossless over 5 steps to 1e-5."""
    import jax
    import jax.numpy as jnp

    from emjax.dga import step as kern
    from emjax.dga.arrays import kernel_arrays, source_columns, sparse_arrays
    from emjax.dga.layout import make_layout

    ops = _tiled_box_ops(sigma=lossy)
    nt, dt = ops.cx.num_tets, 2e-12
    rng = np.random.default_rng(1)
    u0 = rng.standard_normal(ops.nu).astype(dtype)
    f0 = rng.standard_normal((4, nt)).astype(dtype)
    edge = int(np.argmin(ops.pec))  # an interior edge carries the current
    cur = np.sin(0.1 * np.arange(steps))[:, None].astype(dtype)

    def run(faraday, ampere, lay, K):
        @jax.jit
        def loop(u, f, K):
            def body(c, i):
                u, f = c
                f = faraday(u, f, K)
                return (ampere(u, f, K, i), f), None
            return jax.lax.scan(body, (u, f), cur)[0]

        u, f = loop(jnp.asarray(lay.u_from_canonical(u0)),
                    jnp.asarray(lay.f_from_canonical(f0)), jax.device_put(K))
        return np.asarray(lay.u_canonical(u)), np.asarray(lay.f_canonical(f))

    out = {}
    with jax.enable_x64(True):  # float64 arrays stay float64
        for name in ("xla", "pallas"):
            lay = make_layout(ops, name)
            K = kernel_arrays(ops, lay, dt, dtype)
            K["src_g"] = np.array([K.pop("gpos")[edge]], np.int32)
            spec = lay.spec
            out[name] = run(lambda u, f, K, spec=spec: kern.faraday(u, f, K, spec),
                            lambda u, f, K, i, spec=spec: kern.ampere(u, f, K, spec, i), lay, K)
        lay = make_layout(ops, "xla")
        S = sparse_arrays(ops, lay, dt, dtype)
        S["Qsrc"] = source_columns(ops, lay, dt, np.array([edge]), dtype)
        out["sparse"] = run(kern.faraday_sparse, kern.ampere_sparse, lay, S)
    ref_u, ref_f = out["sparse"]
    assert np.abs(ref_u - u0).max() > 1e-3 * np.abs(u0).max()  # the fields did evolve
    for name, (u, f) in out.items():
        du = np.abs(u - ref_u).max() / np.abs(ref_u).max()
        df = np.abs(f - ref_f).max() / np.abs(ref_f).max()
        print(f"{name}: u {du:.1e}, f {df:.1e}")
        assert du < tol and df < tol, name


def test_pallas_kernels_lower_for_cuda(monkeypatch):
    """Without a GPU the kernels run in Pallas' interpreter; lowered for CUDA they must
    still become Triton kernels: Faraday, the sliced edge sums and one per group of node
    tiles."""
    import jax
    import jax.numpy as jnp

    from emjax.dga import pallas, tiles
    from emjax.dga import step as kern
    from emjax.dga.arrays import kernel_arrays
    from emjax.dga.layout import make_layout

    if jax.default_backend() == "gpu":  # lowering for "cuda" then asks for a device
        pytest.skip("on a GPU the compiled kernels run in the tests beside this one")
    monkeypatch.setattr(pallas, "_interpret", lambda: False)
    ops = _tiled_box_ops(sigma=True)
    lay = make_layout(ops, "pallas")
    K = kernel_arrays(ops, lay, 1e-12, np.float32)
    K.pop("gpos")

    def step(u, f, K):
        f = kern.faraday(u, f, K, lay.spec)
        return kern.ampere(u, f, K, lay.spec), f

    args = (jnp.zeros(ops.nu, jnp.float32), jnp.zeros(lay.spec.f_shape, jnp.float32), K)
    try:
        text = jax.jit(step).trace(*args).lower(lowering_platforms=("cuda",)).as_text()
    except RuntimeError as err:  # a CUDA plugin present, JAX_PLATFORMS=cpu (the tests')
        if "No supported GPU devices" in str(err):
            pytest.skip("lowering for cuda asks for the installed plugin's device")
        raise
    launches = tiles.groups(tiles.tile_widths(lay.spec.buckets), pallas.NODE_SLACK)
    assert text.count("custom_call @__gpu$xla.gpu.triton") == 2 + len(launches)


def test_sliced_edge_sums_match_bucketed(monkeypatch):
    """The sliced edge table of the Pallas kernels (one launch, here in the interpreter;
    windows shortened so that several windows and slices are exercised) gives every
    edge's circulation of h as the XLA kernels' bucketed tables do, with little padding
    on a mesh whose tets per edge run from 1 to 6."""
    import jax.numpy as jnp

    from emjax.dga import edges, pallas
    from emjax.dga import step as kern
    from emjax.dga.arrays import kernel_arrays
    from emjax.dga.edges import EDGE_SLICE, edge_slices
    from emjax.dga.layout import make_layout

    cx = build(structured.box((0.3, 0.2, 0.25), shape=(8, 8, 8)))
    ops = assemble(cx, np.full(cx.num_tets, eps0), np.full(cx.num_tets, mu0))
    counts = cx.tets_per_edge
    assert counts.min() == 1 and counts.max() == 6
    assert edge_slices(counts)[1].sum() * EDGE_SLICE <= 1.05 * counts.sum()
    win = 700  # windows that straddle slices
    monkeypatch.setattr(edges, "EDGE_WINDOW", win)
    assert counts.size > 5 * win
    order = edge_slices(counts)[0]
    for w0 in range(0, counts.size, win):  # sorted by decreasing count within each window
        c = counts[order[w0:w0 + win]]
        assert np.all(np.diff(c) <= 0) and set(order[w0:w0 + win]) == set(range(w0, w0 + c.size))
    f = np.random.default_rng(5).standard_normal((cx.num_tets, 4))
    Kr = kernel_arrays(ops, make_layout(ops, "xla"), 1.0, np.float64)
    G_ref = np.asarray(kern.edge_sums(jnp.asarray(f), Kr))[Kr["gpos"]]
    K = kernel_arrays(ops, make_layout(ops, "pallas"), 1.0, np.float64)
    G = np.asarray(pallas.sliced_edge_sums(jnp.asarray(f), K["esl"]))
    assert G[0] == 0 and np.abs(G_ref).max() > 1.0
    assert np.abs(G[K["gpos"]] - G_ref).max() <= 1e-12 * np.abs(G_ref).max()


def test_checkpoint_resume_is_bitwise(tmp_path):
    sim = _small_sim(steps=20)
    full = sim.run(progress=False)
    ck = tmp_path / "c.h5"
    from emjax.dga.solver import DGASolver

    DGASolver(sim, chunk=10).run(progress=False, checkpoint_every=10, checkpoint_path=ck)
    resumed = DGASolver(sim, chunk=10).run(progress=False, resume=ck)
    for name in ("p", "W"):
        assert full[name] == resumed[name]


def test_time_domain_matches_operator_eigenfrequencies():
    """Long float64 run on a small box: pencil modes vs eigsh, leapfrog-corrected, 1e-4."""
    from emjax.analysis.modes import matrix_pencil
    from emjax.dga.solver import DGASolver
    from emjax.dga.stability import eigenfrequencies, leapfrog_frequency

    sim = em.DGATD(
        mesh=em.BoxMesh(size=(0.3, 0.2, 0.25), edge_length=0.08),
        sources=[em.MeshEdgeSource(position=(0.11, 0.09, 0.13), direction=(1, 1, 1),
                                   waveform=em.GaussianPulse(f0=0.9e9, fwidth=0.3e9))],
        probes=[em.Probe(name="p", positions=[(0.21, 0.07, 0.17)], components=["Ex", "Ey"])],
        duration=40e-9, dtype="float64")
    sol = DGASolver(sim, chunk=10**6)  # one chunk: 447 steps in 23s leave a 10-step tail
    res = sol.run(progress=False)      # (a second program, as long to compile)
    t = res["p"].coords["t_E"]
    start = int(np.searchsorted(t, 12e-9))
    x = res["p"].data["Ex"][start:, 0] + res["p"].data["Ey"][start:, 0]
    dec = max(1, int(1 / (8 * 1.4e9 * sol.setup.dt)))
    # lossless: true resonances fit with no decay; blends of close pairs do not
    modes = [m for m in matrix_pencil(x[::dec], sol.setup.dt * dec, order=60)
             if 0.6e9 < m.frequency < 1.15e9 and abs(m.decay) < 1e-4 * m.frequency]
    top = max(m.amplitude for m in modes)
    modes = [m for m in modes if m.amplitude > 1e-2 * top]
    f_lf = leapfrog_frequency(eigenfrequencies(sol.setup.ops, [0.7e9, 0.9e9, 1.1e9], 6),
                              sol.setup.dt)
    worst = max(np.min(np.abs(f_lf - m.frequency)) / m.frequency for m in modes)
    print(f"{len(modes)} modes, worst {worst:.2e}")
    assert len(modes) >= 2 and worst < 1e-4


def test_energy_bounded_long_run():
    for r in vd.stability(steps=6_000):
        assert r["pass"], r


@pytest.mark.slow
def test_cylinder_cavity_coarse():
    """The seed's cavity on a coarse mesh: all four TM lines within 2.5% (pencil)."""
    from emjax.analysis.modes import match_modes, matrix_pencil

    sim = vd.cylinder_scenario(0.2, 300e-9)
    # one chunk (the driver clamps it to the run): 1307 steps (a prime) in chunks of 66
    # would compile a second program for the tail, as long to compile as the first
    res = sim.run(progress=False, chunk=10**6)
    x, dts, _, _ = vd._ringing(res, sim)
    modes = vd.cylinder_modes()
    found = match_modes(matrix_pencil(x, dts, order=80), [f for _, f in modes], 0.03)
    for (name, f), m in zip(modes, found, strict=True):
        assert m is not None and abs(m.frequency - f) / f < 0.025, name


# ---------------------------------------------------------- scenario, CLI
def test_scenario_roundtrip_and_estimate(tmp_path):
    sim = _small_sim()
    for path in (tmp_path / "s.toml", tmp_path / "s.json"):
        sim.save(path)
        assert em.load_scenario(path) == sim
    est = sim.estimate()
    assert est["total"] == sum(v for k, v in est.items() if k != "total") > 0
    from emjax.scenarios import load_builtin

    assert load_builtin("cylinder-cavity").type == "DGATD"
    with pytest.raises(ValueError, match="exactly one"):
        em.DGATD(mesh=em.BoxMesh(size=(1, 1, 1), edge_length=0.5))


@pytest.mark.parametrize("old, fix", [("tets-tile-sym-dam-pe", "kernels = 'pallas'"),
                                      ("tets-node-sym-dam", "kernels = 'xla'"),
                                      ("rows-slot", "'rows-slot' was removed")])
def test_old_variant_key_names_its_replacement(tmp_path, old, fix):
    """A scenario file of before the pruning, carrying ``variant``, is refused with a
    message naming the field, its replacement ``kernels`` and the value to write."""
    path = tmp_path / "old.toml"
    _small_sim().save(path)
    path.write_text(path.read_text().replace('kernels = "auto"', f'variant = "{old}"'))
    assert f'variant = "{old}"' in path.read_text()
    with pytest.raises(ValueError, match="replaced by 'kernels'") as err:
        em.load_scenario(path)
    assert fix in str(err.value) and f"variant = '{old}'" in str(err.value)
    with pytest.raises(ValueError, match="'kernels'"):
        em.DGATD(mesh=em.BoxMesh(size=(1, 1, 1), edge_length=0.5), steps=1, variant=old)


def test_probe_outside_mesh_refused():
    sim = em.DGATD(mesh=em.BoxMesh(size=(0.3, 0.2, 0.2), edge_length=0.1), steps=2,
                   probes=[em.Probe(name="p", positions=[(1.0, 0.1, 0.1)])])
    with pytest.raises(SetupError, match="outside the mesh"):
        sim.run(progress=False)


def test_snapshots_written_for_paraview(tmp_path, monkeypatch):
    pytest.importorskip("meshio")
    from emjax.dga.solver import DGASolver, write_snapshots

    elsewhere, tmp_path = tmp_path / "cwd", tmp_path / "out"  # meshio wrote the .h5 in
    elsewhere.mkdir(), tmp_path.mkdir(), monkeypatch.chdir(elsewhere)  # the working folder

    sim = _small_sim(steps=6).model_copy(update={"snapshots": [em.MeshSnapshot(name="s",
                                                                                interval=3)]})
    sol = DGASolver(sim)
    res = sol.run(progress=False)
    assert res["s"].data["E"].shape == (2, 3, sol.setup.cx.num_tets)
    (path,) = write_snapshots(res, "s", sol.setup.mesh, tmp_path / "s.xdmf")
    assert path.exists() and (tmp_path / "s.h5").is_file() and Path.cwd() == elsewhere
    assert not any(elsewhere.iterdir())  # nothing outside the chosen folder
    import meshio

    frames = write_snapshots(res, "s", sol.setup.mesh, tmp_path / "s.vtu")
    back = meshio.read(frames[1])
    assert len(frames) == 2 and back.cells[0].data.shape == (sol.setup.cx.num_tets, 4)
    np.testing.assert_allclose(back.cell_data["E"][0], res["s"].data["E"][1].T)
    assert np.abs(res["s"].data["E"][1]).max() > 0


def test_cli_runs_cylinder_cavity(tmp_path):
    out = tmp_path / "cyl.h5"
    r = subprocess.run([sys.executable, "-m", "emjax.cli", "run", "cylinder-cavity", "--steps",
                        "20", "--no-progress", "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    res = em.Results.load(out)
    assert res["probe"].data["Ez"].shape == (20, 1)
