"""Test configuration and the small scenarios many tests build.

CPU only, float64 available, deterministic. emjax switches 64-bit JAX types on only
for runs that ask for them (:mod:`emjax.driver.precision`); the tests also build
float64 kernel inputs by hand, so they switch it on for the whole session. The
float32 path with it off is tested in a fresh interpreter (tests/driver).

Fixtures ``small_fdtd3d``, ``small_fdtd2d``, ``small_dgatd`` and ``small_fdfd`` hand
out factories of tiny scenarios of each solver (a source, a probe where the solver
has probes; keyword arguments override fields): a few seconds to run on one core.
"""

import os

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# `emjax run` keeps compiled executables in the user cache by default; tests write no
# files outside their tmp_path (tests/driver/test_compile_cache.py sets its own folder)
# but for the session's compilation cache, a temporary folder removed at the end.
os.environ["EMJAX_CACHE_DIR"] = "off"
# Parallel xdist workers (`make test`: 2 on CI's 2 cores) run one XLA thread each: XLA's
# Eigen thread pool in every worker (and its subprocesses) oversubscribed the cores,
# its threads spinning; one thread each ran the suite in 485 s instead of 562-586 s on
# the 2-core VM, every test passing (BENCHMARKS.md, third session of 2026-11-29). A
# user's XLA_FLAGS choice of the flag wins; a run without workers keeps the threads.
_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
if _workers >= 2 and "xla_cpu_multi_thread_eigen" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = " ".join(
        [*os.environ.get("XLA_FLAGS", "").split(), "--xla_cpu_multi_thread_eigen=false"])


def pytest_configure(config):
    """64-bit JAX types for the session (in a hook, so that a subprocess that imports
    this file for its scenario factories keeps JAX's default), and a compilation cache
    of the session (:func:`_session_compilation_cache`)."""
    import jax

    jax.config.update("jax_enable_x64", True)
    _session_compilation_cache(config)


def _session_compilation_cache(config) -> None:
    """JAX's persistent compilation cache on, in a fresh folder of this test process
    (each xdist worker its own: no two processes write one entry), removed at the end.

    Many tests build the same program (the same scenario or shapes through a new
    solver, a README block and a tutorial's): the second build loads the executable
    instead of compiling it again. A loaded executable is the one compiled, so results
    are bit for bit those of a fresh compilation; the compile path itself still runs
    for every program once. Every compilation is kept (none is too quick or small to
    matter here). Tests of the cache itself switch it off around them
    (tests/driver/test_compile_cache.py); subprocesses do not inherit it."""
    import shutil
    import tempfile

    import jax
    from jax.experimental.compilation_cache import compilation_cache as cc

    folder = tempfile.mkdtemp(prefix="emjax-tests-jax-cache-")
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    for name, value in (("jax_compilation_cache_dir", folder),
                        ("jax_enable_compilation_cache", True),
                        ("jax_persistent_cache_min_compile_time_secs", 0.0),
                        ("jax_persistent_cache_min_entry_size_bytes", -1)):
        jax.config.update(name, value)
    cc.reset_cache()


def fdtd3d(steps: int = 50, **kw):
    """10x9x8 cells of 1 mm, 2-cell CPML, a z dipole at 60 GHz, a probe, a snapshot
    plane (every 6 steps) and an energy monitor (every 4)."""
    import emjax as em

    kw = {"name": "small3d", "domain": em.Domain(shape=(10, 9, 8), spacing=1e-3),
          "boundary": em.CPML(thickness=2), "steps": steps,
          "sources": [em.PointDipole(position=(0.2e-3, -0.3e-3, 0.1e-3), polarization="z",
                                     waveform=em.GaussianPulse(f0=60e9, fwidth=30e9))],
          "monitors": [em.Probe(name="p", positions=[(1e-3, 1e-3, -1e-3)], components=["Ez"]),
                       em.FieldSnapshot(name="s", center=(0, 0, 0), size=(2e-3, 2e-3, 0),
                                        interval=6, components=["Ez"]),
                       em.EnergyMonitor(name="w", interval=4)], **kw}
    return em.FDTD3D(**kw)


def fdtd2d(steps: int = 50, **kw):
    """TMz, 20x20 cells of 15 mm, 4-cell split-field PML, a line source at 1 GHz, a probe."""
    import emjax as em

    kw = {"name": "small2d", "polarization": "TMz",
          "domain": em.Domain2D(size=(0.3, 0.3), spacing=0.015),
          "sources": [em.LineSource(position=(0, 0),
                                    waveform=em.GaussianPulse(f0=1e9, fwidth=0.5e9))],
          "monitors": [em.Probe(name="p", positions=[(0.05, 0.05, 0)], components=["Ez"])],
          "boundary": em.SplitPML(thickness=4), "steps": steps, **kw}
    return em.FDTD2D(**kw)


def scatter2d(pol="TMz", **kw):
    """40x36 cells of 1 mm, split-field PML along x and CPML along y, a lossy eps_r 3
    cylinder and a PEC block, a line source at 30 GHz (TMz: Ez; TEz: Ex)."""
    import emjax as em

    wave = em.GaussianPulse(f0=30e9, fwidth=15e9)
    return em.FDTD2D(
        polarization=pol, domain=em.Domain2D(shape=(40, 36), spacing=1e-3), steps=80,
        boundary=em.Boundaries2D(x=em.SplitPML(thickness=6), y=em.CPML(thickness=6)),
        structures=[em.Structure2D(geometry=em.Circle(center=(2e-3, 1e-3), radius=4e-3),
                                   medium=em.Medium(eps_r=3, sigma=0.5)),
                    em.Structure2D(geometry=em.Rectangle(center=(-5e-3, -4e-3),
                                                         size=(3e-3, 5e-3)), medium=em.PEC())],
        sources=[em.LineSource(position=(-4e-3, 5e-3), polarization="z" if pol == "TMz" else "x",
                               waveform=wave)], **kw)


