"""Many devices and many hosts: device meshes, field shardings, ``jax.distributed`` start-up.

A run spreads over devices by sharding its arrays, never by message passing of our
own: the fields (and every array of the grid's shape: material indices, coefficient
arrays) are split along one axis (x by default) over a 1D :class:`jax.sharding.Mesh`,
and XLA's SPMD partitioner turns the shifted slices of the curl into halo exchanges
between neighbouring devices. Arrays of another shape are placed as follows:

* CPML psi slabs: split along the shard axis when they span it (slabs of the other
  faces), otherwise along the next axis they span that divides evenly (the slabs of
  the two faces normal to the shard axis, which are only a few cells thick);
* dispersive boxes (the p, j state and the medium rows, :mod:`emjax.fdtd.dispersive`):
  split along the shard axis where the box spans the grid along it, else replicated
  (:func:`splits_box`);
* everything else (coefficient tables, 1D CPML profiles, probe indices, DFT and
  near-to-far accumulators, TF/SF auxiliary grids, the step counter) is replicated,
  so monitor data can be read on every process at chunk ends.

Several hosts join with :func:`initialize` (``jax.distributed.initialize``) before
any other JAX call; every process then runs the same script, and the mesh spans the
devices of all processes. Multi-process runs gather their monitors, which are
replicated, on every process; only process 0 writes files.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from .errors import SetupError

AXES = {"x": 0, "y": 1, "z": 2}
MESH_AXIS = "d"
"""Name of the one mesh axis the grid is split over."""

_LAUNCHER_VARS = {
    "SLURM": ("SLURM_JOB_ID", "SLURM_NTASKS"),
    "Open MPI": ("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
    "MPICH/PMI": ("PMI_SIZE", "PMI_SIZE"),
}


# ----------------------------------------------------------------- start-up


def launcher() -> str | None:
    """The cluster launcher this process runs under with more than one task, or None.

    Only the gate: whether to join a job at all. JAX's ``jax.distributed.initialize``
    reads the coordinator, process count and id itself; it has no such gate (it would
    join a one-task allocation, or fail where no cluster is found)."""
    for name, (marker, size) in _LAUNCHER_VARS.items():
        if marker in os.environ and int(os.environ.get(size, "1") or 1) > 1:
            return name
    return None


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, *, local_device_ids=None,
               timeout_s: int = 300) -> bool:
    """Join this process to a multi-process JAX job; returns True if it did.

    Explicit arguments win; otherwise the environment variables
    ``EMJAX_COORDINATOR`` (``host:port``), ``EMJAX_NUM_PROCESSES`` and
    ``EMJAX_PROCESS_ID`` are read; otherwise, under SLURM (``srun``) or mpirun with
    more than one task, JAX's own cluster detection fills everything in. With none of
    these (a single process) nothing happens and False is returned. Call it before
    any other JAX call; calling it again is harmless.
    """
    if _initialized():
        return True
    env = os.environ
    coordinator_address = coordinator_address or env.get("EMJAX_COORDINATOR")
    if num_processes is None and env.get("EMJAX_NUM_PROCESSES"):
        num_processes = int(env["EMJAX_NUM_PROCESSES"])
    if process_id is None and env.get("EMJAX_PROCESS_ID"):
        process_id = int(env["EMJAX_PROCESS_ID"])
    explicit = coordinator_address is not None or num_processes is not None
    if not explicit and launcher() is None:
        return False
    if explicit and None in (coordinator_address, num_processes, process_id):
        raise SetupError(
            f"jax.distributed needs the coordinator address, the process count and this "
            f"process's id; got coordinator_address={coordinator_address!r}, "
            f"num_processes={num_processes!r}, process_id={process_id!r}; give all three "
            "(or the EMJAX_COORDINATOR, EMJAX_NUM_PROCESSES, EMJAX_PROCESS_ID variables), or "
            "none of them under SLURM or mpirun")
    if jax.config.jax_platforms in ("cpu",) or env.get("JAX_PLATFORMS") == "cpu":
        # CPU devices of several processes talk through gloo.
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    try:
        # JAX's own cluster detection fills in whatever is None (SLURM under srun,
        # Open MPI under mpirun, Kubernetes); emjax only decides whether to join.
        jax.distributed.initialize(coordinator_address=coordinator_address,
                                   num_processes=num_processes, process_id=process_id,
                                   local_device_ids=local_device_ids,
                                   initialization_timeout=timeout_s)
    except ValueError as exc:  # JAX found no cluster it knows how to read
        raise SetupError(
            f"{launcher()} runs several tasks but jax.distributed could not read the "
            f"coordinator, process count and id from it ({exc}); set EMJAX_COORDINATOR, "
            "EMJAX_NUM_PROCESSES and EMJAX_PROCESS_ID, or start the tasks with srun or "
            "Open MPI's mpirun") from None
    return True


def _initialized() -> bool:
    try:
        from jax._src import distributed

        return distributed.global_state.client is not None
    except (ImportError, AttributeError):  # pragma: no cover - private API moved
        return False


# -------------------------------------------------------------------- meshes


def select_devices(devices: int | Sequence | None = None) -> list:
    """Devices to use: all (None), the first N (an int), or those named (ids or devices).

    In a multi-process job "all" and N count the devices of every process.
    """
    every = jax.devices()
    if devices is None or devices == "all":
        return list(every)
    if isinstance(devices, int | np.integer):
        if not 1 <= devices <= len(every):
            raise SetupError(
                f"devices = {devices}, but JAX sees {len(every)} device(s) "
                f"({every[0].platform}); ask for 1 to {len(every)}, or start more processes "
                "(jax.distributed) or, on a CPU, set XLA_FLAGS="
                "--xla_force_host_platform_device_count=N before JAX starts")
        return list(every[: int(devices)])
    by_id = {d.id: d for d in every}
    out = []
    for d in devices:
        if isinstance(d, int | np.integer):
            if int(d) not in by_id:
                raise SetupError(f"device id {d} does not exist; JAX sees ids {sorted(by_id)}")
            out.append(by_id[int(d)])
        else:
            out.append(d)
    if len({d.id for d in out}) != len(out):
        raise SetupError(f"devices {[d.id for d in out]} name a device twice")
    return out


def make_mesh(devices: int | Sequence | None = None) -> Mesh:
    """A 1D mesh (axis ``MESH_AXIS``) over the selected devices."""
    return Mesh(np.array(select_devices(devices), dtype=object), (MESH_AXIS,))


@dataclass(frozen=True)
class Placement:
    """Where each array of a grid of ``shape`` lives on ``mesh``: split along ``axis``
    (0, 1, 2 for x, y, z) when it spans it, as described in the module docstring."""

    mesh: Mesh
    shape: tuple[int, int, int]
    axis: int = 0

    @property
    def n(self) -> int:
        return self.mesh.devices.size

    @property
    def replicated(self) -> NamedSharding:
        return NamedSharding(self.mesh, PartitionSpec())

    def split_axis(self, shape: tuple[int, ...]) -> int | None:
        """The array axis to split an array of ``shape`` along, or None (replicate)."""
        if len(shape) != 3 or self.n == 1:
            return None
        order = [self.axis] + [a for a in range(3) if a != self.axis]
        for a in order:
            spans = shape[a] == self.shape[a]
            # Slabs normal to the shard axis (thin along it) may split along another axis.
            others_full = all(shape[b] == self.shape[b] for b in range(3) if b != self.axis)
            if spans and shape[a] % self.n == 0 and (a == self.axis or others_full):
                return a
        return None

    def sharding(self, shape: tuple[int, ...], box: bool = False) -> NamedSharding:
        """``box``: an array of a dispersive box (see :func:`splits_box`)."""
        shape = tuple(shape)
        if box:
            a = (len(shape) - 3 + self.axis
                 if splits_box(shape, self.shape, self.axis, self.n) else None)
        else:
            a = self.split_axis(shape)
        if a is None:
            return self.replicated
        spec = [None] * len(shape)
        spec[a] = MESH_AXIS
        return NamedSharding(self.mesh, PartitionSpec(*spec))

    def shardings(self, tree):
        """The sharding of every leaf (arrays or ShapeDtypeStructs) of ``tree``."""
        return jax.tree_util.tree_map_with_path(
            lambda path, x: self.sharding(np.shape(x), _in_box(path)), tree)

    def materialize(self, fn):
        """``fn`` (no arguments, returning arrays) made to build its arrays in place:
        each device allocates only its own shards."""

        def placed():
            return jax.jit(fn, out_shardings=self.shardings(jax.eval_shape(fn)))()

        return placed

    def chunk_out_shardings(self, init_state):
        """Output shardings of a solver chunk: (state as placed, outputs, finite flag)."""
        return (self.shardings(jax.eval_shape(init_state)), self.replicated, self.replicated)

    def put(self, tree):
        """``tree`` with every leaf placed on the mesh (works across processes)."""
        return jax.tree_util.tree_map_with_path(self._put_leaf, tree)

    def _put_leaf(self, path, x):
        sh = self.sharding(np.shape(x), _in_box(path))
        if jax.process_count() == 1:
            return jax.device_put(x, sh)
        # Every process holds the same host value: each builds its own shards from it.
        host = np.asarray(x)
        return jax.make_array_from_callback(host.shape, sh, lambda idx: host[idx])


BOX_KEY = "disp"
"""The state field and constants key holding the dispersive boxes' arrays."""


