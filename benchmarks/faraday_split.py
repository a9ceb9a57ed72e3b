"""Does the Faraday half-step recompute a tet's 12 gathers for each of its 4 outputs?

Times, on one mesh, the default variant's Faraday (f one (nt, 4) array: one loop
fusion over its nt x 4 entries, each thread forming its own increment) against the same
arithmetic with f held as four (nt,) rows returned as a tuple (which XLA may emit as
one multi-output fusion, one thread per tet), both inside one jitted loop.

Usage: python benchmarks/faraday_split.py [DOFS]   (default 20e6 on a GPU, 2e5 on a CPU)
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from emjax.bench.common import copy_bandwidth, on_gpu
from emjax.bench.dga import _median_loop, rings_for
from emjax.constants import c0, eps0, mu0
from emjax.dga import step as kern
from emjax.dga import structured
from emjax.dga.complex import build
from emjax.dga.layout import DEFAULT_VARIANT, half_step_bytes, kernel_arrays, make_layout
from emjax.dga.mass import assemble


def faraday_rows(u, f4, K):
    """The sym Faraday of :func:`emjax.dga.step.faraday` on four separate rows."""
    e6 = [kern._take(u, K["hs"][j]) - kern._take(u, K["he"][j]) for j in range(6)]
    c = [sum(s * e6[le] for le, s in terms) for terms in kern._FACE_TERMS]
    inc = [sum(K["Ms"][kern._SYM4_ROW[k, m]] * c[m] for m in range(4)) for k in range(4)]
    return tuple(f4[k] - inc[k] for k in range(4))


def main(dofs: float):
    rings, layers = rings_for(int(dofs))
    cx = build(structured.cylinder(1.0, 0.5, rings=rings, layers=layers))
    ops = assemble(cx, np.full(cx.num_tets, eps0), np.full(cx.num_tets, mu0))
    lay = make_layout(ops, DEFAULT_VARIANT)
    spec = lay.spec
    K = kernel_arrays(ops, lay, 0.3 / rings / c0, np.float32)
    nbytes = half_step_bytes(ops, lay, K=K)["faraday"]
    K.pop("gpos", None)
    K = jax.device_put(K)
    rng = np.random.default_rng(0)
    u = jnp.asarray(rng.standard_normal(ops.nu).astype(np.float32))
    f = jnp.asarray(rng.standard_normal(spec.f_shape).astype(np.float32))
    f4 = tuple(jnp.asarray(np.asarray(f)[:, k]) for k in range(4))
    n = 50
    std = jax.jit(lambda f, u, K: lax.fori_loop(
        0, n, lambda i, f: kern.faraday(u, f, K, spec), f))
    rows = jax.jit(lambda f4, u, K: lax.fori_loop(
        0, n, lambda i, f4: faraday_rows(u, f4, K), f4))
    a = np.asarray(kern.faraday(u, f, K, spec))
    b = np.stack([np.asarray(r) for r in faraday_rows(u, f4, K)], axis=1)
    print(f"{cx.num_dofs} DoFs, {cx.num_tets} tets, {jax.devices()[0].device_kind}; "
          f"rows agree to {np.abs(a - b).max() / np.abs(a).max():.1e}", flush=True)
    bw = copy_bandwidth(1 << 30 if on_gpu() else 1 << 26)
    t_std = _median_loop(std, (f, u, K), n, 5)
    t_rows = _median_loop(rows, (f4, u, K), n, 5)
    for name, t in (("(nt, 4) array", t_std), ("four rows, tuple", t_rows)):
        print(f"  Faraday, f as {name}: {t * 1e3:.4f} ms, {nbytes / t / 1e9:.0f} GB/s, "
              f"{nbytes / t / bw:.3f} of copy ({bw / 1e12:.2f} TB/s)", flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else (20e6 if on_gpu() else 2e5))
