"""The package as a newcomer meets it: licence, typing marker, namespace, quiet results.

* LICENSE is the MIT text and pyproject declares it in the SPDX form (``license = "MIT"``,
  ``license-files``), which setuptools >= 77 builds without its licence-table warning.
* ``py.typed`` sits in the ``emjax`` package and pyproject ships it as package data.
* ``dir(emjax)`` holds no import leftovers (``annotations``, ``importlib``, private
  names); every name it lists, and every name of ``__all__``, resolves.
* ``import emjax`` changes no environment; a solver's set-up asks XLA for an on-demand
  GPU pool (``XLA_PYTHON_CLIENT_PREALLOCATE`` "false") unless the user set the variable,
  whose value then stays.
* FDFD with RCS on an empty domain (RCS exactly zero) gives -inf dBsm without NumPy's
  divide-by-zero RuntimeWarning (a 13^3 vacuum grid: about 3 s on one core).
"""

from __future__ import annotations

import importlib.resources
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import emjax

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_licence_is_mit_and_declared_in_spdx_form():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "the emjax developers" in text
    project = _pyproject()["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    setuptools_req = _pyproject()["build-system"]["requires"]
    assert any(r.replace(" ", "").startswith("setuptools>=") and
               int(r.split(">=")[1].split(".")[0]) >= 77 for r in setuptools_req), \
        f"the SPDX licence needs setuptools >= 77, build-system requires {setuptools_req}"


def test_py_typed_is_in_the_package_and_shipped():
    assert (importlib.resources.files("emjax") / "py.typed").is_file()
    assert "py.typed" in _pyproject()["tool"]["setuptools"]["package-data"]["emjax"]


def test_dir_lists_public_names_only():
    names = dir(emjax)
    leftovers = {"annotations", "importlib"} & set(names)
    assert not leftovers, f"import leftovers in dir(emjax): {sorted(leftovers)}"
    assert not [n for n in names if n.startswith("_") and n != "__version__"]
    assert set(emjax.__all__) <= set(names)
    assert "__version__" in names and "FDTD3D" in names and "Results" in names
    for name in names:
        getattr(emjax, name)  # every listed name resolves
    with pytest.raises(AttributeError, match="no attribute 'annotations'"):
        emjax.annotations  # noqa: B018


@pytest.mark.parametrize("preset", [None, "true", "false"])
def test_gpu_pool_grows_on_demand_unless_the_user_chose(preset):
    env = {k: v for k, v in os.environ.items() if k != "XLA_PYTHON_CLIENT_PREALLOCATE"}
    if preset is not None:
        env["XLA_PYTHON_CLIENT_PREALLOCATE"] = preset
    code = ("import os, emjax as em\n"
            "before = os.environ.get('XLA_PYTHON_CLIENT_PREALLOCATE')\n"
            "from emjax.fdtd.solver import FDTDSolver\n"
            "FDTDSolver(em.FDTD3D(domain=em.Domain(shape=(6, 6, 6), spacing=1e-3), steps=2,\n"
            "                     boundary=em.PEC()))\n"
            "print(before, os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'])")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == [str(preset), preset or "false"]


def test_zero_rcs_is_minus_infinity_without_a_warning():
    sim = emjax.FDFD3D(domain=emjax.Domain(size=(0.32, 0.32, 0.32), spacing=0.024),
                       frequency=1e9, boundary=emjax.PML(thickness=3), rcs=True,
                       rcs_angles=5, solver=emjax.FDFDSolver(tol=1e-6, max_iter=50))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.warns(emjax.EmjaxWarning, match="too thin"):  # 3 cells: kept cheap
            res = sim.run(progress=False)
    for key in ("rcs_E_dBsm", "rcs_H_dBsm"):
        assert np.all(np.isneginf(res.metadata[key])), (key, res.metadata[key])
