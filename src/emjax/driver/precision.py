"""Precision chosen per run: 64-bit JAX types only for the runs that ask for them.

JAX keeps 64-bit types behind the process-wide ``jax_enable_x64`` flag. Importing emjax
changes no JAX configuration; a lowering whose plan holds float64 or complex128 arrays
(or, as the DGATD time step, needs float64 on the way) calls :func:`require_x64` first.
float32 runs leave the flag as they find it: every array they make has an explicit
dtype, so their numbers are the same either way.
"""

from __future__ import annotations

import jax
import numpy as np


def needs_x64(*dtypes) -> bool:
    """Whether any of ``dtypes`` (NumPy dtypes or their names) has 64-bit parts:
    float64, int64, complex128 (two float64)."""
    for d in map(np.dtype, dtypes):
        part_bytes = d.itemsize // 2 if d.kind == "c" else d.itemsize
        if part_bytes >= 8:
            return True
    return False


def require_x64(needed: bool = True) -> None:
    """Switch ``jax_enable_x64`` on (for the whole process, as JAX allows) when needed."""
    if needed and not jax.config.jax_enable_x64:
        jax.config.update("jax_enable_x64", True)
