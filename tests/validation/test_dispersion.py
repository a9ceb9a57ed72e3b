"""`emjax validate tissue-fit` passes: every library tissue's pole fit within 1% of its
Cole-Cole eps' and sigma over 10 MHz-3 GHz, and muscle's quoted values (pure NumPy)."""

from __future__ import annotations

from emjax.materials import TISSUES
from emjax.validation import CASES, run_case


def test_tissue_fit_case_passes():
    assert "tissue-fit" in CASES
    recs = run_case("tissue-fit")
    assert len(recs) == 2 * len(TISSUES) + 2
    for r in recs:
        print(r["metric"], f"{r['value']:.4g}", r.get("poles", ""))
    assert all(r["pass"] for r in recs), [dict(r) for r in recs if not r["pass"]]
