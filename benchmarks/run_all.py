"""Run every benchmark case, print a table and write JSON records.

Usage: python benchmarks/run_all.py [OUT_DIR] [case ...]
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out")
    names = sys.argv[2:] or ["cpu-gpu", "roofline", "seed001-cube"]
    out.mkdir(parents=True, exist_ok=True)
    from emjax.bench import CASES

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = "unknown"
    records = []
    for name in names:
        t = time.time()
        recs = CASES[name]()
        for r in recs:
            r["commit"] = commit
            r["date"] = time.strftime("%Y-%m-%d")
            print(f"{r['case']:14s} {r['size']:5d} {r['metric']:52s} {r['value']:12.4g} "
                  f"{r['unit']}", flush=True)
        records += recs
        print(f"# {name}: {time.time() - t:.1f} s", flush=True)
        (out / "bench.json").write_text(json.dumps(records, indent=1))


if __name__ == "__main__":
    main()
