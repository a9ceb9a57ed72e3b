"""The records of `emjax validate` and `emjax bench` (emjax.records), without JAX solvers.

A Check and a Measurement read as the JSON mapping the command prints (keys, order,
"pass" for ``passed``, ``extra`` after the standard keys, ``error`` only when set) and
come back from it unchanged; ``call_case`` passes a case only the options it declares.
"""

from __future__ import annotations

import json

import numpy as np

from emjax.records import Check, Measurement, call_case


def test_check_reads_as_its_json():
    c = Check("c", "m", np.float32(0.25), 1, "dB", np.bool_(True), extra={"steps": 3})
    assert list(c) == ["case", "metric", "value", "limit", "bound", "unit", "pass", "steps"]
    assert c["pass"] is True and c["value"] == 0.25 and c.get("limit") == 1.0
    assert dict(c) == {"case": "c", "metric": "m", "value": 0.25, "limit": 1.0, "bound": "<=",
                       "unit": "dB", "pass": True, "steps": 3}
    assert "error" not in c
    assert Check.from_json(json.loads(json.dumps(c.to_json()))) == c


def test_failures_carry_the_message():
    f = Check.failure("boom", "InstabilityError: fields blew up")
    assert dict(f) == {"case": "boom", "metric": "error", "value": None, "limit": None,
                       "bound": "<=", "unit": "", "pass": False,
                       "error": "InstabilityError: fields blew up"}
    m = Measurement.failure("step", "SetupError: no")
    assert dict(m) == {"case": "step", "size": None, "metric": "error", "value": None,
                       "unit": "", "device": None, "error": "SetupError: no"}


def test_measurement_keys_and_device():
    m = Measurement("step", [16, 16, 16], "cells_per_s", 1.5e8, "cells/s", "cpu")
    assert list(m) == ["case", "size", "metric", "value", "unit", "device"]
    assert m.to_json() == {"case": "step", "size": [16, 16, 16], "metric": "cells_per_s",
                           "value": 1.5e8, "unit": "cells/s", "device": "cpu"}


def test_call_case_passes_declared_options_only():
    def plain() -> list:
        return ["plain"]

    def drawing(figures: str = "out") -> list:
        return [figures]

    def open_ended(**kw) -> list:  # kw: scenario overrides, handed on to a scenario
        return [sorted(kw)]

    def both(figures: str = "out", **kw) -> list:
        return [figures, sorted(kw)]

    opts = {"figures": "here", "fdfd_sizes": (8,)}
    assert call_case(plain, **opts) == ["plain"]
    assert call_case(drawing, **opts) == ["here"]
    assert call_case(drawing) == ["out"]
    # a case's **kw takes no command option: they would reach its scenario builder
    assert call_case(open_ended, **opts) == [[]]
    assert call_case(both, **opts) == ["here", []]
