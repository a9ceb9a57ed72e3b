"""FDFD checkpoints: the Krylov iterate and the residual history, in the shared format.

The file is :mod:`emjax.driver.checkpoint`'s (digests, atomic write, verified
loading): group ``state`` holds the iterate (the unknown of the solved system, shape
(3, nx, ny, nz), complex), group ``record`` the relative residual of every iteration
so far (float64, one per iteration, so its length is the stored ``step``), and the
file attribute ``solver = "fdfd"``. The scenario must match the resuming one except
for its solver settings (the iterate is a valid start for any Krylov method).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..driver.checkpoint import DAMAGED, check_step, verified, write_checkpoint
from ..errors import CheckpointError


def save_checkpoint(sim, path: str | Path, iteration: int, x, history) -> Path:
    """Write iterate ``x`` and the residual ``history`` after ``iteration`` iterations
    of ``sim`` to ``path`` atomically."""
    return write_checkpoint(path, scenario=sim.to_json(indent=None), step=iteration,
                            groups={"state": [np.asarray(x)],
                                    "record": [np.asarray(history, np.float64)]},
                            solver="fdfd")


def load_checkpoint(sim, path: str | Path, like) -> tuple[int, np.ndarray, np.ndarray]:
    """(iteration, iterate, residual history) stored in ``path``, verified against its
    digests; the iterate must have ``like``'s dtype and shape."""
    from ..model import load_scenario

    with verified(path) as stored:
        if stored.attrs.get("solver") != "fdfd":
            raise CheckpointError(f"'{path}' is not an emjax FDFD checkpoint")
        try:
            saved = load_scenario(stored.scenario)
        except ValueError as e:  # pydantic's ValidationError too
            raise CheckpointError(f"checkpoint '{path}': the stored scenario does not load "
                                  f"({e}); {DAMAGED}") from e
        if saved.model_copy(update={"solver": sim.solver}) != sim:
            raise CheckpointError(f"checkpoint '{path}' belongs to another scenario; run it "
                                  "with the scenario stored in it (`emjax run --resume FILE`)")
        # the writer stopped within its own budget (max_iter counts every iteration)
        check_step(path, stored.step, saved.solver.max_iter, "iterations")
        (x,) = stored.read("state", [(like.dtype, tuple(like.shape))])
        (history,) = stored.read("record", [(np.float64, (stored.step,))])
    return stored.step, x, history
