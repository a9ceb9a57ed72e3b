"""B1+ and SAR maps (emjax.analysis.sar) against closed forms and a brute-force loop.

- interpolation onto cell centres reproduces a linear field exactly;
- a clockwise rotating field B (cos wt, -sin wt), transformed from its samples in time,
  gives |B1+| = B and B1- = 0 to the DFT's accuracy, and the reverse sense swaps them;
- uniform |E| in a uniform block: local, averaged and peak 10 g SAR all equal
  sigma E^2 / (2 rho);
- peak averaged SAR on a random block equals a direct voxel-by-voxel cube search.
"""

from __future__ import annotations

import numpy as np
import pytest

from emjax.analysis.sar import (
    average_sar,
    b1_minus,
    b1_plus,
    cell_centres,
    interpolate_axis,
    local_sar,
    peak_average_sar,
    to_common_grid,
)
from emjax.constants import mu0


def test_linear_field_moves_to_cell_centres_exactly():
    d = 0.01
    xi, xh = np.arange(6) * d, (np.arange(5) + 0.5) * d
    axes = {"Ex": (xh, xi, xi), "Ey": (xi, xh, xi), "Ez": (xi, xi, xh)}

    def f(x, y, z):
        return 2 * x - 3 * y + 5 * z + 1

    arrays = {c: f(*np.meshgrid(*a, indexing="ij")) for c, a in axes.items()}
    tgt = cell_centres(axes)
    assert all(np.allclose(t, xh) for t in tgt)
    out = to_common_grid(arrays, axes, tgt)
    ref = f(*np.meshgrid(*tgt, indexing="ij"))
    for c in out:
        np.testing.assert_allclose(out[c], ref, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="leave the sampled range"):
        interpolate_axis(arrays["Ex"], xh, xi, 0)


@pytest.mark.parametrize("sense", [+1, -1])
def test_b1_plus_picks_the_clockwise_component(sense):
    f, B = 128e6, 2e-6
    t = np.arange(4000) * (1 / f / 40)  # 100 periods, 40 samples each
    Bx, By = B * np.cos(2 * np.pi * f * t), -sense * B * np.sin(2 * np.pi * f * t)
    kernel = np.exp(-2j * np.pi * f * t) * (t[1] - t[0])
    Hx, Hy = (np.sum(b * kernel) / mu0 for b in (Bx, By))
    scale = t[-1] + t[1] - t[0]  # the DFT of cos over whole periods is amplitude * T / 2
    plus, minus = abs(b1_plus(Hx, Hy)) * 2 / scale, abs(b1_minus(Hx, Hy)) * 2 / scale
    big, small = (plus, minus) if sense > 0 else (minus, plus)
    assert abs(big - B) / B < 1e-9, f"|B1| {big} T, expected {B} T"
    assert small / B < 1e-9


def test_uniform_block_sar():
    n, d = 12, 5e-3
    sigma, rho, e0 = 0.72, 1090.0, 30.0
    E = np.zeros((3, n, n, n), complex)
    E[2] = e0 * np.exp(1j * 0.3)
    sig, den = np.full((n, n, n), sigma), np.full((n, n, n), rho)
    expected = sigma * e0**2 / (2 * rho)
    np.testing.assert_allclose(local_sar(E, sig, den), expected, rtol=1e-14)
    assert average_sar(E, sig, den, d**3) == pytest.approx(expected, rel=1e-13)
    peak, avg = peak_average_sar(local_sar(E, sig, den), den, d**3, mass=0.01)
    assert peak == pytest.approx(expected, rel=1e-12)
    assert np.isnan(avg[0, 0, 0])  # a 10 g cube (about 9 cells across) does not fit there


def _brute_force(local, rho, dv, mass):
    out = np.full(local.shape, np.nan)
    for idx in zip(*np.nonzero(rho > 0), strict=True):
        pm = pp = 0.0
        for h in range(max(local.shape)):
            sl = tuple(slice(i - h, i + h + 1) for i in idx)
            if any(i - h < 0 or i + h >= n for i, n in zip(idx, local.shape, strict=True)):
                break
            m = rho[sl].sum() * dv
            p = (local[sl] * rho[sl]).sum() * dv
            if m >= mass:
                out[idx] = (pp + (mass - pm) / (m - pm) * (p - pp)) / mass
                break
            pm, pp = m, p
    return out


def test_peak_average_sar_matches_direct_search():
    rng = np.random.default_rng(7)
    shape = (9, 8, 10)
    rho = rng.uniform(900, 1900, shape)
    rho[rng.random(shape) < 0.2] = 0.0  # some air
    local = rng.uniform(0, 3, shape) * (rho > 0)
    dv, mass = (4e-3) ** 3, 0.5e-3  # 0.5 g over cells of about 0.1 g
    peak, avg = peak_average_sar(local, rho, dv, mass)
    ref = _brute_force(local, rho, dv, mass)
    np.testing.assert_array_equal(np.isnan(avg), np.isnan(ref))
    np.testing.assert_allclose(avg[~np.isnan(ref)], ref[~np.isnan(ref)], rtol=1e-12)
    assert peak == pytest.approx(np.nanmax(ref), rel=1e-12)
