"""A waveguide port's mode from the 2D eigenmode solver: tables on the Yee grid.

:class:`SolvedMode` implements the mode interface of :mod:`emjax.analysis.waveguide`
(``profile``, ``beta``, ``impedance``, ``half_cell``, ``cutoff_frequency``, ``attrs``)
for a mode that :mod:`emjax.eigenmode` computed on the port's own Yee cross-section
(``emjax.fdtd.modeport`` builds it). It holds plain arrays, so it travels in a port's
record and is rebuilt by :func:`emjax.analysis.waveguide.mode_from_attrs`.

- Profile: the solved transverse E and H at the mode frequency, each normalized to unit
  sum of squares times du dv over the Yee positions (e and h separately: in an
  inhomogeneous guide, a microstrip, H_t is not n x E_t / Z pointwise). A forward wave
  is E_t = V e, H_t = (V / Z) h; the port's V and I are the projections on e and h.
- beta and Z: the 2D solver is the Yee grid's transverse problem with a continuous
  axial derivative and time. Solved at the grid's discrete frequency
  W = (2/dt) sin(w dt/2) it returns the grid's discrete axial wavenumber
  K = (2/dn) sin(beta dn/2) (the relations of ``RectangularMode.on_grid``), so
  beta = (2/dn) arcsin(K dn/2) is the 3D grid's own. The solves at a few frequencies
  across the band are tabulated as X = K^2 - (W/c0)^2 n_max^2 and
  zeta = Z K / (W mu0), both constant for a homogeneously filled guide's TE mode
  (X = -kc^2) and for a TEM line (X = 0, zeta = 1/mu_r), smooth for a quasi-TEM one; a
  cubic spline in f interpolates them, held constant beyond the table.
- Z is the projected wave impedance (sum E_t(f) . e dA) / (sum H_t(f) . h dA) of the
  mode solved at f against the fixed profile, which is what the port's modal split
  a = (V + Z I) / 2 needs for the fixed profile to separate the waves at every f.

The profile is fixed at the mode frequency: for a TEM line (coax, any homogeneous
fill) it does not change with frequency, and the port is exact; for a quasi-TEM line
(microstrip) the field shape drifts slowly with f, so away from the mode frequency
the launched sheet is not exactly the mode there: the part that is not couples to
evanescent and, for a mismatch of the projected Z, backward waves, of relative size
about the profile's change 1 - |<e(f), e(f0)>|, which ``emjax.fdtd.modeport`` reports
at the band edges as the port's ``profile_drift`` attribute.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline

from ..constants import c0, mu0


def _array(x) -> np.ndarray:
    return np.asarray(x, np.float64)


@dataclass(frozen=True, eq=False)
class SolvedMode:
    """A solved mode on the Yee grid (module docstring).

    ``e_u`` (nu, nv + 1), ``e_v`` (nu + 1, nv), ``h_u`` (nu + 1, nv), ``h_v``
    (nu, nv + 1): the normalized profiles at the positions of
    :mod:`emjax.eigenmode.section` (u = x, v = y there; 1/m); ``grid``: (du, dv, dn,
    dt) in m and s; ``table_f`` (Hz), ``table_x`` (1/m^2), ``table_zeta``: the
    interpolation table; ``n_max2``: the section's largest eps_r mu_r; ``frequency``:
    the mode frequency (Hz); ``index``: the mode's index (0 = fundamental); ``info``:
    JSON-able extras kept in the record (n_eff, line impedance, drift)."""

    e_u: np.ndarray
    e_v: np.ndarray
    h_u: np.ndarray
    h_v: np.ndarray
    grid: tuple[float, float, float, float]
    table_f: tuple[float, ...]
    table_x: tuple[float, ...]
    table_zeta: tuple[float, ...]
    n_max2: float
    frequency: float
    index: int = 0
    info: dict | None = None

    kind = "solved"

    # ------------------------------------------------------------- tables
    def _interp(self, values, f) -> np.ndarray:
        tf = _array(self.table_f)
        fc = np.clip(np.asarray(f, np.float64), tf[0], tf[-1])
        if len(tf) == 1:
            return np.full_like(fc, float(values[0]))
        return CubicSpline(tf, _array(values))(fc)

    def _omega_k(self, f) -> tuple[np.ndarray, np.ndarray]:
        """(W, K): the grid's angular frequency (rad/s) and axial wavenumber (rad/m),
        K = -j |K| where the mode is cut off; NaN above the time step's Nyquist
        frequency 1 / (2 dt), where W falls again and the table (held constant) would
        give a TEM mode a vanishing Z at W -> 0 (the launch's filter leaves NaN out)."""
        dt = self.grid[3]
        f = np.asarray(f, np.float64)
        w = 2 / dt * np.sin(np.pi * f * dt)
        k2 = (w / c0) ** 2 * self.n_max2 + self._interp(self.table_x, f)
        K = np.where(k2 >= 0, np.sqrt(np.abs(k2)), -1j * np.sqrt(np.abs(k2)))
        return w, np.where(f * dt > 0.5, np.nan, K)

    def beta(self, f) -> np.ndarray:
        """Propagation constant of the 3D Yee grid in rad/m at f (Hz), complex."""
        _, K = self._omega_k(f)
        return 2 / self.grid[2] * np.arcsin(K * self.grid[2] / 2 + 0j)

    def half_cell(self, f) -> tuple[np.ndarray, np.ndarray]:
        """(cos(beta dn/2), exp(j beta dn/2)), as ``RectangularMode.half_cell``."""
        _, K = self._omega_k(f)
        s = K * self.grid[2] / 2
        c = np.sqrt(1 - s**2 + 0j)
        return c, c + 1j * s

    def impedance(self, f) -> np.ndarray:
        """Projected wave impedance E_t / H_t of the forward wave in ohm at f (Hz)."""
        w, K = self._omega_k(f)
        with np.errstate(divide="ignore", invalid="ignore"):
            return self._interp(self.table_zeta, f) * w * mu0 / K

    @property
    def cutoff_frequency(self) -> float:
        """Where the tabulated X (at the table's lowest frequency) makes K vanish, Hz;
        0 for a TEM or quasi-TEM mode (X >= 0)."""
        x = float(self.table_x[0])
        if x >= 0:
            return 0.0
        w = c0 * np.sqrt(-x / self.n_max2)
        dt = self.grid[3]
        return float(np.arcsin(min(1.0, w * dt / 2)) / (np.pi * dt))

    # ------------------------------------------------------------ profile
    def profile(self, field: str, axis: str, u, v) -> np.ndarray:
        """``field`` "E" or "H", ``axis`` "u" or "v": the profile at the Yee positions
        (u, v) in m from the rectangle's lower corner (arrays broadcast; positions off
        this component's nodes, or outside the rectangle, read 0)."""
        arr = {("E", "u"): self.e_u, ("E", "v"): self.e_v,
               ("H", "u"): self.h_u, ("H", "v"): self.h_v}[(field, axis)]
        # E_u and H_v sit at (half, whole) nodes, E_v and H_u at (whole, half)
        ou, ov = (0.5, 0.0) if (field, axis) in (("E", "u"), ("H", "v")) else (0.0, 0.5)
        du, dv = self.grid[:2]
        ti = np.asarray(u, np.float64) / du - ou
        tj = np.asarray(v, np.float64) / dv - ov
        i, j = np.rint(ti).astype(int), np.rint(tj).astype(int)
        arr = _array(arr)
        ok = ((np.abs(ti - i) < 1e-6) & (np.abs(tj - j) < 1e-6) & (i >= 0) & (j >= 0)
              & (i < arr.shape[0]) & (j < arr.shape[1]))
        return np.where(ok, arr[np.where(ok, i, 0), np.where(ok, j, 0)], 0.0)

    def attrs(self) -> dict:
        """JSON-able description (:func:`mode_from_attrs` reads it back)."""
        return {"mode_type": "SolvedMode",
                **{k: _array(getattr(self, k)).tolist() for k in ("e_u", "e_v", "h_u", "h_v")},
                "grid": [float(g) for g in self.grid],
                **{k: [float(x) for x in getattr(self, k)]
                   for k in ("table_f", "table_x", "table_zeta")},
                "n_max2": float(self.n_max2), "frequency": float(self.frequency),
                "index": int(self.index), "info": dict(self.info or {})}


def solved_from_attrs(attrs: dict) -> SolvedMode:
    """The :class:`SolvedMode` of :meth:`SolvedMode.attrs` (``mode_type`` removed)."""
    a = dict(attrs)
    return SolvedMode(**{k: _array(a.pop(k)) for k in ("e_u", "e_v", "h_u", "h_v")},
                      grid=tuple(a.pop("grid")),
                      **{k: tuple(a.pop(k)) for k in ("table_f", "table_x", "table_zeta")},
                      **a)


__all__ = ["SolvedMode", "solved_from_attrs"]
