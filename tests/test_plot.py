"""Figures that show the physics (emjax.plot): what sets a colour scale, what is drawn.

* DFT plane in dB: a 1/r field beside a point dipole, with the source cell 300 times
  and its neighbours 3 times stronger than the field two cells out. Given the
  scenario, the 3 x 3 samples at the source are masked (NaN), the scale's 0 dB is
  the largest field outside them (two cells out), every other sample sits at
  ``20 log10(|E| / that)``; the sphere is outlined by the exact circle where the
  plane (z = 5 mm) cuts it, the dipole starred. Without the scenario the spike sets
  0 dB (what the old figure showed: one pixel). A strip two samples wide is drawn as
  two curves.
* Snapshots: a small multiple of the frames where the field is (zero frames before and
  after the pulse are left out), one axes per frame, one symmetric colour scale that
  a single hot cell (10^6 times the field) does not set; explicit ``frames`` give
  that many axes; a GIF holds one image per frame.
* Probe: one line per recorded component and point in the time traces and spectra.
* Energy: a log axis, the sources' turn-off marked where the waveform falls below
  1e-3 of its peak for good.
* Units: EngFormatter (m, s, Hz) on every axis drawn here; titles agree ("5 mm").
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.lines import Line2D
from matplotlib.ticker import EngFormatter

import emjax as em
from emjax import plot
from emjax.results import MonitorData

D = 0.01  # cell, m
X = np.arange(-8, 9) * D  # node positions, 17 samples through x = 0
Z = np.array([0.5 * D])  # Ez's staggered plane next to the dipole


def _scenario(**kw):
    return em.FDTD3D(
        domain=em.Domain(size=(0.2, 0.2, 0.2), spacing=D), steps=1, boundary=em.PEC(),
        structures=[em.Structure(geometry=em.Sphere(center=(0.05, 0, 0), radius=0.03),
                                 medium=em.Medium(eps_r=4))],
        sources=[em.PointDipole(position=(0, 0, 0), polarization="z",
                                waveform=em.GaussianPulse(f0=1e9, fwidth=0.5e9))], **kw)


def _field() -> np.ndarray:
    """(17, 17) 1/r field with a spike on the source cell and its 8 neighbours."""
    xx, yy = np.meshgrid(X, X, indexing="ij")
    r = np.hypot(xx, yy)
    e = np.exp(-2j * np.pi * r / 0.3) / (r + D)  # 1 / (3 D) two cells out on the axes
    e[7:10, 7:10] = 3 / (3 * D)
    e[8, 8] = 300 / (3 * D)
    return e


def _grid_md(kind: str, frames: np.ndarray, key: str, values) -> MonitorData:
    return MonitorData(name="m", kind=kind, data={"Ez": frames[..., None]},
                       coords={key: np.asarray(values, float), "x_Ez": X, "y_Ez": X,
                               "z_Ez": Z})


def _engformatted(ax, x_unit: str | None, y_unit: str | None) -> None:
    for axis, unit in ((ax.xaxis, x_unit), (ax.yaxis, y_unit)):
        if unit is not None:
            fmt = axis.get_major_formatter()
            assert isinstance(fmt, EngFormatter) and fmt.unit == unit, (fmt, unit)


def test_dft_plane_in_db_is_scaled_by_the_field_not_the_source():
    md = _grid_md("DFTMonitor", _field()[None], "f", [1e9])
    sim = _scenario()
    fig = plot.plot_slice(md, "Ez", index=0, scenario=sim)
    ax = fig.axes[0]
    img = np.asarray(ax.images[0].get_array().filled(np.nan)).T  # back to (nu, nv)
    masked = ~np.isfinite(img)
    assert np.array_equal(np.argwhere(masked), np.argwhere(np.pad(np.ones((3, 3)), 7)))
    mag = np.abs(_field())
    peak = mag[~masked].max()
    assert math.isclose(peak, 1 / (3 * D), rel_tol=1e-12)  # two cells out, not the spike
    assert np.nanmax(img) == pytest.approx(0.0, abs=1e-9)
    shown = img > -40
    assert np.allclose(img[shown], 20 * np.log10(mag[shown] / peak), atol=1e-6)
    assert ax.images[0].get_clim()[1] == 0 and ax.images[0].get_clim()[0] >= -40
    art = {a.get_gid(): a for a in ax.get_children() if a.get_gid()}
    assert math.isclose(art["structure:0"].radius, math.sqrt(0.03**2 - Z[0] ** 2))
    assert art["structure:0"].center == pytest.approx((0.05, 0.0))
    assert "source:0" in art
    assert ax.get_title().endswith("f = 1 GHz, z = 5 mm"), ax.get_title()
    _engformatted(ax, "m", "m")
    # Without the scenario nothing is masked: the spike is 0 dB, the field far below.
    bare = np.asarray(plot.plot_slice(md, "Ez", index=0).axes[0].images[0].get_array()).T
    assert bare[8, 8] == pytest.approx(0.0) and np.isfinite(bare).all()
    assert bare[6, 8] < -40  # the field two cells out, 49.5 dB down: off the 40 dB scale
    # A strip two samples wide (a 2D contour's side) is drawn as two curves along it.
    strip = MonitorData(name="side", kind="DFTMonitor", data={"Ez": _field()[None, 6:8, :, None]},
                        coords={"f": [1e9], "x_Ez": X[6:8], "y_Ez": X, "z_Ez": Z})
    ax = plot.plot_slice(strip, "Ez", index=0, axis="z").axes[0]
    assert not ax.images and len(ax.get_lines()) == 2
    assert np.nanmax(np.concatenate([ln.get_ydata() for ln in ax.get_lines()])) == 0


def test_snapshots_small_multiple_of_the_frames_holding_the_field(tmp_path):
    t = np.arange(10) * 1e-10
    amp = np.array([0, 0, 1, -2, 3, -3, 2, -1, 0, 0], float)  # the pulse passes in 2..7
    xx, yy = np.meshgrid(X, X, indexing="ij")
    frames = amp[:, None, None] * np.cos(2 * np.pi * np.hypot(xx, yy) / 0.1)[None]
    frames[4, 3, 3] = 1e6  # one hot cell must not set the scale
    md = _grid_md("FieldSnapshot", frames.astype(np.float32), "t", t)
    fig = plot.plot_snapshots(md, scenario=_scenario(), path=tmp_path / "s.png")
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 6
    assert [ax.get_title() for ax in panels] == [f"t = {k * 100} ps" for k in range(2, 8)]
    clims = {ax.images[0].get_clim() for ax in panels}
    assert len(clims) == 1
    lo, hi = clims.pop()
    assert lo == -hi and 1.0 < hi <= 3.0  # the field's scale, not the hot cell's
    for ax in panels:
        _engformatted(ax, "m", "m")
        assert any(a.get_gid() == "structure:0" for a in ax.get_children())
    assert "(6 of 10 frames)" in fig.get_suptitle()
    assert len([ax for ax in plot.plot_snapshots(md, frames=[0, 5]).axes if ax.images]) == 2
    gif = plot.save_animation(md, tmp_path / "s.gif", most=2)
    from PIL import Image

    with Image.open(gif) as im:
        assert im.format == "GIF" and im.n_frames == 2


def test_probe_figure_draws_every_component_and_point():
    nt, comps = 256, ("Ex", "Ez", "Hy")
    t = np.arange(nt) * 1e-11
    pulse = np.exp(-(((t - 1e-9) / 2e-10) ** 2)) * np.sin(2 * np.pi * 1e9 * t)
    md = MonitorData(name="p", kind="Probe",
                     data={c: np.stack([pulse * (k + 1), pulse * (k - 2)], 1)
                           for k, c in enumerate(comps)},
                     coords={"t_E": t, "t_H": t - 5e-12,
                             "points": np.array([[0, 0.05, 0], [-0.06, 0, 0]])})
    fig = plot.plot_probe(md)
    rows = fig.axes
    assert len(rows) == 2 * len(comps)
    for ax in rows:
        assert sum(isinstance(a, Line2D) for a in ax.get_lines()) == 2
    assert [ax.get_ylabel() for ax in rows[::2]] == ["Ex (V/m)", "Ez (V/m)", "Hy (A/m)"]
    legend = [tx.get_text() for tx in rows[0].get_legend().get_texts()]
    assert legend == ["(0 m, 50 mm, 0 m)", "(-60 mm, 0 m, 0 m)"]
    _engformatted(rows[0], "s", None)
    _engformatted(rows[1], "Hz", None)
    one = plot.plot_probe(md, "Hy", point=1)
    assert [len(ax.get_lines()) for ax in one.axes] == [1, 1]


def test_energy_on_a_log_axis_with_the_sources_turn_off():
    sim = _scenario()
    t = np.linspace(0, 10e-9, 500)
    e = np.exp(-(((t - 2e-9) / 0.5e-9) ** 2)) + 1e-12 * np.exp(-t / 1e-9)
    md = MonitorData(name="energy", kind="EnergyMonitor", data={"energy": e},
                     coords={"t": t})
    ax = plot.plot_energy(md, scenario=sim).axes[0]
    assert ax.get_yscale() == "log"
    _engformatted(ax, "s", None)
    (off,) = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    t_off = off.get_xdata()[0]
    w = np.abs(sim.sources[0].waveform(t))
    assert w[t > t_off].max() < 1e-3 * w.max() <= w[t == t_off][0]
    assert plot.plot_energy(md).axes[0].get_yscale() == "log"  # no scenario: no line
