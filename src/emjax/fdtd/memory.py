"""Device memory a 3D FDTD run needs, from the scenario alone (no allocation).

The estimate counts what lives on the device during a run: the six field arrays,
the update coefficients (uint8/uint16 material indices for CIS, for E and for H only
where their media differ; two arrays per component for CAS), psi on the CPML slabs,
DFT accumulators, per-chunk snapshot buffers and probe outputs, energy weights, and
XLA's working space, which measured (H100, 256^3 and 512^3) at half the psi bytes:
the fields update in place, the psi of one update is double-buffered. The estimate
came within 0-3% of the measured peak (BENCHMARKS.md). The check runs before
rasterization, so a run that cannot fit is refused in well under a second.
"""

from __future__ import annotations

import math
import os

import numpy as np

from ..errors import ResourceError
from ..model import CPML, PEC, PMC, DFTMonitor, EdgeSource, EnergyMonitor, FieldSnapshot, Probe


def _region_size(sim, m) -> int:
    d = sim.domain.spacing3
    return math.prod(max(1, math.floor(s / dx + 1e-9) + 1) for s, dx in zip(m.size, d, strict=True))


def estimate(sim, chunk: int | None = None) -> dict[str, int]:
    """Bytes on the device by item, and their ``total``."""
    from .solver import _default_chunk

    item = np.dtype(sim.dtype).itemsize
    shape = [n + int(isinstance(hi, PMC)) for n, (_, hi) in zip(sim.domain.cells, sim.faces,
                                                                  strict=True)]
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
                psi += 4 * b.thickness * N // shape[a] * item
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
    out["workspace"] = psi // 2
    out["total"] = sum(out.values())
    return out


def available_bytes() -> tuple[int, str]:
    """(free bytes, what was measured) on JAX's first device; host memory on a CPU."""
    import jax

    dev = jax.devices()[0]
    stats = None
    try:
        stats = dev.memory_stats()
    except Exception:
        stats = None
    if stats and "bytes_limit" in stats:
        return int(stats["bytes_limit"] - stats.get("bytes_in_use", 0)), f"{dev.device_kind}"
    pages = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return int(pages), "host memory"


def check_fits(sim, chunk: int | None = None) -> dict[str, int]:
    """Raise :class:`ResourceError` when the estimate exceeds the free device memory."""
    need = estimate(sim, chunk)
    free, where = available_bytes()
    if need["total"] > free:
        parts = ", ".join(f"{k} {v / 2**30:.2f}" for k, v in need.items() if k != "total")
        raise ResourceError(
            f"scenario '{sim.name}' needs about {need['total'] / 2**30:.2f} GiB on the device "
            f"({parts} GiB) but {where} has {free / 2**30:.2f} GiB free; coarsen the spacing, "
            "shrink the domain, use float32 or storage='indices', or spread it over more "
            "devices")
    return need


def format_estimate(need: dict[str, int]) -> str:
    rows = [f"  {k:<13s} {v / 2**20:12.1f} MiB" for k, v in need.items() if k != "total"]
    return "\n".join([*rows, f"  {'total':<13s} {need['total'] / 2**20:12.1f} MiB"])
