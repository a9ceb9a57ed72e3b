"""Differentiable FDTD3D: ``jax.grad`` through the time loop, with checkpoints (issue 22).

Reverse mode through the run that ``sim.run()`` does, not a second copy of it: the
same chunk function (:func:`emjax.fdtd.solver._chunk`, the Yee step with CPML, TF/SF,
point sources, DFT and near-to-far accumulators) inside an outer ``lax.scan`` over
``checkpoints`` chunks, each wrapped in ``jax.checkpoint``. The forward pass keeps only
the state at each chunk boundary; the backward pass recomputes one chunk at a time and
stores that chunk's steps, so memory is O(checkpoints x state + chunk x state) (about
2 sqrt(steps) states at the default ``checkpoints = sqrt(steps)``) and time about twice
a forward run plus the reverse steps. Reverse mode is exact for lossy media (no time
reversal of the fields, which a conductivity makes unstable).

How the design enters the step: the E update coefficients ``ca``, ``cb`` (semi-implicit
loss, :func:`emjax.fdtd.setup.e_update`) become a traced function of the parameters on
the design region's samples only. The gradient run hands the chunk coefficient arrays
(CAS, ``update3d.UpdateCoefficients`` with per-component arrays, a storage the kernels
already take) whose region entries are patched from the parameters; the normal run
keeps its material-index tables untouched.

Design region (:class:`DesignRegion`): a box (m) split into ``pixels`` equal pixels;
the parameter array ``rho`` (shape ``pixels``, nominally in [0, 1]) sets eps_r =
eps_min + rho (eps_max - eps_min) and sigma likewise. Each Yee E sample takes the rho of
the pixel its position falls in (clamped into the box) and the fill fraction ``w`` of
the box in its dual cell (one cell along the component, half a cell either side across
it), so that eps = (1 - w) eps_base + w eps_design and sigma likewise where the box
edge cuts a cell. The density pipeline (:func:`emjax.grid.design.conic_filter`,
:func:`~emjax.grid.design.tanh_projection`) and the checks are shared with FDFD.

Objectives are plain JAX functions of :meth:`FDTDGradient.run`'s outputs:
:func:`dft_field`, :func:`point_intensity`, :func:`flux`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..constants import eps0
from ..errors import SetupError
from ..grid.design import check_cells, check_parameters
from ..grid.yee import COMPONENTS, OFFSETS
from ..model import Medium
from ..model.dispersion import PoleMedium
from .collect import flux_spectrum
from .setup import _rasterize, e_update
from .solver import FDTDSolver, _chunk
from .update3d import UpdateCoefficients, coefficient


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

    def coefficients(self, rho: jax.Array, base: UpdateCoefficients) -> UpdateCoefficients:
        """``base`` (CAS E coefficients) with the region's samples set from ``rho``."""
        check_parameters(rho.shape, self.pixels, f"{self.lower}..{self.upper} m")
        a, b = list(base.a), list(base.b)
        flat = rho.reshape(-1)
        for p in self.patches:
            r = flat[p.pixel]
            eps = (1 - p.w) * p.eps + p.w * eps0 * (self.eps_r[0] + r * (self.eps_r[1]
                                                                         - self.eps_r[0]))
            sig = (1 - p.w) * p.sigma + p.w * (self.sigma[0] + r * (self.sigma[1]
                                                                    - self.sigma[0]))
            ca, cb = e_update(eps, sig, self.dt)
            a[p.comp] = a[p.comp].at[p.slices].set(ca.astype(a[p.comp].dtype))
            b[p.comp] = b[p.comp].at[p.slices].set(cb.astype(b[p.comp].dtype))
        return UpdateCoefficients(a=tuple(a), b=tuple(b))


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
    """Refuse a region over a point source's edge (its scale holds that edge's cb) or a
    TF/SF surface (which needs the background medium)."""
    inside = lambda idx: all(r.start <= i < r.stop for i, r in zip(idx, ranges,  # noqa: E731
                                                                   strict=True))
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


