"""The transfer-matrix helper (analysis/layers.py) against closed forms:

- no layer, one interface: Fresnel r = (n_in - n_out) / (n_in + n_out), t = 1 + r;
- a quarter-wave layer of index sqrt(n_in n_out) reflects nothing at its design
  frequency, and a half-wave layer in vacuum gives t = -1 (the wave's phase e^{-j pi});
- a lossless slab conserves power, |r|^2 + (n_out / n_in) |t|^2 = 1, over a band;
- a lossy slab (Im n < 0) absorbs: |r|^2 + |t|^2 < 1;
- a thin slab in vacuum against Airy's single-layer formula written out.
"""

from __future__ import annotations

import numpy as np
import pytest

from emjax.analysis.layers import stack_rt
from emjax.constants import c0


def test_single_interface_is_fresnel():
    r, t = stack_rt([1e9, 5e9], [], [], n_in=1.0, n_out=3.0)
    np.testing.assert_allclose(r, -0.5, atol=1e-15)
    np.testing.assert_allclose(t, 0.5, atol=1e-15)


def test_quarter_and_half_wave_layers():
    f0, n_in, n_out = 2e9, 1.0, 4.0
    n = np.sqrt(n_in * n_out)
    r, _ = stack_rt([f0], [n], [c0 / f0 / (4 * n)], n_in=n_in, n_out=n_out)
    assert abs(r[0]) < 1e-14
    r, t = stack_rt([f0], [3.0], [c0 / f0 / (2 * 3.0)])
    assert abs(r[0]) < 1e-14 and abs(t[0] + 1) < 1e-14


@pytest.mark.parametrize("n_out", [1.0, 2.5])
def test_lossless_stack_conserves_power(n_out):
    f = np.linspace(0.1e9, 20e9, 200)
    r, t = stack_rt(f, [2.0, 1.3 * np.ones_like(f), 3.1], [7e-3, 2e-3, 4e-3], n_out=n_out)
    np.testing.assert_allclose(np.abs(r) ** 2 + n_out * np.abs(t) ** 2, 1, atol=1e-13)
    assert np.ptp(np.abs(r)) > 0.3  # the band spans the slab's resonances


def test_lossy_slab_absorbs_and_matches_airy():
    f = np.linspace(1e9, 10e9, 50)
    n, h = 2.0 - 0.3j, 5e-3
    r, t = stack_rt(f, [n], [h])
    assert np.all(np.abs(r) ** 2 + np.abs(t) ** 2 < 1 - 1e-3)
    # Airy (Born and Wolf 1.6 (57)), e^{+j omega t}: t = t01 t12 e^{-j b} / (1 + r01 r12 e^{-2 j b})
    b = 2 * np.pi * f / c0 * n * h
    r01, r12 = (1 - n) / (1 + n), (n - 1) / (n + 1)
    t_airy = (2 / (1 + n)) * (2 * n / (n + 1)) * np.exp(-1j * b) / (1 + r01 * r12 * np.exp(-2j * b))
    r_airy = (r01 + r12 * np.exp(-2j * b)) / (1 + r01 * r12 * np.exp(-2j * b))
    np.testing.assert_allclose(t, t_airy, rtol=1e-12)
    np.testing.assert_allclose(r, r_airy, rtol=1e-12, atol=1e-14)
