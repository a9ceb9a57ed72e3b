"""What a run returns: monitor data plus the scenario and run metadata.

``Results`` maps monitor names to :class:`MonitorData`; it saves to and loads from one
HDF5 file (:mod:`emjax.io.hdf5`) that carries the scenario JSON, the metadata and the
emjax version, so any file can be reloaded and rerun. Only NumPy here; h5py loads on
the first save or load, and JAX never.

Arrays in ``MonitorData``, by ``kind`` (components are "Ex".."Hz"):

* ``Probe``: ``data[comp]`` real, shape (nt, npoints), field units (V/m, A/m);
  ``coords["t_E"]``, ``coords["t_H"]`` (nt,) s (H is sampled half a step before E),
  ``coords["points"]`` (npoints, 3) m.
* ``FieldSnapshot``: ``data[comp]`` real, shape (nsnap, n1, n2, n3); ``coords["t"]``
  (nsnap,) s and, since Yee components are staggered, ``coords["x_<comp>"]``,
  ``coords["y_<comp>"]``, ``coords["z_<comp>"]`` of shapes (n1,), (n2,), (n3,) m each.
* ``DFTMonitor``: ``data[comp]`` complex, shape (nf, n1, n2, n3), field units times s
  (V*s/m, A*s/m; FDFD's phasors, ``attrs["quantity"]`` naming them, in V/m, A/m);
  ``coords["f"]`` (nf,) Hz and the per-component axes as above.
* ``EnergyMonitor``: ``data["energy"]`` (nt,) J (J/m per unit length in FDTD2D);
  ``coords["t"]`` (nt,) s.
* ``NearToFar``: ``data["E"]``, ``data["H"]`` complex (nf, P, 3), the tangential field
  spectra (V*s/m, A*s/m) at P points of the closed Huygens box, ``coords["points"]``
  (P, 3) m, ``coords["normals"]`` (P, 3), ``coords["weights"]`` (P,) m^2,
  ``coords["f"]`` (nf,) Hz; with a plane wave also ``data["E_inc"]`` (nf,) complex, the
  incident spectrum (V*s/m) at ``attrs["incident_point"]``. Far fields, RCS, power
  and directivity come from :meth:`MonitorData.far_field` and its neighbours.
* ``FluxMonitor``: ``data["flux"]`` real (nf,) W*s^2, the Poynting flux
  ``0.5 Re sum (E x H*) . n dA`` of the DFT spectra (V*s/m, A*s/m) through the plane
  (along ``attrs["direction"]`` of its normal ``attrs["normal"]``) or out of the closed
  box (``attrs["normal"] == "box"``; into it for direction "-"), Yee-paired
  (:func:`emjax.analysis.flux.face_flux`): the spectral power of the pulsed fields,
  the same scale as a NearToFar's ``radiated_power``. Divided by ``|S(f)|^2`` of a
  source's spectrum S it is W per unit source amplitude squared. ``coords["f"]``
  (nf,) Hz; ``attrs["box_lo"]``, ``attrs["box_hi"]`` the snapped corners in m.

* ``LumpedPort`` (by port name): ``data["V"]`` (nt,) V, ``data["I"]`` (nt,) A (into
  the structure), the source's ``data["V_source"]`` V (zeros when passive), at
  ``coords["t"]`` (n + 1/2) dt; attrs ``impedance`` (Z0, ohm), ``excite``, ``position``
  (m), ``polarization``, ``length``, ``size`` (m), ``edges`` (in series, columns).
  A batched port run's arrays (every kind) lead with an axis over ``attrs["excitations"]``.

* ``WaveguidePort`` (by port name): modal ``data["V"]`` (nt,) V at ``coords["t_E"]``,
  ``data["I"]`` (nt,) A at ``coords["t_H"]``, the launched ``data["V_source"]`` V;
  ``attrs["mode"]``, ``attrs["reference_shift"]`` m (:mod:`emjax.analysis.waveguide`).

:func:`units` gives these units from one table (``DATA_UNITS``, ``COORD_UNITS``), and
each HDF5 dataset carries its unit as a ``units`` attribute ("1": dimensionless).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .analysis.spectrum import Peak

KINDS = ("Probe", "FieldSnapshot", "DFTMonitor", "EnergyMonitor", "NearToFar", "FluxMonitor",
         "LumpedPort", "WaveguidePort")


@dataclass(frozen=True, eq=False, repr=False)
class MonitorData:
    """The arrays one monitor recorded (see the module docstring for shapes and units).

    Attributes:
        name: the monitor's name in the scenario.
        kind: one of :data:`KINDS`.
        data: one array per component ("Ex".."Hz"), or ``{"energy": ...}``,
            ``{"flux": ...}``, ... (the module docstring).
        coords: the axes of the data (times in s, frequencies in Hz, positions in m).
        attrs: JSON-able scalars and strings describing the monitor (kept as their JSON
            image, like ``Results.metadata``).
    """

    name: str
    kind: str
    data: dict[str, np.ndarray]
    coords: dict[str, np.ndarray]
    attrs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(
                f"monitor '{self.name}': kind {self.kind!r} is not one of {KINDS}"
            )
        object.__setattr__(self, "data", {k: np.asarray(v) for k, v in self.data.items()})
        object.__setattr__(self, "coords", {k: np.asarray(v) for k, v in self.coords.items()})
        object.__setattr__(self, "attrs", json_image(self.attrs, f"monitor '{self.name}' attrs"))

    # ------------------------------------------------------------ access
    @property
    def components(self) -> tuple[str, ...]:
        """Names of the recorded arrays, in recording order."""
        return tuple(self.data)

    def array(self, component: str) -> np.ndarray:
        """``data[component]``, with a message naming what exists when it is missing."""
        try:
            return self.data[component]
        except KeyError:
            raise KeyError(
                f"{self.kind} '{self.name}' has no component {component!r}; it has "
                f"{', '.join(self.data) or 'none'}"
            ) from None

    def time(self, component: str | None = None) -> np.ndarray:
        """Sample times in s, shape (nt,), of ``component`` (E and H differ for probes)."""
        if component is not None and component[:1] in ("E", "H"):
            key = f"t_{component[0]}"
            if key in self.coords:
                return self.coords[key]
        if "t" in self.coords:
            return self.coords["t"]
        if "t_E" in self.coords:
            return self.coords["t_E"]
        raise KeyError(f"{self.kind} '{self.name}' has no time axis (coords: "
                       f"{', '.join(self.coords)})")

    def axes(self, component: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x, y, z) positions in m of a FieldSnapshot or DFTMonitor component's samples."""
        try:
            return tuple(self.coords[f"{ax}_{component}"] for ax in "xyz")
        except KeyError:
            raise KeyError(
                f"{self.kind} '{self.name}' has no axes for component {component!r}; "
                f"it has {', '.join(self.data) or 'none'}"
            ) from None

    def excitation(self, which: int | str) -> MonitorData:
        """One excitation of a batched port run (arrays with a leading axis over
        ``attrs["excitations"]``), by position or by the excited port's name."""
        names = self.attrs.get("excitations") or []
        k = names.index(which) if which in names else which
        if not isinstance(k, int) or not -len(names) <= k < len(names):
            raise KeyError(f"{self.kind} '{self.name}': no excitation {which!r} (excited: "
                           f"{names or 'none, not a batched port run'})")
        return MonitorData(name=self.name, kind=self.kind, coords=self.coords,
                           attrs={a: v for a, v in self.attrs.items() if a != "excitations"},
                           data={c: v[k] for c, v in self.data.items()})

    # ---------------------------------------------------------- analysis
    def probe_spectrum(
        self,
        component: str,
        point: int = 0,
        nfft: int | None = None,
        window: str | np.ndarray | None = "hann",
    ) -> tuple[np.ndarray, np.ndarray]:
        """Spectrum of a probe's ``component`` at ``point``.

        Returns (f, X): f shape (nfft // 2 + 1,) Hz; X complex, same shape, field units
        times s, ``X(f) = dt sum_n w_n x_n exp(-i 2 pi f t_n)`` with the window ``w``
        ('hann' by default, None for rectangular) and zero padding to ``nfft`` samples
        (default: the record length). See :func:`emjax.analysis.spectrum.spectrum`.
        """
        from .analysis.spectrum import spectrum

        x = self._probe_trace(component, point)
        return spectrum(self.time(component), x, pad_to=nfft, window=window)

    def probe_peaks(
        self,
        component: str,
        n: int = 1,
        point: int = 0,
        fmin: float | None = None,
        fmax: float | None = None,
        nfft: int | None = None,
        window: str | np.ndarray | None = "hann",
    ) -> list[Peak]:
        """The ``n`` strongest peaks of :meth:`probe_spectrum` in [fmin, fmax] Hz,
        strongest first, each refined between bins (:func:`~emjax.analysis.spectrum.find_peaks`).
        """
        from .analysis.spectrum import find_peaks

        f, X = self.probe_spectrum(component, point=point, nfft=nfft, window=window)
        return find_peaks(f, np.abs(X), n, fmin=fmin, fmax=fmax)

    def _probe_trace(self, component: str, point: int) -> np.ndarray:
        if self.kind != "Probe":
            raise ValueError(f"{self.kind} '{self.name}' is not a Probe; a probe spectrum "
                             "needs a Probe monitor")
        a = self.array(component)
        if not -a.shape[1] <= point < a.shape[1]:
            raise IndexError(f"Probe '{self.name}': point {point} does not exist; it has "
                             f"{a.shape[1]} points (0..{a.shape[1] - 1})")
        return a[:, point]

    # --------------------------------------------------- far fields (NearToFar)
    def _frequency_index(self, frequency: float | None) -> int:
        if self.kind != "NearToFar":
            raise ValueError(f"{self.kind} '{self.name}' is not a NearToFar monitor; far "
                             "fields need one")
        f = self.coords["f"]
        if frequency is None:
            if f.size != 1:
                raise ValueError(f"NearToFar '{self.name}' holds {f.size} frequencies "
                                 f"({', '.join(f'{v:.6g}' for v in f)} Hz); pass frequency=")
            return 0
        i = int(np.argmin(np.abs(f - frequency)))
        if abs(f[i] - frequency) > 1e-6 * f[i]:
            raise ValueError(f"NearToFar '{self.name}' has no frequency {frequency:.6g} Hz; "
                             f"it has {', '.join(f'{v:.6g}' for v in f)} Hz")
        return i

    def far_field(self, theta, phi, frequency: float | None = None, *,
                  degrees: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(E_theta, E_phi) times ``r e^{jkr}`` (V*s, spectra) at angles theta, phi
        (radians, or degrees with ``degrees=True``; broadcastable) and ``frequency``
        (Hz; may be left out when the monitor holds one)."""
        from .analysis.nf2ff import far_field

        i = self._frequency_index(frequency)
        if degrees:
            theta, phi = np.radians(theta), np.radians(phi)
        c = self.coords
        return far_field(c["points"], c["normals"], c["weights"], self.data["E"][i],
                         self.data["H"][i], float(c["f"][i]), theta, phi,
                         eps_r=self.attrs.get("eps_r", 1.0), mu_r=self.attrs.get("mu_r", 1.0))

    def rcs(self, theta, phi, frequency: float | None = None, *,
            degrees: bool = False) -> np.ndarray:
        """Bistatic radar cross section in m^2 at angles theta, phi (see :meth:`far_field`),
        normalised by the incident plane wave's spectrum at the same frequency."""
        from .analysis.nf2ff import rcs

        if "E_inc" not in self.data:
            raise ValueError(f"NearToFar '{self.name}' has no incident spectrum: RCS needs a "
                             "PlaneWave source in the scenario")
        i = self._frequency_index(frequency)
        Et, Ep = self.far_field(theta, phi, float(self.coords["f"][i]), degrees=degrees)
        return rcs(Et, Ep, self.data["E_inc"][i])

    def rcs_dbsm(self, theta, phi, frequency: float | None = None, *,
                 degrees: bool = False) -> np.ndarray:
        """:meth:`rcs` in dBsm, ``10 log10(sigma / 1 m^2)``."""
        from .analysis.nf2ff import to_db

        return to_db(self.rcs(theta, phi, frequency, degrees=degrees))

    def radiated_power(self, frequency: float | None = None, n_theta: int = 64,
                       n_phi: int = 128) -> float:
        """Power spectral quantity carried to the far zone, ``sum |E|^2 / (2 eta) dOmega``
        over a Gauss-Legendre sphere (W*s^2 for spectra)."""
        from .analysis.nf2ff import radiated_power, sphere_quadrature

        th, ph, w = sphere_quadrature(n_theta, n_phi)
        Et, Ep = self.far_field(th, ph, frequency)
        return radiated_power(Et, Ep, w, eps_r=self.attrs.get("eps_r", 1.0),
                              mu_r=self.attrs.get("mu_r", 1.0))

    def surface_power(self, frequency: float | None = None) -> float:
        """Poynting flux out through the Huygens box, ``0.5 Re sum (E x H*) . n dA``."""
        from .analysis.nf2ff import surface_power

        i = self._frequency_index(frequency)
        c = self.coords
        return surface_power(c["normals"], c["weights"], self.data["E"][i], self.data["H"][i])

    def directivity(self, theta, phi, frequency: float | None = None, *,
                    degrees: bool = False) -> np.ndarray:
        """Directivity (linear) at angles theta, phi: ``4 pi U / P_radiated``."""
        from .analysis.nf2ff import directivity

        i = self._frequency_index(frequency)
        f = float(self.coords["f"][i])
        Et, Ep = self.far_field(theta, phi, f, degrees=degrees)
        return directivity(Et, Ep, self.radiated_power(f), eps_r=self.attrs.get("eps_r", 1.0),
                           mu_r=self.attrs.get("mu_r", 1.0))

    # -------------------------------------------------------- comparison
    def __eq__(self, other: object) -> bool:
        """Same name, kind and attrs, and every array equal bit for bit with its dtype."""
        if not isinstance(other, MonitorData):
            return NotImplemented
        return (
            self.name == other.name
            and self.kind == other.kind
            and _json(self.attrs) == _json(other.attrs)
            and _arrays_equal(self.data, other.data)
            and _arrays_equal(self.coords, other.coords)
        )

    __hash__ = None  # mutable arrays inside

    def __repr__(self) -> str:
        return f"MonitorData({self.kind} '{self.name}': {_describe(self.data)})"


@dataclass(frozen=True, eq=False, repr=False)
class Results:
    """Monitor data of one run, with its scenario and metadata.

    Attributes:
        scenario: the scenario that was run (a pydantic model with ``to_json()``), or None.
        monitors: monitor name -> :class:`MonitorData`, in the scenario's order.
        metadata: JSON-able run facts (dt in s, steps, grid shape, device, versions,
            wall_time_s, cells_per_s, ...). It is kept as its JSON image: tuples become
            lists and NumPy scalars Python numbers, exactly as a reloaded file gives them.
    """

    scenario: Any
    monitors: dict[str, MonitorData]
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        monitors = dict(self.monitors)
        for key, md in monitors.items():
            if not isinstance(md, MonitorData):
                raise TypeError(f"monitors[{key!r}] is a {type(md).__name__}, not MonitorData")
            if md.name != key:
                raise ValueError(f"monitors[{key!r}] holds MonitorData named '{md.name}'; "
                                 "key each monitor by its own name")
        object.__setattr__(self, "monitors", monitors)
        object.__setattr__(self, "metadata", json_image(self.metadata, "metadata"))

    # ---------------------------------------------------------- mapping
    def __getitem__(self, name: str) -> MonitorData:
        try:
            return self.monitors[name]
        except KeyError:
            raise KeyError(f"no monitor named {name!r}; the results hold "
                           f"{', '.join(map(repr, self.monitors)) or 'no monitors'}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.monitors)

    def __len__(self) -> int:
        return len(self.monitors)

    def __contains__(self, name: object) -> bool:
        return name in self.monitors

    @property
    def names(self) -> list[str]:
        """Monitor names, in order."""
        return list(self.monitors)

    def items(self):
        """(name, MonitorData) pairs, in the scenario's order."""
        return self.monitors.items()

    @property
    def scenario_json(self) -> str:
        """The scenario as JSON text ('' when there is none)."""
        return "" if self.scenario is None else self.scenario.to_json()

    def non_finite(self) -> list[tuple[str, str, int, int]]:
        """(monitor, component, non-finite count, size) of each array with inf or NaN."""
        out = []
        for name, md in self.monitors.items():
            for comp, a in md.data.items():
                if a.dtype.kind in "fc":
                    with np.errstate(over="ignore", invalid="ignore"):  # a finite sum has
                        count = 0 if np.isfinite(np.sum(a)) else int(  # no inf/NaN terms
                            np.count_nonzero(~np.isfinite(a)))
                    if count:
                        out.append((name, comp, count, int(a.size)))
        return out

    # ---------------------------------------------------------------- I/O
    def save(self, path: str | Path, *, compression: str | None = None,
             overwrite: bool = False) -> Path:
        """Write one HDF5 file atomically (via ``path + '.tmp'``); returns the path.

        Missing folders are created. An existing file is replaced only with
        ``overwrite=True``; a folder, a path under a regular file or an unwritable
        folder is refused before anything is written (:class:`~emjax.errors.OutputError`,
        :func:`emjax.io.targets.check_output`). ``compression`` (e.g. "gzip") is
        lossless and applies to arrays of 1 or more dims.
        """
        from .io.hdf5 import save_results
        from .io.targets import check_output

        path = check_output(path, overwrite=overwrite)
        return save_results(self, path, compression=compression)

    @classmethod
    def load(cls, path: str | Path) -> Results:
        """Read a file written by :meth:`save`; raises SetupError for a missing or foreign file."""
        from .io.hdf5 import load_results

        return load_results(path)

    # -------------------------------------------------------- comparison
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Results):
            return NotImplemented
        return (
            self.scenario_json == other.scenario_json
            and _json(self.metadata) == _json(other.metadata)
            and list(self.monitors) == list(other.monitors)
            and all(self.monitors[k] == other.monitors[k] for k in self.monitors)
        )

    __hash__ = None

    def __repr__(self) -> str:
        sc = self.scenario
        head = "Results(" if sc is None else (
            f"Results({getattr(sc, 'type', type(sc).__name__)} "
            f"'{getattr(sc, 'name', '?')}', "
        )
        head += f"{len(self)} monitor{'s' if len(self) != 1 else ''})"
        m = self.metadata
        facts = []
        for key, fmt in (("dt", "dt = {:.4g} s"), ("steps", "{} steps"),
                         ("shape", "grid {}"), ("device", "on {}"),
                         ("wall_time_s", "wall {:.3g} s"), ("cells_per_s", "{}")):
            if m.get(key) is None:
                continue
            v = m[key]
            if key == "shape":
                v = "x".join(map(str, v))
            if key == "cells_per_s":
                v = f"{v / 1e6:.4g} Mcells/s"
            facts.append(fmt.format(v))
        lines = [head] + (["  " + ", ".join(facts)] if facts else [])
        width = max((len(k) for k in self.monitors), default=0)
        for k, md in self.monitors.items():
            lines.append(f"  {k.ljust(width)}  {md.kind.ljust(13)}  {_describe(md.data)}")
        return "\n".join(lines)


# ------------------------------------------------------------- helpers
def _arrays_equal(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(
        a[k].dtype == b[k].dtype and a[k].shape == b[k].shape
        and np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind in "fc")
        for k in a
    )


def _describe(data: dict[str, np.ndarray]) -> str:
    """'Ex, Ey (100, 2) float32' when shapes agree, else each with its shape."""
    if not data:
        return "no data"
    arrs = list(data.values())
    if all(a.shape == arrs[0].shape and a.dtype == arrs[0].dtype for a in arrs):
        return f"{', '.join(data)} {arrs[0].shape} {arrs[0].dtype}"
    return ", ".join(f"{k} {a.shape} {a.dtype}" for k, a in data.items())


def _to_jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, Path):
        return str(v)
    raise TypeError(f"{type(v).__name__} value {v!r} is not JSON-able")