class FDTDGradient:
    """A differentiable FDTD3D run of ``sim`` with a design region.

    ``checkpoints``: the number of chunks of the outer scan, whose boundary states the
    forward pass keeps (None: about sqrt(steps)); the last ``steps % checkpoints`` steps
    run as one more checkpointed chunk. ``devices``/``shard_axis`` shard the grid as
    ``sim.run(devices=...)`` does (:mod:`emjax.parallel`).

    ``region`` is built with :meth:`region` (or :func:`design_region`); then
    ``run(rho)`` returns the outputs (pure JAX, differentiable in ``rho``) and
    ``value_and_grad(objective)`` a compiled ``rho -> (value, gradient)``.
    """

    def __init__(self, sim, *, checkpoints: int | None = None, devices=None,
                 shard_axis: str = "x"):
        if getattr(sim, "port_excitation", "simultaneous") == "each":
            raise SetupError(f"scenario '{sim.name}': a gradient run needs "
                             "port_excitation = 'simultaneous'")
        self.solver = FDTDSolver(sim, devices=devices, shard_axis=shard_axis)
        s = self.solver.setup
        steps = s.steps
        k = int(checkpoints or max(1, round(math.sqrt(steps))))
        if not 1 <= k <= steps:
            raise SetupError(f"checkpoints = {checkpoints}: need 1 <= checkpoints <= steps "
                             f"({steps})")
        self.checkpoints, self.length = k, steps // k
        self.tail = steps - k * self.length
        xs = self.solver._chunk_inputs(0, steps)
        cE = s.coeffs["E"]
        base = UpdateCoefficients(
            a=tuple(np.broadcast_to(np.asarray(coefficient(cE, c)[0]), s.grid.shape)
                    for c in range(3)),
            b=tuple(np.broadcast_to(np.asarray(coefficient(cE, c)[1]), s.grid.shape)
                    for c in range(3)))
        self.args = {
            "consts": self.solver.constants(), "base": self.solver._put(base),
            "xs": _split(xs, k, self.length),
            "tail": jax.tree_util.tree_map(lambda a: a[k * self.length:], xs),
            "state": self.solver.init_state(),
        }
        self.design: DesignRegion | None = None

    @property
    def setup(self):
        return self.solver.setup

    def region(self, lower, upper, pixels, eps_r=(1.0, 2.0), sigma=(0.0, 0.0)
               ) -> DesignRegion:
        """Set (and return) the design region: :func:`design_region`'s arguments."""
        self.design = design_region(self.solver, lower, upper, pixels, eps_r, sigma)
        return self.design

    def run(self, rho: jax.Array, args: dict | None = None) -> dict:
        """The run with the region set from ``rho``: {"state": the final
        :class:`emjax.fdtd.state.FDTDState` (DFT and near-to-far accumulators), "probe":
        per Probe monitor, per component, its samples (steps, points)}. ``args``: the
        run's arrays (default ``self.args``; pass them as an argument under ``jit``)."""
        if self.design is None:
            raise SetupError("FDTDGradient.run: no design region; call .region(...) first")
        args = self.args if args is None else args
        s = self.solver.setup
        consts = dict(args["consts"], cE=self.design.coefficients(rho, args["base"]))

        def chunk_of(length):
            @jax.checkpoint
            def chunk(state, xs_step0):
                xs, step0 = xs_step0
                state, ys, _ = _chunk(state, consts, xs, step0, setup=s, length=length)
                return state, ys["probe"]
            return chunk

        step0s = jnp.arange(self.checkpoints, dtype=jnp.int32) * self.length
        state, probes = lax.scan(chunk_of(self.length), args["state"], (args["xs"], step0s))
        probes = jax.tree_util.tree_map(lambda a: a.reshape(-1, *a.shape[2:]), probes)
        if self.tail:
            state, extra = chunk_of(self.tail)(
                state, (args["tail"], jnp.int32(self.checkpoints * self.length)))
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


__all__ = ["DesignRegion", "FDTDGradient", "design_region", "dft_field", "flux",
           "point_intensity"]
