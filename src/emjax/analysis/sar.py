"""Bio-EM maps from frequency-domain fields: B1+, local and averaged SAR.

Everything here works on phasors on one common grid of points (cell centres), in SI
units: E in V/m, H in A/m, sigma in S/m, density rho in kg/m³, SAR in W/kg. Phasors
follow emjax's convention ``X(f) = ∫ x(t) exp(-j 2π f t) dt`` (time dependence
``exp(+jωt)``); a DFT monitor's arrays carry an arbitrary common scale (the source
spectrum), which cancels in every ratio the functions below form (SAR per watt of
accepted power, B1+ per square-root watt).

Definitions:

- B1+ and B1-: the components of B = mu H rotating with and against the proton's
  precession (clockwise seen from +z). In the physics convention ``exp(-iωt)`` these are
  Hoult's ``(Bx + i By)/2`` and ``(Bx - i By)*/2``; in ours ``B1+ = conj(Bx - j By)/2`` and
  ``B1- = (Bx + j By)/2``, so a field ``B (cos ωt, -sin ωt)`` has ``|B1+| = B``, ``B1- = 0``.
- local SAR = sigma |E|² / (2 rho) (peak phasors), zero where rho = 0.
- averaged SAR over a region = absorbed power / mass = Σ sigma|E|²/2 dV / Σ rho dV.
- peak spatial-average SAR (IEEE/IEC 62704-1 style, simplified): around every tissue
  voxel a cube of odd side (1, 3, 5, ... cells) grows until it holds the target mass
  (10 g by default); the absorbed power is interpolated linearly in mass between the
  last two cubes, so the average refers to exactly the target mass. Cubes that would
  leave the grid are not formed (those voxels get no value). The standard's air-fraction
  rule and its surface-voxel cube orientation search are left out.

References and bookkeeping for validation (issue 9): the exact Lorenz-Mie field inside
a lossy sphere (:func:`sphere_internal_field`) and its quasi-static limit, the Mie
absorbed power, and the two sides of the Yee grid's discrete Poynting theorem on a
DFT monitor: the flux through a closed box of E nodes (:func:`box_flux`) and the
loss on the E edges inside it (:func:`yee_absorbed_power`, with per-edge
conductivities from :func:`edge_conductivity`). For transforms of signals that have
died out these balance to rounding (2e-5 measured).
"""

from __future__ import annotations

import numpy as np

from ..constants import mu0
from .flux import face_flux, tangential_pair


def interpolate_axis(a: np.ndarray, x_src: np.ndarray, x_dst: np.ndarray, axis: int) -> np.ndarray:
    """Linear interpolation of ``a`` along ``axis`` from positions ``x_src`` to ``x_dst``.

    ``x_src`` must be increasing and cover ``x_dst``; a ValueError names the gap
    otherwise (no extrapolation: a value outside a monitor is unknown).
    """
    x_src, x_dst = np.asarray(x_src, float), np.asarray(x_dst, float)
    if x_src.size == 1:
        if not np.allclose(x_dst, x_src[0]):
            raise ValueError(f"one sample at {x_src[0]:.6g} m cannot be moved to {x_dst}")
        return np.repeat(a, x_dst.size, axis=axis)
    tol = 1e-9 * (x_src[-1] - x_src[0])
    if x_dst.min() < x_src[0] - tol or x_dst.max() > x_src[-1] + tol:
        raise ValueError(
            f"target positions [{x_dst.min():.6g}, {x_dst.max():.6g}] m leave the sampled "
            f"range [{x_src[0]:.6g}, {x_src[-1]:.6g}] m"
        )
    i = np.clip(np.searchsorted(x_src, x_dst, side="right") - 1, 0, x_src.size - 2)
    w = (x_dst - x_src[i]) / (x_src[i + 1] - x_src[i])
    shape = [1] * a.ndim
    shape[axis] = w.size
    w = w.reshape(shape)
    return np.take(a, i, axis=axis) * (1 - w) + np.take(a, i + 1, axis=axis) * w


