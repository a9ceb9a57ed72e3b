"""FDFD validation (seed 000): the dielectric sphere's bistatic RCS against Mie theory.

- ``fdfd-sphere-rcs``: the seed's sphere (radius 7.2 cm, eps_r = 4, 1 GHz, x-polarised
  plane wave along +z, 32 cm cubic domain with a 10-cell PML inside it) at 5, 4 and
  3.33 mm cells (64^3, 80^3, 96^3). Scattered fields on a closed box between the sphere
  and the PML go through the shared near-to-far transform (:mod:`emjax.analysis.nf2ff`);
  the E-plane (xz) and H-plane (yz) RCS over 0-180° (1° steps) are compared with
  miepython (:mod:`emjax.analysis.mie`). Metric: the largest |error| in dB over the
  angles, per plane and cell size; limit 0.5 dB. COCG to a relative residual of 1e-4
  (the RCS moves by under 0.01 dB below 1e-3). Also iterations, solve time (compile
  included) and set-up time per size. On the CPU only 5 mm (measured: 1,032
  iterations, E-plane 0.07 dB, H-plane 0.16 dB).
- ``fdtd-fdfd-sphere``: the same sphere in 3D FDTD (Gaussian plane wave through a TF/SF
  box, DFT monitors at 1 GHz on two planes in the scattered-field region, forward
  (normal z) and side (normal x)) and in FDFD on the same Yee grid: the FDTD spectra,
  divided by the incident spectrum carried to the origin, against the FDFD scattered
  phasors at the same Yee positions. Metric: relative L2 difference of E and of H on
  each plane; limit 3%. 5, 4, 3.33 mm on a GPU; 8 mm in a 40 cm domain (8-cell
  absorbers) on the CPU (measured 0.2-0.3%).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..analysis.mie import mie_rcs_db
from ..constants import c0
from ..model import Domain, Medium, Sphere, Structure
from ..records import Check, device_name, on_gpu
from ..scenarios.sphere import EPS_R, FREQ, RADIUS, SIZE, sphere_scenario


def rcs_errors(res) -> dict[str, np.ndarray]:
    """Per plane, |FDFD - Mie| in dB over the angles of ``res`` (a sphere run)."""
    m = res.metadata
    th = np.radians(m["rcs_theta_deg"])
    return {p: np.abs(np.asarray(m[f"rcs_{p}_dBsm"]) - mie_rcs_db(RADIUS, EPS_R, FREQ, th, p))
            for p in "EH"}


def sphere_rcs(spacings=None, limit: float = 0.5, case: str = "fdfd-sphere-rcs",
               **kw) -> list[Check]:
    """Max dB error per plane at each cell size; also iterations, solve and set-up time.

    ``spacings`` default: 5, 4 and 3.33 mm (64^3, 80^3, 96^3) on a GPU; 5 mm on the CPU
    (about a minute there: 1,032 COCG iterations to 1e-4, errors 0.07 / 0.16 dB).
    """
    if spacings is None:
        spacings = (0.005, 0.004, 0.32 / 96) if on_gpu() else (0.005,)
    out = []
    for d in spacings:
        sim = sphere_scenario(d, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sim.run()
        n = sim.domain.cells[0]
        m = res.metadata
        for p, err in rcs_errors(res).items():
            out.append(Check(case, f"{p}-plane max error {n}^3", err.max(), limit, "dB",
                             err.max() <= limit))
        out += [
            Check(case, f"iterations {n}^3 ({sim.solver.method}, {m['storage']}, "
                  f"{m['preconditioner']}, {sim.precision}, tol {sim.solver.tol:g})",
                  m["iterations"],
                  sim.solver.max_iter, "", m["converged"]),
            Check(case, f"solve time {n}^3 ({device_name()}, incl. compile)",
                  m["wall_time_s"], np.inf, "s", True),
            Check(case, f"set-up time {n}^3", m["setup_time_s"], np.inf, "s", True),
        ]
    return out


# ------------------------------------------------------- FDTD against FDFD
CROSS_FREQ = FREQ


def cross_scenarios(spacing: float, *, size: float = SIZE, thickness: int = 10,
                    tol: float = 1e-6, dtype: str = "float32", duration: float = 20e-9):
    """(FDTD3D, FDFD3D, planes) of the seed's sphere on one Yee grid.

    FDTD: a Gaussian plane wave (1 GHz centre, 0.4 GHz spectral width) through a TF/SF
    box that clears the sphere by 1.3 cm, a NearToFar box 1 cm outside it (only for the
    incident spectrum at the box centre, the origin, that normalises the DFT) and DFT
    planes in the scattered-field region. FDFD: the same sphere, PML thickness and grid,
    COCG to ``tol``. ``planes``: {name: (lo, hi)} in m, a forward plane (normal z) and a
    side plane (normal x), each midway between the TF/SF box and the absorber.
    """
    from ..model import CPML, FDTD3D, DFTMonitor, GaussianPulse, NearToFar, PlaneWave

    half_box = RADIUS + 0.013 + spacing  # TF/SF half-size, snapped outward by <= 1 cell
    inner = size / 2 - thickness * spacing
    p = 0.5 * (half_box + inner)
    if p - half_box < spacing:
        raise ValueError(f"cross_scenarios: size = {size} m with {thickness} PML cells of "
                         f"{spacing} m leaves no room for a plane outside the TF/SF box")
    w = p  # lateral half-width: the planes stay out of the absorber
    planes = {"forward": ((-w, -w, p), (w, w, p)), "side": ((p, -w, -w), (p, w, w))}
    sphere = Structure(geometry=Sphere(radius=RADIUS), medium=Medium(eps_r=EPS_R))
    mons = [NearToFar(name="inc", frequencies=[CROSS_FREQ], size=(2 * RADIUS + 0.046,) * 3)]
    for name, (lo, hi) in planes.items():
        c = tuple(0.5 * (a + b) for a, b in zip(lo, hi, strict=True))
        s = tuple(b - a for a, b in zip(lo, hi, strict=True))
        mons.append(DFTMonitor(name=name, center=c, size=s, frequencies=[CROSS_FREQ]))
    td = FDTD3D(
        name="sphere-cross", domain=Domain(size=(size,) * 3, spacing=spacing),
        boundary=CPML(thickness=thickness), structures=[sphere],
        sources=[PlaneWave(waveform=GaussianPulse(f0=CROSS_FREQ, fwidth=0.4e9),
                           box_size=(2 * RADIUS + 0.026,) * 3)],
        monitors=mons, duration=duration, dtype=dtype,
    )
    fd = sphere_scenario(spacing, thickness=thickness, tol=tol, size=size).model_copy(
        update={"rcs": False})
    return td, fd, planes


def cross_errors(td_res, fd_res, grid, planes) -> dict[str, dict[str, float]]:
    """{plane: {"E": rel L2, "H": rel L2}} of FDTD against FDFD scattered fields.

    The FDTD DFT spectra (V/m s, A/m s) are divided by the incident spectrum carried to
    the origin (V/m s), where the FDFD incident wave has unit amplitude and zero phase; both
    use the e^{+j omega t} convention and sample each component at its own Yee position
    (E at (n+1) dt, H at (n+1/2) dt in the DFT, so no half-step shift remains).
    """
    inc = td_res["inc"]
    # The spectrum is taken at the TF/SF box centre, which sits half a cell off the origin
    # when the snapped box is asymmetric: carry it back along k (phase k0 k_hat . r).
    k0 = 2 * np.pi * CROSS_FREQ / c0
    shift = float(np.dot(inc.attrs["k_hat"], inc.attrs["incident_point"]))
    e_inc = complex(inc.data["E_inc"][0]) * np.exp(1j * k0 * shift)
    out = {}
    for name, (lo, hi) in planes.items():
        mon = td_res[name]
        errs = {}
        for f in "EH":
            num = den = 0.0
            for c in (f + "x", f + "y", f + "z"):
                a = np.asarray(mon.data[c][0], np.complex128) / e_inc
                sl = grid.index_range(c, lo, hi)
                b = fd_res["scattered"].data[c][0][sl]
                if a.shape != b.shape:
                    raise RuntimeError(f"plane {name} {c}: FDTD {a.shape} vs FDFD {b.shape}")
                num += float(np.sum(np.abs(a - b) ** 2))
                den += float(np.sum(np.abs(b) ** 2))
            errs[f] = float(np.sqrt(num / den))
        out[name] = errs
    return out


def fdtd_fdfd_sphere(spacings=None, limit: float = 0.03, case: str = "fdtd-fdfd-sphere",
                     **kw) -> list[Check]:
    """FDTD (TF/SF + DFT) and FDFD scattered fields of the seed's sphere on two planes
    outside it: relative L2 difference per plane, E and H, limit 3%. 5, 4 and 3.33 mm
    cells on a GPU; 8 mm cells in a 40 cm domain on the CPU."""
    import time

    from ..grid.yee import YeeGrid

    if spacings is None:
        if on_gpu():
            spacings = (0.005, 0.004, 0.32 / 96)
        else:
            spacings, kw = (0.008,), {"size": 0.40, "thickness": 8, **kw}
    out = []
    for d in spacings:
        td, fd, planes = cross_scenarios(d, **kw)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tr = td.run(progress=False)
            t1 = time.perf_counter()
            fr = fd.run()
        t2 = time.perf_counter()
        dom = fd.domain
        grid = YeeGrid(cells=dom.cells, spacing=dom.spacing3, lower=dom.lower)
        n = dom.cells[0]
        for plane, errs in cross_errors(tr, fr, grid, planes).items():
            for f, e in errs.items():
                out.append(Check(case, f"{plane} plane {f} rel L2 {n}^3 ({d * 1e3:.3g} mm)",
                                 e, limit, "", e <= limit))
        out += [Check(case, f"FDTD time {n}^3 ({td.num_steps} steps)", t1 - t0, np.inf,
                      "s", True),
                Check(case, f"FDFD time {n}^3 ({fr.metadata['iterations']} iterations)",
                      t2 - t1, np.inf, "s", fr.metadata["converged"])]
    return out


CASES = {"fdfd-sphere-rcs": sphere_rcs, "fdtd-fdfd-sphere": fdtd_fdfd_sphere}
