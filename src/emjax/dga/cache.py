"""The DGATD set-up's stage clock and its disk cache (issue #24, item 1).

:class:`emjax.driver.stages.Stages` times the set-up stage by stage (seconds); the run's
metadata carries them as ``setup_stages``.

The cache keeps what :func:`emjax.dga.solver.prepare` builds (the renumbered mesh, the
complex, the fractioned operators and the spectral radius of the time-step bound) in
one folder per set-up, ``<key>/``, of uncompressed ``.npy`` arrays and a
``manifest.json``; ``key`` is a SHA-256 digest of everything those arrays depend on:
the mesh description (a mesh file by its bytes), ``renumber`` and its node order, the
media (background and regions) and :data:`CACHE_VERSION`. The index maps of the layout
of the run that wrote the folder are kept with them; a run whose kernels differ
(``auto`` chooses by the run's length) makes its own layout, which the power iteration
does not need.
Kernels, dtype, safety, duration, sources and probes are not in the key: dt is
``safety`` times the bound from the cached rho, and the sources and probes are checked
and placed on every run. Arrays formed from these for a run are
kept beside them, each in a sub-folder (:func:`kept`): the kernels' arrays, which
depend on dt and the dtype as well (:func:`emjax.dga.arrays.kernel_arrays`), in
``<key>/kernels-<digest of dt, dtype, kernels>/`` (:func:`kernel_key`), and the energy
monitor's packed mass matrices, which depend on the dtype only
(:func:`emjax.dga.arrays.energy_arrays`), in ``<key>/energy-<dtype>/``
(:func:`energy_key`); a folder from before these sub-folders is still read (they are
then built and added).

A hit memory-maps the arrays read-only instead of reading them: a run touches only
the pages it needs (no whole-file read; at 20.8M DoFs the read of one ``.npz`` with
its CRC checks took 3.6 s of a 17.3 s set-up on an H100's host), and nothing can
change a cached array in place.

Folder (:func:`cache_dir`, set by :func:`emjax.driver.compile_cache.setup_cache`, which
``emjax run`` enters with the compilation cache's setting): ``$EMJAX_CACHE_DIR/dga``
when the variable names a folder, none when it is ``off`` (or ``--no-cache``), else
``<user cache>/emjax/dga`` beside JAX's ``<user cache>/emjax/jax``; in Python, off
unless a block is run ``with setup_cache(...)``.
Nothing is written outside it; a folder is written under a temporary name and renamed,
so a reader never sees half of one. A folder whose manifest cannot be read or names
another key or version, or one of whose arrays is missing, short or of another shape
or dtype, is rebuilt and replaced (``setup_cache`` ``"rebuilt"``); a folder that cannot
be written leaves the run uncached. Bit errors inside an array are not detected (a
checksum would read every byte, the cost the memory map avoids).
"""

from __future__ import annotations

import hashlib
import json
import os  # getpid for temporary names, rename
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ..driver.compile_cache import at_block_end
from ..driver.stages import Stages
from .complex import Complex
from .layout import Layout, layout_spec
from .local import cyclic_size
from .mass import Bucket, Operators
from .mesh import TetMesh

CACHE_VERSION = 8  # 5: no kernels in the key; 6: node buckets of mass.NODE_MIN_SHARE;
# 7: packed Ms1 and Mmu10 in place of A and Mmu; 8: node matrices packed (Minv_p, Meps_p)
"""Bumped whenever the arrays built for a key change (a cache from before is then missed)."""

_CX = ("nodes", "tets", "orientation", "volumes", "edges", "tet_edges", "edge_boundary",
       "node_boundary", "degree", "slot", "tets_per_edge")
_OPS = ("Ms1", "Mmu10", "hs", "he", "pec", "he_pos")
_BUCKET = ("nodes", "edge", "free", "Minv_p", "Meps_p", "sign")
_LAYOUT = ("u_perm", "f_pos", "he_pos", "hs", "he")


def cache_dir() -> Path | None:
    """The set-up cache's folder (module docstring), None when switched off."""
    from ..driver.compile_cache import setup_cache_folder

    return setup_cache_folder()


def cache_key(sim, order: str = "rcm") -> str:
    """Hex SHA-256 of what the cached arrays depend on (module docstring); ``order``:
    the node order of the renumbering (the backend's)."""
    mesh = sim.mesh.model_dump(mode="json")
    h = hashlib.sha256()
    if mesh.get("type") == "file":  # the file's bytes, not just its name
        from ..model.files import resolved

        with open(resolved(str(sim.mesh.path)), "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    what = {"version": CACHE_VERSION, "mesh": mesh, "renumber": sim.renumber and order,
            "background": sim.background.model_dump(mode="json"),
            "regions": [r.model_dump(mode="json") for r in sim.regions]}
    h.update(json.dumps(what, sort_keys=True).encode())
    return h.hexdigest()


