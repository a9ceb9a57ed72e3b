"""Device memory: what is free, and the refusal every solver runs before it allocates.

An estimate is a dict of bytes by item with a ``total``; each solver computes its own
(from its plan) and hands it to :func:`refuse_if_too_large` before any large
allocation or computation.
"""

from __future__ import annotations

from ..errors import ResourceError


def device_free_bytes(dev) -> int | None:
    """Free bytes on JAX device ``dev`` as its allocator reports them; None where it
    reports none (CPU devices)."""
    try:
        stats = dev.memory_stats()
    except Exception:  # backends without memory statistics raise various errors
        stats = None
    if stats and "bytes_limit" in stats:
        return int(stats["bytes_limit"] - stats.get("bytes_in_use", 0))
    return None


def available_bytes() -> tuple[int, str]:
    """(free bytes, what was measured) on JAX's first device; on a CPU the host memory
    available to new allocations (psutil's ``available``: free plus reclaimable caches)."""
    import jax
    import psutil

    dev = jax.devices()[0]
    free = device_free_bytes(dev)
    if free is not None:
        return free, f"{dev.device_kind}"
    return int(psutil.virtual_memory().available), "host memory"


def refuse_if_too_large(name: str, need: dict[str, int]) -> dict[str, int]:
    """Raise :class:`ResourceError` when ``need["total"]`` (an estimate of any solver,
    in bytes) exceeds the free device memory; return ``need`` otherwise."""
    free, where = available_bytes()
    if need["total"] > free:
        parts = ", ".join(f"{k} {v / 2**30:.2f}" for k, v in need.items() if k != "total")
        raise ResourceError(
            f"scenario '{name}' needs about {need['total'] / 2**30:.2f} GiB on the device "
            f"({parts} GiB) but {where} has {free / 2**30:.2f} GiB free; coarsen the spacing, "
            "shrink the domain, use float32 or storage='indices', or spread it over more "
            "devices")
    return need


def format_estimate(need: dict[str, int]) -> str:
    rows = [f"  {k:<13s} {v / 2**20:12.1f} MiB" for k, v in need.items() if k != "total"]
    return "\n".join([*rows, f"  {'total':<13s} {need['total'] / 2**20:12.1f} MiB"])