def _in_box(path) -> bool:
    """Whether a leaf's pytree path runs through a dispersive box (``BOX_KEY``)."""
    return any(getattr(k, "name", getattr(k, "key", None)) == BOX_KEY for k in path)


def splits_box(shape: tuple[int, ...], grid: tuple[int, int, int], axis: int, n: int) -> bool:
    """Whether an array of a dispersive box (its last three axes the box's: the medium
    rows (bx, by, bz), the stacked p and j (slots, bx, by, bz)) splits along the shard
    ``axis``: where the box spans the grid along it and ``n`` divides it evenly (a
    dispersive background, a layer of soil across the domain). Any other box is
    replicated, whole on every device: XLA's partitioner still splits the box's
    arithmetic along the axis inside the step (halo exchanges of box planes, measured
    on 4 CPU devices), so only the state is whole, gathered once a chunk."""
    return (len(shape) >= 3 and n > 1 and shape[len(shape) - 3 + axis] == grid[axis]
            and grid[axis] % n == 0)


def placement(shape: tuple[int, int, int], devices: int | Sequence | None = None,
              axis: str | int = "x") -> Placement:
    """The :class:`Placement` of a grid of array ``shape`` over the selected devices.

    Refuses (SetupError) a split that does not divide the grid evenly along ``axis``.
    """
    a = AXES[axis] if isinstance(axis, str) else int(axis)
    if a not in (0, 1, 2):
        raise SetupError(f"shard axis {axis!r}: give 'x', 'y' or 'z'")
    mesh = make_mesh(devices)
    n = mesh.devices.size
    if shape[a] % n:
        near = [m for m in range(shape[a] - n, shape[a] + n + 1) if m > 0 and m % n == 0]
        raise SetupError(
            f"the grid's {shape[a]} samples along {'xyz'[a]} do not split evenly over {n} "
            f"devices; make it a multiple of {n} (e.g. {near[-1] if near else n} cells, one "
            "less with a PMC face on that axis), shard along another axis, or use "
            f"{math.gcd(shape[a], n)} device(s)")
    return Placement(mesh=mesh, shape=tuple(shape), axis=a)


