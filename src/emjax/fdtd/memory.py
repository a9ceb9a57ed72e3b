"""Device memory a 3D FDTD run needs, from the scenario alone (no allocation).

The estimate counts what lives on the device during a run: the six field arrays (of
the stored shape, z padding included: ``grid.yee``), the update coefficients
(uint8/uint16 material indices for CIS, for E and for H only where their media
differ; two arrays per component for CAS), psi on the CPML slabs,
DFT accumulators, per-chunk snapshot buffers and probe outputs, energy weights, and
XLA's working space, which measured (H100, 256^3 and 512^3) at half the psi bytes:
the fields update in place, the psi of one update is double-buffered. The estimate
came within 0-3% of the measured peak (BENCHMARKS.md). Mur faces add nothing: they
hold no state, and their boundary planes are plane-sized temporaries. The check runs before
rasterization, so a run that cannot fit is refused in well under a second.
"""

from __future__ import annotations

import math

import numpy as np

from ..driver.memory import available_bytes, refuse_if_too_large
from ..errors import ResourceError
from ..model import CPML, PEC, PMC, DFTMonitor, EdgeSource, EnergyMonitor, FieldSnapshot, Probe
from .cpml import stored_thickness


def _region_size(sim, m) -> int:
    d = sim.domain.spacing3
    return math.prod(max(1, math.floor(s / dx + 1e-9) + 1) for s, dx in zip(m.size, d, strict=True))


def _stored_shape(sim, align: int | None) -> list[int]:
    """The stored array shape: cells, the PMC wall node, and the z padding
    (``setup.z_padding``; ``align`` as there)."""
    from .setup import z_padding

    shape = [n + int(isinstance(hi, PMC)) for n, (_, hi) in zip(sim.domain.cells, sim.faces,
                                                                  strict=True)]
    shape[2] += z_padding(sim.faces, sim.domain.cells[2], align)
    return shape


