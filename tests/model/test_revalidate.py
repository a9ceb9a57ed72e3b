"""Every run entry point validates the scenario again (issue #19, item 8).

``model_copy(update=...)`` skips pydantic's validation: ``steps=-3`` once ran and
reported -212.5 Mcells/s. ``emjax.registry.run``, ``estimate`` and ``prepare`` (behind
``sim.run()``, ``sim.estimate()``, ``sim.prepare()`` and ``emjax.run``) validate the
scenario's data once more and raise pydantic's ValidationError before any solver
code runs; a checkpoint interval that is not positive is refused there too. The
re-validation of the largest built-in scenarios takes well under a millisecond.
"""

from __future__ import annotations

import math
import time

import pydantic
import pytest

import emjax as em
from emjax import registry
from emjax.scenarios import builtin_names, load_builtin


def _nan_medium(sim):
    """``sim`` with a NaN eps_r smuggled into a nested medium."""
    if isinstance(sim, em.DGATD):
        return sim.model_copy(update={"background": sim.background.model_copy(
            update={"eps_r": math.nan})})
    structures = list(sim.structures)
    bad = structures[0].model_copy(update={"medium": structures[0].medium.model_copy(
        update={"eps_r": math.nan})})
    return sim.model_copy(update={"structures": [bad, *structures[1:]]})


def _with_structure(make):
    def build(**kw):
        sim = make(**kw)
        if isinstance(sim, em.FDTD3D) and not sim.structures:
            sim = make(structures=[em.Structure(geometry=em.Sphere(radius=1e-3),
                                                medium=em.Medium(eps_r=2.0))], **kw)
        if isinstance(sim, em.FDTD2D) and not sim.structures:
            sim = make(structures=[em.Structure2D(geometry=em.Circle(radius=0.03),
                                                  medium=em.Medium(eps_r=2.0))], **kw)
        return sim
    return build


# (scenario fixture, smuggled changes): each is refused by the model when given directly
CASES = {
    "small_fdtd3d": [{"steps": -3}, {"courant": 5.0}, "nan"],
    "small_fdtd2d": [{"steps": -3}, {"courant": 5.0}, "nan"],
    "small_dgatd": [{"steps": -3}, {"safety": 5.0}, "nan"],
    "small_fdfd": [{"frequency": -1e9}, "nan"],
}
PARAMS = [(kind, i) for kind, changes in CASES.items() for i in range(len(changes))]


@pytest.fixture
def never_run(monkeypatch):
    """Replace every solver entry point by one that records it was reached."""
    reached = []

    def entry(scenario, name):
        return lambda *a, **k: reached.append((scenario, name))

    monkeypatch.setattr(registry, "entry", entry)
    return reached


@pytest.mark.parametrize(("kind", "case"), PARAMS)
def test_smuggled_values_are_refused_before_any_solver_code(request, never_run, kind, case):
    sim = _with_structure(request.getfixturevalue(kind))()
    change = CASES[kind][case]
    bad = _nan_medium(sim) if change == "nan" else sim.model_copy(update=change)
    calls = [bad.run, bad.estimate] + ([bad.prepare] if isinstance(bad, em.DGATD) else [])
    for call in calls:
        with pytest.raises(pydantic.ValidationError) as err:
            call()
        field = "eps_r" if change == "nan" else next(iter(change))
        assert field in str(err.value), str(err.value)
    with pytest.raises(pydantic.ValidationError):
        em.run(bad)
    assert never_run == []
    # the unchanged scenario reaches its solver
    sim.run()
    assert never_run == [(type(sim).__name__, "run")]


@pytest.mark.parametrize("kind", list(CASES))
@pytest.mark.parametrize("every", [0, -1])
def test_checkpoint_interval_is_refused_before_any_solver_code(request, never_run, kind, every):
    sim = request.getfixturevalue(kind)()
    with pytest.raises(em.SetupError, match="checkpoint_every"):
        sim.run(checkpoint_every=every)
    assert never_run == []


def test_revalidation_takes_milliseconds():
    """Each built-in scenario, the MRI coil (312x328x325 cells) included: the check
    runs in well under a millisecond (0.1-0.3 ms); the bound here, 0.1 s, only keeps
    it from growing into seconds on a shared CPU."""
    for name in builtin_names():
        sim = load_builtin(name)
        registry.validated(sim)  # warm
        t0 = time.perf_counter()
        for _ in range(10):
            assert registry.validated(sim) is sim
        each = (time.perf_counter() - t0) / 10
        assert each < 0.1, f"{name}: re-validation took {each * 1e3:.1f} ms"
