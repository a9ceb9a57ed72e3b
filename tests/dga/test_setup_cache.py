"""The DGATD set-up cache and the vectorised set-up stages (issue #24).

* A second prepare of the same scenario reads the cache (``setup_cache`` "hit") and
  gives the same mesh, complex, operators and rho, bitwise, as the build; the file
  lies in ``<cache folder>/dga`` and nowhere else.
* off (``EMJAX_CACHE_DIR=off``, and Python's default) writes nothing; a corrupt
  file, or one holding another key, is rebuilt (and then read); another medium is another key.
* The renumbered mesh skips the checks, which it would pass without a flip; the
  bounding-box search of the placement finds the tet a search of every tet finds.
"""

import shutil

import numpy as np
import pytest

from emjax.dga import cache
from emjax.dga.solver import prepare
from emjax.driver.compile_cache import setup_cache


@pytest.fixture
def in_tmp(tmp_path):
    """The set-up cache in tmp_path/dga for the test."""
    with setup_cache(str(tmp_path)):
        yield tmp_path


def _lossy(small_dgatd, **kw):
    import emjax as em

    return small_dgatd(regions=[em.Region(tag=0, medium=em.Medium(eps_r=2.0, sigma=0.05))],
                       **kw)


def _same(a, b) -> None:
    """Every array of two DGASetups equal bitwise."""
    for x, y, what in ((a.mesh, b.mesh, ("nodes", "tets", "regions")),
                       (a.cx, b.cx, cache._CX), (a.ops, b.ops, cache._OPS)):
        for n in what:
            assert np.array_equal(getattr(x, n), getattr(y, n)), n
    assert a.rho == b.rho and a.dt == b.dt and a.ops.nu == b.ops.nu
    assert len(a.ops.buckets) == len(b.ops.buckets)
    for p, q in zip(a.ops.buckets, b.ops.buckets, strict=True):
        assert (p.width, p.offset) == (q.width, q.offset)
        for n in (*cache._BUCKET, "Msig"):
            assert np.array_equal(getattr(p, n), getattr(q, n)), n
    for n in cache._LAYOUT:
        assert np.array_equal(getattr(a.layout, n), getattr(b.layout, n)), n
    assert a.layout.spec == b.layout.spec and a.cx.edge_reach == b.cx.edge_reach


def test_round_trip_hit(small_dgatd, in_tmp):
    tmp_path = in_tmp
    sim = _lossy(small_dgatd)
    first = prepare(sim)
    assert first.cache == "miss" and "power iteration" in first.stages
    cache.wait()  # written on the cache's own thread
    files = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert {f.parts[:2] for f in files} == {("dga", first.cache_key)}
    assert "manifest.json" in {f.name for f in files}
    second = prepare(sim)
    assert second.cache == "hit" and "power iteration" not in second.stages
    assert second.ops.lossy
    _same(first, second)
    # another medium is another key: built, not read
    other = prepare(small_dgatd())
    assert other.cache == "miss" and other.rho != first.rho


