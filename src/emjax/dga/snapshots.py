"""DGATD snapshot monitors written for ParaView through meshio (XDMF time series or
one VTU file per frame)."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import SetupError
from .mesh import TetMesh


def write_snapshots(res, name: str, mesh: TetMesh, path: str | Path) -> list[Path]:
    """Write a snapshot monitor for ParaView (meshio): ``.xdmf`` one time series file
    (plus its .h5), ``.vtu`` one file per frame ``<stem>_<k>.vtu`` (ParaView groups them).
    Cell data E (V/m) and H (A/m), tet averages, shape (nt, 3). ``mesh`` must be the
    solver's (``DGASolver.setup.mesh``), whose tet order the data follow. Returns the
    files written (the .xdmf, or the .vtu frames)."""
    import meshio

    md = res[name]
    path = Path(path)
    cells = [("tetra", mesh.tets)]  # positively oriented, in the solver's tet order
    if path.suffix == ".vtu":
        out = []
        for k in range(len(md.coords["t"])):
            p = path.with_name(f"{path.stem}_{k:04d}.vtu")
            meshio.Mesh(mesh.nodes, cells, cell_data={
                "E": [md.data["E"][k].T], "H": [md.data["H"][k].T]}).write(str(p))
            out.append(p)
        return out
    if path.suffix != ".xdmf":
        raise SetupError(f"snapshot file '{path}': give a .xdmf or .vtu path")
    # meshio's TimeSeriesWriter puts its .h5 in the working folder, whatever folder the
    # .xdmf names (it would land outside the output folder and over a file there): it
    # writes from the .xdmf's own folder
    here = os.getcwd()
    os.chdir(path.resolve().parent)
    try:
        with meshio.xdmf.TimeSeriesWriter(path.name) as w:
            w.write_points_cells(mesh.nodes, cells)
            for k, t in enumerate(md.coords["t"]):
                w.write_data(float(t), cell_data={"E": [md.data["E"][k].T],
                                                  "H": [md.data["H"][k].T]})
    finally:
        os.chdir(here)
    return [path]
