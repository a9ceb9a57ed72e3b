"""Files a scenario reads (``Voxels.file``, ``MeshFile.path``): where they are and
whether they can be read.

A relative path in a scenario *file* is read from that file's folder:
:func:`emjax.load_scenario` passes the folder in the validation context under
:data:`SCENARIO_DIR`, and the model stores the absolute path, so that a saved scenario
or a checkpoint's stored copy still points at the same file when run from elsewhere.
A scenario given as text, a dict or Python objects keeps its paths as given (read
from the current working directory). Messages name the absolute path.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ValidationInfo

SCENARIO_DIR = "scenario_dir"
"""Validation-context key: the absolute folder of the scenario file being loaded."""

MESH_SUFFIXES = (".msh", ".vtu", ".vtk", ".xdmf", ".xmf", ".mesh", ".meshb", ".med", ".inp",
                 ".h5m", ".e", ".exo", ".ex2", ".node", ".ele", ".avs", ".f3grid", ".dat",
                 ".tec", ".ugrid", ".su2", ".bdf", ".fem", ".nas", ".cgns", ".post", ".post.gz",
                 ".dato", ".dato.gz", ".hmf", ".mdpa", ".vol", ".vol.gz", ".xml")
"""Suffixes of the meshio formats that can hold tetrahedra (surface-only formats such as
.stl, .obj, .off, .ply are left out)."""


def resolved(value: str, base: str | Path | None = None) -> Path:
    """``value`` as an absolute path: relative to ``base`` (a folder), else to the
    current working directory. ``..`` is folded, links are not followed."""
    path = Path(value)
    if not path.is_absolute():
        path = Path(base or Path.cwd()) / path
    return Path(os.path.normpath(path))


def file_problem(path: Path, what: str) -> str | None:
    """Why ``path`` cannot be a non-empty input file (``what`` names it in the
    message), or None. Checks existence, type and size, reads nothing."""
    try:
        if not path.exists():
            return f"{what} '{path}' does not exist"
        if not path.is_file():
            return f"{what} '{path}' is not a regular file"
        if path.stat().st_size == 0:
            return f"{what} '{path}' is empty (0 bytes)"
    except (OSError, ValueError) as e:  # a name too long or holding a NUL byte
        return f"{what} '{path}' cannot be inspected ({e})"
    return None


def mesh_suffix_problem(path: Path) -> str | None:
    """Why meshio would not know the format of ``path`` from its name, or None."""
    if path.name.lower().endswith(MESH_SUFFIXES):
        return None
    return (f"mesh file '{path}' has the suffix '{''.join(path.suffixes) or '(none)'}', "
            f"which is not a volume mesh format meshio reads; use one of "
            f"{', '.join(MESH_SUFFIXES)}")


def scenario_file(value: str, info: ValidationInfo, what: str, *, mesh: bool = False) -> str:
    """The path a scenario field stores (a field validator's body): resolved against
    the scenario file's folder when loading a file (and then checked to exist), else
    kept as given. ``mesh``: the suffix must be a meshio volume format."""
    base = (info.context or {}).get(SCENARIO_DIR)
    path = resolved(value, base)
    problem = mesh_suffix_problem(path) if mesh else None
    if problem is None and base is not None:
        problem = file_problem(path, what)
    if problem:
        hint = " (relative paths are read from the scenario file's folder)" if base else ""
        raise ValueError(problem + hint)
    return str(path) if base is not None else value


__all__ = ["MESH_SUFFIXES", "SCENARIO_DIR", "file_problem", "mesh_suffix_problem", "resolved",
           "scenario_file"]
