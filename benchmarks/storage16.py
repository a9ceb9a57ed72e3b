"""Experiment (issue 23, item 2): 16-bit field storage with float32 arithmetic in the
XLA two-pass step, before it goes into src/.

The 3D Yee step of ``emjax.fdtd.update3d`` (uniform vacuum, PEC box, no CPML) with E
and H stored as float32, bfloat16 or float16: each update reads its 16-bit inputs,
computes in float32 and writes 16-bit (the converts fuse into the update), so a step
moves about half the bytes. Reports ms per step and Gcells/s at ``n``^3, and the
accuracy of each storage on a PEC cavity: the TM110 resonance of an a x a x a/2 box,
started from its analytic mode shape, read from a probe's spectrum after ``cavity_steps``
steps against the float32 run (and, for scale, the analytic frequency of the box).

Usage: python benchmarks/storage16.py [n] [steps] [cavity_n] [cavity_steps]
Prints one JSON document.
"""

from __future__ import annotations

import json
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from emjax.fdtd.update3d import Layout, UpdateCoefficients, update_E, update_H

C0, EPS0, MU0 = 299792458.0, 8.8541878128e-12, 4e-7 * np.pi


def _stepper(shape, d: float, dt: float, storage):
    lay = Layout(shape=shape, inv_d=(1 / d,) * 3, pec_low=(True, True, True))
    f32 = jnp.float32
    cE = UpdateCoefficients(a=jnp.ones((1,), f32), b=jnp.full((1,), dt / EPS0, f32))
    cH = UpdateCoefficients(a=jnp.ones((1,), f32), b=jnp.full((1,), dt / MU0, f32))

    def up(F):
        return tuple(x.astype(f32) for x in F)

    def down(F):
        return tuple(x.astype(storage) for x in F)

    def step(carry, _):
        E, H = carry
        H = down(update_H(up(E), up(H), cH, {}, {}, lay)[0])
        E = down(update_E(up(E), up(H), cE, {}, {}, lay)[0])
        return (E, H), E[2][shape[0] // 3, shape[1] // 3, shape[2] // 2].astype(f32)

    return step


def throughput(n: int, steps: int, storage) -> float:
    """ms per step of ``steps`` steps at n^3 (best of 3 after a warm-up)."""
    shape, d = (n, n, n), 1e-3
    dt = 0.99 * d / (C0 * np.sqrt(3))
    step = _stepper(shape, d, dt, storage)
    run = jax.jit(lambda c: jax.lax.scan(step, c, None, length=steps))
    z = jnp.zeros(shape, storage)
    E = (z, z, z.at[n // 2, n // 2, n // 2].set(1))
    carry = (E, (z, z, z))
    jax.block_until_ready(run(carry))
    best = np.inf
    for _ in range(3):
        t = time.perf_counter()
        jax.block_until_ready(run(carry))
        best = min(best, time.perf_counter() - t)
    return 1e3 * best / steps


def cavity(n: int, steps: int, storage) -> float:
    """TM110 frequency (Hz) of an a x a x a/2 PEC box of n + 1 cells a side, d = 1 mm,
    from the probe spectrum (peak refined by a parabola on the log magnitude)."""
    nz = n // 2
    shape, d = (n + 1, n + 1, nz + 1), 1e-3
    dt = 0.99 * d / (C0 * np.sqrt(3))
    x = np.arange(n + 1) * d
    a = (n + 1) * d  # the upper walls lie one cell beyond the last stored node
    ez = np.sin(np.pi * x / a)[:, None, None] * np.sin(np.pi * x / a)[None, :, None] \
        * np.ones((1, 1, nz + 1))
    z = jnp.zeros(shape, storage)
    carry = ((z, z, jnp.asarray(ez, storage)), (z, z, z))
    step = _stepper(shape, d, dt, storage)
    _, probe = jax.jit(lambda c: jax.lax.scan(step, c, None, length=steps))(carry)
    s = np.asarray(probe, np.float64)
    spec = np.abs(np.fft.rfft(s * np.hanning(len(s)), 16 * len(s)))
    f = np.fft.rfftfreq(16 * len(s), dt)
    k = int(np.argmax(spec[1:])) + 1
    y0, y1, y2 = np.log(spec[k - 1:k + 2])
    return float(f[k] + 0.5 * (y0 - y2) / (y0 - 2 * y1 + y2) * (f[1] - f[0]))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    cn = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    csteps = int(sys.argv[4]) if len(sys.argv) > 4 else 4000
    storages = {"float32": jnp.float32, "bfloat16": jnp.bfloat16, "float16": jnp.float16}
    rec: dict = {"device": str(jax.devices()[0]), "n": n, "steps": steps, "cases": {}}
    # analytic TM110 of the a x a box: f = c / (a sqrt 2); the grid's: sin(w dt/2) =
    # c dt sqrt(2) sin(pi d / 2a) / d
    d, a = 1e-3, (cn + 1) * 1e-3
    dt = 0.99 * d / (C0 * np.sqrt(3))
    f_grid = np.arcsin(C0 * dt * np.sqrt(2) * np.sin(np.pi * d / (2 * a)) / d) / (np.pi * dt)
    rec["cavity"] = {"n": cn, "steps": csteps, "analytic_hz": C0 / (a * np.sqrt(2)),
                     "grid_hz": f_grid}
    f32 = None
    for name, st in storages.items():
        ms = throughput(n, steps, st)
        f = cavity(cn, csteps, st)
        f32 = f if f32 is None else f32
        rec["cases"][name] = {"ms_per_step": ms, "gcells_per_s": n**3 / ms / 1e6,
                              "tm110_hz": f, "rel_error_vs_float32": f / f32 - 1,
                              "rel_error_vs_analytic": f / f_grid - 1}
        print(json.dumps({name: rec["cases"][name]}), file=sys.stderr, flush=True)
    print(json.dumps(rec, indent=1))


if __name__ == "__main__":
    main()