def _later(path: Path, fn, *args) -> None:
    """Run ``fn(*args)``, the write of the folder ``path``, on the cache's one writer
    thread, first in first out: a set-up's arrays go to disk while the run goes on
    (1.1-1.8 s of the 20.2M-DoF set-up on an H200's host, BENCHMARKS.md). The
    interpreter waits for it at exit."""
    global _WRITER
    if _WRITER is None:
        _WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="emjax-dga-cache")
    _PENDING.append((path, _WRITER.submit(fn, *args)))


_WRITER: ThreadPoolExecutor | None = None
_PENDING: list[tuple[Path, Future]] = []


def wait(path: Path | None = None) -> None:
    """Return once the writes this process started of the folder ``path`` and of the
    folders in it (all, when None) have ended: a process reads what it wrote."""
    for item in list(_PENDING):
        target, fut = item
        if path is None or target == path or path in target.parents:
            fut.result()
            if item in _PENDING:
                _PENDING.remove(item)


at_block_end(wait)  # a setup_cache block ends once its writes have


def _write(root: Path, path: Path, arrays: dict[str, np.ndarray], meta: dict) -> Path | None:
    """Write ``arrays`` as ``<name>.npy`` and ``meta`` (with each array's shape and
    dtype) as ``manifest.json`` into the folder ``path`` under the cache folder ``root``,
    on the writer thread (:func:`_later`): through a temporary folder renamed at the
    end, an older folder of that name replaced. None when ``root`` cannot be written; a
    write that fails later (a full disk, a parent folder whose own write failed) leaves
    nothing, and the next run builds again."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        if not os.access(root, os.W_OK | os.X_OK):
            return None
    except OSError:
        return None
    meta = {**meta, "arrays": {n: [list(a.shape), a.dtype.str] for n, a in arrays.items()}}
    _later(path, _fill, path, arrays, meta)
    return path


def _fill(path: Path, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """The writer thread's part of :func:`_write`."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    try:
        tmp.mkdir()  # not its parents: a sub-folder's set-up folder must exist
        for name, a in arrays.items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(a), allow_pickle=False)
        (tmp / "manifest.json").write_text(json.dumps(meta), encoding="utf-8")
        if path.exists():  # a damaged or stale folder: replaced
            shutil.rmtree(path)
        os.rename(tmp, path)
    except Exception:  # the cache is best effort: a failed write, no cache
        shutil.rmtree(tmp, ignore_errors=True)


def _read(path: Path, key: str) -> tuple[dict, dict[str, np.ndarray]]:
    """(manifest, arrays) of a folder written by :func:`_write`, the arrays memory-mapped
    read-only (pages read when first touched). ValueError when the manifest names another
    key or version, or an array's file is missing, short or of another shape or dtype."""
    meta = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    if meta.get("key") != key or meta.get("version") != CACHE_VERSION:
        raise ValueError("another key or version")
    arrays = {}
    for name, (shape, dtype) in meta["arrays"].items():
        a = np.load(path / f"{name}.npy", mmap_mode="r", allow_pickle=False)
        if list(a.shape) != shape or a.dtype.str != dtype:
            raise ValueError(f"{name}: shape or dtype differs from the manifest")
        arrays[name] = a
    return meta, arrays


def save(folder: Path, key: str, mesh: TetMesh, cx: Complex, ops: Operators,
         rho: float, lay: Layout) -> Path | None:
    """Write the set-up's arrays (and the layout's index maps, the kernels being part of
    the key) to the folder ``folder/<key>``; None when it cannot be written (the run goes
    on uncached)."""
    arrays = {"mesh_nodes": mesh.nodes, "mesh_tets": mesh.tets, "mesh_regions": mesh.regions}
    arrays.update({f"cx_{n}": getattr(cx, n) for n in _CX})
    arrays.update({f"ops_{n}": getattr(ops, n) for n in _OPS})
    arrays.update({f"lay_{n}": getattr(lay, n) for n in _LAYOUT})
    for k, b in enumerate(ops.buckets):
        arrays.update({f"b{k}_{n}": getattr(b, n) for n in _BUCKET})
        if b.Msig is not None:
            arrays[f"b{k}_Msig"] = b.Msig
    meta = {"key": key, "version": CACHE_VERSION, "rho": float(rho), "nu": int(ops.nu),
            "flipped": int(mesh.flipped), "edge_reach": cx.edge_reach, "kernels": lay.spec.kernels,
            "buckets": [[int(b.width), int(b.offset)] for b in ops.buckets]}
    return _write(folder, folder / key, arrays, meta)


