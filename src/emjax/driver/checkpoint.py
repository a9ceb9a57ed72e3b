"""Checkpoints of a time-domain run: the whole state and the monitor record in HDF5.

A checkpoint holds every leaf of the device state (fields, psi, DFT accumulators,
step counter) and of the host record (probe and energy series, snapshot frames so
far), the step reached, the scenario as JSON and the versions. It is written to a
temporary file in the same folder and renamed over the target, so a kill during a
write leaves the previous checkpoint intact. Resuming restores the state bit for bit,
so N steps + resume + N steps equals 2N steps exactly.

Arrays stored with z padding (``grid.yee``: the inert zeros beyond the upper z wall)
are written cropped to the physical shape and padded with zeros again on loading, so
a checkpoint does not depend on the alignment of the device that wrote it (a GPU run
resumes on a CPU and back).
"""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np

from ..errors import CheckpointError
from ..io.atomic import atomic_path
from .environment import environment

FORMAT = "emjax-checkpoint"
VERSION = 2
"""2: states are named pytrees (FDTDState, DGAState), whose leaves come in field order."""


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


def save_checkpoint(solver, path: str | Path, step: int, state: dict, record: dict) -> Path:
    """Write ``state`` and ``record`` after ``step`` steps to ``path`` atomically."""
    import h5py

    from .. import __version__

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state_leaves = jax.device_get(jax.tree_util.tree_leaves(state))
    stored_z, pad = _z_padding(solver)
    state_leaves = [a[:, :, :stored_z - pad] if _padded(np.shape(a), stored_z) else a
                    for a in state_leaves]
    record_leaves = jax.tree_util.tree_leaves(record)
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
        f.attrs["format"] = FORMAT
        f.attrs["format_version"] = VERSION
        f.attrs["step"] = int(step)
        f.attrs["scenario"] = solver.sim.to_json(indent=None)
        f.attrs["emjax_version"] = __version__
        f.attrs["environment"] = json.dumps(environment())
        for group, leaves in (("state", state_leaves), ("record", record_leaves)):
            g = f.create_group(group)
            g.attrs["count"] = len(leaves)
            for i, leaf in enumerate(leaves):
                g.create_dataset(f"{i:05d}", data=np.asarray(leaf))
    return path


def scenario_json(path: str | Path) -> str:
    """The scenario stored in a checkpoint, as JSON (``emjax.load_scenario`` reads it)."""
    import h5py

    with _open(path, h5py) as f:
        return str(f.attrs["scenario"])


def load_checkpoint(solver, path: str | Path) -> tuple[int, dict, dict]:
    """(step, device state, host record) from ``path``, checked against ``solver``."""
    import h5py

    with _open(path, h5py) as f:
        version = int(f.attrs.get("format_version", 0))
        if version != VERSION:
            raise CheckpointError(
                f"checkpoint '{path}' has format version {version}; this emjax reads version "
                f"{VERSION}: rerun the scenario (or resume it with the emjax that wrote it)")
        # the same scenario: equal as data (the JSON of one emjax version is canonical)
        if json.loads(f.attrs["scenario"]) != json.loads(solver.sim.to_json(indent=None)):
            raise CheckpointError(
                f"checkpoint '{path}' belongs to another scenario; run it with the scenario "
                "stored in it (`emjax run --resume FILE` does)")
        step = int(f.attrs["step"])
        template_state = jax.eval_shape(solver.init_state)
        template_record = solver.empty_record()
        stored_z, pad = _z_padding(solver)
        out = []
        for group, template in (("state", template_state), ("record", template_record)):
            leaves, treedef = jax.tree_util.tree_flatten(template)
            g = f[group]
            if int(g.attrs["count"]) != len(leaves):
                raise CheckpointError(f"checkpoint '{path}': {group} has {g.attrs['count']} "
                                      f"arrays, the scenario needs {len(leaves)}")
            arrays = []
            for i, t in enumerate(leaves):
                a = g[f"{i:05d}"][()]
                padded = group == "state" and _padded(t.shape, stored_z)
                want = (*t.shape[:2], stored_z - pad) if padded else t.shape
                if a.dtype != t.dtype or (group == "state" and a.shape != want):
                    raise CheckpointError(
                        f"checkpoint '{path}': {group} array {i} is {a.dtype}{a.shape}, "
                        f"expected {t.dtype}{want}")
                if padded:  # the inert z padding is zero (grid.yee)
                    a = np.pad(a, ((0, 0), (0, 0), (0, pad)))
                arrays.append(a)
            out.append(jax.tree_util.tree_unflatten(treedef, arrays))
    state = jax.device_put(out[0])
    if step < 0 or step > solver.setup.steps:
        raise CheckpointError(f"checkpoint '{path}': step {step} outside 0..{solver.setup.steps}")
    return step, state, out[1]


def _open(path, h5py):
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint '{path}' does not exist")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise CheckpointError(f"checkpoint '{path}' is not a readable HDF5 file: {e}") from e
    if f.attrs.get("format") != FORMAT:
        f.close()
        raise CheckpointError(f"'{path}' is not an emjax checkpoint")
    return f
