"""How XLA emits the DGATD half-steps, written in several equivalent forms.

**Faraday.** Does the half-step recompute a tet's 12 gathers for each of its 4 outputs?

Times, on one mesh, the XLA kernels' Faraday (f one (nt, 4) array: one loop
fusion over its nt x 4 entries, each thread forming its own increment) against the same
arithmetic written so that one thread can form all four increments of a tet, each
inside one jitted loop:

* ``tuple``: f as four (nt,) rows returned as a tuple (XLA may emit one multi-output
  fusion, or, as it did on an H100, write the six edge circulations out first);
* ``cat1``: (nt, 4) built by concatenating four (nt, 1) columns (XLA's concatenate
  emitter runs a thread per element of one operand and writes all four);
* ``cat0``: (4, nt) built by concatenating four (1, nt) rows.

**Ampere node product** of the widest node bucket, ``u_b += (M^eps_v)^{-1} x`` with
``x = sign G[|gidx|]`` (node order, packed cyclic diagonals, G fixed):

* ``rolled``: the XLA kernels' x gathered once as (nv, w) and rolled per diagonal (XLA
  writes x out and reads it back);
* ``cat1``: the (nv, w) result as a concatenation of w columns, each summing its row's
  terms over the w gathered columns of x (a thread per node, if the concatenate
  emitter shares the gathers between the columns).

The compiled loop's kernels (fusions) are listed for each, and with ``--hlo DIR`` its
optimized HLO is written there.

Usage: python benchmarks/dga_forms.py [DOFS] [--hlo DIR]
(default 20e6 DoFs on a GPU, 2e5 on a CPU)
"""

from __future__ import annotations

import os
import re
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
from emjax.dga.arrays import half_step_bytes, kernel_arrays
from emjax.dga.complex import build
from emjax.dga.layout import make_layout
from emjax.dga.mass import assemble


def increments(u, K):
    """The four (nt,) increments of the sym Faraday of :func:`emjax.dga.step.faraday`."""
    e6 = [kern._take(u, K["hs"][j]) - kern._take(u, K["he"][j]) for j in range(6)]
    c = [sum(s * e6[le] for le, s in terms) for terms in kern._FACE_TERMS]
    return [sum(K["Ms"][kern._SYM4_ROW[k, m]] * c[m] for m in range(4)) for k in range(4)]


def faraday_rows(u, f4, K):
    """The sym Faraday on four separate rows, returned as a tuple."""
    inc = increments(u, K)
    return tuple(f4[k] - inc[k] for k in range(4))


def faraday_cat1(u, f, K):
    """f (nt, 4) minus the increments, as a concatenation of four columns."""
    inc = increments(u, K)
    return jnp.concatenate([(f[:, k] - inc[k])[:, None] for k in range(4)], axis=1)


def faraday_cat0(u, f, K):
    """f (4, nt) minus the increments, as a concatenation of four rows."""
    inc = increments(u, K)
    return jnp.concatenate([(f[k] - inc[k])[None] for k in range(4)], axis=0)


