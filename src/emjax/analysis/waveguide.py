"""Waveguide modes: profiles, propagation constants and wave impedances; the modal
waves of a waveguide port's record.

A mode is what a port needs of a guide's cross-section, behind one small interface
(:class:`RectangularMode` implements it analytically; a numerically computed mode,
e.g. from a 2D eigenmode solver on the Yee cross-section, can replace it by
providing the same methods):

- ``profile(field, axis, u, v)``: the transverse profile of the forward wave, E
  (``e_u``, ``e_v``) normalized to unit integral of |e|^2 over the cross-section, and
  H as ``h = n x e`` (h_u = -e_v, h_v = e_u), at local coordinates (u, v) in m from the
  rectangle's lower corner. For a forward wave E_t = V e and H_t = (V / Z) h.
- ``beta(f)``: the propagation constant in rad/m (complex below cut-off, with
  Im beta < 0: the wave ``exp(j w t - j beta z)`` decays);
- ``impedance(f)``: the wave impedance Z = E_t / H_t of the forward wave in ohm;
- ``cutoff_frequency``: in Hz; ``attrs()`` / :func:`mode_from_attrs`: a JSON-able
  description stored with the port's record.

``on_grid(du, dv, dn, dt)`` returns the same mode as the Yee grid sees it: on a grid
whose PEC walls lie on grid planes, the analytic sin/cos profiles sampled at each
component's own positions are exact discrete modes, with the transverse wavenumbers
``k' = (2/d) sin(k d/2)`` in their amplitudes, and the plane-wave relations hold with
the discrete frequency ``W = (2/dt) sin(w dt/2)`` and longitudinal wavenumber
``K = (2/dn) sin(beta dn/2)``: ``W^2 eps mu = K^2 + kc'^2``, ``Z_TE = W mu / K``,
``Z_TM = K / (W eps)``. The port's source uses these, so that it launches the wave
one way only, and so does its modal decomposition.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..constants import eps0, mu0


def _sq_integral(k_index: int, length: float, cosine: bool) -> float:
    """Integral over [0, length] of cos^2 (or sin^2) of k_index pi x / length."""
    if k_index == 0:
        return length if cosine else 0.0
    return length / 2


@dataclass(frozen=True)
class RectangularMode:
    """TE_mn or TM_mn of a PEC rectangular guide of ``width`` (along u) x ``height``
    (along v) in m, filled with (eps_r, mu_r). ``grid``: (du, dv, dn, dt) in m and s
    for the Yee grid's own mode (:meth:`on_grid`), None for the continuum."""

    kind: str
    m: int
    n: int
    width: float
    height: float
    eps_r: float = 1.0
    mu_r: float = 1.0
    grid: tuple[float, float, float, float] | None = None

    def on_grid(self, du: float, dv: float, dn: float, dt: float) -> RectangularMode:
        """The mode of the Yee grid with spacings du, dv (transverse), dn (normal) in m
        and time step dt in s."""
        return RectangularMode(self.kind, self.m, self.n, self.width, self.height,
                               self.eps_r, self.mu_r, (du, dv, dn, dt))

    # ------------------------------------------------------------ wavenumbers
    @property
    def trig_wavenumbers(self) -> tuple[float, float]:
        """m pi / width, n pi / height in rad/m: the arguments of the profiles."""
        return self.m * math.pi / self.width, self.n * math.pi / self.height

    @property
    def transverse_wavenumbers(self) -> tuple[float, float]:
        """(ku, kv) in rad/m: the continuum's, or the grid's (2/d) sin(k d/2)."""
        ku, kv = self.trig_wavenumbers
        if self.grid is None:
            return ku, kv
        du, dv = self.grid[:2]
        return 2 / du * math.sin(ku * du / 2), 2 / dv * math.sin(kv * dv / 2)

    @property
    def cutoff_frequency(self) -> float:
        """Cut-off frequency in Hz (the grid's own when on a grid)."""
        ku, kv = self.transverse_wavenumbers
        kc = math.hypot(ku, kv)
        v = 1 / math.sqrt(eps0 * mu0 * self.eps_r * self.mu_r)
        if self.grid is None:
            return kc * v / (2 * math.pi)
        dt = self.grid[3]
        return 2 / dt * math.asin(min(1.0, kc * v * dt / 2)) / (2 * math.pi)

    def _omega_k(self, f) -> tuple[np.ndarray, np.ndarray]:
        """(W, K): the (discrete) angular frequency in rad/s and longitudinal wavenumber
        in rad/m, K = -j |K| below cut-off."""
        w = 2 * np.pi * np.asarray(f, np.float64)
        if self.grid is not None:
            w = 2 / self.grid[3] * np.sin(w * self.grid[3] / 2)
        ku, kv = self.transverse_wavenumbers
        k2 = w**2 * eps0 * mu0 * self.eps_r * self.mu_r - (ku**2 + kv**2)
        K = np.where(k2 >= 0, np.sqrt(np.abs(k2)), -1j * np.sqrt(np.abs(k2)))
        return w, K

    def beta(self, f) -> np.ndarray:
        """Propagation constant in rad/m at frequencies f (Hz), complex."""
        _, K = self._omega_k(f)
        if self.grid is None:
            return K
        dn = self.grid[2]
        return 2 / dn * np.arcsin(K * dn / 2 + 0j)

    def half_cell(self, f) -> tuple[np.ndarray, np.ndarray]:
        """(cos(beta dn/2), exp(j beta dn/2)) on the grid; (1, 1) in the continuum. The
        first relates the mean of H half a cell either side of a plane to H on it; the
        second H half a cell upstream of a plane to H on it (forward wave)."""
        _, K = self._omega_k(f)
        if self.grid is None:
            one = np.ones_like(K, dtype=np.complex128)
            return one, one
        s = K * self.grid[2] / 2
        c = np.sqrt(1 - s**2 + 0j)
        return c, c + 1j * s

    def impedance(self, f) -> np.ndarray:
        """Wave impedance E_t / H_t of the forward wave in ohm at f (Hz): W mu / K (TE),
        K / (W eps) (TM); complex (reactive) below cut-off."""
        w, K = self._omega_k(f)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.kind == "TE":
                return w * mu0 * self.mu_r / K
            return K / (w * eps0 * self.eps_r)

    # --------------------------------------------------------------- profile
    def profile(self, field: str, axis: str, u, v) -> np.ndarray:
        """``field`` "E" or "H", ``axis`` "u" or "v": the normalized transverse profile
        at (u, v) in m (arrays broadcast) from the lower corner; H is n x e."""
        if field == "H":  # h_u = -e_v, h_v = e_u
            return -self.profile("E", "v", u, v) if axis == "u" else self.profile("E", "u", u, v)
        a, b = self.trig_wavenumbers
        ku, kv = self.transverse_wavenumbers
        W, H, m, n = self.width, self.height, self.m, self.n
        cu, su = np.cos(a * np.asarray(u)), np.sin(a * np.asarray(u))
        cv, sv = np.cos(b * np.asarray(v)), np.sin(b * np.asarray(v))
        # TE: e = z x grad(Hz), Hz = cos cos; TM: e = -grad(Ez) / .., Ez = sin sin
        fu, fv = (kv, -ku) if self.kind == "TE" else (ku, kv)
        norm = (fu**2 * _sq_integral(m, W, True) * _sq_integral(n, H, False)
                + fv**2 * _sq_integral(m, W, False) * _sq_integral(n, H, True))
        scale = 1 / math.sqrt(norm)
        if axis == "u":
            return scale * fu * cu * sv
        return scale * fv * su * cv

    def attrs(self) -> dict:
        """JSON-able description (:func:`mode_from_attrs` reads it back)."""
        out = asdict(self)
        out["grid"] = list(self.grid) if self.grid is not None else None
        return {"mode_type": "RectangularMode", **out}


