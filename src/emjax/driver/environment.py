"""The environment record: device and versions, for results, checkpoints and benchmarks."""

from __future__ import annotations

import platform

import jax
import numpy as np


def environment() -> dict:
    """Device, backend, device count and the versions of emjax, JAX, NumPy and Python."""
    from .. import __version__

    dev = jax.devices()[0]
    return {
        "device": f"{dev.platform}:{getattr(dev, 'device_kind', '')}",
        "backend": jax.default_backend(),
        "num_devices": jax.device_count(),
        "versions": {"emjax": __version__, "jax": jax.__version__, "numpy": np.__version__,
                     "python": platform.python_version()},
    }