def run_options(sim, devices: int | None = None, distributed: bool = False,
                axis: str = "x") -> dict:
    """Keyword arguments of ``sim.run`` for ``emjax run --devices N --distributed``.

    ``distributed`` joins the multi-process job first (:func:`initialize`); it then
    shards over every device of every process unless ``devices`` says otherwise.
    """
    if distributed and not initialize():
        raise SetupError(
            "--distributed: this process was not started by SLURM (srun) or mpirun with "
            "several tasks, and EMJAX_COORDINATOR, EMJAX_NUM_PROCESSES and EMJAX_PROCESS_ID "
            "are not set; start it under a launcher or set those variables")
    if devices is None and not distributed:
        return {}
    if getattr(sim, "type", None) != "FDTD3D":
        raise SetupError(f"--devices/--distributed: a {getattr(sim, 'type', '?')} scenario "
                         "runs on one device for now; leave them out")
    return {"devices": "all" if devices is None else devices, "shard_axis": axis}


def shard_fdfd(prep, devices: int | Sequence | None = None, axis: str | int = "x"):
    """A copy of an FDFD :class:`~emjax.fdfd.solver.Prepared` with its arrays on a mesh.

    Arrays whose last three axes are the grid's (coefficients or indices, stretch and
    symmetry scalings, the right-hand side, shape ``(3, nx, ny, nz)`` or ``(nx, ny,
    nz)``) split along ``axis``; the rest (coefficient tables, 1D factors) is
    replicated. ``fdfd.solver.solve`` then runs unchanged: its jitted Krylov chunks
    take the placement from their arguments, the operator's shifted slices become
    halo exchanges and every dot product a per-device sum and an all-reduce; the
    iterate, the residual and the search directions stay split the same way.
    """
    import dataclasses

    shape = tuple(int(n) for n in prep.st.grid.shape)
    pl = placement(shape, devices, axis)

    def place(x):
        if not isinstance(x, jax.Array | np.ndarray):
            return x
        spec = [None] * x.ndim
        if x.ndim >= 3 and tuple(x.shape[-3:]) == shape:
            spec[x.ndim - 3 + pl.axis] = MESH_AXIS
        sh = NamedSharding(pl.mesh, PartitionSpec(*spec))
        if jax.process_count() == 1:
            return jax.device_put(x, sh)
        host = np.asarray(x)
        return jax.make_array_from_callback(host.shape, sh, lambda idx: host[idx])

    ops = {k: (v if isinstance(v, bool) else jax.tree_util.tree_map(place, v))
           for k, v in prep.ops.items()}
    return dataclasses.replace(prep, ops=ops, b=place(prep.b))


