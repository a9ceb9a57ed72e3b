"""Placement rules about PML slabs shared by the 3D and 2D scenarios: problems
(one line each, naming the face or coordinate) that the models' validators collect."""

from __future__ import annotations

from collections.abc import Sequence


def thick_pml_problems(pml: Sequence[tuple[int, int]], cells: Sequence[int],
                       kind: str) -> list[str]:
    """One problem (or none) naming every face whose PML (``kind``: "CPML", "PML") is
    more than a third of the cells along its axis; ``pml`` holds (low, high) cells."""
    faces = [(f"{side} {ax}", t, cells[a]) for a, ax in enumerate("xyz"[:len(cells)])
             for side, t in zip(("low", "high"), pml[a], strict=True) if t > cells[a] / 3]
    if not faces:
        return []
    if len({(t, n) for _, t, n in faces}) == 1:
        t, n = faces[0][1:]
        which = ("every face" if len(faces) == 2 * len(cells) else
                 f"the {_listed([f for f, _, _ in faces])} face{'s' * (len(faces) > 1)}")
        axes = sorted({f.split()[1] for f, _, _ in faces})
        return [f"boundary: the {kind} is {t} cells thick on {which}, more than a third of "
                f"the {n} cells along {_listed(axes)}; thin the {kind} or enlarge the domain"]
    return [f"boundary: the {kind} is more than a third of the cells along its axis on the "
            + _listed([f"{f} face ({t} of {n} cells)" for f, t, n in faces])
            + f"; thin the {kind} or enlarge the domain"]


def pml_interior_problem(ax: str, x: float, lo: float, hi: float, tol: float,
                         kind: str) -> str | None:
    """Why coordinate ``x`` (m) along ``ax`` lies in the PML, the interior being [lo, hi]
    m; None when it does not, or when the PMLs leave no interior along ``ax`` (lo >= hi;
    they are then at least half the cells): :func:`thick_pml_problems` reports that once
    for every point."""
    if lo >= hi - tol or lo - tol <= x <= hi + tol:
        return None
    return (f"{ax} = {x:.6g} m lies inside the {kind} (interior is [{lo:.6g}, {hi:.6g}] m); "
            f"move it inward or thin the {kind}")


def _listed(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
