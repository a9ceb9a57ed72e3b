"""The ``car-rcs`` scenario's car as one closed surface mesh, ``car.stl`` beside this file.

The car of seed 001 that the scenario first built from primitives: a lower body, a
cabin and a windscreen step (boxes, 4.2 m long, 1.24 m tall) and four wheels
(cylinders of radius 0.31 m, 48 facets round). The parts are closed, consistently
wound surfaces stored together in one binary STL (40 kB); where they overlap (the
wheels in the body) the non-zero winding rule of :mod:`emjax.grid.cad` fills their
union, as the primitives painted in order did. ``car.stl`` was written once by
:func:`write` (``python -m emjax.scenarios.car PATH``); a test checks that it still
equals :func:`car_mesh`.
"""

from __future__ import annotations

import sys

BOXES = (  # (centre, size) in m
    ((0.0, 0.0, -0.145), (4.2, 1.7, 0.55)),  # lower body, z in [-0.42, 0.13]
    ((-0.2, 0.0, 0.37), (2.2, 1.44, 0.5)),  # cabin, z in [0.12, 0.62]
    ((1.09, 0.0, 0.235), (0.42, 1.44, 0.23)),  # windscreen step, x in [0.88, 1.3]
)
"""The boxes reach 1 cm into their neighbours (the primitives only touched) so that no
two parts share a vertex: merged, a shared vertex would join four faces on an edge and
the file would not be watertight. The union is the primitives' one."""
WHEELS = tuple((sx * 1.35, sy * 0.76, -0.31) for sx in (1, -1) for sy in (1, -1))
"""Wheel centres in m; axis along y, radius 0.31 m, width 0.22 m."""
SECTIONS = 48
"""Facets round a wheel."""


def car_mesh():
    """The car as one ``trimesh.Trimesh`` (m): the parts concatenated, each closed."""
    import numpy as np
    import trimesh

    parts = [trimesh.creation.box(extents=s, transform=trimesh.transformations.
                                  translation_matrix(c)) for c, s in BOXES]
    turn = trimesh.transformations.rotation_matrix(np.pi / 2, (1, 0, 0))  # z axis -> y
    for c in WHEELS:
        w = trimesh.creation.cylinder(radius=0.31, height=0.22, sections=SECTIONS)
        w.apply_transform(trimesh.transformations.translation_matrix(c) @ turn)
        parts.append(w)
    return trimesh.util.concatenate(parts)


def write(path: str) -> None:
    """Write :func:`car_mesh` as a binary STL."""
    car_mesh().export(path, file_type="stl")


if __name__ == "__main__":  # pragma: no cover
    write(sys.argv[1] if len(sys.argv) > 1 else "car.stl")
