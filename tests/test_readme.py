"""The README's Python examples run as written, in order, in one session started in an
empty folder, without an EmjaxWarning, and give the accuracy the README states.

Stated figures checked: the PEC sphere's E-plane RCS RMS from Mie ("It prints X dB
RMS from Mie", to 0.05 dB) and FDFD's iteration count ("N iterations here"). About
40-55 s on 2 CPU cores (the 3D runs, FDFD and the DGATD cavity): marked slow.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def claim(pattern: str) -> float:
    m = re.search(pattern, README.read_text(encoding="utf-8"))
    assert m, f"README.md no longer states {pattern!r}"
    return float(m.group(1).replace(",", ""))


def test_blocks_compile_and_claims_are_stated():
    assert len(blocks()) >= 3
    for i, b in enumerate(blocks()):
        compile(b, f"README.md python block {i}", "exec")
    assert claim(r"It prints ([0-9.]+) dB RMS from Mie") > 0
    assert claim(r"([0-9,]+) iterations here") > 0


@pytest.mark.slow
def test_examples_run_as_written(tmp_path, monkeypatch, capsys):
    from emjax.errors import EmjaxWarning

    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__readme__"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", EmjaxWarning)
        for i, b in enumerate(blocks()):
            exec(compile(b, f"README.md python block {i}", "exec"), ns)
    assert (tmp_path / "out" / "sim.h5").is_file()
    printed = re.search(r"([0-9.]+) dB RMS from Mie", capsys.readouterr().out)
    assert printed, "the PEC-sphere example printed no RMS"
    stated = claim(r"It prints ([0-9.]+) dB RMS from Mie")
    assert float(printed.group(1)) == pytest.approx(stated, abs=0.05), (printed.group(0), stated)
    assert ns["rf"].metadata["iterations"] == claim(r"([0-9,]+) iterations here")
