"""Validation of lumped ports against transmission-line theory (issue 21).

- ``parallel-plate-port``: a TEM parallel-plate line along x, PEC plates as the z
  faces (height h = 4 mm), PMC side walls as the y faces (width w = 8 mm), so that
  Z0 = eta0 h / w = 188.4 ohm and the TEM mode (Ez, Hy uniform over the cross-section)
  is the only one below 18.7 GHz (c / 2w, where Ez ~ cos(pi y / w) sets in). A sheet
  :class:`~emjax.model.LumpedPort` (Z0, the full width and height: 4 edges in series,
  9 columns, each half in the domain on the PMC end wall, the two on the side walls a
  quarter) feeds it at x = 0, on a PMC end wall, so that the feed sees only the line;
  a passive sheet port of R_L = 0.5, 1 and 2 Z0 ends it at x = L = 100 mm, on the
  other PMC end wall, so nothing lies behind the load. One baseband Gaussian pulse
  (spectral sigma 1.4 GHz, content to 6 GHz), 6 L / c plus the pulse's length, float32.

  Reference: the lossless line of length L (the distance between the two port planes)
  and phase constant beta = k0 = omega / c0 ends in R_L, so S11 = Gamma e^{-2 j k0 L}
  with Gamma = (R_L - Z0) / (R_L + Z0) (1/3, 0, -1/3 at 2, 1 and 0.5 Z0) and, referred
  to the load's R_L, S21 = sqrt(Z0 / R_L) (1 + Gamma) e^{-j k0 L}. A fourth run puts
  a load of R_L = Z0 at x = L inside the line, which runs on into a CPML (16 cells,
  alpha_max 0, which would otherwise pass the band's low end to the PEC backing): the
  load sheet's edges are then whole (off every wall) and the feed sees R_L || Z0,
  Gamma = -1/3.

  Metrics over 0.5 to 6 GHz (60 frequencies; 50 cells per wavelength at the top):
  max | |S11| - |Gamma| | (limit 0.01, the issue's acceptance), max |S11 - Gamma
  e^{-2 j k0 L}| (the complex value with the analytic beta, limit 0.01: the grid's
  dispersion shifts the phase by 2 L (beta_Yee - k0), about (k dx)^2 / 36 of the 2 k0 L
  along an axis at this Courant number), the matched load's max |S11| (limit -30 dB)
  and the power balance | |S11|^2 + |S21|^2 - 1 | of each run (limit 1e-3: the line is
  lossless, so what the feed's source delivers reaches the load's resistor; with the
  CPML behind the load 5/9 instead of 1, the load taking half of the 8/9 delivered).

  Measured (CPU, float32), | |S11| - |Gamma| | at 0.5 / 1 / 2 Z0 and the complex error:
  2 mm cells: 3.6e-3 / 4.1e-3 / 3.7e-3 and 1.5e-2 / 4.1e-3 / 1.6e-2 (the complex
  check fails), matched -47.7 dB; 1 mm (the default): 9.4e-4 / 1.0e-3 / 8.9e-4 and
  3.3e-3 / 1.0e-3 / 3.7e-3, matched -59.8 dB, the CPML-backed load 6.9e-4 and 4.1e-3;
  0.5 mm: 2.1e-4 / 2.7e-4 / 2.4e-4 and 1.1e-3 / 2.7e-4 / 1.3e-3, matched -71.5 dB:
  second order in the cell size. The power balance holds to 2e-4 to 7e-4 (float32's
  rounding in the late-time record). The default takes about 5 s of CPU time (its
  four runs and their compilations).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..records import Check

LOADS = (0.5, 1.0, 2.0)
"""Load resistances in units of the line's Z0."""


def line_impedance(height: float, width: float) -> float:
    """Z0 = eta0 h / w in ohm of a parallel-plate line with PMC side walls (h, w in m)."""
    from ..constants import eps0, mu0

    return float(np.sqrt(mu0 / eps0) * height / width)


def parallel_plate_line(spacing: float, load: float, *, length: float = 0.1,
                        height: float = 4e-3, width: float = 8e-3, f_max: float = 6e9,
                        dtype: str = "float32", cpml_behind: bool = False):
    """The ``parallel-plate-port`` scenario (see the module docstring): the line of
    ``length``, ``height`` and ``width`` (m) on cells of ``spacing`` m, a feed port at
    x = 0 and a passive load of ``load`` * Z0 at x = length, on a PMC end wall or, with
    ``cpml_behind``, in front of 30 more cells of line ending in a CPML. The pulse's
    content reaches ``f_max`` Hz."""
    import emjax as em

    z0 = line_impedance(height, width)
    nx, ny, nz = (round(v / spacing) for v in (length, width, height))
    wave = em.GaussianPulse(f0=0.0, fwidth=f_max / 4.3, remove_dc=False)
    sheet = (0.0, ny * spacing, nz * spacing)
    mid = (0.5 * ny * spacing, 0.5 * nz * spacing)
    feed = em.LumpedPort(name="feed", position=(0.0, *mid), size=sheet, polarization="z",
                         impedance=z0, waveform=wave)
    end = em.LumpedPort(name="load", position=(nx * spacing, *mid), size=sheet,
                        polarization="z", impedance=load * z0, excite=False)
    x_faces = (em.PMC(), em.CPML(thickness=16, alpha_max=0.0)) if cpml_behind else em.PMC()
    return em.FDTD3D(
        name="parallel-plate-port",
        domain=em.Domain(shape=(nx + (46 if cpml_behind else 0), ny, nz), spacing=spacing,
                         origin=(0.0, 0.0, 0.0)),
        boundary=em.Boundaries(x=x_faces, y=em.PMC(), z=em.PEC()),
        duration=6 * length / em.c0 + 12 * wave.tau, dtype=dtype, sources=[feed, end])


