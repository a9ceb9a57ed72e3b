"""Quantities with units in scenario files (:mod:`emjax.model.units`): a scenario written
with units loads equal to the same scenario in SI numbers; a wrong dimension, an
unknown or non-finite quantity, or a unit where the field fixes none is refused with
the field, the value and what is expected."""

from __future__ import annotations

import pytest

from emjax.model.load import load_scenario
from emjax.model.units import field_unit

SI = """
name = "u"
duration = 6e-9
[domain]
size = [0.3, 0.3, 0.3]
spacing = 7.5e-3
[boundary]
type = "CPML"
thickness = 8
sigma_max = 2.5
[[structures]]
geometry = { type = "Sphere", center = [0.05, 0.0, 0.0], radius = 0.035 }
medium = { type = "Medium", eps_r = 4.0, sigma = 0.01 }
[[sources]]
type = "PointDipole"
position = [0.0, 0.0, 0.0]
polarization = "z"
waveform = { type = "GaussianPulse", f0 = 1e9, fwidth = 0.3e9 }
[[monitors]]
type = "DFTMonitor"
name = "dft"
center = [0.0, 0.0, 0.0]
size = [0.16, 0.16, 0.0]
frequencies = [1e9, 3e8]
components = ["Ez"]
"""

UNITS = (SI.replace("duration = 6e-9", 'duration = "6 ns"')
         .replace("spacing = 7.5e-3", 'spacing = "7.5 mm"')
         .replace("sigma_max = 2.5", 'sigma_max = "2.5 S/m"')
         .replace("center = [0.05, 0.0, 0.0], radius = 0.035",
                  'center = ["5 cm", 0.0, "0 m"], radius = "35 mm"')
         .replace("sigma = 0.01", 'sigma = "10 mS/m"')
         .replace("f0 = 1e9, fwidth = 0.3e9", 'f0 = "1 GHz", fwidth = "300 MHz"')
         .replace("size = [0.16, 0.16, 0.0]", 'size = ["160 mm", 0.16, 0]')
         .replace("frequencies = [1e9, 3e8]", 'frequencies = ["1 GHz", "300 MHz"]'))


def test_units_load_equal_to_si(tmp_path):
    assert UNITS != SI and UNITS.count('"') > SI.count('"') + 20
    (tmp_path / "si.toml").write_text(SI)
    (tmp_path / "units.toml").write_text(UNITS)
    a = load_scenario(tmp_path / "si.toml")
    b = load_scenario(tmp_path / "units.toml")
    assert _close(a.model_dump(), b.model_dump())
    assert b.duration == pytest.approx(6e-9, rel=1e-12)
    assert b.monitors[0].frequencies == pytest.approx((1e9, 3e8), rel=1e-12)


def _close(x, y) -> bool:
    """Nested equality with floats to 1e-12 (pint's prefixes are exact to rounding)."""
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(_close(x[k], y[k]) for k in x)
    if isinstance(x, list | tuple):
        return len(x) == len(y) and all(_close(u, v) for u, v in zip(x, y, strict=True))
    if isinstance(x, float):
        return x == pytest.approx(y, rel=1e-12, abs=1e-300)
    return x == y


def _error(tmp_path, old: str, new: str) -> str:
    (tmp_path / "bad.toml").write_text(SI.replace(old, new))
    with pytest.raises(ValueError) as info:
        load_scenario(tmp_path / "bad.toml")
    return str(info.value)


@pytest.mark.parametrize("new, words", [
    ('radius = "1 GHz"', ["radius = '1 GHz'", "in m", "[length]"]),
    ('radius = "1e999 m"', ["radius = '1e999 m'", "finite"]),
    ('radius = "nan m"', ["radius = 'nan m'", "finite"]),
    ('radius = "1 GHz GHz"', ["radius = '1 GHz GHz'", "in m"]),
    ('radius = "35 blargs"', ["radius = '35 blargs'", "not a number with a unit"]),
])
def test_bad_quantities_are_refused_naming_field_value_and_unit(tmp_path, new, words):
    msg = _error(tmp_path, "radius = 0.035", new)
    assert all(w in msg for w in words), msg
    assert "structures[0].geometry" in msg, msg


def test_unitless_fields_and_angular_frequencies(tmp_path):
    msg = _error(tmp_path, "eps_r = 4.0", 'eps_r = "4 m"')
    assert "eps_r = '4 m'" in msg and "plain number" in msg, msg
    from emjax.model.dispersion import DrudePole

    assert DrudePole(omega_p="1e10 rad/s", gamma=0).omega_p == 1e10
    with pytest.raises(ValueError, match="2 pi off"):
        DrudePole(omega_p="1 GHz", gamma=0)


def test_bare_numbers_and_numeric_strings_unchanged():
    import emjax as em

    assert em.Sphere(radius=0.5).radius == 0.5
    assert em.Sphere(radius="0.5").radius == 0.5  # pydantic's lax number parsing, as before
    assert em.PlaneWave.model_fields["theta"].description.endswith("degrees.")
    assert field_unit("Polar angle of k from +z, degrees.") == "deg"
    assert field_unit("Peak current in A or voltage in V.") is None
    assert field_unit("Peak conductivity in S/m; default 0.8") == "S/m"
    assert field_unit("Relative permittivity (dimensionless, 1e-6 to 1e9).") is None
