"""Differentiable FDTD3D: ``jax.grad`` through the time loop, with checkpoints (issue 22).

Reverse mode through the run that ``sim.run()`` does, not a second copy of it: the
same chunk function (:func:`emjax.fdtd.solver._chunk`, the Yee step with CPML, TF/SF,
point sources, DFT and near-to-far accumulators) with the normal step
(:func:`emjax.fdtd.solver._step3d`, the normal material tables) followed by a
recomputation of the design region's E samples from the parameters
(:meth:`DesignRegion.patch`). Everything else in a step is linear in the fields with
constant coefficients, so reverse mode keeps per step only the patch's E^n and
curl H^{n+1/2} and accumulates patch-sized cotangents; memory is about the forward
run's plus the state's cotangent plus steps x patch (``checkpoints = 0``, the default
where it fits :func:`schedule`'s budget), time a forward plus one reverse sweep. With
``checkpoints = K`` the steps run as K chunks under ``jax.checkpoint`` (K stored
states, one chunk's residuals, each chunk recomputed once): for regions so large that
steps x patch outgrows the state. Reverse mode is exact for lossy media (no time
reversal of the fields, which a conductivity makes unstable).

The E and H updates go through :mod:`emjax.fdtd.transpose3d` in reverse (the gradient
run's layout sets ``transpose``): autodiff's own transpose of the CPML slab slices pads
every slab term back to the whole grid inside one fused kernel (51 pads per cell); the
written-out one passes the driving field through the update so that its cotangent is
one fused pass of shifted reads, with each slab's term over its window. On an H200 at
256^3 value and gradient cost 2.97x the forward run with ``combined`` (autodiff's
4.1-4.5x) and 2.69x with ``per_face`` (7.07x); on 2 CPU cores at 64^3 the reverse
sweep is 3-4x faster than autodiff's; equal to it to 1e-12 (test).
The gradient run's CPML strategy (``cpml_strategy="auto"``) is the backend's: on a CPU
"auto" (z slabs folded, x and y in place: value and gradient at 96^3 on 2 cores 1.24 s
against per_face's 1.80 and combined's far more), on a GPU the scenario's; the
arithmetic is the same (the test holds the run to ``sim.run()`` at 1e-12).

Design region (:class:`DesignRegion`): a box (m) split into ``pixels`` equal pixels;
the parameter array ``rho`` (shape ``pixels``, nominally in [0, 1]) sets eps_r =
eps_min + rho (eps_max - eps_min) and sigma likewise. Each Yee E sample takes the rho of
the pixel its position falls in (clamped into the box) and the fill fraction ``w`` of
the box in its dual cell (one cell along the component, half a cell either side across
it), so that eps = (1 - w) eps_base + w eps_design and sigma likewise where the box
edge cuts a cell. The density pipeline (:func:`emjax.grid.design.conic_filter`,
:func:`~emjax.grid.design.tanh_projection`) and the checks are shared with FDFD.

Objectives are plain JAX functions of :meth:`FDTDGradient.run`'s outputs:
:func:`dft_field`, :func:`point_intensity`, :func:`flux`, :func:`rcs`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..analysis import nf2ff
from ..constants import eps0
from ..errors import SetupError
from ..grid.design import check_cells, check_parameters
from ..grid.yee import COMPONENTS, OFFSETS
from ..model import Medium
from ..model.dispersion import PoleMedium
from .collect import flux_spectrum, incident_spectrum
from .cpml import CURL_TERMS
from .neartofar import surface
from .setup import _on_accelerator, _rasterize, e_update
from .solver import FDTDSolver, _chunk, _step3d


@dataclass(frozen=True, eq=False)
class Patch:
    """One E component's samples under a design region: ``comp`` (0, 1, 2), array
    ``slices``; ``w`` fill fraction, ``pixel`` flat pixel index, ``eps`` (F/m) and
    ``sigma`` (S/m) of the medium beneath, all of the patch's shape (NumPy)."""

    comp: int
    slices: tuple
    w: np.ndarray
    pixel: np.ndarray
    eps: np.ndarray
    sigma: np.ndarray