def mode_from_attrs(attrs: dict):
    """The mode a port's record describes (``attrs["mode"]``): a
    :class:`RectangularMode` or a :class:`emjax.analysis.solvedmode.SolvedMode`."""
    a = dict(attrs)
    kind = a.pop("mode_type")
    if kind == "SolvedMode":
        from .solvedmode import solved_from_attrs

        return solved_from_attrs(a)
    if kind != "RectangularMode":
        raise ValueError(f"unknown waveguide mode type {kind!r}")
    grid = a.pop("grid")
    return RectangularMode(**a, grid=tuple(grid) if grid is not None else None)


def modal_waves(md, frequencies) -> dict[str, np.ndarray]:
    """Forward (a) and backward (b) waves of a waveguide port's record (MonitorData of
    kind "WaveguidePort") at ``frequencies`` (Hz), at its reference plane.

    The record holds V(t) = sum E_t . e dA on the measuring plane at the E times and
    I(t) = sum H_t . h dA of the mean of H half a cell either side at the H times.
    Their spectra (the DFT monitors' kernel, at each sample's own time) give, with the
    grid's mode (the H mean divided by cos(beta dn/2)), V and I co-located on the
    plane, and there ``a = (V + Z I) / 2``, ``b = (V - Z I) / 2`` (modal voltages).
    Moved to the reference plane a shift s along the port's direction away:
    ``a exp(-j beta s)``, ``b exp(+j beta s)``. Returns {"V", "I", "a", "b", "Z"}:
    V, a, b in V*s; I in A*s; Z (the wave impedance) in ohm."""
    from .sparams import spectrum

    f = np.atleast_1d(np.asarray(frequencies, np.float64))
    mode = mode_from_attrs(md.attrs["mode"])
    # time is the records' last axis (a batched run's excitations lead): moved first
    V = spectrum(np.moveaxis(md.data["V"], -1, 0), md.coords["t_E"], f)
    I_mean = spectrum(np.moveaxis(md.data["I"], -1, 0), md.coords["t_H"], f)
    along = (slice(None),) + (None,) * (V.ndim - 1)  # per-frequency factors, broadcast
    cos_half, _ = mode.half_cell(f)
    current = I_mean / cos_half[along]
    Z = mode.impedance(f)
    beta = mode.beta(f)[along]
    shift = float(md.attrs["reference_shift"])
    a = 0.5 * (V + Z[along] * current) * np.exp(-1j * beta * shift)
    b = 0.5 * (V - Z[along] * current) * np.exp(1j * beta * shift)
    return {"V": V, "I": current, "a": a, "b": b, "Z": Z}





