"""Checkpoints of every solver: arrays, step, scenario and digests in one HDF5 file.

A checkpoint holds groups of arrays (for a time-domain run: every leaf of the device
state, that is fields, psi, DFT accumulators and step counter, and of the host
record, that is probe and energy series and snapshot frames so far; for FDFD: the
Krylov iterate and the residual history), the step (iteration) reached, the scenario
as JSON and the versions. It is written to a temporary file in the same folder and
renamed over the target, so a kill during a write leaves the previous checkpoint
intact. Resuming restores the state bit for bit, so N steps + resume + N steps equals
2N steps exactly.

Integrity: each dataset carries the SHA-256 of its dtype, shape and bytes
(``sha256``), and the file the SHA-256 of the format version, the step, the scenario
JSON and those dataset digests (``digest``). Loading checks the structure and the
file digest before reading any array, then each array against its own digest, and
refuses any difference with a :class:`~emjax.errors.CheckpointError` that names the
file and what differs: a flipped byte, an edited field, step or scenario are caught.
(A digest guards against damage and careless edits, not against someone who
recomputes it.)

Arrays stored with z padding (``grid.yee``: the inert zeros beyond the upper z wall)
are written cropped to the physical shape and padded with zeros again on loading, so
a checkpoint does not depend on the alignment of the device that wrote it (a GPU run
resumes on a CPU and back).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import numpy as np

from ..errors import CheckpointError
from ..io.atomic import atomic_path
from .environment import environment
from .host import to_host

FORMAT = "emjax-checkpoint"
VERSION = 4
"""2: states are named pytrees (FDTDState, DGAState), whose leaves come in field order.
3: SHA-256 digests (per dataset and over step, scenario and datasets), verified on
loading; groups ``state`` and ``record`` for every solver (FDFD too).
4: the FDTD's dispersive state is the carried form (fdtd/dispersive.py), not p and j."""

GROUPS = ("state", "record")

VIEWED = {"bfloat16": np.dtype(jax.numpy.bfloat16)}
"""dtypes HDF5 does not have, stored as their bits (uint16) with a ``dtype`` attribute."""

DAMAGED = ("the arrays or scenario were changed after writing: the file is damaged or "
           "edited; rerun or use an intact checkpoint")


# ------------------------------------------------------------------ digests
def array_digest(a: np.ndarray) -> str:
    """SHA-256 (hex) of an array's dtype, shape and bytes (C order)."""
    a = np.asarray(a)
    h = hashlib.sha256(f"{a.dtype.str}{a.shape}".encode())
    h.update(a if a.flags.c_contiguous else np.ascontiguousarray(a))
    return h.hexdigest()


def file_digest(step: int, scenario: str, digests: dict[str, Sequence[str]]) -> str:
    """SHA-256 (hex) of the format version, the step, the scenario JSON and the dataset
    digests by group and position: what the ``digest`` attribute of a checkpoint holds."""
    h = hashlib.sha256(f"{FORMAT} {VERSION}\nstep {int(step)}\n".encode())
    h.update(scenario.encode())
    for group in sorted(digests):
        for i, d in enumerate(digests[group]):
            h.update(f"\n{group}/{i:05d} {d}".encode())
    return h.hexdigest()


# ------------------------------------------------------------------ writing
def write_checkpoint(path: str | Path, *, scenario: str, step: int,
                     groups: dict[str, Sequence[np.ndarray]], **attrs: Any) -> Path:
    """Write ``groups`` of arrays (each a list, stored as ``group/00000``, ...) after
    ``step`` steps (iterations) of ``scenario`` (JSON) to ``path`` atomically, with
    their digests; ``attrs``: further file attributes (e.g. ``solver="fdfd"``)."""
    import h5py

    from .. import __version__

    path = Path(path)
    groups = {g: [np.asarray(a) for a in leaves] for g, leaves in groups.items()}
    digests = {g: [array_digest(a) for a in leaves] for g, leaves in groups.items()}
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
        f.attrs["format"] = FORMAT
        f.attrs["format_version"] = VERSION
        f.attrs["step"] = int(step)
        f.attrs["scenario"] = scenario
        f.attrs["emjax_version"] = __version__
        f.attrs["environment"] = json.dumps(environment())
        for key, value in attrs.items():
            f.attrs[key] = value
        f.attrs["digest"] = file_digest(step, scenario, digests)
        for group, leaves in groups.items():
            g = f.create_group(group)
            g.attrs["count"] = len(leaves)
            for i, (leaf, d) in enumerate(zip(leaves, digests[group], strict=True)):
                viewed = leaf.dtype.name in VIEWED  # HDF5 has no bfloat16: its bits
                ds = g.create_dataset(f"{i:05d}", data=leaf.view(np.uint16) if viewed else leaf)
                ds.attrs["sha256"] = d
                if viewed:
                    ds.attrs["dtype"] = leaf.dtype.name
    return path


