"""Does the 3D Yee step's speed depend on the array shape's alignment (H100)?

Times update_H + update_E (CIS coefficients, no PML, no monitors) inside one jitted
fori_loop for grid shapes whose z size and y*z plane size differ mod 4, so that the
x-neighbour (offset ny*nz) and y-neighbour (offset nz) reads are or are not 16-byte
aligned. Prints one line per shape; with ``mask`` also the step with E zeroed beyond
a z limit (the cost of storing a padded grid).

Usage: python benchmarks/shape_align.py
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from emjax.fdtd import update3d as u3


def step_time(shape, nz_real=None, steps=20, repeats=5):
    lay = u3.Layout(shape=shape, inv_d=(1e3, 1e3, 1e3))
    tab_a = jnp.asarray([1.0, 0.99, 0.98, 0.0], jnp.float32)
    tab_b = jnp.asarray([0.1, 0.05, 0.02, 0.0], jnp.float32)
    idx = tuple(jnp.zeros(shape, jnp.uint8) for _ in range(3))
    cE = u3.UpdateCoefficients(a=tab_a, b=tab_b, idx=idx)
    cH = u3.UpdateCoefficients(a=tab_a, b=tab_b, idx=idx)
    key = jax.random.PRNGKey(0)
    E = tuple(jax.random.normal(jax.random.fold_in(key, i), shape, jnp.float32) * 1e-3
              for i in range(3))
    H = tuple(jnp.zeros(shape, jnp.float32) for _ in range(3))

    def body(i, c, cE, cH):
        E, H = c
        H, _ = u3.update_H(E, H, cH, {}, {}, lay)
        E, _ = u3.update_E(E, H, cE, {}, {}, lay)
        if nz_real is not None:
            keep = lax.broadcasted_iota(jnp.int32, shape, 2) < nz_real
            E = tuple(jnp.where(keep, e, 0) for e in E)
        return E, H

    # coefficients as arguments: captured constants were folded at compile time (minutes)
    run = jax.jit(lambda c, cE, cH: lax.fori_loop(0, steps, lambda i, c: body(i, c, cE, cH),
                                                  c), donate_argnums=0)
    c = jax.block_until_ready(run((E, H), cE, cH))
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        c = jax.block_until_ready(run(c, cE, cH))
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) / steps


def main():
    cases = [((322, 338, 335), None), ((324, 340, 337), None), ((322, 338, 336), 335),
             ((322, 340, 335), None), ((324, 338, 335), None), ((322, 338, 337), None),
             ((321, 339, 335), None), ((324, 340, 340), 337), ((320, 320, 320), None),
             ((342, 358, 355), None), ((342, 358, 356), 355), ((512, 512, 512), None)]
    for shape, nzr in cases:
        s = step_time(shape, nzr)
        n = int(np.prod(shape))
        print(f"shape {shape} ny*nz mod 4 = {shape[1] * shape[2] % 4} nz mod 4 = "
              f"{shape[2] % 4} mask z<{nzr}: {n / s / 1e9:.2f} Gcells/s", flush=True)


if __name__ == "__main__":
    main()
