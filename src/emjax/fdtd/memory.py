"""Device memory a 3D FDTD run needs, from the scenario alone (no allocation).

The estimate counts what lives on the device during a run: the six field arrays (of
the stored shape, z padding included: ``grid.yee``), the update coefficients
(uint8/uint16 material indices for CIS, for E and for H only where their media
differ; two arrays per component for CAS), psi on the CPML slabs,
DFT accumulators, per-chunk snapshot buffers and probe outputs, energy weights, the
polarizations of dispersive media in their boxes only (``polarization``:
box cells x (Lorentz poles x 2 + Debye + Drude poles) x E components x dtype size, and
one medium row index per box cell with the coefficients; :mod:`emjax.fdtd.dispersive`), and
XLA's working space, which measured (H100, 256^3 and 512^3) at half the psi bytes:
the fields update in place, the psi of one update is double-buffered. The estimate
came within 0-3% of the measured peak (BENCHMARKS.md). Mur faces add nothing: they
hold no state, and their boundary planes are plane-sized temporaries. The check runs before
rasterization, so a run that cannot fit is refused in well under a second: every
shape comes from the lowering's first phase (``plan.lower_grid``), the one place the
sizing rules (z padding, slab alignment, boxes, monitor regions) live.
"""

from __future__ import annotations

import math

from ..driver.memory import available_bytes, device_free_bytes, refuse_if_too_large
from ..errors import ResourceError
from ..model import (
    PEC,
    DFTMonitor,
    EdgeSource,
    EnergyMonitor,
    FieldSnapshot,
    FluxMonitor,
    LumpedPort,
    Probe,
)
from ..model.dispersion import PoleMedium
from . import dispersive_setup
from .plan import flux_box, flux_faces, lower_grid


def _field_item(sim, item: int) -> int:
    """Bytes per stored E or H sample: 2 with ``storage_dtype`` (fdtd/fieldstore)."""
    return 2 if getattr(sim, "storage_dtype", None) else item


def _psi_bytes(plan, item: int) -> int:
    """psi of E and H (two tangential components each) on every slab of the plan."""
    return sum(4 * math.prod(s.psi_shape(plan.grid.shape)) * item for s in plan.slabs)


