"""The fractioned local matrices formed with jax.numpy (on an accelerator, the set-up's
device path of ``dga/mass.py``) against NumPy (the CPU path): the same operators to
float64 rounding, on a lossy box with two node buckets and on the cylinder's ring mesh."""

from __future__ import annotations

import numpy as np
import pytest

from emjax.constants import eps0, mu0
from emjax.dga import mass, structured
from emjax.dga.complex import build


def _ops(cx, sig, device: bool, monkeypatch):
    monkeypatch.setattr(mass, "_on_device", lambda: device)
    n = cx.num_tets
    eps = eps0 * (1 + np.arange(n) % 3)  # three media, so the tets differ
    return mass.assemble(cx, eps, np.full(n, mu0), sig, min_count=32)


@pytest.mark.parametrize("mesh", ["box", "cylinder"])
def test_device_local_matrices_equal_numpy(mesh, monkeypatch):
    from emjax.driver.precision import require_x64

    require_x64()
    if mesh == "box":
        cx = build(structured.box((0.3, 0.2, 0.25), shape=(5, 3, 2)))
    else:
        from emjax.dga.generate import build_mesh
        from emjax.scenarios import load_builtin

        cx = build(build_mesh(load_builtin("cylinder-cavity").mesh))
    sig = np.where(np.arange(cx.num_tets) % 4 == 0, 0.02, 0.0)
    ref = _ops(cx, sig, False, monkeypatch)
    dev = _ops(cx, sig, True, monkeypatch)
    for name in ("A", "Mmu"):
        a, b = getattr(ref, name), getattr(dev, name)
        assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(a)), name
    assert len(ref.buckets) == len(dev.buckets) >= 1
    for br, bd in zip(ref.buckets, dev.buckets, strict=True):
        for name in ("Minv_s", "Meps", "Msig"):
            a, b = getattr(br, name), getattr(bd, name)
            assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(a)), name
        assert np.array_equal(br.free, bd.free) and np.array_equal(br.edge, bd.edge)
