"""FDTD monitor results: the host record and the device accumulators as MonitorData.

Times: E at (n + 1) dt, H at (n + 1/2) dt for the step n that produced them; energy
pairs E^n with H^(n-1/2).H^(n+1/2), the leapfrog's invariant at n dt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import numpy as np

from ..driver.host import to_host

if TYPE_CHECKING:
    from .setup import FDTDSetup


def region_shape(sl) -> tuple[int, ...]:
    """The shape of a monitor region given as a tuple of slices."""
    return tuple(s.stop - s.start for s in sl)


def region_coords(grid, comp: str, sl) -> dict[str, np.ndarray]:
    """Coordinates (m) of component ``comp`` over region ``sl``: x_Ex, y_Ex, ..."""
    return {f"{ax}_{comp}": grid.axis_coords(comp, a)[sl[a]] for a, ax in enumerate("xyz")}


def collect(s: FDTDSetup, sim, state, record, steps: int) -> dict:
    """MonitorData of every monitor of setup ``s`` after ``steps`` steps (FDTD3D and
    FDTD2D): probe and energy series and snapshot frames from the host ``record``, DFT
    and near-to-far accumulators from the device ``state``."""
    from ..results import MonitorData

    out = {}
    n = np.arange(steps, dtype=np.float64)
    t_E, t_H = (n + 1) * s.dt, (n + 0.5) * s.dt
    for k, (m, comps) in enumerate(s.probes):
        data = {c: record["probe"][k][j] for j, (c, _, _) in enumerate(comps)}
        out[m.name] = MonitorData(
            name=m.name, kind="Probe", data=data,
            coords={"t_E": t_E, "t_H": t_H, "points": np.array(m.positions)},
        )
    for k, (m, regions) in enumerate(s.dfts):
        if m.kind == "FluxMonitor":  # a flux monitor's face: paired below
            continue
        acc = to_host(state.dft[k])
        data, coords = {}, {"f": np.asarray(m.frequencies, dtype=np.float64)}
        for comp, sl in regions:
            data[comp] = np.asarray(acc[comp])
            coords.update(region_coords(s.grid, comp, sl))
        out[m.name] = MonitorData(name=m.name, kind="DFTMonitor", data=data, coords=coords)
    for k, (m, lo, hi, _) in enumerate(s.n2f):
        out[m.name] = _near_to_far(s, sim, state, k, m, lo, hi)
    for m, lo, hi, direction, faces in s.flux:
        out[m.name] = _flux(s, state, m, lo, hi, direction, faces)
    for k, (m, regions) in enumerate(s.snapshots):
        data, coords = {}, {}
        take = np.nonzero((np.arange(steps) + 1) % m.interval == 0)[0]
        for j, (comp, sl) in enumerate(regions):
            data[comp] = record["snap"][k][j]
            coords.update(region_coords(s.grid, comp, sl))
        # E frames are at (n+1) dt, H frames half a step earlier.
        coords["t"] = (take + 1.0) * s.dt
        out[m.name] = MonitorData(name=m.name, kind="FieldSnapshot", data=data, coords=coords)
    for j, port in enumerate(getattr(s, "ports", ())):
        out[port.name] = port_record(port, record["port"][0][:, j], s.dt)
    for j, guide in enumerate(getattr(s, "waveguides", ())):
        out[guide.name] = waveguide_record(guide, record["wg"][0][:, j], s.dt)
    for k, m in enumerate(s.energy):
        take = np.nonzero((np.arange(steps) + 1) % m.interval == 0)[0]
        # Energy pairs E^n with H^(n-1/2).H^(n+1/2): the leapfrog's invariant at n dt.
        out[m.name] = MonitorData(name=m.name, kind="EnergyMonitor",
                                  data={"energy": record["energy"][k][take]},
                                  coords={"t": n[take] * s.dt})
    return out


def flux_spectrum(spacing, dft, lo, hi, direction: float, faces, xp=np):
    """A FluxMonitor's flux per frequency (W s^2): its faces' DFT spectra ``dft[k]``
    (component -> (nf, ...)) paired by :func:`emjax.analysis.flux.face_flux` and summed;
    ``xp`` the array module (``jax.numpy``: differentiable, :mod:`emjax.fdtd.gradient`)."""
    from ..analysis.flux import face_flux, tangential_pair

    flux = 0.0
    for k, axis, side in faces:
        acc = dft[k]
        b, c = tangential_pair(axis)
        e_b, e_c, h_b, h_c = (acc[f"{f}{'xyz'[t]}"] for f, t in (("E", b), ("E", c),
                                                                 ("H", b), ("H", c)))
        flux = flux + face_flux(e_b, e_c, h_b, h_c, side, spacing[b] * spacing[c], xp=xp)
    if all(lo[a] != hi[a] for a in range(3)):
        # a box's faces count outward; a plane's face along its direction
        flux = flux * direction
    return flux


def _flux(s: FDTDSetup, state, m, lo, hi, direction: float, faces):
    """MonitorData of a FluxMonitor: its faces' DFT spectra paired by
    :func:`emjax.analysis.flux.face_flux` and summed, in W s^2 per frequency."""
    from ..results import MonitorData

    d = s.grid.spacing
    dft = {k: {c: np.asarray(v, np.complex128) for c, v in to_host(state.dft[k]).items()}
           for k, _, _ in faces}
    flux = flux_spectrum(d, dft, lo, hi, direction, faces)
    normal = next((a for a in range(3) if lo[a] == hi[a]), None)
    low, dv = np.asarray(s.grid.lower), np.asarray(d)
    attrs = {"box_lo": (low + np.asarray(lo) * dv).tolist(),
             "box_hi": (low + np.asarray(hi) * dv).tolist(),
             "normal": "box" if normal is None else "xyz"[normal],
             "direction": "+" if direction > 0 else "-"}
    return MonitorData(name=m.name, kind="FluxMonitor", data={"flux": flux},
                       coords={"f": np.asarray(m.frequencies, dtype=np.float64)}, attrs=attrs)


def _near_to_far(s: FDTDSetup, sim, state, k: int, m, lo, hi):
    """MonitorData of NearToFar monitor k: surface fields and the incident spectrum."""
    from ..results import MonitorData
    from .neartofar import surface

    acc = [np.asarray(a) for a in to_host(state.n2f[k])]
    pts, nrm, wts, Ef, Hf = surface(lo, hi, s.grid.spacing, s.grid.lower, acc)
    bg = sim.background
    data = {"E": Ef, "H": Hf}
    coords = {"f": np.asarray(m.frequencies, dtype=np.float64), "points": pts,
              "normals": nrm, "weights": wts}
    attrs = {"eps_r": bg.eps_r, "mu_r": bg.mu_r, "box_lo": list(lo), "box_hi": list(hi)}
    if s.planewaves:
        pw, _ = s.planewaves[0]
        inc = np.asarray(jax.device_get(state.n2f_inc[k]), np.complex128)
        data["E_inc"], centre = incident_spectrum(s, inc)
        attrs.update(incident_point=centre.tolist(), k_hat=pw.k_hat.tolist(),
                     e_hat=pw.e_hat.tolist())
    return MonitorData(name=m.name, kind="NearToFar", data=data, coords=coords,
                       attrs=attrs)


def incident_spectrum(s: FDTDSetup, inc):
    """(the plane wave's incident spectrum per frequency, V/m s, at the TF/SF box's
    centre, its phase reference; the centre in m) from a NearToFar monitor's incident
    accumulator ``inc`` (nf, auxiliary grid samples): NumPy or JAX arrays."""
    _, box = s.planewaves[0]
    centre = s.grid.lower + 0.5 * (np.array(box.lo) + np.array(box.hi)) * np.array(
        s.grid.spacing)
    idx, w = box.aux.interpolation(np.array([box.s_of(centre)]), "e")
    return sum(inc[:, idx[0] + j] * w[0, j] for j in range(w.shape[1])), centre


def port_record(port, v_port: np.ndarray, dt: float):
    """MonitorData of a lumped port (``ports.PortPlan``) from the voltage the solver
    records after each step (``v_port[n]`` = V^{n+1} = sum_e w_e E_e^{n+1}, V: E dl on
    a one-edge port, the weighted mean of the columns' sums of E dl on a sheet): the
    voltage and current at the half steps t = (n + 1/2) dt, where the leapfrog's Ampere
    law on the edges' dual faces holds:

        V^{n+1/2} = (V^n + V^{n+1}) / 2,   I^{n+1/2} = (V_s^{n+1/2} - V^{n+1/2}) / Z0.

    The E update averages E over the step in the resistor's term (semi-implicit), so
    I is exactly the current through the port's source and resistor (on a sheet, the
    mean over its series cross-sections of the total branch current through each:
    ``fdtd/ports.py``), flowing into the structure (the displacement current of the
    edges and any medium on them belong to the structure); V and I share their sample
    times, so their spectra need no half-step correction. V^0 = 0: a record always
    starts at step 0 (a resumed run carries it in its checkpoint)."""
    from ..results import MonitorData

    v = np.asarray(v_port, np.float64)
    V = 0.5 * (v + np.concatenate([[0.0], v[:-1]]))
    t = (np.arange(len(v), dtype=np.float64) + 0.5) * dt
    Vs = np.zeros_like(t) if port.voltage is None else np.asarray(port.voltage(t), np.float64)
    attrs = {"impedance": port.impedance, "excite": port.voltage is not None,
             "position": list(port.center), "polarization": "xyz"[port.comp],
             "length": port.length, "size": list(port.extent),
             "edges": [port.n_series, port.n_columns]}
    return MonitorData(name=port.name, kind="LumpedPort",
                       data={"V": V, "I": (Vs - V) / port.impedance, "V_source": Vs},
                       coords={"t": t}, attrs=attrs)


def waveguide_record(guide, vi: np.ndarray, dt: float):
    """MonitorData of a waveguide port (``waveguide.WaveguideMeasure``) from its
    per-step (V, I) (``vi[n]`` = (V^{n+1}, I^{n+1/2})): V at t_E = (n + 1) dt, I at
    t_H = (n + 1/2) dt, and the launched modal voltage at t_E (zeros for a passive
    port); :func:`emjax.analysis.waveguide.modal_waves` splits them into waves."""
    from ..results import MonitorData

    vi = np.asarray(vi, np.float64)
    n = np.arange(len(vi), dtype=np.float64)
    t_E, t_H = (n + 1) * dt, (n + 0.5) * dt
    vs = np.zeros_like(t_E) if guide.voltage is None else np.asarray(guide.voltage(t_E))
    return MonitorData(name=guide.name, kind="WaveguidePort",
                       data={"V": vi[:, 0], "I": vi[:, 1], "V_source": vs},
                       coords={"t_E": t_E, "t_H": t_H}, attrs=dict(guide.attrs))
