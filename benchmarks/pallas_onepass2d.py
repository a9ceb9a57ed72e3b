"""Experiment (issue 23, item 1, 2D): a one-pass Pallas (Triton) kernel for the TMz step
with emjax's CPML on all four sides and CIS media.

One ``pallas_call`` per time step reads Ez, Hx, Hy once and writes them once (24 B per
float32 cell, plus 1 B of material code where the medium is not uniform) against 36 B
(+3 B of indices) for the XLA two-pass step of ``emjax.fdtd.update2d``. A program owns a
(bx, by) tile (y contiguous); the new H it needs one cell back along x and y (the E
update's backward differences) is recomputed from shifted loads of the old fields,
which the neighbouring programs' reads share through the caches. psi lives in the slabs
only, one array per (field, axis) with the low and high slab side by side (emjax keeps
one per face; the kernel's layout is converted at the boundary of the experiment); psi^n
is read from one buffer set and psi^{n+1} written to a second, like the fields, because
a neighbour's halo recomputation must see the old values. The scan body does two steps
A -> B -> A, so XLA copies nothing.

CPML in the kernel (emjax's ``combined`` arithmetic, Roden and Gedney 2000): for the
curl term of a component along a slab's axis, D = s inv_d (difference),
psi' = b psi + c D, and the curl gains (1/kappa - 1) D + psi'. Faces without a slab get
zero coefficients (the terms then add exactly 0). ``Tiling2D.cond``: 1, a program whose
tile or halo meets no slab runs a body without any slab code (one uniform branch per
program); 0, every program runs the masked slab code.

The reference is emjax: an ``em.FDTD2D`` square (vacuum, or with a lossy dielectric
disc) lowered by ``FDTD2DSolver(...).setup`` and stepped by ``update2d.update_H`` then
``update_E``; the kernel must agree to float32 rounding.

Usage:
  python benchmarks/pallas_onepass2d.py check [n] [steps] [cpml]      (CPU: interpreter)
  python benchmarks/pallas_onepass2d.py gpu OUT.json [sizes] [tilings bx x by x warps x
      stages x cond, comma-separated] [check_n] [check_steps]
``gpu`` checks each tiling against XLA (lossy disc, 10-cell CPML) then times 200-step
scans of the XLA step and each tiling at each size, vacuum and lossy disc, CPML and
PEC walls; JSON lines on stdout and in OUT.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
import time
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import emjax as em
from emjax.fdtd.pallas2d import pack_media, pack_slabs
from emjax.fdtd.solver2d import FDTD2DSolver
from emjax.fdtd.update2d import Layout2D, update_E, update_H, zeros_psi
from emjax.model.scenario2d import FDTD2D, Circle, Domain2D, Structure2D

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from pallas_onepass2d_kernel import (
    Static2D,
    Tiling2D,
    onepass_step,
    plan_launches,
)
from pallas_onepass3d_cpml import _copy, _err, _time

F32 = jnp.float32
PSI = (("H", 1, 0), ("H", 0, 1), ("E", 2, 0), ("E", 2, 1))
"""The kernel's psi arrays: (field, component, axis): Hy along x, Hx along y, Ez along
x, Ez along y (TMz)."""


def psi_to_kernel(lay: Layout2D, psi_E: dict, psi_H: dict, L) -> list:
    """emjax's psi dicts as the kernel's four flat arrays (low and high side by side)."""
    out = []
    for field, comp, ax in PSI:
        psi = psi_H if field == "H" else psi_E
        n_other = lay.shape[1 - ax]
        parts = []
        for side in ("low", "high"):
            key = f"{'xy'[ax]}_{side}"
            shape = (L[ax], n_other) if ax == 0 else (n_other, L[ax])
            parts.append(psi[key][comp] if key in psi else jnp.zeros(shape, F32))
        out.append(jnp.concatenate(parts, axis=ax).reshape(-1) if L[ax] else
                   jnp.zeros((1,), F32))
    return out



# ------------------------------------------------------------------------ scene
def scenario(n: int, cpml: int, lossy: bool) -> FDTD2D:
    """n x n TMz cells of 1 mm, a ``cpml``-cell CPML (0: PEC walls), vacuum or with a
    lossy dielectric disc off centre."""
    d = 1e-3
    structures = [Structure2D(geometry=Circle(center=(0.1 * n * d, -0.07 * n * d),
                                              radius=0.3 * n * d),
                              medium=em.Medium(eps_r=4.0, sigma=0.05))] if lossy else []
    return FDTD2D(name=f"onepass{n}", polarization="TMz",
                  domain=Domain2D(shape=(n, n), spacing=d), steps=10,
                  boundary=em.CPML(thickness=cpml) if cpml else em.PEC(),
                  structures=structures)


@dataclass
class Scene2D:
    lay: Layout2D
    cE: object
    cH: object
    pml: dict
    tabs: tuple
    st: Static2D

    @classmethod
    def make(cls, n: int, cpml: int, lossy: bool) -> Scene2D:
        s = FDTD2DSolver(scenario(n, cpml, lossy), check_memory=False).setup
        lay = s.layout
        assert lay.polarization == "TMz" and lay.shape == (n, n) and s.dtype == np.float32
        code, ctab, digits = pack_media(s.coeffs["E"], s.coeffs["H"], lay.shape)
        L, hi, ptab = pack_slabs(lay, s.pml)
        st = Static2D(lay.shape, lay.inv_d, L, hi, digits, jax.default_backend() != "gpu")
        code = jnp.asarray(code.reshape(-1) if st.has_code else np.zeros(1, np.uint8))
        tabs = (code, jnp.asarray(ctab), jnp.asarray(ptab))
        return cls(lay, jax.device_put(s.coeffs["E"]), jax.device_put(s.coeffs["H"]),
                   jax.device_put(s.pml), tabs, st)

    def initial(self, seed: int = 0):
        """Smooth random fields, Ez zero on the low faces, H ~ E / eta0."""
        rng = np.random.default_rng(seed)
        x = [np.arange(m) / m for m in self.lay.shape]
        out = []
        for comp in range(3):
            f = np.zeros(self.lay.shape)
            for _ in range(3):
                k, ph = rng.integers(1, 5, 2), rng.uniform(0, 2 * np.pi, 2)
                f += np.outer(np.sin(2 * np.pi * k[0] * x[0] + ph[0]),
                              np.sin(2 * np.pi * k[1] * x[1] + ph[1]))
            f += 0.01 * rng.standard_normal(self.lay.shape)
            if comp == 0:
                f[0, :] = f[:, 0] = 0.0
            out.append(jnp.asarray((f if comp == 0 else f / 376.73).astype(np.float32)))
        return tuple(out)

    def xla(self, pairs: int, fold: bool | None = None):
        """2 * pairs two-pass steps of emjax: fn(((Ez,), (Hx, Hy), psi_E, psi_H), cE, cH,
        pml), donated (fold: the slab terms' strategy, None: the backend's)."""
        lay = self.lay if fold is None else dataclasses.replace(self.lay, fold=fold)

        @functools.partial(jax.jit, donate_argnums=0)
        def run(state, cE, cH, pml):
            def body(c, _):
                E, H, pE, pH = c
                H, pH = update_H(E, H, cH, pml, pH, lay)
                E, pE = update_E(E, H, cE, pml, pE, lay)
                return (E, H, pE, pH), None
            return lax.scan(body, state, None, length=2 * pairs)[0]
        return run

    def xla_state(self, F):
        return ((F[0],), (F[1], F[2]), *zeros_psi(self.lay, F32))

    def tabs_for(self, t: Tiling2D) -> tuple:
        """(code, coefficient table, CPML table, tile table) of tiling t."""
        return (*self.tabs, jnp.asarray(plan_launches(self.st, t)[1]))

    def onepass(self, t: Tiling2D, pairs: int):
        st = self.st

        @functools.partial(jax.jit, donate_argnums=(0, 1))
        def run(state, scratch, tabs):
            def body(c, _):
                (F, psi), (SF, Sp) = c
                B = onepass_step(F, psi, tabs, SF, Sp, st, t)
                A = onepass_step(*B, tabs, F, psi, st, t)
                return (A, B), None
            return lax.scan(body, (state, scratch), None, length=pairs)[0]
        return run

    def kernel_state(self, F):
        pE, pH = zeros_psi(self.lay, F32)
        return F, tuple(psi_to_kernel(self.lay, pE, pH, self.st.L))

    def scratch(self):
        _, psi = self.kernel_state(())
        return tuple(jnp.zeros(self.lay.shape, F32) for _ in range(3)), tuple(
            jnp.zeros_like(p) for p in psi)

    def yardstick(self, steps: int) -> dict:
        """emjax's two slab strategies (same arithmetic, other order) against each other,
        as :meth:`compare` measures the kernel: float32 rounding's size here."""
        f0 = self.initial()
        a, b = (self.xla(steps // 2, fold)(self.xla_state(_copy(f0)), self.cE, self.cH,
                                           self.pml) for fold in (True, False))
        err = _err((a[0][0], *a[1]), (b[0][0], *b[1]))
        return {"yardstick": "xla folded vs in place", "steps": 2 * (steps // 2),
                "shape": list(self.lay.shape), "rel_err": max(err)}

    def compare(self, t: Tiling2D, steps: int) -> dict:
        f0 = self.initial()
        E, H, pE, pH = self.xla(steps // 2)(self.xla_state(_copy(f0)), self.cE, self.cH,
                                            self.pml)
        (F, psi), _ = self.onepass(t, steps // 2)(self.kernel_state(_copy(f0)),
                                                  self.scratch(), self.tabs_for(t))
        err = _err((E[0], H[0], H[1]), F)
        psi_err = _err(psi_to_kernel(self.lay, pE, pH, self.st.L), psi)
        return {"shape": list(self.lay.shape), "steps": 2 * (steps // 2), "tiling": str(t),
                "slabs": len(self.lay.slabs), "code": self.st.has_code,
                "rel_err_per_component": err, "rel_err": max(err),
                "psi_rel_err": max(psi_err)}


# ------------------------------------------------------------------------ runs
def bench(n: int, tilings, steps: int, copy_bw: float, emit, cpml: int, lossy: bool):
    sc = Scene2D.make(n, cpml, lossy)
    cells = float(n * n)
    f0 = sc.initial()
    code_b = int(sc.st.has_code)
    idx_b = sum(a.dtype.itemsize for c in (sc.cE, sc.cH) for a in (c.idx or ()))

    def row(name, fn, args_fn, bpc, **kw):
        sec = _time(fn, args_fn)
        r = {"n": n, "cpml": cpml, "lossy": lossy, "kernel": name,
             "ms_per_step": 1e3 * sec / steps, "gcells_s": cells * steps / sec / 1e9,
             "bytes_per_cell": bpc, "fraction_of_copy": cells * steps * bpc / sec / copy_bw,
             **kw}
        emit(r)

    row("xla two-pass (emjax)", sc.xla(steps // 2),
        lambda: (sc.xla_state(_copy(f0)), sc.cE, sc.cH, sc.pml), 36 + idx_b)
    for t in tilings:
        try:
            row(f"one-pass {t}", sc.onepass(t, steps // 2),
                lambda t=t: (sc.kernel_state(_copy(f0)), sc.scratch(), sc.tabs_for(t)),
                24 + code_b)
        except Exception as e:
            emit({"n": n, "cpml": cpml, "lossy": lossy, "kernel": f"one-pass {t}",
                  "error": f"{type(e).__name__}: {str(e)[:300]}"})


def main(argv: list[str]) -> None:
    mode = argv[0] if argv else "check"
    if mode == "check":
        n, steps, cpml = (int(v) for v in (argv[1:] + ["48", "40", "6"][len(argv[1:]):])[:3])
        for lossy in (False, True):
            sc = Scene2D.make(n, cpml, lossy)
            for t in (Tiling2D(8, 16, 4, 1, 1, 1), Tiling2D(16, 8, 4, 1, 0, 0),
                      Tiling2D(8, 16, 4, 1, 2, 1), Tiling2D(4, 32, 4, 1, 2, 0),
                      Tiling2D(8, 16, 4, 1, 3, 1)):
                print(json.dumps(sc.compare(t, steps)))
        return
    out = open(argv[1], "a")  # noqa: SIM115 - appended to for the whole run

    def emit(r):
        line = json.dumps(r)
        print(line, flush=True)
        out.write(line + "\n")
        out.flush()

    from emjax.bench.common import copy_bandwidth

    sizes = [int(v) for v in (argv[2] if len(argv) > 2 else "8192").split(",")]
    tilings = [Tiling2D.parse(s) for s in (argv[3] if len(argv) > 3 else
                                           "8x256x4x1x1").split(",")]
    check_n = int(argv[4]) if len(argv) > 4 else 512
    check_steps = int(argv[5]) if len(argv) > 5 else 1000
    bw = copy_bandwidth()
    emit({"device": jax.devices()[0].device_kind, "jax": jax.__version__,
          "copy_bw_TBs": bw / 1e12, "date": time.strftime("%Y-%m-%d %H:%M")})
    if check_steps:
        sc = Scene2D.make(check_n, 10, True)
        emit(sc.yardstick(check_steps))
        for t in tilings:
            if t.probe:
                continue
            try:
                emit(sc.compare(t, check_steps))
            except Exception as e:
                emit({"tiling": str(t), "error": f"{type(e).__name__}: {str(e)[:300]}"})
    for n in sizes:
        steps = 200
        for cpml, lossy in ((10, False), (10, True), (0, False)):
            bench(n, tilings, steps, bw, emit, cpml, lossy)


if __name__ == "__main__":
    main(sys.argv[1:])
