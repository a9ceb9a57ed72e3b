"""Experiment: the FDFD fast-diagonalization preconditioner's cost per application and
per COCG iteration, variant by variant (issue 24, item 5: an iteration within 3x of its
traffic floor).

    python benchmarks/fdfd_precond_variants.py N|head [VARIANT ...]

VARIANT is MODE[:DTYPE[:PRECISION]]:
* MODE ``einsum``: :func:`emjax.fdfd.precond.apply_fast_diag` as it was before 115a78f
  (one batched einsum per axis, the component as batch, each matrix on the left);
  ``minor``: the z transform written with u as the left operand (``cxyb,cab->cxya``),
  so that its product comes out in u's order without a transpose; ``bcast``: ``minor``
  with the y matrices stored once per x, (3, nx, n, n), so that the y transform is a
  product batched over (c, x) in u's order (what the solver does on a GPU since
  115a78f); ``planar``: the transforms on (re, im) float planes as real products (four
  per axis, no complex GEMM).
* DTYPE ``c128`` (default) or ``c64``: the preconditioner applied in complex64 (r cast
  down, z cast up; the operands stored in complex64), COCG itself in complex128.
* PRECISION ``highest`` (default), ``high`` or ``default`` (XLA:GPU: TF32 for float32).

For each: the seconds of one application (median of 20), its largest relative
difference from the complex128 application of
:func:`emjax.fdfd.precond.apply_fast_diag`, and preconditioned COCG on the seed's
sphere at N^3 (or the built-in head) to 1e-6 from zero (compile excluded): iterations,
seconds, ms per iteration and the true residual; with the traffic floor of one
iteration (10 complex128 vectors of 3 N^3 read or written, at the copy bandwidth
measured here).
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

jax.config.update("jax_enable_x64", True)

from emjax.fdfd import krylov, operator, precond  # noqa: E402
from emjax.fdfd import solver as fsolver  # noqa: E402
from emjax.validation.fdfd import sphere_scenario  # noqa: E402

MV = operator.matvec_sep_stencil
PREC = {"highest": lax.Precision.HIGHEST, "high": lax.Precision.HIGH,
        "default": lax.Precision.DEFAULT}


def build(case: str):
    """The solver's own set-up (separable storage, fastdiag) of the seed's sphere at
    ``case``^3 cells or of the built-in ``head-900mhz`` (``case == "head"``)."""
    from emjax.scenarios import load_builtin

    sim = load_builtin("head-900mhz") if case == "head" else sphere_scenario(0.32 / int(case))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prep = fsolver.prepare(sim, storage="separable", preconditioner="fastdiag")
    ops = fsolver._kernel_ops(prep.ops)
    return prep, {k: v for k, v in ops.items() if k != "pc"}, ops["pc"]


def _mats(mats, dtype):
    """The (3, n, n) matrices of each axis (the y ones taken back from per-x storage)."""
    return [(m if m.ndim == 3 else m[:, 0]).astype(dtype) for m in mats]


_SPECS = {"einsum": ("cab,cbyz->cayz", "cab,cxbz->cxaz", "cab,cxyb->cxya"),
          "minor": ("cab,cbyz->cayz", "cab,cxbz->cxaz", "cxyb,cab->cxya"),
          "bcast": ("cab,cbyz->cayz", "cxab,cxbz->cxaz", "cxyb,cab->cxya")}


def _transform(ms, u, mode: str, prec):
    if mode == "planar":  # u = (re, im) planes; M = (Mr, Mi)
        ur, ui = u
        for b in range(3):
            mr, mi = ms[b]
            spec = _SPECS["minor"][b]
            ein = lambda m, v, spec=spec: (jnp.einsum(spec, v, m, precision=prec)  # noqa: E731
                                           if spec.startswith("cxy") else
                                           jnp.einsum(spec, m, v, precision=prec))
            ur, ui = ein(mr, ur) - ein(mi, ui), ein(mr, ui) + ein(mi, ur)
        return ur, ui
    for b in range(3):
        spec = _SPECS[mode][b]
        u = (jnp.einsum(spec, u, ms[b], precision=prec) if spec.startswith("cxy") else
             jnp.einsum(spec, ms[b], u, precision=prec))
    return u


def make_variant(pops, name: str):
    """(precond(ops, r), its operands) of VARIANT ``name`` (module docstring)."""
    parts = name.split(":")
    mode, dt, pr = parts[0], (parts[1:2] or ["c128"])[0], (parts[2:3] or ["highest"])[0]
    cdt = jnp.complex64 if dt == "c64" else jnp.complex128
    prec = PREC[pr]
    fwd, inv = _mats(pops["fwd"], cdt), _mats(pops["inv"], cdt)
    if mode == "bcast":  # y's matrices stored once per x: a batched product, no transpose
        nx = fwd[0].shape[1]
        fwd[1], inv[1] = (jnp.broadcast_to(m[:, None], (3, nx, *m.shape[1:])) + 0
                          for m in (fwd[1], inv[1]))
    if mode == "planar":
        fwd = [(m.real, m.imag) for m in fwd]
        inv = [(m.real, m.imag) for m in inv]
    q = {"fwd": fwd, "inv": inv, "sig": [s.astype(cdt) for s in pops["sig"]],
         "shift": pops["shift"].astype(cdt), "inv_wall": pops["inv_wall"],
         "r": pops["r"].astype(cdt), "r_inv": pops["r_inv"].astype(cdt)}

    def apply(ops, y):
        p = ops["pv"]
        shape = y.shape[1:]
        x = (y * p["r_inv"]).astype(cdt)
        if mode == "planar":
            xr, xi = _transform(p["fwd"], (x.real, x.imag), mode, prec)
            xh = list(lax.complex(xr, xi))
        else:
            xh = list(_transform(p["fwd"], x, mode, prec))
        sg = [p["sig"][b].reshape([-1 if i == b else 1 for i in range(3)]) for b in range(3)]
        s2 = sg[0] * sg[0] + sg[1] * sg[1] + sg[2] * sg[2]
        tr = 1.0 / (s2 - p["shift"])
        safe = jnp.where(s2 != 0, s2, 1.0)
        lg = (-1.0 / p["shift"] - tr) / safe
        sdotx = sg[0] * xh[0] + sg[1] * xh[1] + sg[2] * xh[2]
        zh = jnp.stack([tr * xh[a] + lg * sg[a] * sdotx for a in range(3)])
        if mode == "planar":
            zr, zi = _transform(p["inv"], (zh.real, zh.imag), mode, prec)
            z = lax.complex(zr, zi)
        else:
            z = _transform(p["inv"], zh, mode, prec)
        z = (p["r"] * z).astype(y.dtype)
        return jnp.where(precond.wall_samples(shape), p["inv_wall"] * y, z)

    return apply, q


def _per_call(fn, *args, reps: int = 20) -> float:
    jax.block_until_ready(fn(*args))
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        jax.block_until_ready(fn(*args))
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def copy_bandwidth(nbytes: int = 1 << 30) -> float:
    x = jnp.ones(nbytes // 4, jnp.float32)
    f = jax.jit(lambda a: a * 1.0000001)
    return 2 * nbytes / _per_call(f, x)


def main(argv: list[str]) -> None:
    names = argv[1:] or ["einsum", "minor", "bcast", "minor:c64", "bcast:c64"]
    prep, ops, pops = build(argv[0])
    b = prep.b
    bw = copy_bandwidth()
    floor = 10 * b.size * 16 / bw
    print(f"{argv[0]} ({b.shape}) on {jax.devices()[0].device_kind}: copy {bw / 1e9:.0f} "
          f"GB/s, iteration traffic floor {floor * 1e3:.3f} ms (10 complex128 vectors)", flush=True)
    mv_s = _per_call(jax.jit(MV), ops, b)
    print(f"  product {mv_s * 1e3:.3f} ms", flush=True)
    ref = jax.jit(precond.apply_fast_diag)(pops, b)
    hlo = os.environ.get("HLO")
    for name in names:
        pre, q = make_variant(pops, name)
        o = dict(ops, pv=q)
        try:
            fn = jax.jit(pre)
            if hlo:
                text = fn.lower(o, b).compile().as_text()
                Path(hlo).mkdir(parents=True, exist_ok=True)
                Path(hlo, f"{argv[0]}-{name.replace(':', '-')}.hlo.txt").write_text(text)
            z = fn(o, b)
            diff = float(jnp.max(jnp.abs(z - ref)) / jnp.max(jnp.abs(ref)))
            pc_s = _per_call(fn, o, b)
            init, step = krylov.make_cocg(MV, 20000, None, None, pre)
            run_ = step.lower(o, init(o, b, jnp.zeros_like(b), 1e-6), jnp.int32(1)).compile()
            s = init(o, b, jnp.zeros_like(b), 1e-6)
            jax.block_until_ready(s)
            t = time.perf_counter()
            s, _ = run_(o, s, jnp.int32(20000))
            jax.block_until_ready(s)
            sec = time.perf_counter() - t
            its = int(s["it"])
            true = float(jnp.linalg.norm(b - MV(ops, s["x"])) / jnp.linalg.norm(b))
            per = sec / max(its, 1)
            print(f"  {name:20s} apply {pc_s * 1e3:.3f} ms (diff {diff:.1e}); to 1e-6: "
                  f"{its} it, {sec:.4f} s, {per * 1e3:.3f} ms/it = {per / floor:.2f}x floor, "
                  f"flag {int(s['flag'])}, true {true:.1e}", flush=True)
        except Exception as e:  # a variant XLA cannot compile here: say so, go on
            print(f"  {name:20s} FAILED: {type(e).__name__}: {str(e)[:300]}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