def test_off_writes_nothing(small_dgatd, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the default folder, were it used
    monkeypatch.setenv("HOME", str(tmp_path))
    with setup_cache("off"):
        assert prepare(small_dgatd()).cache == "off"
    assert prepare(small_dgatd()).cache == "off"  # Python's default, outside a run
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("damage", ["truncated", "missing", "other key"])
def test_damaged_file_rebuilt(small_dgatd, in_tmp, damage):
    tmp_path = in_tmp
    sim = small_dgatd()
    built = prepare(sim)
    cache.wait()
    path = tmp_path / "dga" / built.cache_key
    if damage == "truncated":  # a write cut short: an array shorter than its header says
        npy = path / "ops_Mmu10.npy"
        npy.write_bytes(npy.read_bytes()[: npy.stat().st_size // 2])
    elif damage == "missing":
        (path / "cx_tets.npy").unlink()
    else:  # a valid folder of another key under this one's name
        other = cache.save(tmp_path / "dga", "0" * 64, built.mesh, built.cx, built.ops, 1.0,
                           built.layout)
        cache.wait()
        shutil.rmtree(path)
        other.rename(path)
    again = prepare(sim)
    assert again.cache == "rebuilt"
    _same(built, again)
    assert prepare(sim).cache == "hit"


def test_run_metadata_reports_stages(small_dgatd, in_tmp):
    from emjax.dga.solver import DGASolver

    res = DGASolver(small_dgatd(steps=4)).run(progress=False)
    meta = res.metadata
    assert meta["setup_cache"] == "miss"
    stages = meta["setup_stages"]
    for k in ("mesh generation", "renumbering", "local matrices and buckets",
              "power iteration", "kernel arrays", "device transfer"):
        assert stages[k] >= 0.0
    assert sum(stages.values()) <= meta["setup_time_s"] + 1e-6


def test_kernel_arrays_kept_per_dt_and_dtype(small_dgatd, in_tmp):
    """The dense kernels' arrays are kept beside the set-up's (one folder per dt, dtype
    and layout), the energy monitor's packed matrices likewise (one folder per dtype),
    read back equal bitwise (memory-mapped), and a run from them equals the first run;
    a damaged energy folder is rebuilt."""
    import jax

    import emjax as em
    from emjax.dga.solver import DGASolver

    sim = _lossy(small_dgatd, steps=12, energy=[em.EnergyMonitor(name="W", interval=3)])
    first = DGASolver(sim)
    ran = first.run(progress=False)
    cache.wait()
    root = in_tmp / "dga" / first.setup.cache_key
    assert len(list(root.glob("kernels-*"))) == 1
    assert [p.name for p in root.glob("energy-*")] == ["energy-float32"]
    again = DGASolver(sim)
    assert again.setup.cache == "hit"
    for group in ("K", "E"):
        a, b = (jax.tree_util.tree_leaves(s.consts[group]) for s in (first, again))
        assert len(a) == len(b) > 0
        assert all(np.array_equal(np.asarray(x), np.asarray(y))
                   for x, y in zip(a, b, strict=True)), group
    kept = cache.load_tree(in_tmp / "dga", first.setup.cache_key, "energy-float32")
    assert all(isinstance(x, np.memmap) for x in jax.tree_util.tree_leaves(kept))
    rerun = again.run(progress=False)
    assert np.array_equal(ran["p"].data["Ez"], rerun["p"].data["Ez"])
    assert np.array_equal(ran["W"].data["energy"], rerun["W"].data["energy"])
    # another safety (dt) or dtype: other kernel arrays; the energy's per dtype only
    DGASolver(sim.model_copy(update={"safety": 0.8}))
    DGASolver(sim.model_copy(update={"dtype": "float64"}))
    cache.wait()
    assert len(list(root.glob("kernels-*"))) == 3
    assert sorted(p.name for p in root.glob("energy-*")) == ["energy-float32", "energy-float64"]
    npy = root / "energy-float32" / "K.Mmu.npy"  # cut short: rebuilt, equal again
    npy.write_bytes(npy.read_bytes()[: npy.stat().st_size // 2])
    rebuilt = DGASolver(sim)
    assert np.array_equal(np.asarray(rebuilt.consts["E"]["Mmu"]),
                          np.asarray(first.consts["E"]["Mmu"]))
    assert cache.load_tree(in_tmp / "dga", first.setup.cache_key, "energy-float32") is not None


def test_other_kernels_share_the_cached_setup(small_dgatd, in_tmp):
    """The cache's key leaves the kernels out (``auto`` picks them once dt is known): a
    Pallas run reads what an XLA run wrote, gets the same rho and dt bit for bit, and
    the Pallas layout it makes equals the one a Pallas set-up from nothing has."""
    from emjax.dga.layout import make_layout

    sim = small_dgatd()
    xla = prepare(sim.model_copy(update={"kernels": "xla"}))
    pallas = prepare(sim.model_copy(update={"kernels": "pallas"}))
    assert (xla.cache, pallas.cache) == ("miss", "hit")
    assert xla.cache_key == pallas.cache_key
    assert (xla.layout.spec.kernels, pallas.layout.spec.kernels) == ("xla", "pallas")
    assert pallas.rho == xla.rho and pallas.dt == xla.dt
    fresh = make_layout(pallas.ops, "pallas")
    with setup_cache("off"):
        alone = prepare(sim.model_copy(update={"kernels": "pallas"}))
    assert alone.rho == xla.rho
    for n in cache._LAYOUT:
        assert np.array_equal(getattr(pallas.layout, n), getattr(fresh, n)), n
        assert np.array_equal(getattr(alone.layout, n), getattr(fresh, n)), n


def test_auto_kernels_weigh_compilation_against_steps():
    """``auto``: XLA off a GPU; on a GPU Pallas once DoFs x steps x the saving per DoF
    and step repay the extra compilation of the widest node bucket, XLA before; a
    wider bucket needs a longer run."""
    from emjax.dga.layout import PALLAS_SAVING_S, auto_kernels, pallas_extra_compile_s

    assert auto_kernels(gpu=False, dofs=10**8, steps=10**6, widths=[14]) == "xla"
    assert auto_kernels(gpu=True) == "pallas"  # a long run (the benchmarks')
    dofs = 2_000_000
    for w in (10, 14, 22):
        extra = pallas_extra_compile_s([8, w])
        assert extra > 0
        even = extra / (dofs * PALLAS_SAVING_S)  # the break-even number of steps
        assert auto_kernels(gpu=True, dofs=dofs, steps=int(0.9 * even), widths=[w]) == "xla"
        assert auto_kernels(gpu=True, dofs=dofs, steps=int(1.1 * even) + 1,
                            widths=[w]) == "pallas"
    assert pallas_extra_compile_s([22]) > pallas_extra_compile_s([14])


@pytest.mark.parametrize("order", ["rcm", "morton"])
def test_renumbered_passes_the_checks_unchanged(order):
    from emjax.dga import structured
    from emjax.dga.mesh import TetMesh

    raw = structured.distort(structured.cylinder(1.0, 0.5, rings=5, layers=3, renumber=False))
    m = raw.renumbered(order)
    checked = TetMesh(m.nodes, m.tets, m.regions)
    assert checked.flipped == 0 and np.array_equal(checked.tets, m.tets)
    # a relabelling: the same nodes and the same tets, by their coordinates
    assert np.array_equal(np.sort(m.nodes, axis=0), np.sort(raw.nodes, axis=0))
    key = lambda mesh: np.sort(np.sort(mesh.nodes[mesh.tets], axis=1).reshape(  # noqa: E731
        mesh.num_tets, -1), axis=0)
    assert np.array_equal(key(m), key(raw))
    # the tets ordered by their two smallest nodes, ties in their first order
    srt = np.sort(m.tets, axis=1)
    assert np.array_equal(np.lexsort((srt[:, 1], srt[:, 0])), np.arange(m.num_tets))
    # neighbours get near numbers: a tet's nodes far closer than in a random order
    bw = lambda mesh: np.mean(mesh.tets.max(1) - mesh.tets.min(1))  # noqa: E731
    assert bw(m) < 0.5 * bw(raw.permuted_random())
    with pytest.raises(ValueError, match="order = 'hilbert'"):
        raw.renumbered("hilbert")


def test_node_order_is_in_the_key_and_leaves_rho(small_dgatd, monkeypatch):
    """Another node order is another set-up (another cache key) with the same physics:
    rho, a property of the operator, agrees to rounding."""
    from emjax.dga import setup

    sim = small_dgatd()
    assert cache.cache_key(sim, "rcm") != cache.cache_key(sim, "morton")
    rho = {}
    for order in ("rcm", "morton"):
        monkeypatch.setattr(setup, "node_order", lambda order=order: order)
        rho[order] = prepare(sim).rho
    assert rho["morton"] == pytest.approx(rho["rcm"], rel=1e-9)


def test_placement_box_search_matches_full_search():
    from emjax.dga import structured
    from emjax.dga.complex import build
    from emjax.dga.placement import _best_of, _best_tets

    cx = build(structured.distort(structured.box((1, 1, 1), shape=(3, 3, 3)), 0.2))
    pts = np.random.default_rng(1).uniform(0.0, 1.0, (20, 3))
    pts[0] = cx.nodes[5]  # on a node: many tets tie
    t, b = _best_tets(cx, pts)
    x = cx.nodes[cx.tets]
    for p, tt, bb in zip(pts, t, b, strict=True):
        t_all, b_all = _best_of(x, np.arange(cx.num_tets), p)
        assert tt == t_all and np.allclose(bb, b_all, atol=1e-15)


def test_snap_edge_matches_search_of_every_edge():
    """The node-filtered edge search picks the edge the search of every edge picks."""
    from emjax.dga import structured
    from emjax.dga.complex import build
    from emjax.dga.placement import snap_edge

    cx = build(structured.distort(structured.box((1, 1, 1), shape=(4, 4, 4)), 0.2))
    rng = np.random.default_rng(2)
    pec = rng.uniform(size=cx.num_edges) < 0.3  # PEC edges are never chosen
    x = cx.nodes[cx.edges]
    mid, vec = x.mean(axis=1), x[:, 1] - x[:, 0]
    for p, u in zip(rng.uniform(0.05, 0.95, (25, 3)), rng.normal(size=(25, 3)), strict=True):
        d = np.where(pec, np.inf, np.linalg.norm(mid - p, axis=1))
        near = np.nonzero(d <= 1.5 * d.min() + 1e-12)[0]
        cos = vec[near] @ u / np.linalg.norm(u) / np.linalg.norm(vec[near], axis=1)
        k = int(np.argmax(np.abs(cos)))
        assert snap_edge(cx, pec, p, u) == (int(near[k]), float(np.sign(cos[k]) or 1.0))


def test_cache_written_on_a_thread_is_complete_when_the_block_ends(small_dgatd, tmp_path):
    """The set-up's arrays go to disk on the cache's writer thread while the run goes on;
    leaving ``setup_cache`` waits for them (a script may remove the folder next)."""
    with setup_cache(str(tmp_path)):
        built = prepare(small_dgatd())
    assert built.cache == "miss" and not cache._PENDING
    path = tmp_path / "dga" / built.cache_key
    assert (path / "manifest.json").is_file()
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    shutil.rmtree(tmp_path / "dga")