@dataclass(frozen=True, eq=False)
class DesignRegion:
    """A box ``lower``..``upper`` (m) of ``pixels`` parameters between two media
    (``eps_r``: (min, max), ``sigma``: (min, max) S/m), rasterized on the E samples."""

    lower: tuple[float, float, float]
    upper: tuple[float, float, float]
    pixels: tuple[int, int, int]
    eps_r: tuple[float, float]
    sigma: tuple[float, float]
    dt: float
    patches: tuple[Patch, ...]

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.pixels

    def box_coefficients(self, rho: jax.Array) -> list[tuple[jax.Array, jax.Array]]:
        """Per E component, the update coefficients (ca, cb) on its patch, from ``rho``."""
        check_parameters(rho.shape, self.pixels, f"{self.lower}..{self.upper} m")
        flat = rho.reshape(-1)
        out = []
        for p in self.patches:
            r = flat[p.pixel]
            eps = (1 - p.w) * p.eps + p.w * eps0 * (self.eps_r[0] + r * (self.eps_r[1]
                                                                         - self.eps_r[0]))
            sig = (1 - p.w) * p.sigma + p.w * (self.sigma[0] + r * (self.sigma[1]
                                                                    - self.sigma[0]))
            out.append(e_update(eps, sig, self.dt))
        return out

    def patch(self, E_new: tuple, E: tuple, H_new: tuple, coeffs, inv_d) -> tuple:
        """``E_new`` (the normal step's E^{n+1}) with the region's samples recomputed:
        ``ca E^n + cb curl H^{n+1/2}`` over each patch with the traced ``coeffs``
        (:meth:`box_coefficients`). The patch is clear of CPML, walls, TF/SF surfaces
        and sources (:func:`design_region`), where the normal update is exactly this
        expression, so the run equals the normal one with the region's media; the
        products with traced values are patch-sized, so reverse mode keeps patch-sized
        residuals per step and accumulates patch-sized cotangents."""
        out = list(E_new)
        for p, (ca, cb) in zip(self.patches, coeffs, strict=True):
            curl = None
            for sign, src, ax in CURL_TERMS[p.comp]:
                sl = list(p.slices)
                sl[ax] = slice(sl[ax].start - 1, sl[ax].stop)  # H[i] - H[i-1]
                h = H_new[src][tuple(sl)]
                n = h.shape[ax]
                term = sign * inv_d[ax] * (lax.slice_in_dim(h, 1, n, axis=ax)
                                           - lax.slice_in_dim(h, 0, n - 1, axis=ax))
                curl = term if curl is None else curl + term
            F = E[p.comp]
            val = ca.astype(F.dtype) * F[p.slices] + cb.astype(F.dtype) * curl
            out[p.comp] = out[p.comp].at[p.slices].set(val)
        return tuple(out)


def _overlap(a0, a1, b0, b1):
    """Length of [a0, a1] ∩ [b0, b1] (arrays)."""
    return np.clip(np.minimum(a1, b1) - np.maximum(a0, b0), 0.0, None)


