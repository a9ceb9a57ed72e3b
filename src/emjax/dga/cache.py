"""The DGATD set-up's stage clock and its disk cache (issue #24, item 1).

:class:`Stages` times the set-up stage by stage (seconds, ``perf_counter``); the run's
metadata carries them as ``setup_stages``.

The cache keeps what :func:`emjax.dga.solver.prepare` builds (the renumbered mesh, the
complex, the fractioned operators and the spectral radius of the time-step bound) in
one uncompressed ``.npz`` per set-up, named by a SHA-256 digest of everything those
arrays depend on: the mesh description (a mesh file by its bytes), ``renumber``, the
media (background and regions), the kernels' layout and :data:`CACHE_VERSION`. The
layout is rebuilt from the operators (index maps, milliseconds). Dtype, safety,
duration, sources and probes are not in the key: dt is ``safety`` times the bound from
the cached rho, and the sources and probes are checked and placed on every run.

Folder (:func:`cache_dir`, set by :func:`emjax.driver.compile_cache.setup_cache`, which
``emjax run`` enters with the compilation cache's setting): ``$EMJAX_CACHE_DIR/dga``
when the variable names a folder, none when it is ``off`` (or ``--no-cache``), else
``<user cache>/emjax/dga`` beside JAX's ``<user cache>/emjax/jax``; in Python, off
unless a block is run ``with setup_cache(...)``.
Nothing is written outside it; a file is written under a temporary name and renamed,
so a reader never sees half of one. A file that cannot be read, fails zip's CRC check
or does not hold the key it is named by is rebuilt and overwritten (``setup_cache``
``"rebuilt"``); a folder that cannot be written leaves the run uncached.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os  # getpid for temporary names, replace
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .complex import Complex
from .mass import Bucket, Operators
from .mesh import TetMesh

CACHE_VERSION = 1
"""Bumped whenever the arrays built for a key change (a cache from before is then missed)."""

_CX = ("nodes", "tets", "orientation", "volumes", "edges", "tet_edges", "edge_boundary",
       "node_boundary", "degree", "slot", "tets_per_edge")
_OPS = ("A", "Mmu", "hs", "he", "pec", "he_pos")
_BUCKET = ("nodes", "edge", "free", "Minv_s", "Meps", "sign")


class Stages(dict):
    """Seconds per set-up stage, in the order run: ``with stages("renumbering"): ...``
    (a stage run twice adds up)."""

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self[name] = self.get(name, 0.0) + time.perf_counter() - t0


def cache_dir() -> Path | None:
    """The set-up cache's folder (module docstring), None when switched off."""
    from ..driver.compile_cache import setup_cache_folder

    return setup_cache_folder()


def cache_key(sim, kernels: str) -> str:
    """Hex SHA-256 of what the cached arrays depend on (module docstring)."""
    mesh = sim.mesh.model_dump(mode="json")
    h = hashlib.sha256()
    if mesh.get("type") == "file":  # the file's bytes, not just its name
        from ..model.files import resolved

        with open(resolved(str(sim.mesh.path)), "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    what = {"version": CACHE_VERSION, "mesh": mesh, "renumber": sim.renumber,
            "background": sim.background.model_dump(mode="json"),
            "regions": [r.model_dump(mode="json") for r in sim.regions], "kernels": kernels}
    h.update(json.dumps(what, sort_keys=True).encode())
    return h.hexdigest()


def save(folder: Path, key: str, mesh: TetMesh, cx: Complex, ops: Operators,
         rho: float) -> Path | None:
    """Write the set-up's arrays to ``folder/<key>.npz``; None when the folder cannot be
    written (the run goes on uncached)."""
    arrays = {"key": np.array(key), "rho": np.array(rho), "nu": np.array(ops.nu),
              "mesh_nodes": mesh.nodes, "mesh_tets": mesh.tets, "mesh_regions": mesh.regions,
              "mesh_flipped": np.array(mesh.flipped), "nbuckets": np.array(len(ops.buckets))}
    arrays.update({f"cx_{n}": getattr(cx, n) for n in _CX})
    arrays.update({f"ops_{n}": getattr(ops, n) for n in _OPS})
    for k, b in enumerate(ops.buckets):
        arrays.update({f"b{k}_{n}": getattr(b, n) for n in _BUCKET})
        arrays[f"b{k}_meta"] = np.array([b.width, b.offset])
        if b.Msig is not None:
            arrays[f"b{k}_Msig"] = b.Msig
    path = folder / f"{key}.npz"
    tmp = folder / f".{key}.{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return None
    return path


def load(folder: Path, key: str) -> tuple[str, tuple | None]:
    """(verdict, (mesh, cx, ops, rho) or None): ``"hit"``; ``"miss"`` (no file);
    ``"rebuilt"`` (a file unreadable, corrupt or of another key: build again)."""
    path = folder / f"{key}.npz"
    if not path.is_file():
        return "miss", None
    try:
        with np.load(path, allow_pickle=False) as z:
            a = {n: z[n] for n in z.files}  # reading each member checks its CRC
        if str(a["key"]) != key:
            return "rebuilt", None
        mesh = TetMesh.trusted(a["mesh_nodes"], a["mesh_tets"], a["mesh_regions"],
                               int(a["mesh_flipped"]))
        cx = Complex(**{n: a[f"cx_{n}"] for n in _CX})
        buckets = []
        for k in range(int(a["nbuckets"])):
            w, off = (int(v) for v in a[f"b{k}_meta"])
            buckets.append(Bucket(width=w, offset=off, Msig=a.get(f"b{k}_Msig"),
                                  **{n: a[f"b{k}_{n}"] for n in _BUCKET}))
        ops = Operators(cx=cx, buckets=buckets, nu=int(a["nu"]),
                        **{n: a[f"ops_{n}"] for n in _OPS})
        _consistent(mesh, cx, ops)
        return "hit", (mesh, cx, ops, float(a["rho"]))
    except (OSError, KeyError, ValueError, TypeError, zipfile.BadZipFile, EOFError):
        return "rebuilt", None


def _consistent(mesh: TetMesh, cx: Complex, ops: Operators) -> None:
    """Shapes that must agree (a file of another layout of arrays raises ValueError)."""
    nt, ne = mesh.num_tets, cx.num_edges
    ok = (cx.tets.shape == (nt, 4) and cx.tet_edges.shape == (nt, 6)
          and ops.Mmu.shape == (4, 4, nt) and ops.A.shape == (4, 6, nt)
          and ops.he_pos.shape == (ne, 2) and ops.pec.shape == (ne,)
          and sum(b.width * b.count for b in ops.buckets) == ops.nu)
    if not ok:
        raise ValueError("cached arrays of inconsistent shapes")


__all__ = ["CACHE_VERSION", "Stages", "cache_dir", "cache_key", "load", "save"]