def is_main_process() -> bool:
    """True in process 0 (the one that writes files) or in a single-process run."""
    return jax.process_index() == 0


def gather(x) -> np.ndarray:
    """A (possibly sharded, possibly multi-process) array as one host NumPy array."""
    if getattr(x, "is_fully_addressable", True) or getattr(x, "is_fully_replicated", False):
        return np.asarray(jax.device_get(x))
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def per_device_bytes(tree) -> dict[str, int]:
    """Bytes each device holds of the arrays in ``tree`` (by ``platform:id``)."""
    out: dict[str, int] = {}
    for leaf in jax.tree_util.tree_leaves(tree):
        for s in getattr(leaf, "addressable_shards", ()):
            key = f"{s.device.platform}:{s.device.id}"
            out[key] = out.get(key, 0) + s.data.nbytes
    return out



def child_environment(**overrides: str) -> dict[str, str]:
    """The environment for a child process of this one: ours, with ``overrides``."""
    return {**os.environ, **overrides}


def forced_cpu_environment(count: int) -> dict[str, str]:
    """A child's environment with JAX on ``count`` emulated CPU devices (XLA's
    ``--xla_force_host_platform_device_count``, other XLA flags kept)."""
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split()
             if not f.startswith("--xla_force_host_platform_device_count")]
    return child_environment(
        XLA_FLAGS=" ".join([*flags, f"--xla_force_host_platform_device_count={count}"]),
        JAX_PLATFORMS="cpu")


__all__ = ["Placement", "child_environment", "forced_cpu_environment",
           "gather", "initialize", "is_main_process", "launcher", "make_mesh",
           "per_device_bytes", "placement", "run_options", "select_devices", "shard_fdfd",
           "splits_box"]