def line_run(spacing: float, load: float, frequencies, **kw) -> dict:
    """Run :func:`parallel_plate_line` and return its S11, S21 at ``frequencies`` (Hz)
    beside the references: keys "S11", "S21", "S11_ref", "gamma", "S21_ref", "steps"."""
    from ..analysis.sparams import s_parameters
    from ..constants import c0

    sim = parallel_plate_line(spacing, load, **kw)
    f = np.asarray(frequencies, np.float64)
    sp = s_parameters(sim.run(progress=False), f)
    feed, end = sim.sources
    z0, r = feed.impedance, end.impedance
    seen = r * z0 / (r + z0) if kw.get("cpml_behind") else r
    gamma = (seen - z0) / (seen + z0)
    length = end.position[0]
    k0 = 2 * np.pi * f / c0
    return {"S11": sp.S[:, 0, 0], "S21": sp.S[:, 1, 0], "gamma": gamma,
            "S11_ref": gamma * np.exp(-2j * k0 * length),
            "S21_ref": np.sqrt(z0 / r) * (1 + gamma) * np.exp(-1j * k0 * length),
            "steps": sim.num_steps}


def parallel_plate_port(spacing: float = 1e-3, *, limit: float = 0.01,
                        matched_db: float = -30.0, power_limit: float = 1e-3,
                        f_max: float = 6e9, dtype: str = "float32",
                        loads: tuple[float, ...] = LOADS, cpml_behind: bool = True
                        ) -> list[Check]:
    """Records of ``parallel-plate-port`` (see the module docstring); ``spacing`` in m,
    ``loads`` in units of Z0, ``cpml_behind``: add the run whose load sits in front of
    a CPML-terminated continuation."""
    case = "parallel-plate-port"
    f = np.linspace(f_max / 12, f_max, 60)
    runs = [(r, False) for r in loads] + ([(1.0, True)] if cpml_behind else [])
    recs = []
    for r, behind in runs:
        out = line_run(spacing, r, f, f_max=f_max, dtype=dtype, cpml_behind=behind)
        s11, gamma = out["S11"], out["gamma"]
        tag = (f"R_L = {r:g} Z0{' || Z0 (CPML behind)' if behind else ''}, {spacing * 1e3:g} "
               f"mm cells, {out['steps']} steps, {dtype}, {f[0] / 1e9:.3g}-{f[-1] / 1e9:.3g} GHz")
        mag = float(np.max(np.abs(np.abs(s11) - abs(gamma))))
        recs.append(Check(case, f"max ||S11| - |Gamma|| = {mag:.3g}, |Gamma| = "
                          f"{abs(gamma):.4g}; {tag}", mag, limit, "", mag <= limit))
        err = float(np.max(np.abs(s11 - out["S11_ref"])))
        recs.append(Check(case, f"max |S11 - Gamma exp(-2j k0 L)| = {err:.3g}; {tag}", err,
                          limit, "", err <= limit))
        # What the source delivers reaches the load's resistor: all of it on the lossless
        # line, all but what passes on towards the CPML with the line behind the load.
        want = abs(gamma) ** 2 + abs(out["S21_ref"][0]) ** 2
        power = float(np.max(np.abs(np.abs(s11) ** 2 + np.abs(out["S21"]) ** 2 - want)))
        recs.append(Check(case, f"max ||S11|^2 + |S21|^2 - {want:.4g}| = {power:.3g} (power "
                          f"balance); {tag}", power, power_limit, "", power <= power_limit))
        if gamma == 0:
            db = float(20 * np.log10(np.max(np.abs(s11))))
            recs.append(Check(case, f"matched load: max |S11| = {db:.1f} dB; {tag}", db,
                              matched_db, "dB", db <= matched_db))
    return recs


CASES: dict[str, Callable[..., list[Check]]] = {"parallel-plate-port": parallel_plate_port}

__all__ = ["CASES", "LOADS", "line_impedance", "line_run", "parallel_plate_line",
           "parallel_plate_port"]
