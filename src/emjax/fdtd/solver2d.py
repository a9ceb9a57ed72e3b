"""The 2D FDTD solver: the 3D solver's chunk with the 2D kernels plugged in.

:class:`FDTD2DSolver` is a :class:`emjax.fdtd.solver.FDTDSolver` whose state holds
the polarization's fields as 2D arrays (nx, ny) (and the dispersive boxes' carried
state, :mod:`emjax.fdtd.dispersive`) and whose step is
:func:`emjax.fdtd.update2d.step`; chunking, monitors (DFT, probes, snapshots, energy,
which see each component as an (nx, ny, 1) array), the NaN guard, progress,
checkpoints and SIGINT/SIGTERM handling are :mod:`emjax.driver`'s.
"""

from __future__ import annotations

import dataclasses
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ..constants import eps0
from ..driver.backend import on_demand_pool
from ..driver.compile_cache import mark
from ..driver.loop import default_chunk
from ..driver.precision import needs_x64, require_x64
from ..driver.zeros import zeros_of
from ..grid.yee import COMPONENTS
from . import auxgrid, dispersive
from .collect import region_shape
from .setup2d import FDTD2DSetup, prepare
from .solver import FDTDSolver
from .state import FDTDState
from .update2d import step as step2d
from .update2d import tfsf_add, zeros_psi
from .update3d import inject, source_patches


def _step(carry: FDTDState, consts, x, setup: FDTD2DSetup, edges: dict):
    """(E, H, psi_E, psi_H, aux, disp) one step on: the 2D kernels plus sources and
    dispersive media; ``edges``: per E-group position, the (i, j) of its line sources
    in the order of their samples. With the one-pass kernel: (E, H, psi_E, psi_H, aux,
    disp, cut, scratch) (:func:`_one_pass_step`)."""
    # Source columns are keyed by position in their group: 0.. for E, 10.. for H.
    vals = x["src"]
    src_E = (consts["srcE"], vals) if consts["srcE"] else None
    if setup.onepass is not None:
        return _one_pass_step(carry, consts, x, src_E, setup)
    src_H = (consts["srcH"], {k - 10: v for k, v in vals.items() if k >= 10}) \
        if consts["srcH"] else None
    tfsf = [(c["aux"], a, c["terms"], v)
            for c, a, v in zip(consts["tfsf"], carry.aux, x["inc"], strict=True)]
    poles = ((carry.disp, consts["disp"], setup.dispersive.boxes, setup.dt, eps0)
             if setup.dispersive else None)
    st = setup.fields
    # in the E update: XLA then writes E in place (BENCHMARKS.md)
    points = source_patches(edges, vals, consts["cE"]) if src_E is not None else None
    return step2d(st.load(carry.E, "E"), st.load(carry.H, "H"), carry.psi_E, carry.psi_H,
                  {"E": consts["cE"], "H": consts["cH"]}, consts["pml"], setup.layout,
                  src_E, src_H, tfsf, consts["cut"], poles, consts["offdiag"], st, points)


def _one_pass_step(carry: FDTDState, consts, x, src_E, setup: FDTD2DSetup):
    """One step on through :func:`emjax.fdtd.pallas2d.step` into the carried scratch
    buffers (the old ones become the next scratch); then each plane wave's TF/SF
    corrections (H's, the curl of H's on E, E's: :func:`pallas2d.tfsf_curl_terms`) and
    the electric line sources, added in place (the XLA step adds the sources inside its
    E update: the same sum, rounded once more)."""
    from . import pallas2d  # Pallas' import (0.26 s) only where the kernel runs

    F, ne, nh = (*carry.E, *carry.H), len(carry.E), len(carry.psi_H)
    psi = (*carry.psi_H, *carry.psi_E)
    tables, curls = consts["onepass"]
    out, new = pallas2d.step(F, psi, tables, carry.scratch, setup.onepass)
    E, H, aux = out[:ne], out[ne:], []
    for c, curl, a, v in zip(consts["tfsf"], curls, carry.aux, x["inc"], strict=True):
        H = tfsf_add(H, c["terms"]["H"], a["e"])
        E = tfsf_add(E, curl, a["e"])
        a = auxgrid.step_h(c["aux"], a)
        E = tfsf_add(E, c["terms"]["E"], a["h"])
        aux.append(auxgrid.step_e(c["aux"], a, v))
    E = E if src_E is None else inject(E, *src_E)
    return E, H, new[nh:], new[:nh], aux, (), (), (F, psi)