def design_region(solver: FDTDSolver, lower, upper, pixels, eps_r=(1.0, 2.0),
                  sigma=(0.0, 0.0)) -> DesignRegion:
    """A :class:`DesignRegion` of ``solver``'s grid, checked: inside the domain, clear of
    the CPML, the point sources and the TF/SF surfaces, over plain (non-PEC,
    non-dispersive) media."""
    s, sim = solver.setup, solver.sim
    grid = s.grid
    lower, upper = tuple(float(v) for v in lower), tuple(float(v) for v in upper)
    pixels = tuple(int(v) for v in pixels)
    if len(lower) != 3 or len(upper) != 3 or len(pixels) != 3 or min(pixels) < 1:
        raise SetupError(f"design region: lower = {lower}, upper = {upper}, pixels = {pixels};"
                         " need 3 coordinates each (m) and 3 pixel counts >= 1")
    d, g0 = np.asarray(grid.spacing), np.asarray(grid.lower)
    u0, u1 = (np.asarray(lower) - g0) / d, (np.asarray(upper) - g0) / d
    lo = tuple(math.floor(v + 1e-9) for v in u0)
    hi = tuple(math.ceil(v - 1e-9) for v in u1)
    thick = {(sl.axis, sl.side): sl.thickness for sl in s.layout.slabs}
    first = tuple(max(thick.get((a, "low"), 0), 1) for a in range(3))
    last = tuple(grid.cells[a] - thick.get((a, "high"), 0) for a in range(3))
    note = "CPML " + ", ".join(f"{'xyz'[a]} {thick.get((a, 'low'), 0)}/"
                               f"{thick.get((a, 'high'), 0)}" for a in range(3)) + " cells"
    if any(u1[a] <= u0[a] for a in range(3)):
        raise SetupError(f"design region: lower {lower} must lie below upper {upper} (m)")
    check_cells(lo, hi, grid.cells, first, last, note)
    media, index, _ = _rasterize(sim, grid)
    patches = []
    for comp in range(3):
        name = COMPONENTS[comp]
        ws, ranges, pix = [], [], []
        for a in range(3):
            i = np.arange(grid.shape[a])
            pos = i + OFFSETS[name][a]  # in cells; the dual cell is pos -+ 1/2
            w = _overlap(pos - 0.5, pos + 0.5, u0[a], u1[a])
            nz = np.nonzero(w > 1e-12)[0]
            ranges.append(slice(int(nz[0]), int(nz[-1]) + 1))
            ws.append(w[nz])
            rel = (np.clip(pos[nz], u0[a], u1[a]) - u0[a]) / (u1[a] - u0[a]) * pixels[a]
            pix.append(np.clip(np.floor(rel).astype(np.int64), 0, pixels[a] - 1))
        w = ws[0][:, None, None] * ws[1][None, :, None] * ws[2][None, None, :]
        flat = np.ravel_multi_index(np.meshgrid(*pix, indexing="ij"), pixels)
        idx = index[name][tuple(ranges)]
        eps = np.empty(idx.shape)
        sig = np.empty(idx.shape)
        for k in np.unique(idx):
            m = media[int(k)]
            if not isinstance(m, Medium) or isinstance(m, PoleMedium):
                raise SetupError(
                    f"design region {lower}..{upper} m overlaps a {type(m).__name__} "
                    f"({getattr(m, 'name', None) or m.type}) on {name}; a design region "
                    "may only cover plain (non-PEC, non-dispersive) media")
            eps[idx == k], sig[idx == k] = eps0 * m.eps_r, m.sigma
        _check_clear(s, comp, ranges)
        patches.append(Patch(comp=comp, slices=tuple(ranges), w=w, pixel=flat,
                             eps=eps, sigma=sig))
    return DesignRegion(lower=lower, upper=upper, pixels=pixels,
                        eps_r=(float(eps_r[0]), float(eps_r[1])),
                        sigma=(float(sigma[0]), float(sigma[1])), dt=s.dt,
                        patches=tuple(patches))


def _check_clear(s, comp: int, ranges) -> None:
    """Refuse a region over a point source's edge (its scale holds that edge's cb), a
    TF/SF surface (which needs the background medium), a sheet source, smoothed
    off-diagonal terms or a wall's last plane: :meth:`DesignRegion.patch` recomputes
    the plain update there."""
    inside = lambda idx: all(r.start <= i < r.stop for i, r in zip(idx, ranges,  # noqa: E731
                                                                   strict=True))
    lay = s.layout
    for a, r in enumerate(ranges):  # entries the walls' masks hold (update3d._mask)
        top = lay.nodes[a] - (2 if lay.pmc_high[a] or lay.mur_high[a] else 1)
        if r.start < 1 or r.stop - 1 > top:
            raise SetupError(f"design region: {COMPONENTS[comp]} samples {r.start}.."
                             f"{r.stop - 1} along {'xyz'[a]} reach a wall; allowed 1..{top}")
    for sh in s.sheets:
        if sh.field == "E" and sh.comp == comp and all(
                r.start < (q.stop if q.stop is not None else 1 << 30)
                and (q.start or 0) < r.stop for r, q in zip(ranges, sh.slices, strict=True)):
            raise SetupError(f"design region covers sources[{sh.source}]'s sheet; move one "
                             "of them")
    od = s.offdiagonal
    if od is not None and np.asarray(od.sites[comp]).size:
        idx = np.unravel_index(np.asarray(od.sites[comp]), lay.shape)
        if np.any(np.all([(i >= r.start) & (i < r.stop) for i, r in zip(idx, ranges,
                                                                          strict=True)],
                         axis=0)):
            raise SetupError("design region covers sub-pixel smoothed (off-diagonal) "
                             f"samples of {COMPONENTS[comp]}; keep it off smoothed surfaces")
    for e in s.sources:
        if e.comp == comp and inside(e.index):
            raise SetupError(f"design region covers sources[{e.source}] (its "
                             f"{COMPONENTS[comp]} edge {tuple(e.index)}); move one of them")
    for k, (_, box) in enumerate(s.planewaves):
        for t in box.terms:
            if t.field == "E" and t.comp == comp and all(
                    r.start < st + n and st < r.stop
                    for r, st, n in zip(ranges, t.start, t.shape, strict=True)):
                raise SetupError(f"design region crosses plane wave {k}'s TF/SF surface; "
                                 "the surface must lie in the background: enlarge the TF/SF "
                                 "box or move the region")