def dgatd(steps: int = 50, **kw):
    """A PEC box of 0.3 x 0.2 x 0.2 m meshed at 0.1 m, an edge source, a probe."""
    import emjax as em

    kw = {"name": "smalldga", "mesh": em.BoxMesh(size=(0.3, 0.2, 0.2), edge_length=0.1),
          "steps": steps,
          "sources": [em.MeshEdgeSource(position=(0.15, 0.1, 0.1), direction=(0, 0, 1),
                                        waveform=em.GaussianPulse(f0=5e8, fwidth=3e8))],
          "probes": [em.Probe(name="p", positions=[(0.1, 0.1, 0.1)], components=["Ez"])],
          **kw}
    return em.DGATD(**kw)


def fdfd(spacing: float = 0.024, thickness: int = 3, **kw):
    """The seed's sphere (radius 7.2 cm, eps_r 4, sigma 0.05 S/m, 1 GHz) on a coarse
    grid (resolution warnings are expected), solved to 1e-12."""
    import emjax as em

    kw.setdefault("solver", em.FDFDSolver(tol=1e-12, max_iter=4000))
    return em.FDFD3D(
        domain=em.Domain(size=(0.32, 0.32, 0.32), spacing=spacing), frequency=1e9,
        structures=[em.Structure(geometry=em.Sphere(radius=0.072),
                                 medium=em.Medium(eps_r=4.0, sigma=0.05))],
        boundary=em.PML(thickness=thickness), rcs=False, **kw)


@pytest.fixture
def without_compilation_cache():
    """JAX's compilation cache off for the test, as in a user's process that did not
    switch it on; the session's (:func:`_session_compilation_cache`) back after it."""
    import jax
    from jax.experimental.compilation_cache import compilation_cache as cc

    saved = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", None)
    cc.reset_cache()
    yield
    jax.config.update("jax_compilation_cache_dir", saved)
    cc.reset_cache()


@pytest.fixture(scope="session")
def small_fdtd3d():
    return fdtd3d


@pytest.fixture(scope="session")
def small_fdtd2d():
    return fdtd2d


@pytest.fixture(scope="session")
def scatter_fdtd2d():
    return scatter2d


@pytest.fixture(scope="session")
def small_dgatd():
    return dgatd


@pytest.fixture(scope="session")
def small_fdfd():
    return fdfd


def _resumed_equals_whole(solver_class, sim, folder) -> object:
    """Run ``sim`` whole, then checkpointed at step 30 and resumed with another chunk
    length; assert every monitor array equal bitwise; return the whole run's results."""
    import numpy as np

    solver = solver_class(sim, chunk=10)
    whole = solver.run(progress=False)
    ck = folder / "resume.ckpt.h5"
    # The same solver (its compiled chunk: no second compilation) writes the checkpoint;
    # run() starts from a fresh state. The resume is a new solver, as in a new process.
    solver.run(progress=False, checkpoint_every=30, checkpoint_path=ck)
    resumed = solver_class(sim, chunk=7).run(progress=False, resume=ck)
    for name in whole.names:
        for comp, x in whole[name].data.items():
            assert np.array_equal(x, resumed[name].data[comp]), (name, comp)
    return whole


@pytest.fixture
def resumed_equals_whole(tmp_path):
    """``check(solver_class, sim)``: a checkpointed and resumed run equals the whole run
    bitwise (:func:`_resumed_equals_whole`); returns the whole run's results."""
    return lambda solver_class, sim: _resumed_equals_whole(solver_class, sim, tmp_path)


FIRST = (
    # the longest tests (worker seconds on 2 CPU cores, 2026-11-27), started first so that
    # neither worker is left running one of them alone at the end (xdist's worksteal takes
    # from the end of a queue); a renamed test simply loses its place
    "test_examples_run_as_written",
    "test_hand_transpose_equals_autodiff",
    "test_two_processes_match_single_process",
    "test_dispersive_sar_runs",
    "test_closed_conformal_sphere_keeps_its_invariant",
    "test_sharding_case_matches_single_device",
    "test_placement_memory_and_run_on_four_devices",
    "test_example_runs_at_its_small_size",
    "test_cpml_reflection",
    "test_gradient_matches_finite_differences_lossy",
    "test_fuzzed_documents_run_or_are_refused",
    "test_drude_sphere_coarse_run_against_mie",
    "test_builtin_scenario_runs_with_figures",
    "test_smoothed_dielectric_in_conformal_cavity_does_not_grow",  # 40k steps: ~13 s
    "test_one_pass_with_a_tfsf_plane_wave",  # Pallas' interpreter, 2026-11-29: 13-18 s
)


def pytest_collection_modifyitems(config, items):
    """The known longest tests first (see FIRST), the rest in collection order."""
    rank = {name: k for k, name in enumerate(FIRST)}
    items.sort(key=lambda it: rank.get(it.originalname or it.name, len(FIRST)))
