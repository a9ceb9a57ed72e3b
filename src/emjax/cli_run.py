"""``emjax run``: a scenario from a file, a built-in name or a checkpoint, its output
targets checked before anything is computed, the run, then its files.

Files ``emjax run`` writes, every one checked first (:mod:`emjax.io.targets`):

* ``-o`` (default ``out/<name>.h5``): the results;
* ``--checkpoint`` (default ``<stem>.ckpt.h5`` beside them): written every
  ``--checkpoint-every`` steps and when SIGINT/SIGTERM stops the run;
* ``<stem>.partial.h5`` beside the results: what an interrupted run had;
* ``--figures`` (default the results' folder): figures and the output hooks' files,
  all named ``<stem>_...``, and the ParaView files beside the results;
  ``--no-figures`` skips the hooks that draw (label "figure"), keeping the others.

Missing folders are created; a folder that takes no file, a path that is a folder or
lies under a regular file, and the run's own inputs (the scenario file, the
``--resume`` checkpoint) are refused. An existing file is replaced only with
``--overwrite``, which replaces everything of the stem; without it an existing results
file refuses the run, which protects the figures named after it. Two exceptions: a
run resumed from its own checkpoint writes over it, and over the partial results its
interruption left. ``--dry-run`` writes nothing and checks nothing.

Outside the outputs, the run keeps JAX's compiled executables in the user cache
(:mod:`emjax.driver.compile_cache`; the folder ``args.cache_dir``, which ``emjax.cli``
sets from ``--no-cache`` and ``$EMJAX_CACHE_DIR``), so that a second run of a scenario
compiles nothing; after the run it prints its stage times (``times: set-up ...``; an
FDFD run's are set-up, compile, solve and writing, a sweep's iterations per frequency).

Warnings (:class:`~emjax.errors.EmjaxWarning`) print as one line each,
``emjax run: warning: <message>``, on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .driver.compile_cache import OFF
from .errors import CheckpointError, EmjaxWarning, OutputError, SetupError
from .model.base import format_validation_error


def resolve_scenario(spec: str | None) -> tuple[Any, str]:
    """A scenario and its name from a file path or a built-in name (default if None).

    A spec that names an existing file, or ends in ``.toml``/``.json``, is a file; the
    name is the scenario's ``name`` when the file sets one, else the file's stem.
    Anything else is a built-in name.
    """
    from .model import load_scenario
    from .scenarios import DEFAULT, builtin_names, load_builtin

    spec = DEFAULT if spec is None else spec
    path = Path(spec)
    if path.is_file() or path.suffix.lower() in (".toml", ".json"):
        if not path.is_file():
            raise SetupError(
                f"scenario file '{path}' does not exist; give an existing .toml or .json "
                f"file or a built-in name ({', '.join(builtin_names())})"
            )
        try:
            sim = load_scenario(path)
        except ValidationError as e:
            raise SetupError(f"scenario file '{path}': {format_validation_error(e)}") from e
        name = sim.name if "name" in sim.model_fields_set else path.stem
        return sim, name
    return load_builtin(spec), spec


def with_steps(sim: Any, steps: int) -> Any:
    """A re-validated copy of ``sim`` that runs exactly ``steps`` time steps."""
    if "steps" not in type(sim).model_fields:
        raise SetupError(f"--steps: a {sim.type} scenario has no time steps; leave it out")
    copy = sim.model_copy(update={"steps": steps, "duration": None})
    return type(sim).model_validate(copy.model_dump())


def with_max_iter(sim: Any, max_iter: int) -> Any:
    """A re-validated copy of an FDFD ``sim`` whose Krylov solve stops after at most
    ``max_iter`` iterations (the best iterate is returned, with a warning when the
    tolerance was not reached)."""
    solver = getattr(sim, "solver", None)
    if solver is None or "max_iter" not in type(solver).model_fields:
        raise SetupError(f"--max-iter: a {sim.type} scenario has no iterative solve; "
                         "leave it out (--steps shortens a time-domain run)")
    copy = sim.model_copy(update={"solver": solver.model_copy(update={"max_iter": max_iter})})
    return type(sim).model_validate(copy.model_dump())


def _shortened(sim: Any, args: argparse.Namespace) -> Any:
    """``sim`` with ``--steps`` and ``--max-iter`` applied."""
    if args.steps is not None:
        sim = with_steps(sim, args.steps)
    if getattr(args, "max_iter", None) is not None:
        sim = with_max_iter(sim, args.max_iter)
    return sim


def _shortening(args: argparse.Namespace) -> str:
    """``--steps N`` / ``--max-iter N`` as given, for messages ("" when neither)."""
    parts = [f"--steps {args.steps}" if args.steps is not None else "",
             f"--max-iter {args.max_iter}" if getattr(args, "max_iter", None) else ""]
    return " and ".join(p for p in parts if p)


# ------------------------------------------------------------ the scenario

_ABSENT = object()


def scenario_differences(stored: Any, given: Any, where: str = "") -> list[tuple[str, Any, Any]]:
    """(path, stored value, given value) of every leaf where two scenarios' JSON data
    differ, e.g. ``("structures[0].medium.eps_r", 4.0, 9.0)``; a key one side lacks has
    the value ``_ABSENT`` there, and lists of different lengths differ as a whole."""
    if isinstance(stored, dict) and isinstance(given, dict):
        out = []
        for k in [*stored, *(k for k in given if k not in stored)]:
            out += scenario_differences(stored.get(k, _ABSENT), given.get(k, _ABSENT),
                                        f"{where}.{k}" if where else str(k))
        return out
    if isinstance(stored, list) and isinstance(given, list) and len(stored) == len(given):
        return [d for i, (a, b) in enumerate(zip(stored, given, strict=True))
                for d in scenario_differences(a, b, f"{where}[{i}]")]
    return [] if stored == given else [(where, stored, given)]


def _short(value: Any) -> str:
    if value is _ABSENT:
        return "absent"
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _scenario(args: argparse.Namespace) -> tuple[Any, str]:
    """The scenario to run and its name; with ``--resume``, the checkpoint's, which a
    scenario or ``--steps`` given as well must equal (CheckpointError naming what differs)."""
    if not args.resume:
        sim, name = resolve_scenario(args.scenario)
        return _shortened(sim, args), name
    from .driver.checkpoint import scenario_json
    from .model import load_scenario

    text = scenario_json(args.resume)
    shortening = _shortening(args)
    if args.scenario is None and not shortening:  # the stored scenario, as it is
        sim = load_scenario(text)
        return sim, sim.name
    if args.scenario is None:
        sim, name, label = load_scenario(text), None, shortening
    else:
        sim, name = resolve_scenario(args.scenario)
        label = f"'{args.scenario}'" + (f" with {shortening}" if shortening else "")
    sim = _shortened(sim, args)
    diffs = scenario_differences(json.loads(text), json.loads(sim.to_json(indent=None)))
    if diffs:
        shown = "; ".join(f"{w}: {_short(a)} in the checkpoint, {_short(b)} in {label}"
                          for w, a, b in diffs[:6])
        more = f" (and {len(diffs) - 6} more)" if len(diffs) > 6 else ""
        raise CheckpointError(
            f"--resume '{args.resume}' holds another scenario than {label}: {shown}{more}; "
            f"resume with the scenario it holds (`emjax run --resume {args.resume}`, without "
            "a scenario, --steps or --max-iter) or start a new run without --resume")
    return sim, name or sim.name


# ----------------------------------------------------------------- targets


@dataclass(frozen=True)
class RunTargets:
    """The paths ``emjax run`` writes (see the module docstring)."""

    results: Path
    figures: Path
    checkpoint: Path
    partial: Path

    @classmethod
    def of(cls, args: argparse.Namespace, name: str) -> RunTargets:
        from .io.targets import file_path  # h5py: not at import

        results = (file_path(args.output, what="-o") if args.output is not None
                   else Path("out") / f"{name}.h5")
        return cls(results=results,
                   figures=Path(args.figures) if args.figures else results.parent,
                   checkpoint=(file_path(args.checkpoint, what="--checkpoint")
                               if args.checkpoint is not None
                               else results.with_suffix(".ckpt.h5")),
                   partial=results.with_name(results.stem + ".partial.h5"))

    def check(self, *, overwrite: bool, inputs: list[Path], resume: Path | None) -> None:
        """Refuse (OutputError) any target the run must not or cannot write, before
        anything is computed; creates missing folders."""
        from .io.targets import check_folder, check_output  # h5py: not at import

        flag = "--overwrite"
        named = {"-o": self.results, "--checkpoint": self.checkpoint,
                 "partial results": self.partial, "--figures": self.figures}
        seen: dict[Path, str] = {}
        for what, path in named.items():
            other = seen.setdefault(path.resolve(), what)
            if other != what:
                raise OutputError(f"{what} '{path}' is also the {other} target; give each "
                                  "its own path")
        check_output(self.results, overwrite=overwrite, inputs=inputs, what="-o", flag=flag)
        # A run resumed from its own checkpoint writes over it, and over the partial
        # results its interruption left.
        own = resume is not None and self.checkpoint.resolve() == resume.resolve()
        check_output(self.checkpoint, overwrite=overwrite or own,
                     inputs=[p for p in inputs if not (own and p == resume)],
                     what="--checkpoint", flag=f"--resume {self.checkpoint} to continue the "
                     "run it holds, --overwrite")
        check_output(self.partial, overwrite=overwrite or resume is not None, inputs=inputs,
                     what="partial results file", flag=flag, instead="-o")
        check_folder(self.figures, what=f"--figures '{self.figures}'")


# ---------------------------------------------------------------- warnings


@contextlib.contextmanager
def warnings_as_lines(command: str) -> Iterator[None]:
    """Show each warning as one line ``emjax <command>: warning: ...`` on stderr,
    without the source line Python adds: an :class:`EmjaxWarning` as its message,
    any other (NumPy's overflow, a library's deprecation) with its category and the
    place it came from."""
    with warnings.catch_warnings():  # restores showwarning on exit

        def show(message, category, filename, lineno, file=None, line=None):
            text = " ".join(str(message).split())
            if not issubclass(category, EmjaxWarning):
                text = f"{category.__name__}: {text} ({Path(filename).name}:{lineno})"
            print(f"emjax {command}: warning: {text}", file=sys.stderr)

        warnings.showwarning = show
        # emjax's warnings are the CLI's output, not errors: shown once each place,
        # whatever filters the interpreter carries (PYTHONWARNINGS=error, pytest's)
        warnings.simplefilter("default", EmjaxWarning)
        yield


# --------------------------------------------------------------------- run


def cmd_run(args: argparse.Namespace) -> int:
    """Run a scenario, save its results, then the files of every output hook that
    applies to them (:func:`emjax.outputs.write_outputs`)."""
    with warnings_as_lines("run"):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    if not args.distributed:  # a multi-process job joins before JAX's backend starts
        from .driver.backend import start_in_background

        start_in_background()
    sim, name = _scenario(args)
    targets = RunTargets.of(args, name)
    if not args.dry_run:  # before JAX starts and anything is computed
        inputs = [Path(p) for p in (args.scenario, args.resume) if p and Path(p).is_file()]
        targets.check(overwrite=args.overwrite, inputs=inputs,
                      resume=Path(args.resume) if args.resume else None)
    from .parallel import run_options  # --devices, --distributed (before JAX starts)

    opts = run_options(sim, args.devices, args.distributed, args.shard_axis)
    print(f"emjax run: '{name}': {sim.summary()}")
    from .driver.memory import available_bytes, format_estimate  # JAX is imported here

    if opts:  # a sharded run: what each device holds
        from .fdtd.memory import estimate_per_device
        from .parallel import select_devices

        n = len(select_devices(opts["devices"]))
        per = estimate_per_device(sim, n, args.shard_axis)
        print(f"sharded along {args.shard_axis} over {n} devices; memory per device:\n"
              f"{format_estimate(per)}")
    if not opts:  # the budget, printed before every run
        print(f"device memory needed:\n{format_estimate(sim.estimate())}")
    if args.dry_run:
        need = sim.estimate() if not opts else per
        free, where = available_bytes()
        fits = need["total"] <= free
        print(f"{where}: {free / 2**20:.1f} MiB free: {'fits' if fits else 'does NOT fit'}")
        from .bench.walltime import estimate_wall_time

        print(estimate_wall_time(sim, None if opts else need, devices=n if opts else 1).line())
        return 0 if fits else 1
    from .driver.compile_cache import compilation_cache
    from .errors import RunInterrupted

    try:
        with compilation_cache(getattr(args, "cache_dir", OFF)):
            res = sim.run(progress=not args.no_progress,
                          checkpoint_every=args.checkpoint_every,
                          checkpoint_path=targets.checkpoint, resume=args.resume, **opts)
    except RunInterrupted as e:
        try:
            _save(e.results, targets.partial, "-o", "the partial results")
            unit = ("iterations" if "interrupted_at_iteration" in e.results.metadata
                    else "steps")
            print(f"{e}\npartial results ({unit} 0..{e.step}): {targets.partial}",
                  file=sys.stderr)
        except OutputError as err:  # the checkpoint still holds the run
            print(f"{e}\nemjax run: error: {err}", file=sys.stderr)
        return 130
    from .parallel import is_main_process

    if opts and not is_main_process():  # several processes: process 0 writes
        return 0
    start = time.perf_counter()
    _save(res, targets.results, "-o", "the results")
    print(f"results: {targets.results}")
    _write_outputs(res, targets, figures=not args.no_figures)
    meta = getattr(res, "metadata", None)
    meta = meta if isinstance(meta, dict) else {}
    # after the file is written, so in the printed line and the in-memory results only
    meta["writing_time_s"] = time.perf_counter() - start
    _print_speed(meta)
    return 0


def _save(res: Any, path: Path, what: str, label: str) -> None:
    """Write results checked before the run (so replacing is what was agreed to); a
    failure now (disk full, folder removed) is an OutputError naming the path."""
    try:
        res.save(path, overwrite=True)
    except (OSError, OutputError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise OutputError(f"{what} '{path}': writing {label} failed after the run "
                          f"({reason}); they are lost: free space or choose another "
                          f"{what}, then run again") from None


def _write_outputs(res: Any, targets: RunTargets, *, figures: bool = True) -> None:
    from .outputs import write_outputs

    try:
        for label, path in write_outputs(res, figures=targets.figures,
                                         results_dir=targets.results.parent,
                                         stem=targets.results.stem, draw=figures):
            print(f"{label + ':':<8} {path}")
    except OSError as e:
        raise OutputError(f"results saved to '{targets.results}', but writing the figures "
                          f"into '{targets.figures}' failed ({e.strerror or e}); draw them "
                          "later from the results file") from None


_STAGES = (("setup_time_s", "set-up"), ("compile_time_s", "compile"),
           ("stepping_time_s", "stepping"), ("solve_time_s", "solve"),
           ("writing_time_s", "writing"))


def stage_line(meta: dict) -> str:
    """``times: set-up X s, compile Y s, stepping Z s, writing W s`` from a run's
    metadata (the stages it has), with the persistent compilation cache's verdict."""
    parts = [f"{label} {meta[key]:.2f} s" for key, label in _STAGES
             if meta.get(key) is not None]
    cache = meta.get("compile_cache")
    return "times: " + ", ".join(parts) + (f"; compilation cache: {cache}" if cache else "")


def _print_speed(meta: dict) -> None:
    print(stage_line(meta))
    if meta.get("per_frequency"):  # an FDFD sweep: iterations and compilations each
        print("per frequency: " + ", ".join(
            f"{p['frequency_hz'] / 1e9:.4g} GHz {p['iterations']} it"
            + (f" ({p['compiles']} compiles)" if p.get("compiles") else "")
            for p in meta["per_frequency"]))
    if meta.get("wall_time_s") is not None:
        print(f"wall time: {meta['wall_time_s']:.2f} s"
              + (f" (compile {meta['compile_time_s']:.2f} s)"
                 if meta.get("compile_time_s") is not None else ""))
    if meta.get("cells_per_s") is not None:
        print(f"speed: {meta['cells_per_s'] / 1e6:.1f} Mcells/s"
              + (f" on {meta['device']}" if meta.get("device") else ""))


__all__ = ["RunTargets", "cmd_run", "format_validation_error", "resolve_scenario",
           "scenario_differences", "warnings_as_lines", "with_max_iter", "with_steps"]