def save_checkpoint(solver, path: str | Path, step: int, state: dict, record: dict) -> Path:
    """Write a time-domain run's ``state`` and ``record`` after ``step`` steps to ``path``
    atomically. A solver whose kernels keep the state in a layout of their own stores it
    in the reference layout (``solver.stored(state)``, and ``solver.from_stored`` and
    ``solver.stored_init`` on reading), so that a checkpoint resumes whichever kernels
    the machine runs (the one-pass GPU kernel of :mod:`emjax.fdtd.pallas2d` or XLA's)."""
    state = getattr(solver, "stored", lambda s: s)(state)
    state_leaves = to_host(jax.tree_util.tree_leaves(state))
    stored_z, pad = _z_padding(solver)
    state_leaves = [a[:, :, :stored_z - pad] if _padded(np.shape(a), stored_z) else a
                    for a in state_leaves]
    return write_checkpoint(path, scenario=solver.sim.to_json(indent=None), step=step,
                            groups={"state": state_leaves,
                                    "record": jax.tree_util.tree_leaves(record)})


# ------------------------------------------------------------------ reading
@dataclass
class Stored:
    """An open checkpoint whose structure and file digest were verified: ``step``,
    ``scenario`` (JSON), the file's ``attrs``; :meth:`read` reads and verifies arrays."""

    path: Path
    file: Any  # h5py.File
    step: int
    scenario: str
    digests: dict[str, list[str]]

    @property
    def attrs(self):
        return self.file.attrs

    def read(self, group: str, expected: Sequence[tuple[Any, tuple]],
             labels: Sequence[str] | None = None) -> list[np.ndarray]:
        """The arrays of ``group``, each checked against ``expected`` (dtype, shape; a
        None in the shape allows any length on that axis) before it is read, and
        against its digest after; ``labels`` name them in messages (e.g. ``.E[0]``)."""
        have = self.digests[group]
        if len(have) != len(expected):
            raise CheckpointError(f"checkpoint '{self.path}': {group} has {len(have)} arrays, "
                                  f"the scenario needs {len(expected)}")
        out = []
        for i, (dtype, shape) in enumerate(expected):
            ds = self.file[group][f"{i:05d}"]
            fits = len(ds.shape) == len(shape) and all(
                w is None or w == s for w, s in zip(shape, ds.shape, strict=True))
            kind = ds.attrs.get("dtype")  # the bits of a dtype HDF5 lacks (VIEWED)
            have_dtype = VIEWED[kind] if kind in VIEWED and ds.dtype == np.uint16 else ds.dtype
            if have_dtype != dtype or not fits:
                want = tuple("n" if w is None else w for w in shape)
                raise CheckpointError(
                    f"checkpoint '{self.path}': {group} array {i} is {have_dtype}{ds.shape}, "
                    f"expected {np.dtype(dtype)}{want}")
            try:
                a = ds[()].view(have_dtype)
            except (OSError, RuntimeError, TypeError, ValueError) as e:  # a damaged layout
                raise CheckpointError(f"checkpoint '{self.path}': {group}/{i:05d} cannot be "
                                      f"read ({e}): {DAMAGED}") from e
            if array_digest(a) != have[i]:
                what = f"{group}{labels[i]}, " if labels else ""
                raise CheckpointError(
                    f"checkpoint '{self.path}': digest mismatch in array '{group}/{i:05d}' "
                    f"({what}{ds.dtype}{ds.shape}): {DAMAGED}")
            out.append(np.asarray(a))
        return out