# ------------------------------------------------------------ S-parameters
BAND_DB = 20.0
"""Default frequencies: where the launched wave's spectrum is within this many dB of
its peak, and above every port's cut-off."""


def _guides(results) -> list:
    ports = [md for _, md in results.items() if md.kind == "WaveguidePort"]
    if any(md.kind == "LumpedPort" for _, md in results.items()):
        from ..errors import SetupError

        raise SetupError("results: S-parameters of a run with both lumped and waveguide ports "
                         "are not supported; use one kind of port per run")
    return ports


def default_frequencies(results, points: int = 101) -> np.ndarray:
    """``points`` frequencies (Hz) over the band where the launched waves' spectrum is
    within :data:`BAND_DB` of its peak, above 1.01 times every port's cut-off."""
    ports = _guides(results)
    driven = [md for md in ports if md.attrs.get("excite")]
    if not driven:
        from ..errors import SetupError

        raise SetupError("results: no excited WaveguidePort; S-parameters need one port with "
                         "excite = true, or give the frequencies")
    from .sparams import source_spectrum

    f, mag = source_spectrum(driven, "t_E")
    fc = max(mode_from_attrs(md.attrs["mode"]).cutoff_frequency for md in ports)
    inside = f[(mag >= mag.max() * 10 ** (-BAND_DB / 20)) & (f > 1.01 * fc)]
    if not inside.size:
        from ..errors import SetupError

        raise SetupError(f"results: the launched waves have no band above the ports' cut-off "
                         f"{fc:.6g} Hz; give the frequencies")
    return np.linspace(float(inside.min()), float(inside.max()), points)


def port_waves(results, frequencies=None):
    """:class:`emjax.analysis.sparams.PortWaves` of the waveguide ports of ``results``
    at ``frequencies`` (Hz; default :func:`default_frequencies`): power waves
    ``a / sqrt(Z)``, ``b / sqrt(Z)`` at each port's reference plane, Z its mode's wave
    impedance at each frequency (so S is referred to the modes' own impedances, the
    usual waveguide S-matrix); V, I the modal voltage and current on the measuring
    plane; ``z0``: each port's Z at the middle frequency (for files: S stays
    normalized to Z(f))."""
    from .sparams import PortWaves

    ports = _guides(results)
    f = (default_frequencies(results) if frequencies is None
         else np.atleast_1d(np.asarray(frequencies, np.float64)))
    waves = [modal_waves(md, f) for md in ports]
    batched = ports[0].attrs.get("excitations")
    along = (slice(None),) + (None,) * (batched is not None)
    root = [np.sqrt(w["Z"])[along] for w in waves]
    # ports last: (nf, ports), or (nf, excitations, ports) for a batched run
    stack = lambda key, div: np.stack([w[key] / r if div else w[key]  # noqa: E731
                                       for w, r in zip(waves, root, strict=True)], axis=-1)
    return PortWaves(
        names=tuple(md.name for md in ports),
        z0=np.array([w["Z"][len(f) // 2] for w in waves], np.complex128),
        excited=tuple(md.name for md in ports if md.attrs.get("excite")), frequencies=f,
        V=stack("V", False), I=stack("I", False), a=stack("a", True), b=stack("b", True),
        excitations=tuple(batched) if batched is not None else None)


__all__ = ["BAND_DB", "RectangularMode", "default_frequencies", "modal_waves", "mode_from_attrs",
           "port_waves"]
