"""Test configuration: CPU only, float64 available, deterministic.

emjax switches 64-bit JAX types on only for runs that ask for them
(:mod:`emjax.driver.precision`); the tests also build float64 kernel inputs by hand,
so they switch it on for the whole session. The float32 path with it off is tested
in a fresh interpreter (tests/driver).
"""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax

jax.config.update("jax_enable_x64", True)
