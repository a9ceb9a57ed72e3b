"""A solver's all-zero initial state without a compilation per array shape.

``jnp.zeros`` of a shape the process has not seen compiles a broadcast: 20-30 ms each
on a 2-core CPU, and a run's state has a few dozen shapes (fields, psi slabs, DFT and
near-to-far accumulators, pole currents): about 30 s of the test suite. On a CPU the
zeros come from NumPy instead (placed without compiling; donated like any array); on
accelerators the state is made on the device, where a host array would have to be
copied over.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import jax
import numpy as np

T = TypeVar("T")


def zeros_of(build: Callable[[], T]) -> T:
    """``build()``, a pytree of zeros: on a CPU from NumPy with its shapes and dtypes
    (``jax.eval_shape`` traces ``build`` without running it), elsewhere ``build()``."""
    if jax.default_backend() != "cpu":
        return build()
    return jax.tree.map(lambda a: jax.device_put(np.zeros(a.shape, a.dtype)),
                        jax.eval_shape(build))
