"""Experiment: the DGATD complex's sorts on the device against NumPy at 20.2M DoFs
(issue 24): the program's compilation ahead, two builds each way, and the parts of
the device build (the program, its copies back). The first device build of a process
pays JAX's first device use (``benchmarks/first_device_use.py``).

    python benchmarks/dga_complex_sorts.py 20.2e6 > $OUT/complex.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> None:
    import jax
    import numpy as np

    sys.path.insert(0, str(Path(__file__).parent))
    from dga_setup_cache import scenario

    from emjax.dga import complex as cplx
    from emjax.dga.generate import build_mesh
    from emjax.driver.host import to_host

    jax.config.update("jax_enable_x64", True)
    jax.devices()
    out: dict = {}

    def clock(name, fn):
        t = time.perf_counter()
        r = fn()
        out[name] = round(time.perf_counter() - t, 3)
        return r

    sim = scenario(sys.argv[1] if len(sys.argv) > 1 else "20.2e6")
    mesh = clock("mesh", lambda: build_mesh(sim.mesh).renumbered("morton"))
    ahead = cplx.compile_ahead(mesh.num_tets)
    program = clock("compile", ahead.result)
    for i in range(2):
        cx = clock(f"build_dev{i}", lambda: cplx.build(mesh, ahead, on_device=True))
        ref = clock(f"build_host{i}", lambda: cplx.build(mesh))
    tets = np.sort(mesh.tets, axis=1).astype(np.int64)
    r = clock("program", lambda: jax.block_until_ready(program(tets, np.int64(mesh.num_nodes))))
    clock("to_host", lambda: to_host(r))
    clock("device_get", lambda: jax.device_get(r))
    out["equal"] = all(np.array_equal(getattr(cx, n), getattr(ref, n))
                       for n in ref.__dataclass_fields__)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