@contextmanager
def verified(path: str | Path) -> Iterator[Stored]:
    """``path`` open, its format version, attributes, groups, datasets and file digest
    checked (no array read yet); the file is closed when the block ends."""
    import h5py

    path = Path(path)
    f = _open(path, h5py)
    try:
        try:
            stored = _header(f, path, h5py)
        except CheckpointError:
            raise
        # h5py on damaged metadata raises any of these (a bad name, type or encoding)
        except (OSError, KeyError, RuntimeError, TypeError, ValueError) as e:
            raise CheckpointError(f"checkpoint '{path}' is damaged ({e}); rerun or use an "
                                  "intact checkpoint") from e
        yield stored
    finally:
        f.close()


def check_step(path: str | Path, step: int, last: int, unit: str = "steps") -> None:
    """Refuse a stored step outside 0..``last`` (the run's length in ``unit``)."""
    if not 0 <= step <= last:
        raise CheckpointError(f"checkpoint '{path}': step {step} is outside the run's "
                              f"0..{last} {unit}; {DAMAGED}")


def _header(f, path: Path, h5py) -> Stored:
    """Verify everything but the array bytes: version, attributes, structure, digest."""
    version = _attr(f, path, "format_version", int, default=0)
    if version != VERSION:
        raise CheckpointError(
            f"checkpoint '{path}' has format version {version}; this emjax reads version "
            f"{VERSION}: rerun the scenario (or resume it with the emjax that wrote it)")
    step = _attr(f, path, "step", int)
    scenario = _attr(f, path, "scenario", str)
    digest = _attr(f, path, "digest", str)
    digests = {}
    for group in GROUPS:
        g = f.get(group)
        if not isinstance(g, h5py.Group):
            raise CheckpointError(f"checkpoint '{path}': group '{group}' is missing; {DAMAGED}")
        count = _attr(g, path, "count", int, where=f"group '{group}'")
        names = sorted(g)
        if count != len(names) or names != [f"{i:05d}" for i in range(len(names))]:
            raise CheckpointError(
                f"checkpoint '{path}': group '{group}' holds {len(names)} datasets "
                f"({', '.join(names[:4])}{', ...' if len(names) > 4 else ''}) where its "
                f"count says {count} (00000..{count - 1:05d}); {DAMAGED}")
        digests[group] = []
        for name in names:
            ds = g[name]
            if not isinstance(ds, h5py.Dataset):
                raise CheckpointError(f"checkpoint '{path}': '{group}/{name}' is not a "
                                      f"dataset; {DAMAGED}")
            digests[group].append(_attr(ds, path, "sha256", str, where=f"'{group}/{name}'"))
    if file_digest(step, scenario, digests) != digest:
        raise CheckpointError(f"checkpoint '{path}': digest mismatch: the step ({step}), the "
                              f"scenario or the list of arrays differ from what was written; "
                              f"{DAMAGED}")
    return Stored(path=path, file=f, step=step, scenario=scenario, digests=digests)


def _attr(obj, path: Path, key: str, kind: type, *, default=None, where: str = "file"):
    """Attribute ``key`` of ``obj`` as ``kind`` (int: a whole number, not a bool), or a
    CheckpointError naming the file, the attribute and the problem."""
    if key not in obj.attrs:
        if default is not None:
            return default
        raise CheckpointError(f"checkpoint '{path}': attribute '{key}' of the {where} is "
                              f"missing; {DAMAGED}")
    value = obj.attrs[key]
    if kind is int and isinstance(value, int | np.integer) and not isinstance(
            value, bool | np.bool_):
        return int(value)
    if kind is str and isinstance(value, str):
        try:
            value.encode()  # h5py escapes bytes that are not UTF-8 as lone surrogates
            return value
        except UnicodeEncodeError:
            raise CheckpointError(f"checkpoint '{path}': attribute '{key}' of the {where} is "
                                  f"not UTF-8 text; {DAMAGED}") from None
    raise CheckpointError(f"checkpoint '{path}': attribute '{key}' of the {where} is "
                          f"{str(value)[:60]!r} ({type(value).__name__}), not "
                          f"{'a whole number' if kind is int else 'text'}; {DAMAGED}")


