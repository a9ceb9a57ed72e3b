"""The documentation's Python code runs as written.

Every ```` ```python ```` block of docs/index.md and the tutorials (docs/tutorials/)
runs, in page order, in one namespace per page, in an empty folder, with
``EmjaxWarning`` raised as an error (a tutorial should not teach a set-up emjax warns
about). A block that cannot run on a CPU (several devices, a file the reader brings)
is preceded by ``<!-- not run: reason -->``; nothing else is skipped. The pages print
what they measure (RCS against Mie, cavity modes against Bessel zeros); the numbers
the text quotes are the validation cases', checked there.

The tutorials run at small sizes: about 40 s of CPU time for all pages together
(measured on a shared 2-core machine; most of it is JIT compilation, one per run), so
the runs are marked slow.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"(<!-- not run: [^>]+-->\n)?```python\n(.*?)```", re.S)


def pages() -> list[Path]:
    """The pages whose code runs: the home page and the tutorials (the gallery shows the
    examples/ scripts, which their own test runs)."""
    return [DOCS / "index.md", *sorted((DOCS / "tutorials").glob("*.md"))]


def blocks(page: Path) -> list[tuple[bool, str]]:
    """(runs, code) of every python block of ``page``."""
    return [(not skip, code) for skip, code in BLOCK.findall(page.read_text(encoding="utf-8"))]


def test_every_page_with_code_runs_some_of_it():
    names = {p.relative_to(DOCS).as_posix() for p in pages()}
    assert {"index.md", "tutorials/fdtd3d.md", "tutorials/fdtd2d.md", "tutorials/fdfd3d.md",
            "tutorials/dgatd.md", "tutorials/rcs.md", "tutorials/sar.md",
            "tutorials/checkpoints.md", "tutorials/ports.md"} <= names
    for page in pages():
        code = blocks(page)
        assert len(code) == page.read_text(encoding="utf-8").count("```python"), page
        for _, b in code:
            compile(b, str(page), "exec")
        if page.name != "multi-gpu.md":
            assert any(runs for runs, _ in code), f"{page}: no block runs"


@pytest.mark.slow
@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_page_runs(page, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from emjax.errors import EmjaxWarning

    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__docs__"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", EmjaxWarning)
            for i, (runs, code) in enumerate(blocks(page)):
                if runs:
                    exec(compile(code, f"{page.name} python block {i}", "exec"), ns)
    finally:
        plt.close("all")
