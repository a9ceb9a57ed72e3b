"""Test configuration: CPU only, float64 available, deterministic."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
