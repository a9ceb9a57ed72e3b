"""MkDocs hook: the pages generated from the code and the repository's own records.

Generated at every build (nothing is written into ``docs/``, so nothing can go stale):

- ``reference/scenario.md``: :func:`emjax.model.reference.scenario_reference`, from the
  pydantic models;
- ``reference/cli.md``: the help of ``emjax`` and of every subcommand, from
  :func:`emjax.cli.build_parser`;
- ``validation.md`` and ``benchmarks.md``: README.md's "Validation" and "Benchmarks"
  sections; ``benchmarks-record.md``: BENCHMARKS.md; ``changelog.md``: CHANGELOG.md.

The emjax imported is the one in this checkout's ``src/`` (put first on ``sys.path``),
also where another emjax is installed.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]


def _checkout_first() -> None:
    """Put this checkout's src/ first on sys.path (MkDocs restores sys.path after it
    loads a hook module, so this runs in the events)."""
    if str(ROOT / "src") not in sys.path:
        sys.path.insert(0, str(ROOT / "src"))


def readme_section(title: str) -> str:
    """The README section ``## title`` (up to the next ``## ``) as a page: its heading
    raised to ``#``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if m is None:
        raise ValueError(f"README.md has no section '## {title}'")
    return f"# {title}\n{m.group(1)}"


def _links_to_repo_files(text: str) -> str:
    """Links from README and CHANGELOG to repository files outside docs/ as code."""
    return re.sub(r"\[([^\]]+)\]\((?!https?://|#)([^)]+)\)",
                  lambda m: m.group(0) if m.group(2).startswith("docs/") else f"`{m.group(2)}`",
                  text)


def cli_page() -> str:
    """``emjax --help`` and the help of every subcommand, as argparse prints them at a
    width of 100 columns."""
    from emjax.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        parser = build_parser()
        out = ["# Command line", "",
               "Generated from the `emjax` parser when the site is built; the same text as "
               "`emjax --help` and `emjax COMMAND --help`. Exit status: 0 done, 1 a "
               "validation check failed, 2 a problem with the input or the set-up, 130 "
               "interrupted, 3 a defect of emjax itself (`EMJAX_DEBUG=1` shows the "
               "traceback).", "", "## emjax", "", "```text", parser.format_help().rstrip(),
               "```", ""]
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        for name, p in sub.choices.items():
            out += [f"## emjax {name}", "", "```text", p.format_help().rstrip(), "```", ""]
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    listing = io.StringIO()
    from emjax.cli import main

    with contextlib.redirect_stdout(listing):
        main(["list"])
    out += ["## Built-in scenarios and cases", "", "`emjax list` prints:", "", "```text",
            listing.getvalue().rstrip(), "```", ""]
    return "\n".join(out)


def generated_pages() -> dict[str, str]:
    """Every generated page by its path under docs/."""
    from emjax.model.reference import scenario_reference

    record = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return {
        "reference/scenario.md": scenario_reference(),
        "reference/cli.md": cli_page(),
        "validation.md": _links_to_repo_files(readme_section("Validation")),
        "benchmarks.md": _links_to_repo_files(readme_section("Benchmarks")).replace(
            "`BENCHMARKS.md`", "[BENCHMARKS.md](benchmarks-record.md)"),
        "benchmarks-record.md": _links_to_repo_files(record),
        "changelog.md": _links_to_repo_files(changelog),
    }


_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):(<code>)~?")


def on_page_content(html, page, config, files):
    """Sphinx roles in docstrings (``:class:`X```) rendered as plain code (MkDocs hook):
    mkdocstrings leaves the role's name in front of the code span."""
    return _ROLE.sub(r"\1", html)


def on_files(files, config):
    """Add the generated pages to the build (MkDocs hook)."""
    _checkout_first()
    for path, text in generated_pages().items():
        files.append(File.generated(config, path, content=text))
    return files
