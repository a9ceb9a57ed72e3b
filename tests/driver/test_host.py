"""driver/host.to_host: every leaf on the host, equal to jax.device_get's, whatever its size
(on a GPU the large ones go through pinned host memory; the GPU run of the FDFD and
checkpoint tests covers that path)."""

import jax
import jax.numpy as jnp
import numpy as np

from emjax.driver.host import PINNED_FROM_BYTES, to_host


def test_to_host_equals_device_get():
    big = jnp.arange(PINNED_FROM_BYTES // 8 + 5, dtype=jnp.float32).astype(jnp.complex64)
    tree = {"big": big, "small": [jnp.ones(3), 2.0], "np": np.zeros(2)}
    out = to_host(tree)
    ref = jax.device_get(tree)
    assert jax.tree.structure(out) == jax.tree.structure(ref)
    for a, b in zip(jax.tree.leaves(out), jax.tree.leaves(ref), strict=True):
        assert isinstance(a, np.ndarray | float) and np.array_equal(a, b)
    assert out["big"].nbytes >= PINNED_FROM_BYTES and out["big"].dtype == np.complex64