def load(folder: Path, key: str) -> tuple[str, tuple | None]:
    """(verdict, (mesh, cx, ops, rho, layout) or None): ``"hit"``; ``"miss"`` (no folder);
    ``"rebuilt"`` (a folder unreadable, damaged or of another key: build again).

    The arrays are memory-mapped read-only: a run reads only the pages it touches, and
    nothing can change the cached arrays in place."""
    path = folder / key
    wait(path)
    if not path.is_dir():
        return "miss", None
    try:
        meta, a = _read(path, key)
        mesh = TetMesh.trusted(a["mesh_nodes"], a["mesh_tets"], a["mesh_regions"],
                               int(meta["flipped"]))
        cx = Complex(**{n: a[f"cx_{n}"] for n in _CX})
        cx.__dict__["edge_reach"] = float(meta["edge_reach"])  # its cached_property, kept
        buckets = [Bucket(width=w, offset=off, Msig=a.get(f"b{k}_Msig"),
                          **{n: a[f"b{k}_{n}"] for n in _BUCKET})
                   for k, (w, off) in enumerate(meta["buckets"])]
        ops = Operators(cx=cx, buckets=buckets, nu=int(meta["nu"]),
                        **{n: a[f"ops_{n}"] for n in _OPS})
        _consistent(mesh, cx, ops)
        lay = Layout(spec=layout_spec(ops, meta["kernels"]),
                     **{n: a[f"lay_{n}"] for n in _LAYOUT})
        return "hit", (mesh, cx, ops, float(meta["rho"]), lay)
    except (OSError, KeyError, ValueError, TypeError, EOFError):
        return "rebuilt", None


def kernel_key(dt: float, dtype, kernels: str) -> str:
    """The name of a set-up's kernel-array folder: dt (exactly), dtype and kernels."""
    what = json.dumps([float(dt).hex(), np.dtype(dtype).str, kernels])
    return "kernels-" + hashlib.sha256(what.encode()).hexdigest()[:16]


def _flatten(tree, name: str, flat: dict[str, np.ndarray]):
    """The structure of a tree of dicts, lists and arrays as JSON (each array replaced by
    its name in ``flat``, where it is put)."""
    if isinstance(tree, dict):
        return {"d": {k: _flatten(v, f"{name}.{k}", flat) for k, v in tree.items()}}
    if isinstance(tree, list | tuple):
        return {"l": [_flatten(v, f"{name}.{i}", flat) for i, v in enumerate(tree)]}
    flat[name] = np.asarray(tree)
    return name


def _unflatten(struct, flat: dict[str, np.ndarray]):
    """The tree :func:`_flatten` described."""
    if isinstance(struct, str):
        return flat[struct]
    if "d" in struct:
        return {k: _unflatten(v, flat) for k, v in struct["d"].items()}
    return [_unflatten(v, flat) for v in struct["l"]]


def energy_key(dtype) -> str:
    """The name of a set-up's energy-array folder: the dtype."""
    return "energy-" + np.dtype(dtype).name


def save_tree(folder: Path, key: str, sub: str, tree: dict) -> Path | None:
    """Write ``tree`` (dicts, lists and arrays: the kernels' or the energy monitor's
    arrays) as the sub-folder ``sub`` beside the set-up ``key``'s arrays; None when it
    cannot be written."""
    flat: dict[str, np.ndarray] = {}
    meta = {"key": sub, "version": CACHE_VERSION, "tree": _flatten(tree, "K", flat)}
    return _write(folder, folder / key / sub, flat, meta)


def load_tree(folder: Path, key: str, sub: str) -> dict | None:
    """The tree :func:`save_tree` wrote (arrays memory-mapped), or None (none, or damaged)."""
    path = folder / key / sub
    wait(path)
    if not path.is_dir():
        return None
    try:
        meta, flat = _read(path, sub)
        return _unflatten(meta["tree"], flat)
    except (OSError, KeyError, ValueError, TypeError, EOFError):
        return None


def kept(cache_key: str, sub: str, build, st: Stages, stage: str) -> dict:
    """The tree kept as ``sub`` beside the set-up ``cache_key``'s arrays (memory-mapped),
    else ``build()`` (timed as ``stage``), then kept there (timed as "cache write");
    ``cache_key`` "" (the cache off): ``build()``, kept nowhere."""
    folder = cache_dir() if cache_key else None
    with st(stage):
        tree = load_tree(folder, cache_key, sub) if folder is not None else None
        built = tree is None
        if built:
            tree = build()
    if built and folder is not None:
        with st("cache write"):
            save_tree(folder, cache_key, sub, tree)
    return tree


def _consistent(mesh: TetMesh, cx: Complex, ops: Operators) -> None:
    """Shapes that must agree (a file of another layout of arrays raises ValueError)."""
    nt, ne = mesh.num_tets, cx.num_edges
    ok = (cx.tets.shape == (nt, 4) and cx.tet_edges.shape == (nt, 6)
          and ops.Mmu10.shape == (10, nt) and ops.Ms1.shape == (10, nt)
          and ops.he_pos.shape == (ne, 2) and ops.pec.shape == (ne,)
          and sum(b.width * b.count for b in ops.buckets) == ops.nu
          and all(b.Minv_p.shape == b.Meps_p.shape == (cyclic_size(b.width), b.count)
                  for b in ops.buckets))
    if not ok:
        raise ValueError("cached arrays of inconsistent shapes")


__all__ = ["CACHE_VERSION", "cache_dir", "cache_key", "energy_key", "kept",
           "kernel_key", "load", "load_tree", "save", "save_tree", "wait"]
