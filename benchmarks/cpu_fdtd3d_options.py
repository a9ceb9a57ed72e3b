"""CPU FDTD3D options study (issue #24): Mcells/s of ``emjax bench cpu-fdtd3d`` per option.

Each option runs in its own process (XLA flags are read when JAX starts):
``python benchmarks/cpu_fdtd3d_options.py [n] [steps]``; prints one line per option,
the 3 runs' own ``cells_per_s`` (their best is the figure: other work on a
shared machine only ever slows a run down). Results: BENCHMARKS.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

OPTIONS = {  # name: (extra XLA flags, keyword arguments of cpu_fdtd3d)
    "chunk 10 (the default chunk of 200 steps)": ("", {"chunk": 10}),
    "chunk 50": ("", {"chunk": 50}),
    "chunk 100": ("", {"chunk": 100}),
    "per_face, chunk 100": ("", {"strategy": "per_face", "chunk": 100}),
    "multi_thread_eigen=false, chunk 100": ("--xla_cpu_multi_thread_eigen=false",
                                            {"chunk": 100}),
    "fast_math, chunk 100": ("--xla_cpu_enable_fast_math=true", {"chunk": 100}),
    "no fusion emitters, chunk 100": ("--xla_cpu_use_fusion_emitters=false", {"chunk": 100}),
    "fast_math, chunk 10": ("--xla_cpu_enable_fast_math=true", {"chunk": 10}),
    "fast_math + multi_thread_eigen=false, chunk 100": (
        "--xla_cpu_enable_fast_math=true --xla_cpu_multi_thread_eigen=false", {"chunk": 100}),
    "float64, chunk 50": ("", {"chunk": 50, "dtype": "float64"}),
}

CHILD = """
import json, sys
from emjax.bench.cpu import cpu_fdtd3d
kw = json.loads(sys.argv[1])
rates = []
for _ in range(3):
    recs = cpu_fdtd3d(**kw)
    rates.append(next(r.value for r in recs if r.metric.startswith("all cells")))
bw = next(r.value for r in recs if r.metric.startswith("NumPy"))
print(json.dumps({"rates": rates, "bw": bw}))
"""


def _busy(seconds: float = 1.0) -> float:
    """Fraction of all CPUs busy over ``seconds`` (from /proc/stat)."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]

    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 1 - (i1 - i0) / max(t1 - t0, 1)


def wait_quiet(limit: float = 0.1, patience: float = 30) -> float:
    """Wait (at most ``patience`` s) until other work leaves the CPUs idle: a shared
    machine's timing is otherwise someone else's too. Returns the last busy fraction."""
    end = time.time() + patience
    busy = _busy()
    while busy > limit and time.time() < end:
        time.sleep(2)
        busy = _busy()
    return busy


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 128
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 600
    only = sys.argv[3:] or list(OPTIONS)
    for name in only:
        flags, kw = OPTIONS[name]
        env = {**os.environ, "JAX_PLATFORMS": "cpu",
               "XLA_FLAGS": (os.environ.get("XLA_FLAGS", "") + " " + flags).strip()}
        busy = wait_quiet()
        out = subprocess.run([sys.executable, "-c", CHILD, json.dumps({"n": n, "steps": steps,
                                                                       **kw})],
                             env=env, capture_output=True, text=True)
        if out.returncode:
            print(f"{name:34s} FAILED: {out.stderr.strip().splitlines()[-1:]}", flush=True)
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{name:34s} {sorted(r['rates'])} Mcells/s  (NumPy copy {r['bw']:.1f} GB/s; "
              f"CPUs {busy:.0%} busy before)", flush=True)


if __name__ == "__main__":
    main()
