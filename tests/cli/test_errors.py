"""The messages of issue 26's error cases: one line per problem, ``path = value: what is
allowed``, no pydantic internals, "did you mean" for keys, type tags and names, one CPML
message for all faces, and the validate table's limits as they are checked. No solver runs."""

from __future__ import annotations

import sys
import types

import pydantic
import pytest

from emjax import cli
from emjax.errors import SetupError
from emjax.model import load_scenario
from emjax.records import Check
from emjax.scenarios import load_builtin

BASE = """\
steps = 10
[domain]
size = [0.04, 0.04, 0.04]
spacing = 1e-3
[boundary]
type = "CPML"
thickness = 4
"""
INTERNALS = ("tagged-union", "function-after", "input_value", "Input should", ".Sphere.",
             ".Medium.", "FDTD3D.")


def _problems(text: str) -> list[str]:
    """The problem lines of an invalid scenario's message; pydantic's own error is kept."""
    with pytest.raises(pydantic.ValidationError) as info:
        load_scenario(text)
    err = info.value
    assert isinstance(err, SetupError) and isinstance(err.__cause__, pydantic.ValidationError)
    assert err.errors() == err.__cause__.errors()  # the raw problems, for Python users
    msg = str(err)
    assert not any(s in msg for s in INTERNALS), msg
    title, *lines = msg.splitlines()
    assert title == f"{len(lines)} problem{'s' * (len(lines) != 1)} in the scenario:", msg
    return [ln.strip() for ln in lines]


def test_a_mistyped_key_gets_its_closest_name():
    assert _problems(BASE.replace("spacing", "spcing")) == [
        "domain.spacing: required, not given",
        "domain.spcing = 0.001: unknown key; did you mean 'spacing'?"]


def test_a_mistyped_type_tag_gets_its_closest_tag_and_each_problem_its_own_line():
    text = BASE + """
[[structures]]
geometry = { type = "Spher", radius = 0.01 }
medium = { type = "Medium", eps_r = 4.0 }
[[structures]]
geometry = { type = "Sphere", radius = -1 }
medium = { type = "Medium", eps_r = -4.0 }
"""
    assert _problems(text) == [
        "structures[0].geometry.type = 'Spher': unknown type; did you mean 'Sphere'? "
        "(allowed: Box, Sphere, Cylinder, Ellipsoid, Voxels, Mesh, GdsExtrusion)",
        "structures[1].geometry.radius = -1: should be greater than 0",
        "structures[1].medium.eps_r = -4.0: should be greater than or equal to 0.000001"]


def test_a_thick_cpml_is_one_message_for_every_face_and_no_backwards_interval():
    text = BASE.replace("thickness = 4", "thickness = 25") + """
[[monitors]]
type = "Probe"
name = "p"
positions = [[0.01, 0.0, 0.0]]
"""
    (line,) = _problems(text)
    assert line == ("boundary: the CPML is 25 cells thick on every face, more than a third "
                    "of the 40 cells along x, y and z; thin the CPML or enlarge the domain")


def test_a_point_in_the_cpml_names_the_interior_low_to_high():
    text = BASE + """
[[monitors]]
type = "Probe"
name = "p"
positions = [[0.0, 0.0, -0.019]]
"""
    (line,) = _problems(text)
    assert line.endswith("z = -0.019 m lies inside the CPML (interior is [-0.016, 0.016] m); "
                         "move it inward or thin the CPML"), line


def test_a_mistyped_scenario_or_case_name_gets_its_closest_name(capsys, monkeypatch):
    with pytest.raises(SetupError, match=r"unknown built-in scenario 'dipole-cub'; did you "
                                         r"mean 'dipole-cube'\?"):
        load_builtin("dipole-cub")
    fake = types.ModuleType("emjax.validation")
    fake.CASES = {"fdtd3d-cavity": list, "fdtd3d-energy": list}
    monkeypatch.setitem(sys.modules, "emjax.validation", fake)
    assert cli.main(["validate", "fdtd3d-cavty"]) == 2
    assert "did you mean 'fdtd3d-cavity'?" in capsys.readouterr().err


def test_the_validate_table_prints_limits_as_checked_and_stays_aligned(capsys, monkeypatch):
    long = "a-validation-case-named-at-length"
    fake = types.ModuleType("emjax.validation")
    fake.CASES = {long: lambda: [
        Check(long, "observed order", 1.93, 2.0, "", True, bound=(1.8, 2.2)),
        Check(long, "max |r| error", 6.1e-3, 5e-3, "", False),
        Check(long, "order of [x] error", 1.8, 1.7, "", True, bound=">=")]}
    monkeypatch.setitem(sys.modules, "emjax.validation", fake)
    assert cli.main(["validate", "all"]) == 1
    out = capsys.readouterr().out.splitlines()
    header, rows = out[0], [ln for ln in out[1:-1] if ln.startswith("a-validation")]
    assert [r[header.index("limit"):].split()[:2] for r in rows] == [
        ["[1.8,", "2.2]"], ["<=", "0.005"], [">=", "1.7"]], out
    for r, result in zip(rows, ("PASS", "FAIL", "PASS"), strict=True):
        assert r[header.index("value"):].split()[0] in ("1.93", "0.0061", "1.8")
        assert r[header.index("result"):] == result, out
    with pytest.raises(ValueError, match="bound '=<' is not one of"):
        Check(long, "m", 1.0, 1.0, "", True, bound="=<")
