"""Checkpoint a run and resume it, bit for bit (FDTD3D, the built-in ``dipole-cube``).

A long run writes its whole state every ``checkpoint_every`` steps (atomically, with
SHA-256 digests of every array); Ctrl-C or SIGTERM stop it at the next chunk end with
the same checkpoint and the partial results. Here the first run writes a checkpoint
half way and goes on to the end; a second run resumes from that checkpoint, as a job
that was stopped there would. Check: the resumed results equal the uninterrupted ones
bit for bit, every monitor (probes, DFT plane, energy, snapshots). The figure shows a
probe of both runs and the energy, with the checkpoint step marked.

    python examples/checkpoint_resume.py [--full] [--out DIR]

Writes ``checkpoint_resume.png`` and the checkpoint ``checkpoint_resume.ckpt.h5``
into --out. Small size: the built-in's 7.5 mm cells (40^3), about 6 s on a laptop
CPU; ``--full``: 3.75 mm cells.
From the shell the same is ``emjax run dipole-cube --checkpoint-every N`` and
``emjax run --resume out/dipole-cube.ckpt.h5``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from emjax.scenarios import load_builtin

NAME = "checkpoint_resume"


def arguments(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true", help="the full size (slower)")
    p.add_argument("--out", type=Path, default=Path("out/examples"),
                   help="folder for the figure and the checkpoint (default out/examples)")
    return p.parse_args(argv)


def main(argv=None) -> dict:
    from matplotlib.figure import Figure

    args = arguments(argv)
    sim = load_builtin("dipole-cube")
    if args.full:
        sim = sim.model_copy(update={"domain": sim.domain.model_copy(
            update={"spacing": sim.domain.spacing / 2})})
        sim = type(sim).model_validate(sim.model_dump())  # validated again
    args.out.mkdir(parents=True, exist_ok=True)
    ckpt = args.out / f"{NAME}.ckpt.h5"
    half = sim.num_steps // 2
    whole = sim.run(progress=False, checkpoint_every=half, checkpoint_path=ckpt)
    resumed = sim.run(progress=False, resume=ckpt)  # continues from step `half`
    # every monitor's arrays, bit for bit (the metadata differ: wall times)
    differ = [name for name in whole if resumed[name] != whole[name]]
    same = list(resumed) == list(whole) and not differ

    fig = Figure(figsize=(11, 4), layout="constrained")
    a0, a1 = fig.subplots(1, 2)
    p_whole, p_res = whole["probe"], resumed["probe"]
    t = p_whole.time("Ez") * 1e9
    t_ckpt = t[half - 1]
    a0.semilogy(t, np.abs(p_whole.array("Ez")[:, 0]), lw=2.5, color="0.7", label="one run")
    a0.semilogy(t[half:], np.abs(p_res.array("Ez")[half:, 0]), lw=1.0, color="C3",
                label="resumed from the checkpoint")
    a0.set(xlabel="time (ns)", ylabel="|Ez| (V/m)", ylim=(1e-6, None),
           title="probe at (0, 50 mm, 0): the pulse, then the ring-down")
    e, e_res = whole["energy"], resumed["energy"]
    te = e.time() * 1e9
    a1.semilogy(te, e.array("energy"), lw=2.5, color="0.7", label="one run")
    after = te > t_ckpt
    a1.semilogy(te[after], e_res.array("energy")[after], lw=1.0, color="C3",
                label="resumed")
    a1.set(xlabel="time (ns)", ylabel="energy (J)",
           title=f"energy; resumed run {'bitwise equal' if same else 'DIFFERS'}")
    for ax in (a0, a1):
        ax.axvline(t_ckpt, color="k", ls="--", lw=0.8, label=f"checkpoint, step {half}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    path = args.out / f"{NAME}.png"
    fig.savefig(path, dpi=80)
    mib = ckpt.stat().st_size / 2**20
    print(f"{NAME}: resumed at step {half} of {sim.num_steps} from a {mib:.1f} MiB "
          f"checkpoint: results {'bitwise equal to' if same else 'DIFFER from'} the "
          f"uninterrupted run{'' if same else ' in ' + ', '.join(differ)}; {path}")
    return {"passed": bool(same) and bool(np.isfinite(mib)), "figures": [path]}


if __name__ == "__main__":
    sys.exit(0 if main()["passed"] else 1)