class FDTD2DSolver(FDTDSolver):
    """A prepared FDTD2D run; ``run``, ``advance`` and ``init_state`` as in 3D."""

    def __init__(self, sim, *, chunk: int | None = None, check_memory: bool = True):
        self.born = mark()  # the set-up time starts here
        on_demand_pool()  # before JAX's backend starts
        require_x64(needs_x64(sim.dtype))
        self.chunk = chunk or default_chunk(sim.num_steps)
        if check_memory:
            _check_fits(sim, self.chunk)
        self.setup: FDTD2DSetup = prepare(sim)
        self.sim = sim
        s = self.setup
        self.names = s.names
        n_e = len(s.layout.comps[0])
        # Source columns keyed by (group, position in the group): 0.. for E, 10.. for H.
        keys = []
        for e in s.sources:
            pos = s.names.index(COMPONENTS[e.comp])
            keys.append(pos if pos < n_e else 10 + pos - n_e)
        self._src_keys = keys
        self._src_cols = {k: [i for i, kk in enumerate(keys) if kk == k] for k in sorted(set(keys))}
        self._consts = None
        self._compiled: dict[tuple[int, bool, bool], object] = {}  # (length, measured, tail)
        self.init_state = partial(zeros_of, self.init_state)
        setup = s

        def field(E, H, name: str):
            pos = setup.names.index(name)
            F = E[pos] if pos < n_e else H[pos - n_e]
            return F[:, :, None]

        self.field_fn = field
        edges = {k: [s.sources[i].index for i in cols] for k, cols in self._src_cols.items()
                 if k < 10}
        self.step_fn = lambda carry, consts, x: _step(carry, consts, x, setup, edges)

    def constants(self) -> dict:
        """Device arrays that do not change during a run (coefficients, indices)."""
        if self._consts is None:
            s = self.setup
            src = {"srcE": {}, "srcH": {}}
            for key, cols in self._src_cols.items():
                pts = np.array([s.sources[k].index for k in cols], dtype=np.int32)
                group, pos = ("srcE", key) if key < 10 else ("srcH", key - 10)
                src[group][pos] = (tuple(jnp.asarray(pts[:, a]) for a in range(2)),
                                   jnp.ones((len(cols),), s.dtype))
            probes = [[(jnp.asarray(idx), jnp.asarray(w)) for _, idx, w in comps]
                      for _, comps in s.probes]
            self._consts = jax.device_put({
                "cE": s.coeffs["E"], "cH": s.coeffs["H"], "pml": s.pml, **src,
                "src": {}, "probes": probes, "energy": s.energy_weights,
                "tfsf": [{"aux": box.aux.device(s.dtype), "terms": box.terms}
                         for _, box in s.planewaves],
                "cut": s.cut, "offdiag": s.offdiag,
                "disp": s.dispersive.coeffs if s.dispersive else (),
                "onepass": jax.tree.map(jnp.asarray, s.onepass_arrays),
            })
        return self._consts

    def init_state(self) -> FDTDState:
        """Zero fields, slab state and polarizations, empty accumulators; step counter 0
        (with the one-pass kernel, in its layout: :meth:`from_stored`)."""
        return self.from_stored(self.stored_init())

    def stored_init(self) -> FDTDState:
        """The zero state in the XLA step's layout, which checkpoints hold."""
        s = self.setup
        dt_c = jnp.complex64 if s.dtype == np.float32 else jnp.complex128
        n_e, n_h = (len(c) for c in s.layout.comps)
        kept = s.fields.dtype if s.fields.narrow else s.dtype
        zeros = lambda k: tuple(jnp.zeros(s.layout.shape, kept) for _ in range(k))  # noqa: E731
        psi_E, psi_H = zeros_psi(s.layout, s.dtype)
        dft = [{comp: jnp.zeros((len(m.frequencies), *region_shape(sl)), dt_c)
                for comp, sl in regions} for m, regions in s.dfts]
        disp = dispersive.zeros(s.dispersive.boxes, s.dtype) if s.dispersive else ()
        return FDTDState(E=zeros(n_e), H=zeros(n_h), psi_E=psi_E, psi_H=psi_H, dft=dft,
                         aux=[auxgrid.init(box.aux, s.dtype) for _, box in s.planewaves],
                         n2f=[], n2f_inc=[], n=jnp.zeros((), jnp.int32), disp=disp)

    def stored(self, state: FDTDState) -> FDTDState:
        """``state`` in the XLA step's layout (what a checkpoint holds, so that it resumes
        with either kernel): the one-pass kernel's psi as per-slab arrays, no scratch."""
        if self.setup.onepass is None:
            return state
        from .pallas2d import psi_to_reference

        psi_E, psi_H = psi_to_reference(self.setup.onepass, self.setup.layout.slabs,
                                        state.psi_E, state.psi_H)
        return dataclasses.replace(state, psi_E=psi_E, psi_H=psi_H, scratch=())

    def from_stored(self, state: FDTDState) -> FDTDState:
        """The inverse of :meth:`stored`: the kernel's psi layout and fresh scratch
        buffers (the fields and psi the kernel writes into)."""
        if self.setup.onepass is None:
            return state
        from .pallas2d import psi_from_reference, psi_zeros

        psi_E, psi_H = psi_from_reference(self.setup.onepass, state.psi_E, state.psi_H)
        spare_E, spare_H = psi_zeros(self.setup.onepass)
        spare = tuple(jnp.zeros_like(F) for F in (*state.E, *state.H))
        return dataclasses.replace(state, psi_E=psi_E, psi_H=psi_H,
                                   scratch=(spare, (*spare_H, *spare_E)))

    def metadata(self, steps: int, wall: float, compile_s: float, rate: float) -> dict:
        meta = super().metadata(steps, wall, compile_s, rate)
        meta.update(solver="FDTD2D", polarization=self.sim.polarization,
                    pml=[[type(b).__name__ for b in pair] for pair in self.sim.faces],
                    kernel="pallas one-pass" if self.setup.onepass is not None
                    else "xla two-pass")
        return meta


def _check_fits(sim, chunk: int) -> None:
    """Refuse a run whose estimate (``setup2d.estimate``, from the lowering's first
    phase) exceeds the free device memory, before anything is rasterized."""
    from ..driver.memory import refuse_if_too_large
    from .setup2d import estimate

    refuse_if_too_large(sim.name, estimate(sim, chunk))


def run(sim, *, progress: bool = True, chunk: int | None = None, **kwargs):
    """Run an FDTD2D scenario; returns :class:`emjax.results.Results`.

    ``kwargs`` go to :meth:`FDTDSolver.run` (checkpoint_every, checkpoint_path, resume).
    """
    return FDTD2DSolver(sim, chunk=chunk).run(progress=progress, **kwargs)


__all__ = ["FDTD2DSolver", "run"]