def _split(x, k: int, n: int):
    """Leading axis of every leaf: the first k*n steps as (k, n, ...)."""
    return jax.tree_util.tree_map(lambda a: a[: k * n].reshape(k, n, *a.shape[1:]), x)


def _nbytes(tree) -> int:
    return sum(int(np.prod(x.shape)) * x.dtype.itemsize
               for x in jax.tree_util.tree_leaves(tree))


def schedule(steps: int, state: int, residual: int, forward: int,
             memory_factor: float) -> int:
    """The checkpoint count for a gradient run within ``memory_factor`` x ``forward``
    bytes: 0 (no recomputation: every step's patch residuals, ``residual`` bytes each,
    are kept) when they fit beside the state's cotangent (``state`` bytes), else the
    count K >= 2 of checkpointed chunks that minimises K stored states + one chunk's
    residuals (each chunk then runs twice: about one more forward run of time), or 0
    again where no K stores less than all the residuals."""
    if state + steps * residual <= (memory_factor - 1.0) * forward:
        return 0
    stored = lambda k: k * state + -(-steps // k) * residual  # noqa: E731
    k0 = math.sqrt(steps * residual / max(state, 1))
    ks = {min(max(k, 2), steps) for k in (math.floor(k0), math.ceil(k0))}
    k = min(sorted(ks), key=stored)
    return k if k >= 2 and stored(k) < steps * residual else 0


class FDTDGradient:
    """A differentiable FDTD3D run of ``sim`` with a design region.

    Reverse mode keeps, per step, only the design patch's E^n and curl H^{n+1/2} (the
    rest of the step is linear in the fields with constant coefficients and needs no
    residuals). ``checkpoints``: 0 keeps them for every step (no recomputation: time
    about forward + one reverse sweep); K >= 1 runs K chunks (the last ``steps % K``
    steps as one more) under ``jax.checkpoint``, storing the K boundary states and
    recomputing each chunk once in the reverse pass (one more forward run of time) to
    bound the residuals to one chunk's; None chooses with :func:`schedule` so that
    memory stays within ``memory_factor`` x an estimate of the forward run's (arguments
    plus two states). ``devices``/``shard_axis`` shard the grid as
    ``sim.run(devices=...)`` does (:mod:`emjax.parallel`).

    ``region`` is built with :meth:`region` (or :func:`design_region`); then
    ``run(rho)`` returns the outputs (pure JAX, differentiable in ``rho``) and
    ``value_and_grad(objective)`` a compiled ``rho -> (value, gradient)``.
    """

    def __init__(self, sim, *, checkpoints: int | None = None, memory_factor: float = 2.0,
                 cpml_strategy: str | None = "auto", devices=None, shard_axis: str = "x"):
        if getattr(sim, "port_excitation", "simultaneous") == "each":
            raise SetupError(f"scenario '{sim.name}': a gradient run needs "
                             "port_excitation = 'simultaneous'")
        if getattr(sim, "storage_dtype", None) is not None:  # rounding has no derivative
            raise SetupError(f"scenario '{sim.name}': storage_dtype = '{sim.storage_dtype}': "
                             "a gradient run stores its fields in dtype; drop storage_dtype")
        if not memory_factor > 1.0:
            raise SetupError(f"memory_factor = {memory_factor}: need > 1 (the gradient "
                             "holds the state's cotangent beside the forward run)")
        if cpml_strategy == "auto":
            cpml_strategy = None if _on_accelerator() else "auto"
        if cpml_strategy is not None:
            sim = sim.model_copy(update={"cpml_strategy": cpml_strategy})
        self.solver = FDTDSolver(sim, devices=devices, shard_axis=shard_axis)
        # reverse mode through the hand-written transpose of the update (transpose3d)
        self.solver.setup = dataclasses.replace(self.solver.setup, layout=dataclasses.replace(
            self.solver.setup.layout, transpose=True))
        s = self.solver.setup
        steps = s.steps
        if checkpoints is not None and not 0 <= checkpoints <= steps:
            raise SetupError(f"checkpoints = {checkpoints}: need 0 <= checkpoints <= steps "
                             f"({steps})")
        self.requested, self.memory_factor = checkpoints, float(memory_factor)
        self.args = {
            "consts": self.solver.constants(), "xs": self.solver._chunk_inputs(0, steps),
            "state": self.solver.init_state(),
        }
        self.design: DesignRegion | None = None
        self._set_schedule(0 if checkpoints is None else checkpoints)

    def _set_schedule(self, k: int) -> None:
        steps = self.setup.steps
        self.checkpoints = k
        self.length = steps // k if k else steps
        self.tail = steps - k * self.length if k else 0

    @property
    def setup(self):
        return self.solver.setup

    def estimate(self) -> dict:
        """Bytes of the model :func:`schedule` uses: "state", "residual" (one step's
        patch residuals), "forward" (arguments plus two states)."""
        state = _nbytes(self.args["state"])
        item = np.dtype(self.setup.dtype).itemsize
        residual = 0 if self.design is None else sum(
            2 * int(np.prod(p.w.shape)) * item for p in self.design.patches)
        forward = _nbytes(self.args["consts"]) + _nbytes(self.args["xs"]) + 2 * state
        return {"state": state, "residual": residual, "forward": forward}

    def region(self, lower, upper, pixels, eps_r=(1.0, 2.0), sigma=(0.0, 0.0)
               ) -> DesignRegion:
        """Set (and return) the design region: :func:`design_region`'s arguments; with
        ``checkpoints=None`` this also picks the checkpoint count (:func:`schedule`)."""
        self.design = design_region(self.solver, lower, upper, pixels, eps_r, sigma)
        if self.requested is None:
            self._set_schedule(schedule(self.setup.steps, **self.estimate(),
                                        memory_factor=self.memory_factor))
        return self.design

    def run(self, rho: jax.Array, args: dict | None = None) -> dict:
        """The run with the region set from ``rho``: {"state": the final
        :class:`emjax.fdtd.state.FDTDState` (DFT and near-to-far accumulators), "probe":
        per Probe monitor, per component, its samples (steps, points)}. ``args``: the
        run's arrays (default ``self.args``; pass them as an argument under ``jit``)."""
        if self.design is None:
            raise SetupError("FDTDGradient.run: no design region; call .region(...) first")
        args = self.args if args is None else args
        s, design = self.solver.setup, self.design
        consts, coeffs = args["consts"], design.box_coefficients(rho)
        inv_d = s.layout.inv_d

        def step(carry, consts, x):  # the normal step, the region's patch recomputed
            E_new, H_new, *rest = _step3d(carry, consts, x, setup=s)
            return (design.patch(E_new, carry.E, H_new, coeffs, inv_d), H_new, *rest)

        def chunk_of(length, remat=True):
            def chunk(state, xs_step0):
                xs, step0 = xs_step0
                # all steps through lax.scan (active None): reverse mode needs its length
                state, ys, _ = _chunk(state, consts, xs, step0, None, setup=s, length=length,
                                      step=step)
                return state, ys["probe"]
            return jax.checkpoint(chunk) if remat else chunk

        xs, k, n = args["xs"], self.checkpoints, self.length
        if k == 0:
            state, probes = chunk_of(s.steps, remat=False)(args["state"], (xs, jnp.int32(0)))
            return {"state": state, "probe": probes}
        step0s = jnp.arange(k, dtype=jnp.int32) * n
        state, probes = lax.scan(chunk_of(n), args["state"], (_split(xs, k, n), step0s))
        probes = jax.tree_util.tree_map(lambda a: a.reshape(-1, *a.shape[2:]), probes)
        if self.tail:
            tail = jax.tree_util.tree_map(lambda a: a[k * n:], xs)
            state, extra = chunk_of(self.tail)(state, (tail, jnp.int32(k * n)))
            probes = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b]), probes,
                                            extra)
        return {"state": state, "probe": probes}

    def value_and_grad(self, objective):
        """Compiled ``rho -> (objective(self, run(rho)), d objective / d rho)``."""
        fn = jax.jit(jax.value_and_grad(lambda rho, args: objective(self, self.run(rho, args))))
        return lambda rho: fn(rho, self.args)

    def forward(self, objective):
        """Compiled ``rho -> objective(self, run(rho))`` (no gradient)."""
        fn = jax.jit(lambda rho, args: objective(self, self.run(rho, args)))
        return lambda rho: fn(rho, self.args)