def product_rolled(ub, G, g, B, w):
    """The XLA kernels' packed node product (:func:`emjax.dga.step.ampere`), u_b + du."""
    x = kern._signed_take(G, g)
    D = B["D"]
    du = D[0] * x
    for d in range(1, D.shape[0]):
        du = du + D[d] * kern._roll(x, -d, 1) + kern._roll(D[d] * x, d, 1)
    if "Dh" in B:
        du = du + lax.concatenate([B["Dh"], B["Dh"]], 1) * kern._roll(x, -(w // 2), 1)
    return ub + du


def product_cat1(ub, G, g, B, w):
    """The same product as a concatenation of w columns (each with its own u added)."""
    x = [kern._signed_take(G, g[:, j]) for j in range(w)]
    D = B["D"]
    cols = []
    for i in range(w):
        acc = ub[:, i] + D[0][:, i] * x[i]
        for d in range(1, D.shape[0]):
            a, b = (i + d) % w, (i - d) % w
            acc = acc + D[d][:, i] * x[a] + D[d][:, b] * x[b]
        if "Dh" in B:
            acc = acc + B["Dh"][:, i % (w // 2)] * x[(i + w // 2) % w]
        cols.append(acc[:, None])
    return jnp.concatenate(cols, axis=1)


def kernels(compiled) -> list[str]:
    """Names of the fusions (GPU kernels) in a compiled module's text."""
    return re.findall(r"%(\w[\w.]*fusion[\w.]*) = ", compiled.as_text())


def _dump(hlo, name, compiled):
    if hlo:
        os.makedirs(hlo, exist_ok=True)
        tag = re.sub(r"\W+", "-", name).strip("-")
        with open(os.path.join(hlo, f"{tag}.hlo.txt"), "w") as fh:
            fh.write(compiled.as_text())


def main(dofs: float, hlo: str | None = None):
    rings, layers = rings_for(int(dofs))
    cx = build(structured.cylinder(1.0, 0.5, rings=rings, layers=layers))
    ops = assemble(cx, np.full(cx.num_tets, eps0), np.full(cx.num_tets, mu0))
    lay = make_layout(ops, "xla")
    spec = lay.spec
    K = kernel_arrays(ops, lay, 0.3 / rings / c0, np.float32)
    nbytes = half_step_bytes(ops, lay)["faraday"]
    K.pop("gpos", None)
    K = jax.device_put(K)
    rng = np.random.default_rng(0)
    u = jnp.asarray(rng.standard_normal(ops.nu).astype(np.float32))
    f = jnp.asarray(rng.standard_normal(spec.f_shape).astype(np.float32))
    f4 = tuple(jnp.asarray(np.asarray(f)[:, k]) for k in range(4))
    f0 = jnp.asarray(np.asarray(f).T.copy())
    n = 50
    forms = {  # name: (one half-step, initial state, state as (nt, 4) NumPy)
        "(nt, 4) array": (lambda u, f, K: kern.faraday(u, f, K, spec), f, np.asarray),
        "four rows, tuple": (faraday_rows, f4,
                             lambda s: np.stack([np.asarray(r) for r in s], axis=1)),
        "cat1 (nt, 4)": (faraday_cat1, f, np.asarray),
        "cat0 (4, nt)": (faraday_cat0, f0, lambda s: np.asarray(s).T),
    }
    ref = np.asarray(kern.faraday(u, f, K, spec))
    print(f"{cx.num_dofs} DoFs, {cx.num_tets} tets, {jax.devices()[0].device_kind}",
          flush=True)
    bw = copy_bandwidth(1 << 30 if on_gpu() else 1 << 26)
    for name, (half, state, as_nt4) in forms.items():
        got = as_nt4(jax.jit(half)(u, state, K))
        err = np.abs(got - ref).max() / np.abs(ref).max()
        run = jax.jit(lambda s, u, K, half=half: lax.fori_loop(
            0, n, lambda i, s: half(u, s, K), s))
        compiled = run.lower(state, u, K).compile()
        _dump(hlo, "faraday " + name, compiled)
        t = _median_loop(run, (state, u, K), n, 5)
        print(f"  Faraday, f as {name}: {t * 1e3:.4f} ms, {nbytes / t / 1e9:.0f} GB/s, "
              f"{nbytes / t / bw:.3f} of copy ({bw / 1e12:.2f} TB/s); agrees to {err:.1e}; "
              f"kernels {kernels(compiled)}", flush=True)

    # the widest bucket's node product, G fixed (one entry rewritten per pass, so that
    # XLA cannot hoist the product out of the loop)
    b = max(range(len(spec.buckets)), key=lambda i: spec.buckets[i][1] * spec.buckets[i][2])
    off, w, nv = spec.buckets[b]
    B, g = K["buckets"][b], K["buckets"][b]["gidx"]
    G = kern.edge_sums(f, K)
    ub = u[off:off + w * nv].reshape(nv, w)
    pbytes = 4 * (2 * nv * w + nv * w + sum(x.size for k, x in B.items() if k != "gidx"))
    ref = np.asarray(product_rolled(ub, G, g, B, w))
    for name, prod in (("rolled", product_rolled), ("cat1", product_cat1)):
        got = np.asarray(jax.jit(prod, static_argnums=4)(ub, G, g, B, w))
        err = np.abs(got - ref).max() / np.abs(ref).max()

        def body(i, c, prod=prod):
            ub, G = c
            ub = prod(ub, G, g, B, w)
            return ub, G.at[1].set(ub[0, 0])

        run = jax.jit(lambda c: lax.fori_loop(0, n, body, c))
        compiled = run.lower((ub, G)).compile()
        _dump(hlo, "ampere product " + name, compiled)
        t = _median_loop(run, ((ub, G),), n, 5)
        print(f"  Ampere product (w = {w}, nv = {nv}), {name}: {t * 1e3:.4f} ms, "
              f"{pbytes / t / 1e9:.0f} GB/s on {pbytes / 1e6:.0f} MB (u r/w, gidx, D), "
              f"{pbytes / t / bw:.3f} of copy; agrees to {err:.1e}; "
              f"kernels {kernels(compiled)}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    hlo_dir = None
    if "--hlo" in args:
        i = args.index("--hlo")
        hlo_dir = args[i + 1]
        del args[i:i + 2]
    main(float(args[0]) if args else (20e6 if on_gpu() else 2e5), hlo_dir)
