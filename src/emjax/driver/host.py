"""Arrays from the device to the host at the link's speed.

``np.asarray`` of a GPU array copies it through pageable memory: 1.3-1.6 GB/s on the
H100 machine for 42-197 MB complex128 fields (``benchmarks/d2h_copy.py``), which made the
transfers the largest part of an FDFD sweep after its first frequency. Placed in pinned
host memory first (``memory_kind="pinned_host"``), the same copies run at 39-50 GB/s and
NumPy then reads them where they lie. Small arrays, sharded arrays and backends without
pinned host memory take ``jax.device_get``.
"""

from __future__ import annotations

import jax
import numpy as np

PINNED_FROM_BYTES = 1 << 20
"""Arrays from this size on go through pinned host memory (below, a copy is cheap)."""


def _stage(x):
    """A large single-device array's copy to pinned host memory, started (asynchronous);
    a CPU array as a NumPy array; anything else as it is."""
    if not isinstance(x, jax.Array) or x.nbytes < PINNED_FROM_BYTES:
        return x
    devices = x.devices()
    if len(devices) != 1:
        return x
    dev = next(iter(devices))
    if dev.platform == "cpu":
        return np.asarray(x)
    try:
        return jax.device_put(x, jax.sharding.SingleDeviceSharding(dev, memory_kind="pinned_host"))
    except (ValueError, RuntimeError, NotImplementedError):  # no pinned host memory here
        return x


def _finish(x):
    if isinstance(x, jax.Array) and getattr(x.sharding, "memory_kind", None) == "pinned_host":
        return np.asarray(x)  # NumPy reads the pinned buffer where it lies
    return jax.device_get(x)


def to_host(tree):
    """``tree`` with its JAX arrays as NumPy arrays (:func:`jax.device_get`'s result),
    large single-device ones copied through pinned host memory, every copy started
    before the first is waited for."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    staged = [_stage(x) for x in leaves]
    return jax.tree_util.tree_unflatten(treedef, [_finish(x) for x in staged])
