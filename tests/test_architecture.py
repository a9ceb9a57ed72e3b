"""The layering rules of docs/architecture.md, read off the source tree.

- Imports point down: ``model/`` imports no solver package and not the driver; no
  solver package imports another (``dga/`` and ``fdfd/`` nothing from ``fdtd/``, ...);
  the driver imports no solver; bench and validation do not import each other.
- Nothing changes JAX's configuration at import (``jax.config.update`` only inside
  functions); ``os.environ`` is read only in cli.py (the documented bench and figure
  knobs) and parallel.py (the distributed start-up variables, children's environments).
- Files under src/ stay under 500 lines; a function over 80 lines says why in its
  docstring (the word "long").
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "emjax"
SOLVERS = ("fdtd", "fdfd", "dga")
ENV_READERS = {"cli.py", "parallel.py", "driver/backend.py"}  # paths under src/emjax


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        yield path, ast.parse(path.read_text(), filename=str(path))


def _package(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imported(path: Path, tree: ast.AST) -> set[str]:
    """Top-level emjax packages/modules imported anywhere in the file."""
    out = set()
    depth_pkg = path.relative_to(SRC).parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(depth_pkg[: len(depth_pkg) - (node.level - 1)])
                parts = base + (node.module.split(".") if node.module else [])
                if parts:
                    out.add(parts[0])
                else:  # from . import x / from .. import x at the top package
                    out.update(a.name for a in node.names)
            elif node.module and node.module.startswith("emjax."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("emjax."):
                    out.add(a.name.split(".")[1])
    return out


FORBIDDEN = {
    "model": {*SOLVERS, "driver", "bench", "validation", "cli"},
    "driver": {*SOLVERS, "bench", "validation", "cli", "scenarios"},
    "fdtd": {"fdfd", "dga", "bench", "validation", "cli"},
    "fdfd": {"fdtd", "dga", "bench", "validation", "cli"},
    "dga": {"fdtd", "fdfd", "bench", "validation", "cli"},
    "bench": {"validation", "cli"},
    "validation": {"bench", "cli"},
    "grid": {*SOLVERS, "driver", "bench", "validation", "cli"},
    "materials": {*SOLVERS, "driver", "bench", "validation", "cli"},
    "eigenmode": {*SOLVERS, "driver", "bench", "validation", "cli", "analysis"},
}


def test_imports_point_down():
    bad = []
    for path, tree in _modules():
        pkg = _package(path)
        hits = _imported(path, tree) & FORBIDDEN.get(pkg, set())
        if hits:
            bad.append(f"{path.relative_to(SRC)} imports {sorted(hits)}")
    assert not bad, "\n".join(bad)


def test_no_configuration_at_import_and_no_stray_environment_reads():
    bad = []
    for path, tree in _modules():
        functions = {id(n) for f in ast.walk(tree)
                     if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                     for n in ast.walk(f)}
        for node in ast.walk(tree):
            text = ast.unparse(node) if isinstance(node, ast.Call) else ""
            if text.startswith("jax.config.update(") and id(node) not in functions:
                bad.append(f"{path.relative_to(SRC)}:{node.lineno} {text}")
            if (isinstance(node, ast.Attribute) and node.attr == "environ"
                    and str(path.relative_to(SRC)) not in ENV_READERS):
                bad.append(f"{path.relative_to(SRC)}:{node.lineno} reads os.environ")
    assert not bad, "\n".join(bad)


def test_files_and_functions_stay_short():
    bad = []
    for path, tree in _modules():
        n = len(path.read_text().splitlines())
        if n > 500:
            bad.append(f"{path.relative_to(SRC)}: {n} lines")
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                doc = ast.get_docstring(node) or ""
                if length > 80 and "long" not in doc.lower():
                    bad.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}: "
                               f"{length} lines, no reason in its docstring")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("module", ["emjax.fdtd.update3d", "emjax.fdtd.update2d",
                                    "emjax.fdtd.dispersive",
                                    "emjax.dga.step", "emjax.fdfd.operator",
                                    "emjax.driver.loop"])
def test_kernels_load_without_pydantic(module):
    """Kernel modules and the driver are pure JAX: importing them loads no pydantic."""
    import subprocess
    import sys

    code = (f"import sys, {module}; "
            "sys.exit(1 if any(m.startswith('pydantic') for m in sys.modules) else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, f"{module} loads pydantic\n{out.stderr[-2000:]}"
