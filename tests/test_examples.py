"""Every script in examples/ runs at its small size, writes its figure into --out and
nothing elsewhere, prints its one-line summary and passes its own physics check.

The scripts run in this process (``runpy``: JAX and emjax are imported once for all of
them); each returns ``{"passed": bool, "figures": [paths], ...}`` from ``main(argv)``.
At their small sizes they are resolved well enough that emjax warns about nothing
(``mri_coil`` silences its coarse-grid warning on purpose, saying why).
"""

from __future__ import annotations

import runpy
import warnings
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))
NEEDS = {"dgatd_cavity": "gmsh"}  # example -> optional dependency it cannot run without
PNG = b"\x89PNG\r\n\x1a\n"


def test_the_gallery_lists_every_example():
    gallery = (EXAMPLES.parent / "docs" / "gallery.md").read_text()
    assert len(NAMES) >= 10
    for name in NAMES:
        assert f"examples/{name}.py" in gallery, name
        assert f"gallery/{name}.png" in gallery, name
        assert (EXAMPLES.parent / "docs" / "gallery" / f"{name}.png").stat().st_size < 150_000


@pytest.mark.parametrize("name", NAMES)
def test_example_runs_at_its_small_size(name, tmp_path, monkeypatch, capsys):
    import jax

    from emjax.errors import EmjaxWarning

    if name in NEEDS:
        pytest.importorskip(NEEDS[name])
    cwd, out = tmp_path / "cwd", tmp_path / "out"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # the default --out would land here: it must stay empty
    main = runpy.run_path(str(EXAMPLES / f"{name}.py"))["main"]
    x64 = jax.config.read("jax_enable_x64")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", EmjaxWarning)
            result = main(["--out", str(out)])
    finally:
        jax.config.update("jax_enable_x64", x64)  # FDFD's complex128 switches it on
    printed = capsys.readouterr().out.strip().splitlines()
    assert not [str(w.message) for w in caught if issubclass(w.category, EmjaxWarning)]
    assert len(printed) == 1 and printed[0].startswith(f"{name}: "), printed
    assert result["passed"], printed[0]
    assert result["figures"]
    for fig in result["figures"]:
        fig = Path(fig)
        assert fig.parent == out and fig.suffix == ".png"
        assert fig.read_bytes()[:8] == PNG and fig.stat().st_size > 20_000
    assert not any(cwd.iterdir()), sorted(cwd.iterdir())
