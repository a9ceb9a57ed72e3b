"""Experiment: the stability margin of the 3D conformal-PEC scheme.

The locally implicit scheme (``emjax.fdtd.conformal_implicit``) is
``(M + K_S / 4)(E^{n+1} - 2 E^n + E^{n-1}) = -K E^n`` (dt folded into K) with K = K_R +
K_S, stable while lambda_max(K_R) < 4: K_R e = -update_E(0, update_H(e, 0) with the cut
faces' H zeroed) from the solver's own kernels; a power iteration finds lambda_max.
Prints it for the sphere cavity of ``emjax.validation.cavity3d`` at a few resolutions
and Courant numbers. (Until 2026-11-27 the explicit Dey-Mittra operator with enlarged
small faces was measured here; see BENCHMARKS.md, third session of 2026-11-27.)

    python benchmarks/conformal_stability.py 10 15 --courant 0.99
"""

from __future__ import annotations

import argparse
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from emjax.fdtd.solver import FDTDSolver  # noqa: E402
from emjax.fdtd.update3d import update_E, update_H, zeros_psi  # noqa: E402
from emjax.validation.cavity3d import sphere_cavity  # noqa: E402


def lambda_max(sim, iters: int = 3000, seed: int = 0) -> tuple[float, float]:
    """(lambda_max of K by power iteration, its change over the last 10% of iterations)."""
    solver = FDTDSolver(sim)
    s = solver.setup
    c = solver.constants()
    lay = s.layout
    psi_E, psi_H = zeros_psi(lay, s.dtype)
    zero = tuple(jnp.zeros(s.grid.shape, s.dtype) for _ in range(3))

    uncut = [np.ones(s.grid.shape, bool) for _ in range(3)]
    if s.conformal is not None:
        system = s.conformal[0]
        for (comp, _), idx in zip(system["static"]["faces"], system["arrays"]["f_index"],
                                  strict=True):
            uncut[comp][idx] = False
    uncut = [jnp.asarray(m) for m in uncut]

    def K(e):
        h, _ = update_H(e, zero, c["cH"], c["pml"], psi_H, lay)
        h = tuple(jnp.where(m, x, 0) for m, x in zip(uncut, h, strict=True))
        en, _ = update_E(zero, h, c["cE"], c["pml"], psi_E, lay)
        return tuple(-x for x in en)

    def norm(e):
        return jnp.sqrt(sum(jnp.sum(x * x) for x in e))

    @partial(jax.jit, static_argnums=1)
    def run(e, n):
        def body(carry, _):
            e, _ = carry
            k = K(e)
            lam = norm(k) / norm(e)
            return (tuple(x / norm(k) for x in k), lam), lam
        (e, _), hist = jax.lax.scan(body, (e, jnp.zeros((), s.dtype)), None, length=n)
        return e, hist

    rng = np.random.default_rng(seed)
    e = tuple(jnp.asarray(rng.standard_normal(s.grid.shape)) for _ in range(3))
    e, hist = run(e, iters)
    hist = np.asarray(hist)
    return float(hist[-1]), float(hist[-1] - hist[-iters // 10])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cells", type=float, nargs="+")
    ap.add_argument("--courant", type=float, default=0.99)
    ap.add_argument("--iters", type=int, default=3000)
    ap.add_argument("--staircase", action="store_true")
    a = ap.parse_args()
    for n in a.cells:
        sim = sphere_cavity(n, courant=a.courant, dtype="float64", periods=1,
                            conformal=not a.staircase)
        lam, drift = lambda_max(sim, a.iters)
        print(f"cells/radius {n:g} courant {a.courant}: lambda_max {lam:.6f} "
              f"(limit 4; drift {drift:.2e})", flush=True)


if __name__ == "__main__":
    main()
