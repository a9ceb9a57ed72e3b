"""S-parameters, input impedance and Touchstone files from lumped-port records.

A run with :class:`~emjax.model.LumpedPort` sources records each port's voltage V(t)
and current I(t) at the half steps (``MonitorData`` of kind "LumpedPort",
:func:`emjax.fdtd.collect.port_record`). Their spectra at any frequency f, with the
DFT monitors' kernel ``X(f) = sum_n x_n exp(-j 2 pi f t_n) dt``, are complete once the
run has let the fields decay, so the frequencies are chosen after the run. From them,
Kurokawa's power waves (K. Kurokawa, "Power waves and the scattering matrix", IEEE
Trans. MTT 13, 194 (1965)) referred to each port's Z0:

    a = (V + Z0 I) / (2 sqrt(Re Z0)),   b = (V - Z0* I) / (2 sqrt(Re Z0)),

the input impedance Z = V / I of an excited port, and S_ij = b_i / a_j for the
excited port j (the others passive, so a_i = 0 there: a port's I is its resistor's
current, exactly). For an excited port a = V_s / (2 sqrt(Z0)), the source's
available wave. The wave amplitudes are spectra, in V*s / sqrt(ohm); S is their ratio.

A run with ``port_excitation = "simultaneous"`` and one excited port gives one column
of S; :func:`combine` joins the columns of such runs. A run with ``port_excitation =
"each"`` (:mod:`emjax.fdtd.excitations`) records one excitation per excited port in one
compiled run: its records carry a leading excitation axis and give every column at
once. With every port excited, S for any reference impedances ``z_ref`` (complex
allowed, Kurokawa's power waves) follows from the N x N matrices of port voltages and
currents (rows: ports, columns: excitations), ``S = (V - Z* I)(V + Z I)^-1`` after the
waves' normalisation; with each port's own Z0 as reference that is ``b_i / a_j``.
Touchstone files are written and read by scikit-rf (``pip install scikit-rf``), which
also draws the Smith chart; :func:`plot_s_db` needs only matplotlib.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..results import Results

BAND_DB = 20.0
"""Default frequencies: where the excited ports' incident wave is within this many dB
of its peak (away from it the ratios b / a are rounding noise)."""

DEFAULT_POINTS = 101
"""Number of default frequencies, evenly spread over that band."""


def spectrum(x: np.ndarray, t: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """``sum_n x_n exp(-j 2 pi f t_n) dt`` at each frequency (Hz): shape (nf, ...) for
    x of shape (nt, ...); t (nt,) s, evenly spaced (the DFT monitors' kernel)."""
    t = np.asarray(t, np.float64)
    dt = float(t[1] - t[0]) if len(t) > 1 else 1.0
    kernel = np.exp(-2j * np.pi * np.outer(np.asarray(frequencies, np.float64), t)) * dt
    return np.tensordot(kernel, np.asarray(x, np.float64), axes=(1, 0))


@dataclass(frozen=True, eq=False)
class PortWaves:
    """The ports of one run at ``frequencies`` (nf,) Hz: names (nports,); z0 (nports,)
    ohm, the reference impedances of a and b; excited: the names of the driven ports;
    V, I spectra in V*s, A*s and a, b power waves in V*s / sqrt(ohm), (nf, nports) —
    or (nf, nexcitations, nports) for a batched run, where ``excitations`` names the
    port each row drives (None for a run of one excitation)."""

    names: tuple[str, ...]
    z0: np.ndarray
    excited: tuple[str, ...]
    frequencies: np.ndarray
    V: np.ndarray
    I: np.ndarray
    a: np.ndarray
    b: np.ndarray
    excitations: tuple[str, ...] | None = None


def _ports(results: Results) -> list:
    ports = [md for _, md in results.items() if md.kind == "LumpedPort"]
    if not ports:
        from ..errors import SetupError

        raise SetupError("results: no LumpedPort records; add LumpedPort sources to the "
                         "scenario (monitors and other sources give no S-parameters)")
    return ports


def source_spectrum(driven: Sequence, time_key: str) -> tuple[np.ndarray, np.ndarray]:
    """(f in Hz, summed |spectrum|) of the driven ports' source voltages ``V_source``
    sampled at ``coords[time_key]``, zero-padded eightfold (a batched run's records carry
    an excitation axis first: summed over it too); the band the default frequencies
    are chosen in."""
    t = driven[0].coords[time_key]
    dt, n = float(t[1] - t[0]), 8 * len(t)
    mag = sum(np.abs(np.fft.rfft(md.data["V_source"], n)).reshape(-1, n // 2 + 1).sum(0)
              for md in driven)
    return np.fft.rfftfreq(n, dt), mag


def default_frequencies(results: Results, points: int = DEFAULT_POINTS) -> np.ndarray:
    """``points`` frequencies (Hz) spread over the band where the excited ports'
    source voltage spectrum is within :data:`BAND_DB` of its peak (its lowest tenth of
    the top frequency left out when the band reaches DC: Z and S are ratios of
    vanishing spectra there)."""
    ports = [md for md in _ports(results) if md.attrs.get("excite")]
    if not ports:
        from ..errors import SetupError

        raise SetupError("results: no excited LumpedPort; S-parameters need one port with "
                         "excite = true, or give the frequencies")
    f, mag = source_spectrum(ports, "t")
    inside = f[mag >= mag.max() * 10 ** (-BAND_DB / 20)]
    lo, hi = float(inside.min()), float(inside.max())
    return np.linspace(max(lo, hi / 10), hi, points)


def port_waves(results: Results, frequencies: Sequence[float] | None = None,
               z_ref: Sequence[complex] | complex | None = None) -> PortWaves:
    """Voltage, current and power-wave spectra of every lumped port of ``results`` at
    ``frequencies`` (Hz; default :func:`default_frequencies`), the waves referred to
    ``z_ref`` (ohm, one or one per port, complex allowed with a positive real part;
    default each port's Z0). A run with waveguide ports: their modal waves
    (:func:`emjax.analysis.waveguide.port_waves`, referred to each mode's Z(f))."""
    if any(md.kind == "WaveguidePort" for _, md in results.items()):
        from .waveguide import port_waves as waveguide_waves

        if z_ref is not None:
            from ..errors import SetupError

            raise SetupError("z_ref: waveguide ports' waves are referred to their mode's "
                             "wave impedance Z(f); z_ref applies to lumped ports")
        return waveguide_waves(results, frequencies)
    ports = _ports(results)
    f = (default_frequencies(results) if frequencies is None
         else np.atleast_1d(np.asarray(frequencies, np.float64)))
    t = ports[0].coords["t"]
    axis = ports[0].data["V"].ndim  # the port axis last: (nf, [excitations,] ports)
    V = spectrum(np.stack([md.data["V"].T for md in ports], axis=axis), t, f)
    I = spectrum(np.stack([md.data["I"].T for md in ports], axis=axis), t, f)
    z0 = np.array([md.attrs["impedance"] for md in ports], dtype=np.complex128)
    if z_ref is not None:
        z0 = _reference(z_ref, len(ports))
    root = 2 * np.sqrt(z0.real)
    batched = ports[0].attrs.get("excitations")
    return PortWaves(
        names=tuple(md.name for md in ports), z0=z0,
        excited=tuple(md.name for md in ports if md.attrs.get("excite")), frequencies=f,
        V=V, I=I, a=(V + z0 * I) / root, b=(V - np.conj(z0) * I) / root,
        excitations=tuple(batched) if batched is not None else None)


def _reference(z_ref, n: int) -> np.ndarray:
    """Reference impedances (n,) from one value or n; SetupError for a wrong count or a
    real part that is not positive and finite (the power waves divide by it)."""
    from ..errors import SetupError

    z = np.atleast_1d(np.asarray(z_ref, np.complex128))
    if z.shape == (1,):
        z = np.repeat(z, n)
    if z.shape != (n,) or not np.all(np.isfinite(z)) or np.any(z.real <= 0):
        raise SetupError(f"z_ref = {z_ref!r}: give one impedance in ohm or one per port "
                         f"({n}), each finite with a positive real part")
    return z


@dataclass(frozen=True, eq=False)
class SParameters:
    """S-parameters at ``frequencies`` (nf,) Hz: S (nf, nports, nexcited), column j
    the run exciting ``excited[j]``; z_in (nf, nexcited) ohm, V / I at each excited
    port; ports (nports,) names; z0 (nports,) ohm, the reference impedances."""

    frequencies: np.ndarray
    S: np.ndarray
    z_in: np.ndarray
    ports: tuple[str, ...]
    excited: tuple[str, ...]
    z0: np.ndarray

    @property
    def full(self) -> bool:
        """Whether every port was excited, so S is the whole square matrix."""
        return set(self.excited) == set(self.ports)

    def matrix(self) -> np.ndarray:
        """The full S (nf, nports, nports), columns in port order; OutputError when some
        port was never excited."""
        if not self.full:
            from ..errors import OutputError

            missing = [p for p in self.ports if p not in self.excited]
            raise OutputError(
                f"S-parameters: ports {missing} were not excited, so S has only the columns "
                f"of {list(self.excited)}; run once more exciting each of them and join the "
                "results with emjax.analysis.sparams.combine")
        order = [self.excited.index(p) for p in self.ports]
        return self.S[:, :, order]

    def db(self) -> np.ndarray:
        """20 log10 |S|, the shape of ``S``."""
        with np.errstate(divide="ignore"):
            return 20 * np.log10(np.abs(self.S))

    def network(self, name: str = "emjax"):
        """The full matrix as a ``skrf.Network`` (scikit-rf)."""
        skrf = _skrf()
        freq = skrf.Frequency.from_f(self.frequencies, unit="Hz")
        # z0 as (nf, nports): scikit-rf reads a (n,) z0 as one per frequency when the
        # counts of frequencies and ports are equal
        z0 = np.broadcast_to(self.z0, (len(self.frequencies), len(self.ports)))
        return skrf.Network(frequency=freq, s=self.matrix(), z0=z0, name=name)

    def write_touchstone(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the full matrix as a Touchstone file through scikit-rf; ``path`` must
        end in ``.s<N>p`` for N ports. Returns the path."""
        from ..errors import OutputError
        from ..io.atomic import atomic_path
        from ..io.targets import check_output

        n = len(self.ports)
        path = Path(path)
        if path.suffix.lower() != f".s{n}p":
            raise OutputError(f"Touchstone path '{path}': a {n}-port file ends in '.s{n}p', "
                              f"not '{path.suffix}'; rename it")
        path = check_output(path, overwrite=overwrite)
        net = self.network(path.stem)
        # Touchstone 1.0 has one reference impedance for all ports; 2.0 one per port
        same = bool(np.all(self.z0 == self.z0[0]))
        text = net.write_touchstone(return_string=True, version="1.0" if same else "2.0")
        with atomic_path(path) as tmp:
            tmp.write_text(text, encoding="ISO-8859-1")
        return path


def save_hdf5(sp: SParameters, path: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``sp`` to an HDF5 file: datasets ``frequencies`` (Hz), ``S`` (nf, nports,
    ncolumns), ``z_in`` (ohm), ``z0`` (ohm), attributes ``ports`` and ``excited``."""
    import h5py

    from ..io.atomic import atomic_path
    from ..io.targets import check_output

    path = check_output(Path(path), overwrite=overwrite)
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
        for key, unit in (("frequencies", "Hz"), ("S", "1"), ("z_in", "ohm"), ("z0", "ohm")):
            f.create_dataset(key, data=getattr(sp, key)).attrs["units"] = unit
        f.attrs["ports"] = list(sp.ports)
        f.attrs["excited"] = list(sp.excited)
    return path


def load_hdf5(path: str | Path) -> SParameters:
    """The :class:`SParameters` that :func:`save_hdf5` wrote."""
    import h5py

    from ..io.targets import file_path

    with h5py.File(file_path(path, what="S-parameter file"), "r") as f:
        names = lambda key: tuple(str(v) for v in f.attrs[key])  # noqa: E731
        return SParameters(frequencies=f["frequencies"][()], S=f["S"][()], z_in=f["z_in"][()],
                           ports=names("ports"), excited=names("excited"), z0=f["z0"][()])


def s_parameters(results: Results, frequencies: Sequence[float] | None = None,
                 z_ref: Sequence[complex] | complex | None = None) -> SParameters:
    """S-parameters and input impedance of a run with lumped ports. One excited port: S
    (nf, nports, 1), ``S[:, i, 0] = b_i / a_j`` for the excited port j; z_in (nf, 1) =
    V_j / I_j. A batched run (``port_excitation = "each"``): one column per excitation,
    (nf, nports, nexcited); with every port excited, S referred to any ``z_ref``
    (:func:`port_waves`; the module docstring). ``frequencies`` in Hz (default
    :func:`default_frequencies`). A run exciting several ports at once has no
    S-parameters (its waves mix): SetupError, :func:`port_waves` gives them."""
    w = port_waves(results, frequencies)
    if w.excitations is not None:
        return _batched(w, z_ref)
    if z_ref is not None:
        from ..errors import SetupError

        raise SetupError("z_ref: S for other reference impedances than the ports' own Z0 "
                         "needs every port excited (port_excitation = 'each' with excite = "
                         "true on every port)")
    if len(w.excited) != 1:
        from ..errors import SetupError

        raise SetupError(
            f"S-parameters: {len(w.excited)} ports are excited ({list(w.excited)}); S_ij = "
            "b_i / a_j needs one excited port per run: set excite = false on all but one "
            "(port_waves gives the waves of a run that drives several)")
    j = w.names.index(w.excited[0])
    S = (w.b / w.a[:, j:j + 1])[:, :, None]
    z_in = (w.V[:, j] / w.I[:, j])[:, None]
    return SParameters(frequencies=w.frequencies, S=S, z_in=z_in, ports=w.names,
                       excited=w.excited, z0=w.z0)


def _batched(w: PortWaves, z_ref) -> SParameters:
    """S of a batched run: column k from excitation k (its port j_k), ``b / a_j``; for
    another reference than the ports' Z0, every port excited and the matrix form."""
    cols = [w.names.index(e) for e in w.excitations]
    k = np.arange(len(cols))
    z_in = w.V[:, k, cols] / w.I[:, k, cols]
    if z_ref is None:
        S = np.transpose(w.b / w.a[:, k, cols][:, :, None], (0, 2, 1))
        return SParameters(frequencies=w.frequencies, S=S, z_in=z_in, ports=w.names,
                           excited=w.excitations, z0=w.z0)
    from ..errors import SetupError

    if sorted(cols) != list(range(len(w.names))):
        raise SetupError(f"z_ref: S referred to other impedances needs every port excited; "
                         f"the run excited {list(w.excitations)} of {list(w.names)}")
    z = _reference(z_ref, len(w.names))
    root = 2 * np.sqrt(z.real)
    Vm, Im = np.swapaxes(w.V, 1, 2), np.swapaxes(w.I, 1, 2)  # (nf, port, excitation)
    A = (Vm + z[:, None] * Im) / root[:, None]
    B = (Vm - np.conj(z)[:, None] * Im) / root[:, None]
    S = np.linalg.solve(np.swapaxes(A, 1, 2), np.swapaxes(B, 1, 2)).swapaxes(1, 2)
    order = np.argsort(cols)  # columns in port order: excitation k drove port cols[k]
    return SParameters(frequencies=w.frequencies, S=S, z_in=z_in[:, order], ports=w.names,
                       excited=w.names, z0=z)


def combine(parts: Sequence[SParameters]) -> SParameters:
    """The columns of several runs (each exciting other ports of the same ports, at
    the same frequencies) side by side: with every port excited once, the full
    matrix."""
    from ..errors import SetupError

    first = parts[0]
    excited: list[str] = []
    for k, p in enumerate(parts):
        if p.ports != first.ports or not np.allclose(p.frequencies, first.frequencies):
            raise SetupError(f"combine: parts[{k}] has ports {list(p.ports)} at "
                             f"{len(p.frequencies)} frequencies, parts[0] {list(first.ports)} "
                             f"at {len(first.frequencies)}; join runs of the same ports and "
                             "frequencies")
        again = set(p.excited) & set(excited)
        if again:
            raise SetupError(f"combine: parts[{k}] excites {sorted(again)} again; each port "
                             "once")
        excited += p.excited
    return SParameters(frequencies=first.frequencies,
                       S=np.concatenate([p.S for p in parts], axis=2),
                       z_in=np.concatenate([p.z_in for p in parts], axis=1),
                       ports=first.ports, excited=tuple(excited), z0=first.z0)


def read_touchstone(path: str | Path) -> SParameters:
    """A Touchstone file read through scikit-rf: the full matrix, every port excited
    (ports named "1".."N"); z_in is each port's Z with the others terminated in Z0."""
    from ..io.targets import file_path

    skrf = _skrf()
    net = skrf.Network(str(file_path(path, what="Touchstone path")))
    n = net.nports
    z0 = np.asarray(net.z0[0], np.complex128)
    s_ii = np.diagonal(net.s, axis1=1, axis2=2)
    z_in = z0 * (1 + s_ii) / (1 - s_ii)
    names = tuple(str(k + 1) for k in range(n))
    return SParameters(frequencies=np.asarray(net.f, np.float64), S=np.asarray(net.s),
                       z_in=z_in, ports=names, excited=names, z0=z0)


def plot_s_db(sp: SParameters, path: str | Path | None = None):
    """|S_ij| in dB against frequency (GHz), one line per entry; saved as PNG when
    ``path`` is given. Returns the matplotlib Figure."""
    from ..plot import _figure, _finish

    fig = _figure((6.0, 4.0))
    ax = fig.add_subplot()
    db = sp.db()
    for j, src in enumerate(sp.excited):
        k = sp.ports.index(src) + 1
        for i in range(len(sp.ports)):
            ax.plot(sp.frequencies / 1e9, db[:, i, j], label=f"S{i + 1}{k}")
    ax.set_xlabel("frequency (GHz)")
    ax.set_ylabel("|S| (dB)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    return _finish(fig, path)


def plot_smith(sp: SParameters, path: str | Path | None = None):
    """The reflection of each excited port on a Smith chart (scikit-rf's); saved as
    PNG when ``path`` is given. Returns the matplotlib Figure."""
    from ..plot import _figure, _finish

    skrf = _skrf()
    fig = _figure((5.0, 5.0))
    ax = fig.add_subplot()
    skrf.plotting.smith(ax=ax, draw_labels=True)
    for j, src in enumerate(sp.excited):
        i = sp.ports.index(src)
        gamma = sp.S[:, i, j]
        ax.plot(gamma.real, gamma.imag, ".-", label=f"S{i + 1}{i + 1} ({src})")
    ax.legend()
    return _finish(fig, path)


def _skrf():
    """scikit-rf, or an ImportError that says how to get it."""
    try:
        import skrf
    except ImportError as err:  # optional at run time: only Touchstone and Smith use it
        raise ImportError("Touchstone files and Smith charts need scikit-rf: "
                          "pip install scikit-rf") from err
    return skrf


__all__ = ["PortWaves", "SParameters", "combine", "default_frequencies", "load_hdf5",
           "plot_s_db", "plot_smith", "port_waves", "read_touchstone", "s_parameters",
           "save_hdf5", "spectrum"]
