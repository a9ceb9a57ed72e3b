"""The ``emjax`` command: a thin layer over plain functions.

``emjax run``, ``plot``, ``validate``, ``bench``, ``info`` and ``list`` each call a function
``cmd_<name>(args) -> int`` that tests call directly with a namespace from
:func:`build_parser`. Nothing runs at import, and JAX is imported only by the
commands that need it.

Exit status: 0 success; 1 a validation record failed or a case raised an emjax
error; 2 a usage or set-up problem (unknown name, invalid scenario), reported as
one paragraph on stderr without a traceback (an invalid scenario: one line per
problem); 3 a defect of emjax itself (any other exception), one line too, the
traceback only with ``EMJAX_DEBUG=1``.

With ``--json``, ``validate`` and ``bench`` print exactly one JSON document on
stdout, a list of records (``{"case", "metric", "value", "limit", "bound", "unit", "pass"}``
and ``{"case", "size", "metric", "value", "unit", "device"}``, :mod:`emjax.records`);
anything the cases print goes to stderr. The environment variables that set case
parameters are read here only (:func:`case_options`).

``emjax run`` (:mod:`emjax.cli_run`) checks every file it will write before computing,
and writes the figures and other files of a run through the output hooks of
:mod:`emjax.outputs`; it knows no scenario or solver by name. Its compiled executables
go to JAX's persistent compilation cache in ``$EMJAX_CACHE_DIR`` (``off``: none; unset:
the user cache folder's ``emjax/jax``), read here and passed down as ``args.cache_dir``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import platform
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import ValidationError

from . import __version__
from .cli_run import (  # noqa: F401 - emjax.cli.<name> for tests and callers
    cmd_run,
    format_validation_error,
    resolve_scenario,
    with_steps,
)
from .errors import EmjaxError, SetupError
from .model.base import did_you_mean

# ----------------------------------------------------------------- helpers


def error_message(err: BaseException) -> str:
    """The message printed for a user-facing error: one paragraph, except that the
    problems of an invalid scenario take one indented line each."""
    text = format_validation_error(err) if isinstance(err, ValidationError) else str(err)
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return "\n  ".join(line for line in lines if line)


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} must be >= 1")
    return n


def _jsonable(obj: Any) -> Any:
    """Plain JSON values: NumPy scalars and arrays unwrapped, non-finite floats -> null."""
    if isinstance(obj, Mapping):  # a dict or an emjax.records record
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "tolist") and not isinstance(obj, str):  # NumPy scalar or array
        return _jsonable(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    return str(obj)


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list | tuple):
        return "x".join(_fmt(x) for x in v)
    return str(v)


class _Table:
    """A table printed with rich a few rows at a time (each case's as it finishes), every
    column at a fixed width so that rows printed apart line up; a longer cell wraps
    inside its column. ``widths``: characters per column, None for the one column that
    takes the rest of the terminal (at least 24)."""

    def __init__(self, columns: Sequence[str], widths: Sequence[int | None]):
        from rich.console import Console

        fixed = sum(w for w in widths if w) + 2 * (len(widths) - 1)
        flexible = max(24, Console().width - fixed)
        self.columns = list(columns)
        self.widths = [w or flexible for w in widths]
        self.console = Console(width=fixed + flexible, highlight=False)

    def print(self, rows: Sequence[Sequence[Any]], header: bool = False) -> None:
        """Print ``rows`` (strings or rich Text; no markup is read from strings)."""
        from rich.table import Table
        from rich.text import Text

        table = Table(box=None, show_header=header, header_style="bold", pad_edge=False,
                      padding=(0, 2, 0, 0), collapse_padding=True)
        for name, w in zip(self.columns, self.widths, strict=True):
            table.add_column(name, width=w, overflow="fold")
        for r in rows:
            table.add_row(*(c if isinstance(c, Text) else Text(str(c)) for c in r))
        with self.console.capture() as out:  # rich pads every line to the table's width
            self.console.print(table)
        print("\n".join(line.rstrip() for line in out.get().splitlines()), flush=True)


# --------------------------------------------------------- validate, bench

_VALIDATE_COLUMNS = ("case", "metric", "value", "limit", "unit", "result")
_VALIDATE_WIDTHS = (27, None, 10, 12, 5, 6)
_BENCH_COLUMNS = ("case", "size", "metric", "value", "unit", "device")
_BENCH_WIDTHS = (24, 14, None, 10, 10, 16)


def _case_module(module: str) -> ModuleType:
    """Import ``emjax.validation`` or ``emjax.bench``; SetupError if it is absent."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:
            raise
        raise SetupError(f"{module} is not available in this installation of emjax") from e


def _select(cases: dict, name: str, what: str) -> list[str]:
    if name == "all":
        return list(cases)
    if name not in cases:
        known = ", ".join(cases) or "(none)"
        raise SetupError(f"unknown {what} case '{name}'{did_you_mean(name, cases)} (known: "
                         f"{known}, or 'all')")
    return [name]


def case_options(args: argparse.Namespace, env: Mapping[str, str]) -> dict[str, Any]:
    """Options ``validate`` and ``bench`` pass to the cases that take them (see
    :func:`emjax.records.call_case`); a case's own default stands for any left out.

    ``figures``: ``--figures DIR``, else ``$EMJAX_FIGURES`` (else, for ``bench``,
    ``$EMJAX_BENCH_OUT``). ``bench`` also reads ``$EMJAX_FDFD_SIZES`` (``64,80,96``:
    ``fdfd_sizes``) and ``$EMJAX_FDFD_CANDIDATES`` (``0``: ``fdfd_candidates=False``).
    These are the only places the environment sets a case's parameters.
    """
    bench = args.command == "bench"
    opts: dict[str, Any] = {}
    figures = args.figures or env.get("EMJAX_FIGURES") or (
        env.get("EMJAX_BENCH_OUT") if bench else None)
    if figures:
        opts["figures"] = Path(figures)
    if bench and env.get("EMJAX_FDFD_SIZES"):
        try:
            opts["fdfd_sizes"] = tuple(int(v) for v in env["EMJAX_FDFD_SIZES"].split(","))
        except ValueError:
            raise SetupError(f"EMJAX_FDFD_SIZES='{env['EMJAX_FDFD_SIZES']}' must be cells "
                             "per side separated by commas, e.g. 64,80,96") from None
    if bench and "EMJAX_FDFD_CANDIDATES" in env:
        opts["fdfd_candidates"] = env["EMJAX_FDFD_CANDIDATES"] != "0"
    return opts


def _run_cases(args: argparse.Namespace, mod: ModuleType, names: list[str],
               failure: Callable[..., Any], on_records: Callable[[list], None]) -> list:
    """Run each case with :func:`case_options`; an EmjaxError becomes a ``failure``
    record and the others go on. Records may be :mod:`emjax.records` types or dicts."""
    from .records import call_case

    opts = case_options(args, os.environ)
    run_case = getattr(mod, "run_case", None)
    records: list = []
    # With --json, stdout carries the one document: anything the cases print goes to stderr.
    quiet = contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext()
    for n in names:
        with quiet:
            try:
                recs = list(run_case(n, **opts) if run_case else call_case(mod.CASES[n], **opts))
            except EmjaxError as e:
                msg = error_message(e)
                print(f"{n}: {type(e).__name__}: {msg}", file=sys.stderr)
                recs = [failure(n, f"{type(e).__name__}: {msg}")]
        records.extend(recs)
        if not args.json:
            on_records(recs)
    return records


def cmd_validate(args: argparse.Namespace) -> int:
    """Run validation cases; exit 1 if any record fails."""
    from rich.text import Text

    from .records import Check, limit_text

    mod = _case_module("emjax.validation")
    names = _select(mod.CASES, args.name, "validation")
    table = _Table(_VALIDATE_COLUMNS, _VALIDATE_WIDTHS)

    def show(recs: list) -> None:
        table.print([[r.get("case", ""), r.get("metric", ""), _fmt(r.get("value")),
                      limit_text(r.get("limit"), r.get("bound", "<=")), r.get("unit") or "",
                      Text("PASS", "green") if r.get("pass") else Text("FAIL", "bold red")]
                     for r in recs])

    if not args.json:
        table.print([], header=True)
    records = _run_cases(args, mod, names, Check.failure, show)
    failed = [r for r in records if not r.get("pass")]
    if args.json:
        print(json.dumps(_jsonable(records), indent=2, allow_nan=False))
    else:
        print(f"{len(records) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def cmd_bench(args: argparse.Namespace) -> int:
    """Run benchmark cases; exit 1 if a case raised an emjax error."""
    from .records import Measurement

    mod = _case_module("emjax.bench")
    names = _select(mod.CASES, args.name, "benchmark")

    table = _Table(_BENCH_COLUMNS, _BENCH_WIDTHS)

    def show(recs: list) -> None:
        table.print([[r.get("case", ""), _fmt(r.get("size")), r.get("metric", ""),
                      _fmt(r.get("value")), r.get("unit") or "", _fmt(r.get("device"))]
                     for r in recs])

    if not args.json:
        table.print([], header=True)
    records = _run_cases(args, mod, names, Measurement.failure, show)
    if args.json:
        print(json.dumps(_jsonable(records), indent=2, allow_nan=False))
    return 1 if any("error" in r for r in records) else 0


# -------------------------------------------------------------- info, list


def info() -> dict:
    """Versions, JAX backend and devices (with memory where the device reports it; a
    CPU device shows the host's, from psutil: total and in use)."""
    import jax
    import jaxlib
    import numpy
    import psutil

    devices = []
    for d in jax.devices():
        entry: dict[str, Any] = {"id": d.id, "platform": d.platform, "kind": d.device_kind,
                                 "process": d.process_index}
        stats = d.memory_stats() if hasattr(d, "memory_stats") else None
        if stats:
            entry["memory"] = {k: int(stats[k]) for k in
                               ("bytes_limit", "bytes_in_use", "peak_bytes_in_use") if k in stats}
        elif d.platform == "cpu":  # XLA's CPU client reports none: the host's memory
            vm = psutil.virtual_memory()
            entry["memory"] = {"bytes_limit": int(vm.total),
                               "bytes_in_use": int(vm.total - vm.available)}
        devices.append(entry)
    return {
        "versions": {"emjax": __version__, "jax": jax.__version__,
                     "jaxlib": getattr(jaxlib, "__version__", "unknown"),
                     "numpy": numpy.__version__, "python": platform.python_version()},
        "backend": jax.default_backend(),
        "process_count": jax.process_count(),
        "x64": bool(jax.config.jax_enable_x64),
        "devices": devices,
    }


def cmd_info(args: argparse.Namespace) -> int:
    """Print :func:`info` as text or JSON."""
    data = info()
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    for k, v in data["versions"].items():
        print(f"{k:<8}{v}")
    print(f"{'backend':<8}{data['backend']} ({data['process_count']} process"
          f"{'es' if data['process_count'] != 1 else ''}, x64 {'on' if data['x64'] else 'off'})")
    for d in data["devices"]:
        mem = d.get("memory", {})
        limit = mem.get("bytes_limit")
        extra = (f", {limit / 2**30:.1f} GiB, {mem.get('bytes_in_use', 0) / 2**30:.2f} GiB in use"
                 if limit else "")
        print(f"device  {d['platform']}:{d['id']} {d['kind']}{extra}")
    return 0


def _case_names(module: str) -> str:
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        return f"(not available: {e})"
    return ", ".join(mod.CASES) or "(none)"


def cmd_list(args: argparse.Namespace) -> int:
    """Built-in scenarios and validation/benchmark case names."""
    from .scenarios import DEFAULT, builtin_names, describe

    names = builtin_names()
    width = max((len(n) for n in names), default=0)
    print("Built-in scenarios (emjax run NAME):")
    for n in names:
        tag = " [default]" if n == DEFAULT else ""
        print(f"  {n:<{width}}  {describe(n)}{tag}")
    print("Validation cases (emjax validate NAME|all):")
    print(f"  {_case_names('emjax.validation')}")
    print("Benchmark cases (emjax bench NAME|all):")
    print(f"  {_case_names('emjax.bench')}")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    """Draw a scenario's cross-section into a PNG (:func:`emjax.preview.save_preview`);
    the output is checked before anything is drawn."""
    from .preview import save_preview

    sim, name = resolve_scenario(args.scenario)
    plane = {a: getattr(args, a) for a in "xyz" if getattr(args, a) is not None}
    inputs = [args.scenario] if args.scenario and Path(args.scenario).is_file() else []
    path = save_preview(sim, args.output or Path("out") / f"{name}_preview.png", **plane,
                        overwrite=args.overwrite, inputs=inputs, what="--output",
                        flag="--overwrite")
    print(path)
    return 0


# ------------------------------------------------------------------ parser


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="emjax", description="Maxwell solvers in JAX: run scenarios, validate, benchmark."
    )
    p.add_argument("--version", action="version", version=f"emjax {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser("run", help="run a scenario file or a built-in scenario")
    r.add_argument("scenario", nargs="?", metavar="SCENARIO|NAME",
                   help="a .toml/.json file or a built-in name (default: the default built-in)")
    r.add_argument("--output", "-o", metavar="PATH", help="HDF5 results (default out/<name>.h5)")
    r.add_argument("--steps", type=_positive_int, metavar="N",
                   help="run N time steps instead of the scenario's duration")
    r.add_argument("--max-iter", type=_positive_int, metavar="N",
                   help="FDFD: stop the Krylov solve after at most N iterations")
    r.add_argument("--figures", metavar="DIR", help="figure directory (default: the output's)")
    r.add_argument("--no-figures", action="store_true", help="draw no figures (the results, "
                   "ParaView and S-matrix files are still written): batch runs and sweeps")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    r.add_argument("--dry-run", action="store_true",
                   help="print the device memory the run needs, and whether it fits; run nothing")
    r.add_argument("--checkpoint-every", type=_positive_int, metavar="N",
                   help="write a checkpoint every N steps")
    r.add_argument("--checkpoint", metavar="PATH",
                   help="checkpoint file (default: beside the output, <stem>.ckpt.h5)")
    r.add_argument("--resume", metavar="FILE",
                   help="continue the run saved in this checkpoint (its scenario is used; a "
                        "SCENARIO given too must be the same)")
    r.add_argument("--overwrite", action="store_true",
                   help="replace existing output files (results, checkpoint, partial results, "
                        "figures of the same stem); without it an existing file refuses the "
                        "run before it starts")
    r.add_argument("--devices", type=_positive_int, metavar="N",
                   help="shard the grid over the first N devices (FDTD3D)")
    r.add_argument("--shard-axis", choices=("x", "y", "z"), default="x",
                   help="grid axis split between devices (default x)")
    r.add_argument("--distributed", action="store_true",
                   help="join a multi-process job (SLURM, mpirun or EMJAX_COORDINATOR/"
                        "EMJAX_NUM_PROCESSES/EMJAX_PROCESS_ID) and shard over all its devices")
    r.add_argument("--no-cache", action="store_true",
                   help="compile without JAX's persistent compilation cache (default: on, in "
                        "$EMJAX_CACHE_DIR, else the user cache folder's emjax/jax; "
                        "EMJAX_CACHE_DIR=off also switches it off)")
    r.set_defaults(func=cmd_run)

    v = sub.add_parser("validate", help="run validation cases against references")
    v.add_argument("name", metavar="NAME|all")
    v.add_argument("--json", action="store_true", help="one JSON list of records on stdout")
    v.add_argument("--figures", metavar="DIR",
                   help="folder of the figures cases draw (default $EMJAX_FIGURES, else out)")
    v.set_defaults(func=cmd_validate)

    b = sub.add_parser("bench", help="run benchmark cases")
    b.add_argument("name", metavar="NAME|all")
    b.add_argument("--json", action="store_true", help="one JSON list of records on stdout")
    b.add_argument("--figures", metavar="DIR",
                   help="folder of the figures cases draw (default $EMJAX_FIGURES, else "
                        "$EMJAX_BENCH_OUT, else each case's own)")
    b.set_defaults(func=cmd_bench)

    pl = sub.add_parser("plot", help="draw a scenario's cross-section (structures, "
                        "sources, monitors, PML) into a PNG; runs nothing")
    pl.add_argument("scenario", nargs="?", metavar="SCENARIO|NAME",
                    help="a .toml/.json file or a built-in name (default: the default built-in)")
    where = pl.add_mutually_exclusive_group()
    for a in "xyz":
        where.add_argument(f"--{a}", type=float, metavar="VALUE",
                           help=f"the plane {a} = VALUE (m); default z through the centre")
    pl.add_argument("--output", "-o", metavar="FILE.png",
                    help="the PNG (default out/<name>_preview.png)")
    pl.add_argument("--overwrite", action="store_true", help="replace an existing file")
    pl.set_defaults(func=cmd_plot)

    i = sub.add_parser("info", help="versions, JAX backend and devices")
    i.add_argument("--json", action="store_true", help="print JSON")
    i.set_defaults(func=cmd_info)

    ls = sub.add_parser("list", help="built-in scenarios and case names")
    ls.set_defaults(func=cmd_list)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``emjax`` command; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, usage errors
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    from .driver.backend import on_demand_pool

    on_demand_pool()  # every command, before JAX's backend starts (bench times a copy first)
    if args.command == "run":  # the compilation cache's folder: None is the user cache
        args.cache_dir = "off" if args.no_cache else os.environ.get("EMJAX_CACHE_DIR") or None
    try:
        return args.func(args)
    except (EmjaxError, ValidationError) as e:
        print(f"emjax {args.command}: error: {error_message(e)}", file=sys.stderr)
        return 2
    except Exception as e:  # a defect of emjax, not of the input: still no traceback
        if os.environ.get("EMJAX_DEBUG"):
            raise
        print(f"emjax {args.command}: internal error: {type(e).__name__}: "
              f"{error_message(e)[:300]}; this is a bug in emjax: please report it with the "
              "scenario (EMJAX_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