def _json(v: Any) -> str:
    return json.dumps(v, default=_to_jsonable, sort_keys=False)


def json_image(value: dict[str, Any], where: str) -> dict[str, Any]:
    """``value`` as JSON would give it back (NumPy scalars to numbers, tuples to lists)."""
    try:
        return json.loads(_json(value))
    except TypeError as e:
        raise TypeError(f"{where}: {e}; store plain numbers, strings, lists or dicts") from e


# The units of the module docstring, by monitor kind and array key. A field key is looked
# up by its first letter ("Ex".."Hz", DGATD's "E" and "H", NearToFar's "E_inc"); an axis
# key "x_Ex" by its prefix "x_".
_FIELD = {"E": "V/m", "H": "A/m"}
_SPECTRUM = {"E": "V*s/m", "H": "A*s/m"}  # sum over steps of field * dt
_PORT = {"V": "V", "I": "A", "V_source": "V"}
DATA_UNITS: dict[str, dict[str, str]] = {
    "Probe": _FIELD, "FieldSnapshot": _FIELD, "DFTMonitor": _SPECTRUM,
    "NearToFar": _SPECTRUM, "EnergyMonitor": {"energy": "J"}, "FluxMonitor": {"flux": "W*s^2"},
    "LumpedPort": _PORT, "WaveguidePort": _PORT,
}
COORD_UNITS = {"t": "s", "t_E": "s", "t_H": "s", "f": "Hz", "points": "m", "normals": "1",
               "weights": "m^2", "x_": "m", "y_": "m", "z_": "m"}


def units(md: MonitorData, key: str, *, per_length: bool = False) -> str | None:
    """The unit of ``md.data[key]`` or ``md.coords[key]`` ("V/m", "s", "1", ...), or None
    for an array the table does not know. ``per_length``: a 2D run (FDTD2D), whose
    energies are per unit length (J/m)."""
    if key in md.coords:
        return COORD_UNITS.get(key, COORD_UNITS.get(key[:2]))
    table = DATA_UNITS.get(md.kind, {})
    if md.kind == "DFTMonitor" and "phasor" in str(md.attrs.get("quantity", "")):
        table = _FIELD  # FDFD's scattered phasors are fields, not spectra
    unit = table.get(key, table.get(key[:1]))
    return unit + "/m" if per_length and unit == "J" else unit


__all__ = ["COORD_UNITS", "DATA_UNITS", "KINDS", "MonitorData", "Results", "units"]
