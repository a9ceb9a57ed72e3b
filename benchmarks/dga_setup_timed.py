"""Experiment: where the DGATD set-up's time goes, function by function, without a
profiler (issue 24). Python 3.12's cProfile follows every thread and charges a
function for the time others hold the GIL, which misled on the set-up's threads; here
each named function is wrapped in a timer, summed per function and thread.

    python benchmarks/dga_setup_timed.py 20.2e6 > $OUT/setup-timed.json

Prints the set-up's wall time and stages (``DGASolver(sim)``, set-up cache on in a
fresh folder) and the seconds spent in each wrapped function, ``name[thread]``.
"""

from __future__ import annotations

import functools
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

WRAPPED = {
    "emjax.dga.arrays": ["kernel_arrays", "kernel_base", "operator_arrays", "node_tiles",
                         "energy_arrays", "node_arrays"],
    "emjax.dga.tiles": ["pack", "symmetric_rows"],
    "emjax.dga.stability": ["spectral_radius", "compile_ahead"],
    "emjax.driver.host": ["to_host"],
    "emjax.dga.mass": ["_node_matrices", "_slots", "_groups", "choose_buckets", "on_host"],
    "emjax.dga.local": ["node_matrices_on_device", "compile_ahead"],
    "emjax.dga.edges": ["_tables", "edge_tables"],
    "emjax.dga.layout": ["make_layout"],
    "emjax.dga.complex": ["build", "_boundary"],
    "emjax.dga.setup": ["materials", "_layouts_ahead"],
    "emjax.dga.solver": ["probe_arrays", "snap_edge"],
}


def wrap(times: dict, module, name: str) -> None:
    """Replace ``module.name``, and every emjax module's reference to it, by a timer
    (a name the tree does not have is skipped: the script times older trees too)."""
    f = getattr(module, name, None)
    if f is None:
        return

    @functools.wraps(f)
    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return f(*args, **kwargs)
        finally:
            key = f"{name}[{threading.current_thread().name[:14]}]"
            times[key] = times.get(key, 0.0) + time.perf_counter() - t

    setattr(module, name, timed)
    for mod in [m for n, m in list(sys.modules.items()) if n.startswith("emjax")]:
        if getattr(mod, name, None) is f:
            setattr(mod, name, timed)


def main() -> None:
    import importlib

    import jax

    sys.path.insert(0, str(Path(__file__).parent))
    from dga_setup_cache import _on_demand_pool, scenario

    from emjax.dga.solver import DGASolver
    from emjax.driver.compile_cache import setup_cache

    _on_demand_pool()  # as the set-up does first, before the backend starts below
    jax.devices()
    times: dict = {}
    for mod, names in WRAPPED.items():
        m = importlib.import_module(mod)
        for name in names:
            wrap(times, m, name)
    wrap(times, jax, "device_put")
    sim = scenario(sys.argv[1] if len(sys.argv) > 1 else "2e5")
    with tempfile.TemporaryDirectory() as tmp, setup_cache(tmp):
        t0 = time.perf_counter()
        s = DGASolver(sim)
        wall = time.perf_counter() - t0
    print(json.dumps({"wall": wall, "stages": {k: round(v, 3) for k, v in s.setup.stages.items()},
                      "timed": {k: round(v, 3) for k, v in
                                sorted(times.items(), key=lambda kv: -kv[1])}}, indent=1))


if __name__ == "__main__":
    main()
