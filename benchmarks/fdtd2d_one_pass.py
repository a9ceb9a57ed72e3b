"""The 2D one-pass Yee step, kept out of src/ until a GPU says it wins.

The E update reads the neighbouring new H recomputed from the old fields instead of
the new H itself, so both updates depend on the inputs alone and XLA may fuse them
into one kernel that reads E, H once and writes them once (24 B per float32 TMz cell,
against 36 for the two-pass step of ``emjax.fdtd.update2d``). PEC walls only: no
slabs, sources, TF/SF or conformal cells. It equalled the two-pass step to float64
rounding (1e-12 of the peak, media and PEC blocks included) and ran 2.4x slower on a
CPU (recomputation); it was ``FDTD2D(kernel="one_pass")`` and ``emjax bench
seed002-tmz``'s 'pec-one-pass' case until issue #18 (history in BENCHMARKS.md).

Usage: python benchmarks/fdtd2d_one_pass.py [n] [steps]
Prints the relative difference from the two-pass step over 60 steps of a small
float64 scene, then ms per step of both kernels on n x n vacuum with PEC walls.
"""

from __future__ import annotations

import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import emjax as em
from emjax.fdtd.solver2d import FDTD2DSolver
from emjax.fdtd.update2d import Layout2D, curl_terms, update_E, update_H
from emjax.fdtd.update3d import _mask_low, _shift, coefficient, diff_forward


def _h_new_shifted(E, H, coeffs_H, lay: Layout2D, axis: int):
    """H^{n+1/2} shifted by one sample along ``axis`` (entry i holds entry i-1; zero at
    i = 0), computed from E^n and H^{n-1/2} alone, so that it fuses with the E update."""
    f_comps, g_comps = lay.comps[1], lay.comps[0]
    out = []
    for pos, comp in enumerate(f_comps):
        curl = None
        for s_, src, ax in curl_terms(comp):
            g = E[g_comps.index(src)]
            if ax == axis:  # (g[i+1] - g[i]) at i-1 = g[i] - g[i-1]
                d = g - _shift(g, axis, +1)
            else:
                d = diff_forward(_shift(g, axis, +1), ax)
            term = s_ * lay.inv_d[ax] * d
            curl = term if curl is None else curl + term
        a, b = coefficient(coeffs_H, pos)
        if jnp.ndim(a):
            a, b = _shift(a, axis, +1), _shift(b, axis, +1)
        val = a * _shift(H[pos], axis, +1) - b * curl
        out.append(jnp.where(lax.broadcasted_iota(jnp.int32, val.shape, axis) == 0, 0, val))
    return tuple(out)


def step_one_pass(E, H, coeffs, lay: Layout2D):
    """One leapfrog step as a single pass (see the module docstring)."""
    H_new, _ = update_H(E, H, coeffs["H"], {}, {}, lay)
    f_comps, g_comps = lay.comps
    shifted = {}
    new_E = []
    for pos, comp in enumerate(f_comps):
        curl = None
        for s_, src, ax in curl_terms(comp):
            if ax not in shifted:
                shifted[ax] = _h_new_shifted(E, H, coeffs["H"], lay, ax)
            k = g_comps.index(src)
            term = s_ * lay.inv_d[ax] * (H_new[k] - shifted[ax][k])
            curl = term if curl is None else curl + term
        a, b = coefficient(coeffs["E"], pos)
        out = a * E[pos] + b * curl
        new_E.append(_mask_low(out, [a_ for a_ in range(2) if a_ != comp]))
    return tuple(new_E), H_new


def step_two_pass(E, H, coeffs, lay: Layout2D):
    H, _ = update_H(E, H, coeffs["H"], {}, {}, lay)
    E, _ = update_E(E, H, coeffs["E"], {}, {}, lay)
    return E, H


def _setup(pol: str, n: tuple[int, int], dtype: str, media: bool):
    structures = []
    if media:
        structures = [
            em.Structure2D(geometry=em.Circle(center=(2e-3, 1e-3), radius=4e-3),
                           medium=em.Medium(eps_r=3, mu_r=2, sigma=0.5)),
            em.Structure2D(geometry=em.Rectangle(center=(-6e-3, -4e-3), size=(3e-3, 5e-3)),
                           medium=em.PEC())]
    sim = em.FDTD2D(polarization=pol, domain=em.Domain2D(shape=n, spacing=1e-3),
                    boundary=em.PEC(), steps=10, dtype=dtype, conformal=False,
                    structures=structures)
    s = FDTD2DSolver(sim, check_memory=False).setup
    return s, jax.device_put(s.coeffs)


def _run(step, s, coeffs, steps: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    n_e, n_h = (len(c) for c in s.layout.comps)
    E = tuple(jnp.asarray(rng.standard_normal(s.layout.shape), s.dtype) for _ in range(n_e))
    H = tuple(jnp.asarray(rng.standard_normal(s.layout.shape), s.dtype) for _ in range(n_h))
    E = tuple(_mask_low(F, [a for a in range(2) if a != c]) for F, c in
              zip(E, s.layout.comps[0], strict=True))

    @jax.jit
    def many(E, H):
        return lax.fori_loop(0, steps, lambda _, f: step(*f, coeffs, s.layout), (E, H))

    return many, E, H


def check_equal() -> None:
    for pol in ("TMz", "TEz"):
        s, c = _setup(pol, (30, 26), "float64", media=True)
        a = _run(step_two_pass, s, c, 60)
        b = _run(step_one_pass, s, c, 60)
        fa, fb = a[0](*a[1:]), b[0](*b[1:])
        ref = [np.asarray(x) for g in fa for x in g]
        got = [np.asarray(x) for g in fb for x in g]
        scale = max(np.abs(x).max() for x in ref)
        err = max(np.abs(x - y).max() for x, y in zip(ref, got, strict=True)) / scale
        print(f"{pol}: one-pass vs two-pass, 60 steps: {err:.2e} of the peak (expect < 1e-12)")


def time_both(n: int, steps: int) -> None:
    s, c = _setup("TMz", (n, n), "float32", media=False)
    for name, step in (("two-pass", step_two_pass), ("one-pass", step_one_pass)):
        many, E, H = _run(step, s, c, steps)
        jax.block_until_ready(many(E, H))
        t = time.perf_counter()
        jax.block_until_ready(many(E, H))
        sec = (time.perf_counter() - t) / steps
        print(f"{name}: {sec * 1e3:.3f} ms per step, {n * n / sec / 1e9:.2f} Gcells/s "
              f"({jax.devices()[0].device_kind})")


if __name__ == "__main__":
    check_equal()
    time_both(int(sys.argv[1]) if len(sys.argv) > 1 else 512,
              int(sys.argv[2]) if len(sys.argv) > 2 else 100)