# ------------------------------------------------------------------ objectives
def _monitor(g: FDTDGradient, group: str, name: str) -> int:
    for k, m in enumerate(getattr(g.setup, group)):
        if m[0].name == name:
            return k
    raise SetupError(f"no {group} monitor named {name!r}")


def dft_field(g: FDTDGradient, out: dict, name: str, comp: str) -> jax.Array:
    """DFT monitor ``name``'s component ``comp`` ("Ex" ... "Hz"), (nf, n1, n2, n3), in
    field units times s (emjax's running DFT)."""
    k = _monitor(g, "dfts", name)
    return out["state"].dft[k][comp]


def point_intensity(g: FDTDGradient, out: dict, name: str, index, f: int = 0) -> jax.Array:
    """sum over the monitor's E components of |E(f)|^2 at ``index`` of the monitor's
    region (indices relative to each component's region), (V/m s)^2."""
    k = _monitor(g, "dfts", name)
    acc = out["state"].dft[k]
    return sum(jnp.abs(v[(f, *index)]) ** 2 for c, v in acc.items() if c[0] == "E")


def flux(g: FDTDGradient, out: dict, name: str) -> jax.Array:
    """FluxMonitor ``name``'s flux per frequency (W s^2), as ``collect`` computes it."""
    for m, lo, hi, direction, faces in g.setup.flux:
        if m.name == name:
            dft = {k: out["state"].dft[k] for k, _, _ in faces}
            return flux_spectrum(g.setup.grid.spacing, dft, lo, hi, direction, faces, xp=jnp)
    raise SetupError(f"no FluxMonitor named {name!r}")