def estimate(sim, chunk: int | None = None, align: int | None = None) -> dict[str, int]:
    """Bytes on the device by item, and their ``total``; ``align``: the z alignment of
    the stored arrays (None: the backend's, ``setup.align_z``). Shapes come from the
    lowering's first phase (:func:`emjax.fdtd.plan.lower_grid`): no field is built."""
    from ..driver.loop import default_chunk as _default_chunk
    from .setup import align_z

    plan = lower_grid(sim, align_z() if align is None else align)
    item = plan.dtype.itemsize
    N = math.prod(plan.grid.shape)
    chunk = chunk or _default_chunk(plan.steps)
    out: dict[str, int] = {"fields": 6 * N * _field_item(sim, item)}
    media = _media(sim)
    e_kinds = {_e_kind(m) for m in media}
    h_kinds = {(1.0, 0.0) if isinstance(m, PoleMedium) else (m.mu_r, m.sigma_m)
               for m in media if not isinstance(m, PEC)}
    ports = _loaded_edges(sim)
    idx_item = _index_item(sim)
    if sim.storage == "arrays":
        out["coefficients"] = 12 * N * item
    else:
        out["coefficients"] = 3 * N * idx_item * (
            int(len(e_kinds) + ports > 1) + int(len(h_kinds) > 1))
    psi = _psi_bytes(plan, item)
    out["psi"] = psi
    # Dispersive boxes: p and j per slot and cell (the state), one medium row per cell.
    bxs = dispersive_setup.boxes(sim, plan.grid)
    polarization = dispersive_setup.aux_bytes(bxs, plan.dtype)
    if bxs:
        out["polarization"] = polarization
        out["coefficients"] += _box_rows(sim, bxs)
    mon = 0
    for m in sim.monitors:
        if isinstance(m, DFTMonitor | FieldSnapshot):
            per = len(m.frequencies) * 2 if isinstance(m, DFTMonitor) else (
                chunk // m.interval + 1)
            mon += sum(per * _size(sl) * item for _, sl in plan.regions[m.name])
        elif isinstance(m, Probe):
            mon += len(m.components) * len(m.positions) * chunk * item
        elif isinstance(m, EnergyMonitor):
            mon += chunk * item + 3 * N * item * (int(len(e_kinds) > 1) + int(len(h_kinds) > 1))
        elif isinstance(m, FluxMonitor):  # complex DFT accumulators of each face's E, H
            faces = flux_faces(m, *flux_box(m, plan))
            mon += sum(len(m.frequencies) * 2 * item * _size(sl)
                       for *_, regions in faces for _, sl in regions)
    out["monitors"] = mon
    out.update(_scatter_bytes(sim, plan, item))
    out["workspace"] = (psi + polarization) // 2  # the p, j update is double-buffered
    out["total"] = sum(out.values())
    return out


def _media(sim) -> list:
    """The background and every structure's (or Voxels label's) medium."""
    media = [sim.background]
    for s in sim.structures:
        media += list(s.geometry.media.values()) if s.medium is None else [s.medium]
    return media


def _loaded_edges(sim) -> int:
    """Media a source's resistor adds (voltage EdgeSources and LumpedPorts): one each,
    or one per medium a sheet port's edges lie in (``ports.lower_sources``)."""
    return sum(isinstance(s, LumpedPort) or (isinstance(s, EdgeSource) and s.kind == "voltage")
               for s in sim.sources)


def _index_item(sim) -> int:
    """Bytes of one material index (uint8, or uint16 past 256 media and ports)."""
    ports = _loaded_edges(sim)
    return 1 if len(_media(sim)) + ports <= 256 else 2


def _box_rows(sim, bxs) -> int:
    """Bytes of the dispersive boxes' medium rows (one index per box cell)."""
    return sum(math.prod(b.shape) for b in bxs) * _index_item(sim)


def _e_kind(m) -> tuple:
    """What makes two media's E coefficients equal (one CIS table row)."""
    if isinstance(m, PEC):
        return ("PEC",)
    if isinstance(m, PoleMedium):
        return ("poles", m.model_dump_json())
    return (m.eps_r, m.sigma)


def _size(slices) -> int:
    return math.prod(s.stop - s.start for s in slices)


def _scatter_bytes(sim, plan, item: int) -> dict[str, int]:
    """Plane-wave (TF/SF patches, 1D grid) and NearToFar (face accumulators) bytes.

    A TF/SF term is one plane patch of the box face holding an int32 index and four
    interpolation weights per sample; a NearToFar box accumulates, per frequency, one
    complex E plane and two complex H planes per tangential component and face.
    """
    from ..model import NearToFar, PlaneWave
    from .auxgrid import ABSORBER_CELLS
    from .neartofar import surface_bytes

    waves = [i for i, s in enumerate(sim.sources) if isinstance(s, PlaneWave)]
    n2f = [m for m in sim.monitors if isinstance(m, NearToFar)]
    if not waves and not n2f:
        return {}
    out = {"plane_waves": 0, "near_to_far": 0}
    n_aux = 0
    for i in waves:
        lo, hi = plan.boxes[("source", i)]
        n = [max(h - lo_ + 1, 1) for lo_, h in zip(lo, hi, strict=True)]
        faces = 2 * (n[0] * n[1] + n[1] * n[2] + n[0] * n[2])
        out["plane_waves"] += 4 * faces * (4 + 4 * item)
        n_aux = 2 * int(sum(n)) + ABSORBER_CELLS + 16
        out["plane_waves"] += 6 * n_aux * item
    for m in n2f:
        lo, hi = plan.boxes[("monitor", m.name)]
        lo = tuple(max(v, 1) for v in lo)
        nf = len(m.frequencies)
        out["near_to_far"] += surface_bytes(lo, hi, nf, item) + nf * n_aux * 2 * item
    return out


def check_fits(sim, chunk: int | None = None, align: int | None = None) -> dict[str, int]:
    """Raise :class:`ResourceError` when the estimate exceeds the free device memory."""
    return refuse_if_too_large(sim.name, estimate(sim, chunk, align))


SHARDED_COPIES = 4
"""Shard-sized temporaries of a sharded step (see :func:`estimate_per_device`)."""


def estimate_per_device(sim, devices: int, axis: str | int = "x",
                        chunk: int | None = None) -> dict[str, int]:
    """Bytes on each device of a run sharded over ``devices`` devices along ``axis``.

    Follows :mod:`emjax.parallel`'s placement: the fields and every array of the
    grid's shape split evenly; psi split along ``axis``, or for the two slabs normal
    to it along the next axis that divides evenly; dispersive boxes (p, j and medium
    rows) split where they span ``axis``, whole otherwise (``parallel.splits_box``);
    monitors, coefficient tables and TF/SF grids replicated. ``halo``: XLA's SPMD
    partitioner builds each derivative along the split axis from a halo-extended copy
    of the local shard, and four of them
    (dEy, dEz, then dHy, dHz along x) were alive at once: ``SHARDED_COPIES`` shards of
    one component. Against XLA's own memory analysis of the compiled chunk (CPU, 4
    devices, 64^3 and 128x48x40, CPML 10) the total came within 4%.
    """
    from .setup import align_z

    a = "xyz".index(axis) if isinstance(axis, str) else int(axis)
    n = max(1, int(devices))
    align = 1 if a == 2 else align_z()  # the solver does not pad a z split (fdtd/solver.py)
    whole = estimate(sim, chunk, align)
    plan = lower_grid(sim, align)
    item = plan.dtype.itemsize
    shape = plan.grid.shape
    N = math.prod(shape)
    out = {k: v for k, v in whole.items() if k != "total"}
    out["fields"] = whole["fields"] // n
    # Dispersive boxes (emjax.parallel.splits_box): split where they span the shard axis,
    # whole on every device otherwise; p, j in ``polarization``, medium rows with the
    # coefficients.
    from ..parallel import splits_box

    bxs = dispersive_setup.boxes(sim, plan.grid)
    rows = polarization = 0
    for b in bxs:
        k = n if splits_box(b.shape, shape, a, n) else 1
        rows += _box_rows(sim, (b,)) // k
        polarization += dispersive_setup.aux_bytes((b,), plan.dtype) // k
    out["coefficients"] = (whole["coefficients"] - _box_rows(sim, bxs)) // n + rows
    if bxs:
        out["polarization"] = polarization
    psi = 0
    for s in plan.slabs:
        slab = 4 * math.prod(s.psi_shape(shape)) * item
        if s.axis != a:
            psi += slab // n
        else:
            split = any(shape[c] % n == 0 for c in range(3) if c != a)
            psi += slab // n if split else slab
    out["psi"] = psi
    out["halo"] = SHARDED_COPIES * N // n * _field_item(sim, item) if n > 1 else 0
    out["workspace"] = (psi + polarization) // 2
    out["total"] = sum(out.values())
    return out


def check_fits_per_device(sim, chunk: int | None, devices, axis: str | int = "x"
                          ) -> dict[str, int]:
    """:func:`check_fits` for a sharded run: each selected device must hold its share."""
    from ..parallel import select_devices

    devs = select_devices(devices)
    need = estimate_per_device(sim, len(devs), axis, chunk)
    free, where = available_bytes()
    for d in devs:
        dev_free = device_free_bytes(d)
        if dev_free is not None:
            free = min(free, dev_free)
    # CPU devices share the host's memory.
    share = len(devs) if devs[0].platform == "cpu" else 1
    if need["total"] * share > free:
        raise ResourceError(
            f"scenario '{sim.name}' needs about {need['total'] / 2**30:.2f} GiB on each of "
            f"{len(devs)} devices but {where} has {free / share / 2**30:.2f} GiB free per "
            "device; use more devices, coarsen the spacing or shrink the domain")
    return need
