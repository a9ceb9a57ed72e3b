"""The FDTD3D solver: its state, one chunk of leapfrog steps, and its monitors.

Each chunk is one jitted call: the state (fields, psi, DFT accumulators, snapshot
buffers) goes in donated and comes out updated; probe samples and energies are the
scan's outputs; source samples and DFT phase factors are its inputs, computed on
the host in float64. The time loop around the chunks (progress, NaN guard,
checkpoints, signals) is :func:`emjax.driver.loop.run`'s, shared with FDTD2D and DGATD.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from ..constants import eps0
from ..driver import loop, monitors
from ..driver.backend import on_demand_pool
from ..driver.compile_cache import mark
from ..driver.environment import environment
from ..driver.guard import first_non_finite, measured
from ..driver.monitors import frame_buffers, frames_taken, sampled, scan_with_frames, store_frames
from ..driver.precision import needs_x64, require_x64
from ..driver.zeros import zeros_of
from ..errors import InstabilityError, SetupError
from ..grid.yee import COMPONENTS
from . import anisotropic, auxgrid, dispersive
from . import conformal_implicit as conformal
from .collect import collect, region_shape
from .memory import check_fits, check_fits_per_device
from .setup import FOLD, FDTDSetup, drive, prepare, waveform_samples
from .state import FDTDState
from .tfsf import corrections
from .transpose3d import update_through
from .update3d import inject, source_patches, zeros_psi
from .waveguide import add_sheets, sheet_samples

_COMP = {c: i for i, c in enumerate(COMPONENTS)}


def _field3d(E, H, name: str):
    i = _COMP[name]
    return E[i] if i < 3 else H[i - 3]


class FDTDSolver:
    """A prepared FDTD3D run: initial state, chunk stepper and the full run loop.

    ``FDTDSolver(sim).run()`` is what ``sim.run()`` does; ``init_state`` and
    ``advance`` are there for users (and benchmarks) who drive their own loop.
    """

    # Kernel hooks of :func:`_chunk` (None: the 3D ones); fdtd/solver2d.py sets its own.
    step_fn = None
    field_fn = None
    names = COMPONENTS  # the state's E then H components, for instability reports

    placement = None  # emjax.parallel.Placement of a sharded run (issue #7); None: 1 device

    def __init__(self, sim, *, chunk: int | None = None, check_memory: bool = True,
                 devices=None, shard_axis: str = "x", align: int | None = None):
        """``align``: z alignment of the arrays (None: the backend's ``setup.align_z``)."""
        self.born = mark()  # the set-up time starts here
        on_demand_pool()  # before JAX's backend starts
        require_x64(needs_x64(sim.dtype))
        self.chunk = chunk or loop.default_chunk(sim.num_steps)
        # split along z, padding could break the user's even split (shards align anyway)
        if devices is not None and shard_axis in ("z", 2):
            align = 1
        if devices is not None and getattr(sim, "conformal_pec", False):
            raise SetupError("conformal_pec = true: sharded runs (devices = ...) do not take "
                             "the conformal PEC faces yet; run on one device or set "
                             "conformal_pec = false")
        if check_memory and devices is None:  # before rasterizing: refused at once
            check_fits(sim, self.chunk, align)
        elif check_memory:
            check_fits_per_device(sim, self.chunk, devices, shard_axis)
        self.setup: FDTDSetup = prepare(sim, align=align)
        self.sim = sim
        if devices is not None:  # --- sharding hook (emjax.parallel, issue #7) ---
            from ..parallel import placement

            # Box patches (dispersive media, TF/SF) folded into the fused update: added
            # in place (the CPU's choice, ``setup.tfsf_fold``), a patch off the shards'
            # boundaries made the partitioner gather all of E each step (measured on 4
            # CPU devices); folded, only the box planes at a shard boundary move.
            # CPML slabs likewise ("auto": the CPU's in-place x and y slabs folded)
            fold = FOLD["combined"] if sim.cpml_strategy == "auto" else self.setup.layout.fold
            self.setup = dataclasses.replace(self.setup, layout=dataclasses.replace(
                self.setup.layout, tfsf_fold=True, fold=fold))
            self.placement = placement(self.setup.grid.shape, devices, shard_axis)
        self.init_state = (self.placement.materialize(self.init_state) if devices is not None
                           else partial(zeros_of, self.init_state))  # no compile per shape
        s = self.setup
        src_comps = sorted({e.comp for e in s.sources})
        self._src_cols = {c: [k for k, e in enumerate(s.sources) if e.comp == c] for c in src_comps}
        self._consts = None
        self._compiled: dict[tuple[int, bool, bool], object] = {}  # (length, measured, tail)

    # ----------------------------------------------------------------- arrays
    def constants(self) -> dict:
        """Device arrays that do not change during a run (coefficients, indices)."""
        if self._consts is None:
            s = self.setup
            src = {}
            for c, cols in self._src_cols.items():
                pts = np.array([s.sources[k].index for k in cols], dtype=np.int32)
                src[c] = (tuple(jnp.asarray(pts[:, a]) for a in range(3)),
                          jnp.ones((len(cols),), s.dtype))
            probes = [
                [(jnp.asarray(idx), jnp.asarray(w)) for _, idx, w in comps]
                for _, comps in s.probes
            ]
            pml = s.pml
            if self.placement is not None:
                # static slab starts: a traced start along the split axis would make the
                # partitioner gather the whole field for each per_face correction
                pml = {k: dataclasses.replace(p, start=None) for k, p in pml.items()}
            self._consts = self._put({
                "cE": s.coeffs["E"], "cH": s.coeffs["H"], "pml": pml, "src": src,
                "probes": probes, "energy": s.energy_weights,
                "tfsf": [{"aux": box.aux.device(s.dtype), "terms": list(box.arrays)}
                         for _, box in s.planewaves],
                "disp": s.dispersive.coeffs if s.dispersive else (),
                "offdiag": s.offdiagonal,
                "cut": s.conformal[0]["arrays"] if s.conformal is not None else None,
                "sheets": [sh.profile.astype(s.dtype) for sh in s.sheets],
                "wg": [[[w.astype(s.dtype) for _, _, w in terms] for terms in (g.e_terms,
                                                                              g.h_terms)]
                       for g in s.waveguides],
            })
        return self._consts

    def init_state(self) -> FDTDState:
        """Zero fields and psi, empty accumulators; step counter 0."""
        s = self.setup
        dt_c = jnp.complex64 if s.dtype == np.float32 else jnp.complex128
        kept = s.fields.dtype if s.fields.narrow else s.dtype
        zeros = lambda: tuple(jnp.zeros(s.grid.shape, kept) for _ in range(3))  # noqa: E731
        psi_E, psi_H = zeros_psi(s.layout, s.dtype)
        dft = []
        for m, regions in s.dfts:
            nf = len(m.frequencies)
            dft.append({comp: jnp.zeros((nf, *region_shape(sl)), dt_c) for comp, sl in regions})
        aux = [auxgrid.init(box.aux, s.dtype) for _, box in s.planewaves]
        n2f, n2f_inc = [], []
        for m, _, _, regions in s.n2f:
            nf = len(m.frequencies)
            n2f.append([jnp.zeros((nf, *region_shape(sl)), dt_c) for _, *sl in regions])
            n_aux = s.planewaves[0][1].aux.n if s.planewaves else 0
            n2f_inc.append(jnp.zeros((nf, n_aux), dt_c))
        disp = dispersive.zeros(s.dispersive.boxes, s.dtype) if s.dispersive else ()
        cut = () if s.conformal is None else (  # q^{n-1} of fdtd/conformal_implicit
            jnp.zeros((len(s.conformal[0]["arrays"]["w"]),), s.dtype),)
        return FDTDState(E=zeros(), H=zeros(), psi_E=psi_E, psi_H=psi_H, dft=dft, aux=aux,
                         n2f=n2f, n2f_inc=n2f_inc, n=jnp.zeros((), jnp.int32), disp=disp,
                         cut=cut)

    # ------------------------------------------------------------------ chunk
    def _chunk_inputs(self, step0: int, length: int, active: int | None = None) -> dict:
        s = self.setup
        n = loop.input_steps(step0, length, active)
        wv = waveform_samples(s.sources, (n + 0.5) * s.dt, s.dtype)
        xs = {"src": {c: wv[:, cols] for c, cols in self._src_cols.items()}, "dft": [],
              "n2f": []}
        cdt = np.complex64 if s.dtype == np.float32 else np.complex128

        def phases(freqs):
            w = 2 * np.pi * np.asarray(freqs)
            return {
                "E": (np.exp(-1j * w[None, :] * ((n + 1) * s.dt)[:, None]) * s.dt).astype(cdt),
                "H": (np.exp(-1j * w[None, :] * ((n + 0.5) * s.dt)[:, None]) * s.dt).astype(cdt),
            }

        for m, _ in s.dfts:
            xs["dft"].append(phases(m.frequencies))
        for m, *_ in s.n2f:
            xs["n2f"].append(phases(m.frequencies))
        # Plane waves: the hard source of each 1D grid, amplitude * g(t) at (n + 1) dt.
        xs["inc"] = [(pw.amplitude * pw.waveform((n + 1) * s.dt)).astype(s.dtype)
                     for pw, _ in s.planewaves]
        xs["sheet"] = sheet_samples(s.sheets, n, s.dt, s.dtype)
        return xs

    def _compile(self, length: int, measure: bool = False):
        key = (length, measure, monitors.tail_in_program())  # a scan or a while program
        if key not in self._compiled:
            fn = partial(_chunk, setup=self.setup, length=length, step=self.step_fn,
                         field=self.field_fn, per_step=monitors.step_shapes(self.empty_record()))
            if measure:
                fn = measured(fn, self.fields, self.accumulators)
            self._compiled[key] = jax.jit(fn, donate_argnums=(0,), **self._shardings(measure))
        return self._compiled[key]

    def compiled(self, length: int) -> bool:  # the driver's (measured) chunk
        return (length, True, monitors.tail_in_program()) in self._compiled

    def chunk_args(self, state, step0: int, length: int, active: int | None = None) -> tuple:
        """The arguments of the compiled chunk of ``length`` from ``step0`` that runs its
        first ``active`` (default all) steps (:func:`_chunk`)."""
        return (state, self.constants(), self._chunk_inputs(step0, length, active),
                np.int32(step0), np.int32(length if active is None else active))

    def advance(self, state: dict, step0: int, length: int, measure: bool = False,
                active: int | None = None):
        """(state, outputs, fields finite)[, the guard's peaks with ``measure``]."""
        length = loop.program_length(length, active)
        return self._compile(length, measure)(*self.chunk_args(state, step0, length, active))

    # -------------------------------------------------------------------- run
    def empty_record(self) -> dict:
        """Host-side monitor data of zero steps: probe and energy series, snapshots."""
        s = self.setup
        record = {
            "probe": [[np.zeros((0, w.shape[0]), s.dtype) for _, _, w in comps]
                      for _, comps in s.probes],
            "energy": [np.zeros((0,), s.dtype) for _ in s.energy],
            "snap": [[np.zeros((0, *region_shape(sl)), s.dtype) for _, sl in regions]
                     for _, regions in s.snapshots],
        }
        if s.ports:  # each lumped port's voltage, (steps, nports) (collect.port_record)
            record["port"] = [np.zeros((0, len(s.ports)), s.dtype)]
        if s.waveguides:  # each waveguide port's V and I, (steps, nports, 2)
            record["wg"] = [np.zeros((0, len(s.waveguides), 2), s.dtype)]
        return record

    def _put(self, tree):
        """``tree`` on the device, or placed on the devices of a sharded run."""
        return jax.device_put(tree) if self.placement is None else self.placement.put(tree)

    def _shardings(self, measure: bool = False) -> dict:
        """jit keywords of a sharded run: state as placed, the rest replicated."""
        if self.placement is None:
            return {}
        out = self.placement.chunk_out_shardings(self.init_state)
        return {"out_shardings": (*out, self.placement.replicated) if measure else out}

    def run(self, *, progress: bool = True, checkpoint_every: int | None = None,
            checkpoint_path: str | Path | None = None, resume: str | Path | None = None):
        """All steps (:func:`emjax.driver.loop.run`: checkpoints, resume, signals)."""
        return loop.run(self, progress=progress, checkpoint_every=checkpoint_every,
                        checkpoint_path=checkpoint_path, resume=resume)

    @property
    def rate_unit(self) -> tuple[int, str]:
        return self.setup.grid.num_cells, "Mcells/s"

    def place(self, state):
        """A state read from a checkpoint, on the run's device(s)."""
        return self._put(state)

    def record_pieces(self, ys, step0: int, length: int):
        """A chunk's host outputs in the record's structure (frames taken only)."""
        return frames_taken(ys, [m.interval for m, _ in self.setup.snapshots], step0, length)

    stability_hint = ("lower the Courant factor ('courant') or check the media (lossy and "
                      "dispersive parameters), the PML and the sources")

    @property
    def storage_note(self) -> str:
        return self.setup.fields.overflow_note()

    def instability(self, state, step0: int, length: int) -> InstabilityError:
        """Where the fields went non-finite (:func:`emjax.driver.guard.first_non_finite`)."""
        return first_non_finite(zip(self.names, (*state.E, *state.H), strict=True),
                                step0 + length)

    # The NaN guard's view of the run (emjax.driver.guard).
    def fields(self, state) -> tuple:
        """The arrays whose largest magnitude the guard follows: the E components (V/m)."""
        return tuple(self.setup.fields.load(tuple(state.E), "E"))

    def accumulators(self, state) -> dict:
        """The monitor data carried in the state, per record key and monitor."""
        return {"dft": state.dft,
                "n2f": [[a, inc] for a, inc in zip(state.n2f, state.n2f_inc, strict=True)]}

    def monitor_labels(self) -> dict[str, list[str]]:
        """``monitors[i] 'name'`` of each monitor, in the record's and state's layout."""
        from ..driver.guard import label

        s = self.setup
        names = [m.name for m in self.sim.monitors]
        of = lambda group: [label("monitors", names.index(m[0].name), m[0].name)  # noqa: E731
                            for m in group]
        labels = {"probe": of(s.probes), "energy": of([(m,) for m in s.energy]),
                  "snap": of(s.snapshots), "dft": of(s.dfts), "n2f": of(s.n2f)}
        if s.ports:  # one array (a list of one, as each group) for all ports
            labels["port"] = [label("sources", s.ports[0].source, s.ports[0].name)]
        if s.waveguides:
            labels["wg"] = [label("sources", s.waveguides[0].source, s.waveguides[0].name)]
        return labels

    def drive(self, step0: int, length: int) -> np.ndarray:
        """The largest |source sample| of each step (:func:`.setup.drive`)."""
        return drive(self.setup, step0, length)

    def collect(self, state, record, steps: int) -> dict:
        """MonitorData of every monitor after ``steps`` steps."""
        return collect(self.setup, self.sim, state, record, steps)

    def metadata(self, steps: int, wall: float, compile_s: float, rate: float) -> dict:
        s = self.setup
        return {
            "solver": "FDTD3D", "dt": s.dt, "steps": steps, "cells": list(s.grid.cells),
            "shape": list(s.grid.nodes), "spacing": list(s.grid.spacing),
            "lower": list(s.grid.lower), "dtype": str(s.dtype), "storage": self.sim.storage,
            "cpml_strategy": s.layout.strategy, **s.fields.describe(),
            "wall_time_s": wall, "compile_time_s": compile_s, "cells_per_s": rate,
            "setup_stages": {k: round(v, 4) for k, v in s.stages.items()},
            **environment(),
        }


def _step3d(carry: FDTDState, consts, x, setup: FDTDSetup):
    """One 3D leapfrog step with TF/SF, dispersive media and sources: (E, H, psi_E,
    psi_H, aux, disp)."""
    lay, st = setup.layout, setup.fields
    E, H = st.load(carry.E, "E"), st.load(carry.H, "H")
    aux = carry.aux
    xH = _tfsf_terms(setup, consts, aux, "H")
    # E (and H_new) pass through: gradient runs sum their later uses' cotangents in one pass
    H_new, psi_H, E = update_through(H, E, consts["cH"], consts["pml"], carry.psi_H, lay,
                                     electric=False, extra=xH)
    if setup.conformal is not None:  # conformal PEC faces (fdtd/conformal3d)
        cut_static = setup.conformal[0]["static"]
        q_n = conformal.circulation(E, consts["cut"], cut_static)
        H_new = conformal.explicit_h(H_new, H, q_n, consts["cut"], cut_static)
    H_new = add_sheets(H_new, setup.sheets, consts["sheets"], x["sheet"], "H")
    H_kept = st.kept(H_new, "H")  # the E update reads the stored H^{n+1/2}
    H_new = st.load(H_kept, "H")
    aux = [auxgrid.step_h(c["aux"], a) for c, a in zip(consts["tfsf"], aux, strict=True)]
    xE = _tfsf_terms(setup, consts, aux, "E")
    # 16-bit storage: point sources inside the E update, which XLA then writes in place
    # (an injection after it made XLA copy that component every step: 173 us at 512^3)
    points = source_patches({c: [e.index for e in setup.sources if e.comp == c]
                             for c in consts["src"]}, x["src"], consts["cE"]) \
        if st.narrow and consts["src"] else None
    if points is not None:
        xE = points if xE is None else [list(a) + b for a, b in zip(xE, points, strict=True)]
    disp = carry.disp
    if setup.dispersive:  # the poles' currents join the curl as box patches
        E_new, psi_E, disp = dispersive.step_E(
            E, disp, consts["disp"], setup.dispersive.boxes, xE,
            lambda E_n, extra: update_through(E_n, H_new, consts["cE"], consts["pml"],
                                              carry.psi_E, lay, electric=True,
                                              extra=extra)[:2], setup.dt, eps0)
    else:
        E_new, psi_E, H_new = update_through(E, H_new, consts["cE"], consts["pml"],
                                             carry.psi_E, lay, electric=True, extra=xE)
    if setup.offdiagonal is not None:  # the smoothed tensor's off-diagonal part
        E_new = anisotropic.apply(E_new, H_new, consts["offdiag"])
    aux = [auxgrid.step_e(c["aux"], a, v)
           for c, a, v in zip(consts["tfsf"], aux, x["inc"], strict=True)]
    if consts["src"] and points is None:
        # part of E^{n+1}, which the poles read at the next step (a pole on a source's
        # edge sees its current: fdtd/dispersive.py's carried form)
        E_new = inject(E_new, consts["src"], x["src"])
    E_new = add_sheets(E_new, setup.sheets, consts["sheets"], x["sheet"], "E")
    cut = carry.cut
    if setup.conformal is not None:  # the cut faces' implicit part: E^(0) -> E^{n+1}
        E_new, H_new = conformal.correct(E_new, H_new, q_n, cut[0], consts["cut"],
                                         cut_static)
        cut = (q_n,)
    # H_new as passed through the E update (gradients), stored anew only if it changed
    H_out = H_kept if st.narrow and setup.conformal is None else st.store(H_new, "H")
    return st.store(E_new, "E"), H_out, psi_E, psi_H, aux, disp, cut


def _chunk(state, consts, xs, step0, active, *, setup: FDTDSetup, length: int, step=None,
           field=None, per_step=None):
    """The first ``active`` of ``length`` leapfrog steps with monitors; pure, jitted by the
    caller. ``step(carry, consts, x) -> (E, H, psi_E, psi_H, aux[, disp])`` advances the
    fields, ``field(E, H, name)`` returns a component as a 3D array; None selects the 3D
    kernels (the 2D solver passes its own)."""
    step = step or partial(_step3d, setup=setup)
    _field, st = field or _field3d, setup.fields

    def body(carry: FDTDState, frames: list, x):
        E, H = carry.E, carry.H
        if setup.energy:
            # The energy needs E^n and H^{n-1/2} beside the updated fields. Handing the
            # step its own E, H through a barrier makes XLA copy the old fields once up
            # front instead of copying inside the update (the CPML slab corrections lost
            # their in-place writes): 7.5 -> 14.9 Gcells/s at 512^3 on an H100.
            (E, H), (E_step, H_step) = jax.lax.optimization_barrier(((E, H), (E, H)))
            carry = dataclasses.replace(carry, E=E_step, H=H_step)
        E_kept, H_kept, psi_E, psi_H, aux, *rest = step(carry, consts, x)
        disp, cut, scratch = (*rest, *(carry.disp, carry.cut, carry.scratch)[len(rest):])
        E, H = st.load(E, "E"), st.load(H, "H")  # monitors read the stored fields
        E_new, H_new = st.load(E_kept, "E"), st.load(H_kept, "H")
        ys = {"probe": [], "energy": []}
        for (_, comps), cst in zip(setup.probes, consts["probes"], strict=True):
            vals = []
            for (comp, _, w), (idx, wd) in zip(comps, cst, strict=True):
                F = _field(E_new, H_new, comp)
                g = F[idx[:, 0], idx[:, 1], idx[:, 2]].reshape(w.shape)
                vals.append(jnp.sum(g * wd, axis=1))
            ys["probe"].append(vals)
        if setup.ports:  # V^{n+1} = sum w E^{n+1} on each port's edges: I follows on the host
            ys["port"] = [jnp.stack([jnp.sum(E_new[p.comp][p.index] * p.weights.astype(
                setup.dtype)) for p in setup.ports])]
        if setup.waveguides:  # modal V (E^{n+1}) and I (H^{n+1/2}) of each waveguide port
            ys["wg"] = [jnp.stack([
                jnp.stack([sum(jnp.sum(F[c][sl] * w) for (c, sl, _), w in zip(terms, ws,
                                                                              strict=True))
                           for F, terms, ws in ((E_new, g.e_terms, cw[0]),
                                                (H_new, g.h_terms, cw[1]))])
                for g, cw in zip(setup.waveguides, consts["wg"], strict=True)])]
        dft = []
        for (_, regions), acc, ph in zip(setup.dfts, carry.dft, x["dft"], strict=True):
            new = {}
            for comp, sl in regions:
                p = ph["E"] if _COMP[comp] < 3 else ph["H"]
                F = _field(E_new, H_new, comp)[sl]
                new[comp] = acc[comp] + p[:, None, None, None] * F[None]
            dft.append(new)
        n2f, n2f_inc = [], []
        for (_, _, _, regions), acc, inc, ph in zip(setup.n2f, carry.n2f, carry.n2f_inc,
                                                     x["n2f"], strict=True):
            new = []
            for (c, *sl), a in zip(regions, acc, strict=True):
                F = _field(E_new, H_new, COMPONENTS[c])[tuple(sl)]
                p = ph["E"] if c < 3 else ph["H"]
                new.append(a + p[:, None, None, None] * F[None])
            n2f.append(new)
            # The incident wave's spectrum along its 1D grid (for RCS normalisation).
            n2f_inc.append(inc + ph["E"][:, None] * aux[0]["e"][None, :] if aux else inc)
        frames = [store_frames(bufs, [_field(E_new, H_new, comp)[sl] for comp, sl in regions],
                               carry.n, step0, m.interval)
                  for (m, regions), bufs in zip(setup.snapshots, frames, strict=True)]
        w = consts["energy"]
        for m in setup.energy:
            ys["energy"].append(sampled(carry.n, m.interval,
                                        lambda: _energy(E, H, H_new, w, carry.disp, consts,
                                                        setup, E_new, cut), setup.dtype))
        carry = FDTDState(E=E_kept, H=H_kept, psi_E=psi_E, psi_H=psi_H, dft=dft, aux=aux,
                          n2f=n2f, n2f_inc=n2f_inc, n=carry.n + 1, disp=disp, cut=cut,
                          scratch=scratch)
        return carry, frames, ys

    buffers = frame_buffers(length, [m.interval for m, _ in setup.snapshots],
                            [[region_shape(sl) for _, sl in regions]
                             for _, regions in setup.snapshots], setup.dtype)
    state, ys = scan_with_frames(body, state, xs, length, buffers, active, per_step,
                                 unroll=getattr(getattr(setup, "onepass", None), "scan_unroll", 1))
    E_end = st.load(state.E, "E")  # float16's own sums overflow at 65504
    finite = jnp.all(jnp.array([jnp.isfinite(jnp.sum(jnp.abs(F))) for F in E_end]))
    return state, ys, finite


def _tfsf_terms(setup: FDTDSetup, consts, aux, field: str):
    """Per component, the TF/SF curl corrections of every plane wave (None if none)."""
    if not setup.planewaves:
        return None
    out = ([], [], [])
    for (_, box), c, a in zip(setup.planewaves, consts["tfsf"], aux, strict=True):
        for comp, terms in enumerate(corrections(box.terms, c["terms"], a, field)):
            out[comp].extend(terms)
    return out


def _energy(E, H_old, H_new, w, disp=(), consts=None, setup=None, E_new=None, cut=()):
    """(sum eps E.E + sum mu H_old.H_new) dV / 2 (weights pre-halved, times dV), plus the
    dispersive media's polarization energy (:func:`dispersive.energy`; eps is eps0 eps_inf
    there) and the conformal cut faces' term (``cut``: their q^n, E_new: E^{n+1};
    :func:`conformal_implicit.energy_term`): what a passive run never increases."""
    total = sum(jnp.sum(wi * F * F) for wi, F in zip(w["E"], E, strict=True))
    total = total + sum(jnp.sum(wi * a * b)
                        for wi, a, b in zip(w["H"], H_old, H_new, strict=True))
    if disp:
        total = total + dispersive.energy(disp, consts["disp"], setup.dispersive.boxes, E)
    if cut:
        total = total + conformal.energy_term(H_old, E_new, cut[0], w["H"], consts["cut"],
                                              setup.conformal[0]["static"])
    return total


def run(sim, *, progress: bool = True, chunk: int | None = None, devices=None,
        shard_axis: str = "x", **kwargs):
    """Run an FDTD3D scenario; returns :class:`emjax.results.Results`.

    ``devices``: None (one device), a count, or device ids/devices to shard the grid
    over along ``shard_axis`` (see :mod:`emjax.parallel`). ``kwargs`` go to
    :meth:`FDTDSolver.run` (checkpoint_every, checkpoint_path, resume).
    """
    if getattr(sim, "port_excitation", "simultaneous") == "each":
        from .excitations import BatchedFDTDSolver

        if devices is not None:
            raise SetupError(f"scenario '{sim.name}': port_excitation = 'each' runs its "
                             "excitations batched on one device; run it without devices= "
                             "(or with 'simultaneous' excitation)")
        return BatchedFDTDSolver(sim, chunk=chunk).run(progress=progress, **kwargs)
    return FDTDSolver(sim, chunk=chunk, devices=devices, shard_axis=shard_axis).run(
        progress=progress, **kwargs)