def estimate(sim, chunk: int | None = None, align: int | None = None) -> dict[str, int]:
    """Bytes on the device by item, and their ``total``; ``align``: the z alignment of
    the stored arrays (None: the backend's, ``setup.align_z``)."""
    from .solver import _default_chunk

    item = np.dtype(sim.dtype).itemsize
    shape = _stored_shape(sim, align)
    N = math.prod(shape)
    chunk = chunk or _default_chunk(sim.num_steps)
    out: dict[str, int] = {"fields": 6 * N * item}
    media = [sim.background]
    for s in sim.structures:
        media += list(s.geometry.media.values()) if s.medium is None else [s.medium]
    e_kinds = {("PEC",) if isinstance(m, PEC) else (m.eps_r, m.sigma) for m in media}
    h_kinds = {(m.mu_r, m.sigma_m) for m in media if not isinstance(m, PEC)}
    ports = sum(isinstance(s, EdgeSource) and s.kind == "voltage" for s in sim.sources)
    n_media = len(media) + ports
    idx_item = 1 if n_media <= 256 else 2
    if sim.storage == "arrays":
        out["coefficients"] = 12 * N * item
    else:
        out["coefficients"] = 3 * N * idx_item * (
            int(len(e_kinds) + ports > 1) + int(len(h_kinds) > 1))
    psi = 0
    for a, pair in enumerate(sim.faces):
        for b in pair:
            if isinstance(b, CPML):
                psi += 4 * stored_thickness(a, b.thickness, shape[a]) * N // shape[a] * item
    out["psi"] = psi
    mon = 0
    for m in sim.monitors:
        if isinstance(m, DFTMonitor):
            mon += len(m.components) * len(m.frequencies) * _region_size(sim, m) * 2 * item
        elif isinstance(m, FieldSnapshot):
            mon += len(m.components) * (chunk // m.interval + 1) * _region_size(sim, m) * item
        elif isinstance(m, Probe):
            mon += len(m.components) * len(m.positions) * chunk * item
        elif isinstance(m, EnergyMonitor):
            mon += chunk * item + 3 * N * item * (int(len(e_kinds) > 1) + int(len(h_kinds) > 1))
    out["monitors"] = mon
    out.update(_scatter_bytes(sim, item))
    out["workspace"] = psi // 2
    out["total"] = sum(out.values())
    return out


def _scatter_bytes(sim, item: int) -> dict[str, int]:
    """Plane-wave (TF/SF patches, 1D grid) and NearToFar (face accumulators) bytes.

    A TF/SF term is one plane patch of the box face holding an int32 index and four
    interpolation weights per sample; a NearToFar box accumulates, per frequency, one
    complex E plane and two complex H planes per tangential component and face.
    """
    from ..grid.yee import YeeGrid
    from ..model import NearToFar, PlaneWave
    from .auxgrid import ABSORBER_CELLS
    from .neartofar import surface_bytes
    from .setup import _box_from

    waves = [s for s in sim.sources if isinstance(s, PlaneWave)]
    n2f = [m for m in sim.monitors if isinstance(m, NearToFar)]
    if not waves and not n2f:
        return {}
    dom = sim.domain
    grid = YeeGrid(cells=dom.cells, spacing=dom.spacing3, lower=dom.lower)
    pml = sim.pml_cells()
    out = {"plane_waves": 0, "near_to_far": 0}
    n_aux = 0
    for s in waves:
        lo, hi = _box_from(grid, pml, s.box_center, s.box_size, s.box_margin)
        n = [max(h - lo_ + 1, 1) for lo_, h in zip(lo, hi, strict=True)]
        faces = 2 * (n[0] * n[1] + n[1] * n[2] + n[0] * n[2])
        out["plane_waves"] += 4 * faces * (4 + 4 * item)
        n_aux = 2 * int(sum(n)) + ABSORBER_CELLS + 16
        out["plane_waves"] += 6 * n_aux * item
    for m in n2f:
        lo, hi = _box_from(grid, pml, m.center, m.size, m.margin)
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
    to it along the next axis that divides evenly; monitors, coefficient tables and
    TF/SF grids replicated. ``halo``: XLA's SPMD partitioner builds each derivative
    along the split axis from a halo-extended copy of the local shard, and four of them
    (dEy, dEz, then dHy, dHz along x) were alive at once: ``SHARDED_COPIES`` shards of
    one component. Against XLA's own memory analysis of the compiled chunk (CPU, 4
    devices, 64^3 and 128x48x40, CPML 10) the total came within 4%.
    """
    a = "xyz".index(axis) if isinstance(axis, str) else int(axis)
    n = max(1, int(devices))
    align = 1 if a == 2 else None  # the solver does not pad a z split (fdtd/solver.py)
    whole = estimate(sim, chunk, align)
    item = np.dtype(sim.dtype).itemsize
    shape = _stored_shape(sim, align)
    N = math.prod(shape)
    out = {k: v for k, v in whole.items() if k != "total"}
    out["fields"] = whole["fields"] // n
    out["coefficients"] = whole["coefficients"] // n
    psi = 0
    for b, pair in enumerate(sim.faces):
        for face in pair:
            if not isinstance(face, CPML):
                continue
            slab = 4 * stored_thickness(b, face.thickness, shape[b]) * N // shape[b] * item
            if b != a:
                psi += slab // n
            else:
                split = any(shape[c] % n == 0 for c in range(3) if c != a)
                psi += slab // n if split else slab
    out["psi"] = psi
    out["halo"] = SHARDED_COPIES * N // n * item if n > 1 else 0
    out["workspace"] = psi // 2
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
        stats = None
        try:
            stats = d.memory_stats()
        except Exception:
            stats = None
        if stats and "bytes_limit" in stats:
            free = min(free, int(stats["bytes_limit"] - stats.get("bytes_in_use", 0)))
    # CPU devices share the host's memory.
    share = len(devs) if devs[0].platform == "cpu" else 1
    if need["total"] * share > free:
        raise ResourceError(
            f"scenario '{sim.name}' needs about {need['total'] / 2**30:.2f} GiB on each of "
            f"{len(devs)} devices but {where} has {free / share / 2**30:.2f} GiB free per "
            "device; use more devices, coarsen the spacing or shrink the domain")
    return need