def rcs(g: FDTDGradient, out: dict, name: str, theta: float, phi: float,
        f: int = 0) -> jax.Array:
    """Bistatic RCS (m^2) toward (``theta``, ``phi``) rad at frequency ``f`` of NearToFar
    monitor ``name``: the far field of its Huygens box over the plane wave's incident
    spectrum, as ``Results[name].rcs`` computes it (the one near-to-far transform,
    :mod:`emjax.analysis.nf2ff`, with JAX arrays)."""
    k = next((k for k, n2f in enumerate(g.setup.n2f) if n2f[0].name == name), None)
    if k is None:
        raise SetupError(f"no NearToFar monitor named {name!r}")
    m, lo, hi, _ = g.setup.n2f[k]
    if not g.setup.planewaves:
        raise SetupError(f"NearToFar '{name}': an RCS objective needs a PlaneWave source")
    s, bg = g.setup, g.solver.sim.background
    pts, nrm, wts, E, H = surface(lo, hi, s.grid.spacing, s.grid.lower,
                                  out["state"].n2f[k], xp=jnp)
    Et, Ep = nf2ff.far_field(pts, nrm, wts, E[f], H[f], float(m.frequencies[f]), theta, phi,
                             eps_r=bg.eps_r, mu_r=bg.mu_r, xp=jnp)
    inc, _ = incident_spectrum(s, out["state"].n2f_inc[k])
    return nf2ff.rcs(Et, Ep, inc[f], xp=jnp)


__all__ = ["DesignRegion", "FDTDGradient", "design_region", "dft_field", "flux",
           "point_intensity", "rcs"]
