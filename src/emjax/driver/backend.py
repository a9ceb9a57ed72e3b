"""Starting JAX's backend early, beside the host's own set-up.

On an H100 or H200 machine ``jax.devices()`` takes about 1 s the first time (the CUDA
client and its devices) and the first array placed on the GPU 1.5 s more (the
allocator takes its share of the GPU's memory): both inside the first solver's set-up,
while ``emjax run`` also reads and lowers the scenario on the host (car-rcs: 1.4 s to
read its CAD model, 2.2 s to lower it). Starting the backend and placing one small
array in a thread at the command's start overlaps the two. A multi-process run must
join its job (``jax.distributed``) before the backend starts, so it does not do this.

The allocator's share: JAX reserves 75% of a GPU's memory at the first allocation, 1.4-2.1
s of every process's start on an H200 (BENCHMARKS.md, third session of 2026-11-29), with
no effect on the kernels' speed. :func:`on_demand_pool`, called by every solver's set-up
and by ``emjax run`` before JAX starts, lets the pool grow as a run needs it instead.
"""

from __future__ import annotations

import os
import threading

POOL_VARIABLE = "XLA_PYTHON_CLIENT_PREALLOCATE"


def on_demand_pool() -> None:
    """Ask XLA for a GPU pool that grows on demand (``XLA_PYTHON_CLIENT_PREALLOCATE=false``)
    unless the user set the variable (any value wins). It acts only if JAX's backend has
    not started in this process; nothing happens at import."""
    os.environ.setdefault(POOL_VARIABLE, "false")


def triton_gpu() -> bool:
    """Whether JAX runs on a CUDA GPU, where Pallas' Triton kernels run (the one-pass 2D
    step, :mod:`emjax.fdtd.pallas2d`); starts the backend if it has not started."""
    import jax

    if jax.default_backend() != "gpu":
        return False
    return getattr(jax.devices()[0], "compute_capability", None) is not None


_started: list[threading.Thread] = []


def start_in_background() -> None:
    """Start JAX's backend and its allocator in a daemon thread (once); calls into JAX
    wait for the backend."""
    if _started:
        return
    on_demand_pool()

    def start() -> None:
        try:
            import jax
            import numpy as np

            jax.device_put(np.zeros(1, np.float32)).block_until_ready()
        except Exception:  # the run's own first call into JAX reports it
            pass

    t = threading.Thread(target=start, name="emjax-backend", daemon=True)
    _started.append(t)
    t.start()
