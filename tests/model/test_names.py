"""One name rule for every scenario kind and every monitor (issue #19, item 2).

Names become file names in the output folder (``<name>.h5``, ``<name>_<monitor>.png``),
so a scenario or monitor name is 1 to 100 letters, digits, '_', '-' or '.', not
starting with '.'. Hostile names (path separators, absolute paths, parent folders,
empty, hidden, too long, spaces, control characters) are refused by every scenario
kind and every monitor with a message naming the value and the rule; fine names load.
Also: a checkpoint interval that is not positive is refused before the run, and
results and scenarios save into folders that do not exist yet.
"""

from __future__ import annotations

import numpy as np
import pydantic
import pytest

import emjax as em

HOSTILE = ["../../x", "/tmp/abs", "", ".hidden", "a" * 101, "a b", "a/b", "a\\b", "x\n",
           "..", "名前", "a:b", "a+b"]
FINE = ["fdtd3d", "case-1", "a.b_c", "A9", "x" * 100, "_x", "-x"]


def _fdtd3d(name="s", monitor="p"):
    return em.FDTD3D(name=name, domain=em.Domain(shape=(12, 12, 12), spacing=1e-3), steps=4,
                     boundary=em.CPML(thickness=2),
                     monitors=[em.Probe(name=monitor, positions=[(0, 0, 0)])])


def _fdtd2d(name="s", monitor="p"):
    return em.FDTD2D(name=name, domain=em.Domain2D(shape=(12, 12), spacing=1e-3), steps=4,
                     boundary=em.CPML(thickness=2),
                     monitors=[em.Probe(name=monitor, positions=[(0, 0, 0)],
                                        components=["Ez"])])


def _fdfd(name="s", monitor=None):
    del monitor  # FDFD3D's output is its one scattered-field monitor
    return em.FDFD3D(name=name, domain=em.Domain(size=(0.1, 0.1, 0.1), spacing=0.01),
                     frequency=1e9, boundary=em.PML(thickness=2))


def _dgatd(name="s", monitor="p"):
    return em.DGATD(name=name, mesh=em.BoxMesh(size=(0.3, 0.2, 0.2), edge_length=0.1),
                    steps=4, probes=[em.Probe(name=monitor, positions=[(0.1, 0.1, 0.1)])])


KINDS = [_fdtd3d, _fdtd2d, _fdfd, _dgatd]


@pytest.mark.parametrize("make", KINDS)
@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_scenario_names_are_refused(make, name):
    with pytest.raises(pydantic.ValidationError) as err:
        make(name=name)
    msg = str(err.value)
    assert "name" in msg and "letters, digits" in msg, msg


@pytest.mark.parametrize("make", [_fdtd3d, _fdtd2d, _dgatd])
@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_monitor_names_are_refused(make, name):
    with pytest.raises(pydantic.ValidationError, match="letters, digits"):
        make(monitor=name)


@pytest.mark.parametrize("make", KINDS)
@pytest.mark.parametrize("name", FINE)
def test_fine_names_load_and_round_trip(make, name):
    sim = make(name=name, monitor=name)
    assert sim.name == name
    assert em.load_scenario(sim.to_json()) == sim


def test_every_monitor_type_keeps_the_rule():
    for mon in (em.DFTMonitor(name="ok", size=(1e-3, 1e-3, 0), frequencies=[1e9]),
                em.FieldSnapshot(name="ok", size=(1e-3, 1e-3, 0), interval=2),
                em.EnergyMonitor(name="ok"), em.NearToFar(name="ok", frequencies=[1e9])):
        with pytest.raises(pydantic.ValidationError, match="letters, digits"):
            type(mon)(**{**mon.model_dump(exclude={"type"}), "name": "../up"})


@pytest.mark.parametrize("every", [0, -1, 2.5, True])
def test_checkpoint_interval_must_be_positive(tmp_path, every):
    with pytest.raises(em.SetupError, match="checkpoint_every"):
        _fdtd3d().run(progress=False, checkpoint_every=every,
                      checkpoint_path=tmp_path / "c.h5")
    assert not list(tmp_path.iterdir())


def test_results_and_scenarios_save_into_new_folders(tmp_path):
    sim = _fdtd3d()
    res = sim.run(progress=False)
    out = res.save(tmp_path / "new" / "deeper" / "r.h5")
    back = em.Results.load(out)
    assert np.array_equal(back["p"].data["Ez"], res["p"].data["Ez"])
    path = sim.save(tmp_path / "other" / "s.toml")
    assert em.load_scenario(path) == sim
    leftovers = [p for p in tmp_path.rglob("*.tmp")]
    assert not leftovers