def to_common_grid(
    arrays: dict[str, np.ndarray],
    axes: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    target: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> dict[str, np.ndarray]:
    """Each component moved from its own Yee positions onto the ``target`` grid.

    arrays: component name -> array of shape (nx_c, ny_c, nz_c) (complex or real);
    axes: component name -> its (x, y, z) sample positions in m;
    target: (x, y, z) positions in m of the common grid, each increasing.
    """
    out = {}
    for name, a in arrays.items():
        for ax in range(3):
            a = interpolate_axis(a, axes[name][ax], target[ax], ax)
        out[name] = a
    return out


def cell_centres(axes: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cell-centre positions common to Ex, Ey, Ez (Ex's x, Ey's y, Ez's z), clipped to
    the range every given component covers."""
    own = {"x": "Ex", "y": "Ey", "z": "Ez"}
    out = []
    for ax, comp in enumerate("xyz"):
        x = np.asarray(axes[own[comp]][ax], float)
        lo = max(float(np.min(v[ax])) for v in axes.values())
        hi = min(float(np.max(v[ax])) for v in axes.values())
        tol = 1e-9 * max(abs(hi - lo), 1e-30)
        out.append(x[(x >= lo - tol) & (x <= hi + tol)])
    return tuple(out)


def b1_plus(Hx: np.ndarray, Hy: np.ndarray, mu_r: np.ndarray | float = 1.0) -> np.ndarray:
    """Complex B1+ in T from H phasors in A/m (see the module docstring)."""
    mu = mu0 * np.asarray(mu_r)
    return np.conj(mu * (Hx - 1j * Hy)) / 2


def b1_minus(Hx: np.ndarray, Hy: np.ndarray, mu_r: np.ndarray | float = 1.0) -> np.ndarray:
    """Complex B1- in T from H phasors in A/m (see the module docstring)."""
    mu = mu0 * np.asarray(mu_r)
    return mu * (Hx + 1j * Hy) / 2


def power_density(E: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Absorbed power density sigma |E|² / 2 in W/m³; E of shape (3, ...) in V/m."""
    return 0.5 * np.asarray(sigma) * np.sum(np.abs(E) ** 2, axis=0)


def local_sar(E: np.ndarray, sigma: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """Local SAR sigma |E|² / (2 rho) in W/kg; 0 where rho is 0 (air)."""
    rho = np.asarray(rho, float)
    p = power_density(E, sigma)
    return np.where(rho > 0, p / np.where(rho > 0, rho, 1.0), 0.0)


def absorbed_power(E: np.ndarray, sigma: np.ndarray, cell_volume: float,
                   mask: np.ndarray | None = None) -> float:
    """Σ sigma|E|²/2 dV in W over the grid (or over ``mask``)."""
    p = power_density(E, sigma)
    return float(np.sum(p if mask is None else p[mask]) * cell_volume)


def average_sar(E: np.ndarray, sigma: np.ndarray, rho: np.ndarray, cell_volume: float,
                mask: np.ndarray | None = None) -> float:
    """Mass-averaged SAR in W/kg over the tissue (rho > 0) of the grid or of ``mask``."""
    rho = np.asarray(rho, float)
    m = rho > 0 if mask is None else (rho > 0) & mask
    mass = float(np.sum(rho[m]) * cell_volume)
    if mass == 0:
        raise ValueError("no tissue (rho > 0) in the region: its average SAR is undefined")
    return absorbed_power(E, sigma, cell_volume, m) / mass


def _box_sums(a: np.ndarray, h: int) -> np.ndarray:
    """Sums of ``a`` over the cube of half-width ``h`` centred on every cell that has one
    inside the grid; shape (nx-2h, ny-2h, nz-2h)."""
    from scipy.ndimage import uniform_filter

    w = 2 * h + 1
    n = [d - w + 1 for d in a.shape]
    if min(n) <= 0:
        return np.zeros([max(v, 0) for v in n])
    # the cells kept never see the filter's boundary mode: their cubes lie inside
    mean = uniform_filter(np.asarray(a, float), size=w, mode="constant")
    return mean[tuple(slice(h, d - h) for d in a.shape)] * float(w) ** 3


def peak_average_sar(local: np.ndarray, rho: np.ndarray, cell_volume: float,
                     mass: float = 0.010) -> tuple[float, np.ndarray]:
    """Peak spatial-average SAR over ``mass`` kg (default 10 g), and the map it came from.

    Returns ``(peak, sar_avg)``: ``sar_avg`` has the grid's shape, NaN where no cube of
    the target mass fits around a tissue voxel and outside tissue. See the module
    docstring for the cube-growing rule.
    """
    rho = np.asarray(rho, float)
    if np.sum(rho) * cell_volume < mass:
        raise ValueError(f"the grid holds {np.sum(rho) * cell_volume * 1e3:.4g} g of tissue, "
                         f"less than the averaging mass {mass * 1e3:.4g} g")
    power = local * rho * cell_volume  # W per cell
    dm = rho * cell_volume             # kg per cell
    out = np.full(local.shape, np.nan)
    todo = rho > 0
    prev_m = np.zeros(local.shape)
    prev_p = np.zeros(local.shape)
    for h in range(max(local.shape) // 2 + 1):
        m_h = np.full(local.shape, np.nan)
        p_h = np.full(local.shape, np.nan)
        inner = tuple(slice(h, d - h) for d in local.shape)
        m_h[inner] = _box_sums(dm, h)
        p_h[inner] = _box_sums(power, h)
        done = todo & (m_h >= mass)
        # linear in mass between the cube of half-width h-1 and h
        frac = np.where(done, (mass - prev_m) / np.where(done, m_h - prev_m, 1.0), 0.0)
        out[done] = (prev_p + frac * (p_h - prev_p))[done] / mass
        todo &= ~done
        todo &= ~np.isnan(m_h)  # the cube left the grid: no value for this voxel
        if not todo.any():
            break
        prev_m, prev_p = np.nan_to_num(m_h), np.nan_to_num(p_h)
    finite = out[np.isfinite(out)]
    if finite.size == 0:
        raise ValueError(f"no cube of {mass * 1e3:.4g} g fits inside the grid around any "
                         "tissue voxel; enlarge the region")
    return float(finite.max()), out


# ------------------------------------------------------------- sphere references
def quasi_static_internal_field(eps_c: complex) -> complex:
    """E_in / E0 = 3 / (eps_c + 2) inside a small sphere of complex relative permittivity
    ``eps_c`` (``eps_r - j sigma / (omega eps0)``) in vacuum: the ka -> 0 limit."""
    return 3.0 / (complex(eps_c) + 2.0)


def sphere_internal_field(points: np.ndarray, radius: float, eps_c: complex,
                          frequency: float, n_max: int | None = None) -> np.ndarray:
    """Exact (Lorenz-Mie) field inside a sphere lit by ``E_inc = x_hat exp(-j k z)``, V/m.

    points: (..., 3) positions in m relative to the sphere's centre, inside it; eps_c:
    complex relative permittivity (emjax convention, imaginary part <= 0); frequency in
    Hz; n_max: multipole orders kept (None: miepython's default, Wiscombe's criterion
    plus two). Returns complex (3, ...) Cartesian phasors for a unit incident amplitude,
    in the ``exp(+j omega t)`` convention.

    The series (Bohren and Huffman 1983, eqs. 4.40 and 4.52-4.53: ``E1 = sum_n E_n (c_n
    M_o1n - i d_n N_e1n)``) is miepython's ``e_near_cartesian``, which takes the index
    ``m = n - j kappa`` of emjax's sign and returns ``exp(-i omega t)`` phasors; the result
    is conjugated. At the centre only n = 1 survives and ``E1 = d_1 x_hat``, which tends to
    ``3 / (m^2 + 2)`` as ka -> 0. Off-centre points on the z axis carry miepython's pole
    nudge (cos theta = 0.999999), a relative error of 1e-6 to 1e-5 (measured).
    """
    import miepython
    from miepython.field import spherical_vector_to_cartesian

    from ..constants import c0

    eps_c = complex(eps_c)
    if eps_c.imag > 0:
        raise ValueError(f"eps_c = {eps_c}: the imaginary part must be <= 0 (exp(+j omega t))")
    p = np.asarray(points, float)
    r = np.linalg.norm(p, axis=-1)
    if np.any(r > radius * (1 + 1e-9)):
        raise ValueError("sphere_internal_field: every point must lie inside the sphere")
    # the centre's direction is arbitrary (only n = 1 survives there); theta = 90 deg
    # keeps it off the poles, where miepython nudges cos(theta) to 0.999999
    centre = r == 0
    theta = np.where(centre, np.pi / 2, np.arccos(np.clip(p[..., 2] / np.where(centre, 1, r),
                                                          -1.0, 1.0)))
    phi = np.arctan2(p[..., 1], p[..., 0])
    m = np.sqrt(eps_c)  # miepython's m = n - j kappa: Im m <= 0
    e = miepython.e_near(c0 / frequency, 2 * radius, m, 1.0, r, theta, phi,
                         n_pole=0 if n_max is None else int(n_max))
    xyz = spherical_vector_to_cartesian(*e, r, theta, phi)
    return np.conj(np.stack([np.asarray(c, complex).reshape(r.shape) for c in xyz]))


def sphere_absorbed_power(radius: float, eps_c: complex, frequency: float,
                          amplitude: float = 1.0) -> float:
    """Power in W a sphere absorbs from a plane wave of peak ``amplitude`` V/m (Mie,
    through miepython's efficiencies: ``Q_abs pi a^2 E0^2 / (2 eta0)``)."""
    import miepython

    from ..constants import c0, eta0

    m = np.sqrt(complex(eps_c))  # miepython: m = n - j kappa, the exp(+j omega t) sign
    qext, qsca, _, _ = miepython.efficiencies(m, 2 * radius, c0 / frequency)
    return float((qext - qsca) * np.pi * radius**2 * amplitude**2 / (2 * eta0))


# ------------------------------------------------------------ Yee power bookkeeping
def _select(md, comp: str, fi: int, planes: dict[int, float], box) -> np.ndarray:
    """``comp``'s DFT samples (frequency ``fi``) at coordinate ``planes[axis]`` on the
    given axes and within ``box[axis] = (lo, hi)`` (closed) on the others."""
    a = md.array(comp)[fi]
    axes = md.axes(comp)
    for ax in range(3):
        x = np.asarray(axes[ax], float)
        tol = 1e-6 * (np.ptp(x) / max(x.size - 1, 1) if x.size > 1 else 1.0)
        if ax in planes:
            sel = np.nonzero(np.abs(x - planes[ax]) <= tol)[0]
            if sel.size != 1:
                raise ValueError(f"DFT monitor '{md.name}' has no {comp} sample at "
                                 f"{'xyz'[ax]} = {planes[ax]:.6g} m; enlarge it")
        else:
            lo, hi = box[ax]
            sel = np.nonzero((x >= lo - tol) & (x <= hi + tol))[0]
        a = np.take(a, sel, axis=ax)
    return a


def box_flux(md, lo, hi, spacing, frequency_index: int = 0) -> float:
    """Net outward ``0.5 Re ∮ (E x H*) . n dA`` in W (times the DFT scale squared) through
    the closed box of E nodes from ``lo`` to ``hi`` (m, on grid nodes), from a
    DFTMonitor holding all six components on the box and half a cell beyond it.

    The pairing is the Yee grid's exact discrete Poynting theorem
    (:func:`emjax.analysis.flux.face_flux`, which the FluxMonitor uses too): on each
    face every tangential E sample on the face (its rim included) meets the tangential
    H sample half a cell outside at the same tangential position, with the full cell
    area. With E and H each transformed at its own sample times, ``-box_flux`` then
    equals the power dissipated on the E edges inside the closed box
    (:func:`yee_absorbed_power`) plus the power the sources inside deliver, to
    rounding, for transforms of signals that have died out.
    """
    lo, hi, d = (np.asarray(v, float) for v in (lo, hi, spacing))
    total = 0.0
    for a in range(3):
        b, c = tangential_pair(a)
        Eb, Ec, Hb, Hc = (f"E{'xyz'[b]}", f"E{'xyz'[c]}", f"H{'xyz'[b]}", f"H{'xyz'[c]}")
        box = {ax: (lo[ax], hi[ax]) for ax in range(3)}
        for side, p in ((-1.0, lo[a]), (1.0, hi[a])):
            e_b = _select(md, Eb, frequency_index, {a: p}, box)
            h_c = _select(md, Hc, frequency_index, {a: p + side * d[a] / 2}, box)
            e_c = _select(md, Ec, frequency_index, {a: p}, box)
            h_b = _select(md, Hb, frequency_index, {a: p + side * d[a] / 2}, box)
            total += float(face_flux(e_b, e_c, h_b, h_c, side, d[b] * d[c]))
    return total


def medium_conductivity(medium, frequency: float | None = None) -> float:
    """Conductivity in S/m that absorbs power in ``medium`` at ``frequency`` (Hz): a
    dispersive medium's ``sigma_eff(f)`` (static sigma plus the poles' loss), a constant
    medium's sigma, 0 for PEC. A dispersive medium needs the frequency."""
    if hasattr(medium, "sigma_eff"):
        if frequency is None:
            raise ValueError(f"medium {getattr(medium, 'name', '') or type(medium).__name__!r}"
                             " is dispersive: give the frequency at which to take its "
                             "conductivity sigma_eff(f)")
        return float(medium.sigma_eff(frequency))
    return float(getattr(medium, "sigma", 0.0))


def edge_media(sim):
    """The rasterized media of an FDTD3D scenario (:class:`~emjax.grid.rasterize.
    MaterialMap`: unique media and per-E-component index arrays), as its run paints
    them (sub-cell averaging is not applied)."""
    from ..grid.rasterize import rasterize
    from ..grid.yee import YeeGrid
    from ..model import PMC

    dom = sim.domain
    extended = tuple(isinstance(hi, PMC) for _, hi in sim.faces)
    grid = YeeGrid(cells=dom.cells, spacing=dom.spacing3, lower=dom.lower, extended=extended)
    return rasterize(grid, sim.background, sim.structures)


def edge_conductivity(sim, frequency: float | None = None, materials=None
                      ) -> dict[str, np.ndarray]:
    """Per E component, the conductivity in S/m of every Yee edge of an FDTD3D scenario
    (0 on PEC) at ``frequency`` Hz (:func:`medium_conductivity`; needed when a medium is
    dispersive). ``materials``: :func:`edge_media`'s result, to rasterize once for
    several frequencies."""
    mat = edge_media(sim) if materials is None else materials
    table = np.array([medium_conductivity(m, frequency) for m in mat.media])
    return {c: table[mat.index[c]] for c in ("Ex", "Ey", "Ez")}


def yee_absorbed_power(md, sigma: dict[str, np.ndarray], lower, spacing, lo=None, hi=None,
                       frequency_index: int = 0) -> float:
    """``Σ 0.5 sigma |E|² dV`` in W (times the DFT scale squared) over every E edge of a
    DFTMonitor (or those in the closed box ``lo``..``hi``, m), each edge with its own
    conductivity: the loss term of the discrete Poynting theorem, i.e. the SAR map
    integrated (``Σ rho SAR dV``) on the Yee samples themselves.

    sigma: per component the full-grid conductivity (:func:`edge_conductivity`);
    lower, spacing: the grid's lower corner and cell size in m (to locate samples).
    """
    from ..grid.yee import OFFSETS

    d = np.asarray(spacing, float)
    total = 0.0
    for comp in ("Ex", "Ey", "Ez"):
        a = md.array(comp)[frequency_index]
        axes = md.axes(comp)
        idx = []
        for ax in range(3):
            x = np.asarray(axes[ax], float)
            i = np.rint((x - lower[ax]) / d[ax] - OFFSETS[comp][ax]).astype(int)
            keep = np.ones(x.size, bool)
            if lo is not None:
                tol = 1e-6 * d[ax]
                keep = (x >= lo[ax] - tol) & (x <= hi[ax] + tol)
            a = np.compress(keep, a, axis=ax)
            idx.append(i[keep])
        s = sigma[comp][np.ix_(*idx)]
        total += 0.5 * float(np.sum(s * np.abs(a) ** 2)) * float(np.prod(d))
    return total



def edge_power_density(md, sigma: dict[str, np.ndarray], lower, spacing,
                       target: tuple[np.ndarray, np.ndarray, np.ndarray],
                       frequency_index: int = 0) -> np.ndarray:
    """Absorbed power density in W/m³ (times the DFT scale squared) on the ``target``
    cell centres: ``0.5 sigma |E_c|²`` formed on each E edge with that edge's own
    conductivity, then averaged from the four edges of each component around a cell.

    Interpolating E to the centre first and multiplying by the cell's conductivity
    mixes fields across a tissue boundary (E normal to it jumps by the permittivity
    ratio, 5x from bone into CSF) and puts the wrong conductivity on them; this form
    keeps each edge's loss, so it sums to :func:`yee_absorbed_power`.
    """
    from ..grid.yee import OFFSETS

    d = np.asarray(spacing, float)
    q = {}
    axes = {}
    for comp in ("Ex", "Ey", "Ez"):
        a = md.array(comp)[frequency_index]
        ax = md.axes(comp)
        idx = [np.rint((np.asarray(ax[k], float) - lower[k]) / d[k]
                       - OFFSETS[comp][k]).astype(int) for k in range(3)]
        q[comp] = 0.5 * sigma[comp][np.ix_(*idx)] * np.abs(a) ** 2
        axes[comp] = ax
    moved = to_common_grid(q, axes, target)
    return moved["Ex"] + moved["Ey"] + moved["Ez"]


__all__ = [
    "absorbed_power", "average_sar", "b1_minus", "b1_plus", "box_flux", "cell_centres",
    "edge_conductivity", "edge_media", "edge_power_density", "interpolate_axis", "local_sar",
    "medium_conductivity", "peak_average_sar",
    "power_density", "quasi_static_internal_field", "sphere_absorbed_power",
    "sphere_internal_field", "to_common_grid", "yee_absorbed_power",
]