def scenario_json(path: str | Path) -> str:
    """The scenario stored in a checkpoint, as JSON (``emjax.load_scenario`` reads it),
    after the checkpoint's structure and digest were verified."""
    with verified(path) as stored:
        return stored.scenario


def load_checkpoint(solver, path: str | Path) -> tuple[int, dict, dict]:
    """(step, device state, host record) from ``path``, checked against ``solver`` and
    against its digests."""
    with verified(path) as stored:
        # the same scenario: equal as data (the JSON of one emjax version is canonical)
        if _json(stored) != json.loads(solver.sim.to_json(indent=None)):
            raise CheckpointError(
                f"checkpoint '{path}' belongs to another scenario; run it with the scenario "
                "stored in it (`emjax run --resume FILE` does)")
        check_step(path, stored.step, solver.setup.steps)  # before any allocation
        stored_z, pad = _z_padding(solver)
        leaves, state_def, labels = _flat(jax.eval_shape(getattr(solver, "stored_init",
                                                                 solver.init_state)))
        padded = [_padded(t.shape, stored_z) for t in leaves]
        state = stored.read("state", [
            (t.dtype, (*t.shape[:2], stored_z - pad) if p else t.shape)
            for t, p in zip(leaves, padded, strict=True)], labels)
        # the inert z padding is zero (grid.yee)
        state = [np.pad(a, ((0, 0), (0, 0), (0, pad))) if p else a
                 for a, p in zip(state, padded, strict=True)]
        leaves, record_def, labels = _flat(solver.empty_record())
        record = stored.read("record", [(t.dtype, (None, *t.shape[1:])) for t in leaves],
                             labels)
    state = jax.device_put(jax.tree_util.tree_unflatten(state_def, state))
    return (stored.step, getattr(solver, "from_stored", lambda s: s)(state),
            jax.tree_util.tree_unflatten(record_def, record))


def _flat(template) -> tuple[list, Any, list[str]]:
    """(leaves, treedef, leaf paths) of a pytree; the paths (``.E[0]``,
    ``.psi_E['x_high'][1]``, ``['probe'][0][0]``) name arrays in messages."""
    with_path, treedef = jax.tree_util.tree_flatten_with_path(template)
    return ([t for _, t in with_path], treedef,
            [jax.tree_util.keystr(k) for k, _ in with_path])


def _json(stored: Stored) -> Any:
    """The stored scenario as data (a CheckpointError where it is not JSON)."""
    try:
        return json.loads(stored.scenario)
    except ValueError as e:
        raise CheckpointError(f"checkpoint '{stored.path}': the stored scenario is not JSON "
                              f"({e}); {DAMAGED}") from e


def _z_padding(solver) -> tuple[int, int]:
    """(stored z size, padding) of a run whose 3D arrays carry z padding, else (0, 0)."""
    grid = getattr(getattr(solver, "setup", None), "grid", None)
    pad = int(getattr(grid, "pad_z", 0) or 0)
    return (int(grid.shape[2]), pad) if pad else (0, 0)


def _padded(shape, stored_z: int) -> bool:
    """Whether a state array of ``shape`` spans the padded z axis: the fields and the
    psi of the x and y slabs. (A z slab stops at the wall, short of ``stored_z``;
    accumulators and snapshot buffers are 4D.)"""
    return bool(stored_z) and len(shape) == 3 and shape[2] == stored_z


def _open(path: Path, h5py):
    if not path.is_file():
        raise CheckpointError(f"checkpoint '{path}' does not exist")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise CheckpointError(f"checkpoint '{path}' is not a readable HDF5 file: {e}") from e
    try:
        ours = f.attrs.get("format") == FORMAT
    except (OSError, KeyError, RuntimeError):  # h5py on a damaged attribute table
        ours = False
    if not ours:
        f.close()
        raise CheckpointError(f"'{path}' is not an emjax checkpoint (or its attributes are "
                              "damaged)")
    return f
