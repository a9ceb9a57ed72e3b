"""Turn an FDFD3D scenario into coefficient arrays (NumPy, outside jit).

Time convention e^{+j omega t}: eps = eps0 (eps_r - j sigma / (omega eps0)),
mu = mu0 (mu_r - j sigma_m / (omega mu0)), stretch s = kappa + sigma / (alpha + j omega
eps0) from the shared grading of :mod:`emjax.grid.pml`.

Sub-pixel smoothing (``subpixel``): at E samples whose dual cell a structure's surface
cuts, the diagonal of the anisotropic smoothed tensor of Farjadpour et al. (2006),
``1/eps_aa = n_a^2 <1/eps> + (1 - n_a^2) / <eps>``, from the fill fraction and normal of
:mod:`emjax.grid.subpixel` (shared with the FDTD), with complex eps at omega.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..constants import eps0, mu0
from ..errors import AdviceWarning, SetupError
from ..grid import subpixel
from ..grid.pml import grading, sigma_optimal, stretch
from ..grid.rasterize import rasterize
from ..grid.yee import YeeGrid
from ..model.dispersion import PoleMedium
from ..model.geometry import Voxels
from ..model.media import PEC


@dataclass(frozen=True, eq=False)
class Geometry:
    """What does not depend on the frequency: the grid, the rasterized material map and
    the sub-pixel cuts of each structure (filled on first use). A frequency sweep builds
    it once (:func:`geometry`) and hands it to :func:`build` at every frequency."""

    grid: YeeGrid
    raster: object  # grid.rasterize.MaterialMap
    cuts: dict = field(default_factory=dict)  # (structure index, component) -> its cut

    @cached_property
    def h_media(self) -> np.ndarray:
        """Bool per rasterized medium: whether any H sample holds it."""
        n = len(self.raster.media)
        used = np.zeros(n, bool)
        for c in ("Hx", "Hy", "Hz"):
            used |= np.bincount(np.ravel(self.raster.index[c]), minlength=n)[:n] > 0
        return used

    def cut(self, k: int, comp: str, geom):
        if (k, comp) not in self.cuts:
            self.cuts[k, comp] = subpixel.cut_samples(self.grid, comp, geom)
        return self.cuts[k, comp]


def geometry(sim) -> Geometry:
    """The frequency-independent part of :func:`build` for ``sim``."""
    dom = sim.domain
    grid = YeeGrid(cells=dom.cells, spacing=dom.spacing3, lower=dom.lower)
    return Geometry(grid=grid, raster=rasterize(grid, sim.background, sim.structures))


@dataclass
class FDFDSetup:
    """Everything the solver needs, as NumPy arrays (see :mod:`emjax.fdfd.operator`).

    The whole-grid ``eps`` and ``mu`` are formed on first use only: the separable path
    reads the medium tables, indices and smoothed samples instead (at 96^3 the two
    complex arrays cost 85 MB and two gathers per sweep frequency)."""

    grid: YeeGrid
    omega: float
    s_int: tuple  # per axis, stretch at integer nodes (n,)
    s_half: tuple  # per axis, stretch at half nodes (n,)
    warnings: list
    pml: int = 0  # PML cells on every face (the scenario's boundary.thickness, read here)
    couplings: tuple = ()  # off-diagonal eps (subpixel.Couplings, F/m) of the smoothing
    eps_table: np.ndarray | None = None  # eps (F/m) of each rasterized medium at omega
    eps_index: tuple = ()  # per E component, the medium index of each sample
    smoothed: tuple = ((), (), ())  # per E component, index tuple of smoothed samples
    smoothed_eps: tuple = ((), (), ())  # per E component, their eps_aa (F/m)
    mu_table: np.ndarray | None = None  # mu (H/m) of each rasterized medium at omega
    mu_index: tuple = ()  # per H component, the medium index of each sample
    mu_used: np.ndarray | None = None  # bool per medium: present at an H sample

    @cached_property
    def eps(self) -> np.ndarray:
        """(3, nx, ny, nz) complex absolute permittivity at the E samples, F/m (the
        smoothed diagonal where the smoothing wrote one)."""
        eps = np.stack([self.eps_table[i] for i in self.eps_index])
        for a, (at, v) in enumerate(zip(self.smoothed, self.smoothed_eps, strict=True)):
            if len(at):
                eps[a][at] = v
        return eps

    @cached_property
    def mu(self) -> np.ndarray:
        """(3, nx, ny, nz) complex absolute permeability at the H samples, H/m."""
        return np.stack([self.mu_table[i] for i in self.mu_index])

    @cached_property
    def magnetic(self) -> bool:
        """Whether any H sample has mu != mu0 (from the media present, not the arrays)."""
        return bool(np.any(self.mu_table[self.mu_used] != mu0))


def pml_stretch(n: int, d: float, t: int, pml, omega: float) -> tuple[np.ndarray, np.ndarray]:
    """Stretch at integer and half nodes along one axis of ``n`` cells, ``t`` PML cells."""
    sig_max = pml.sigma_max if pml.sigma_max is not None else sigma_optimal(pml.m, d)
    out = []
    for off in (0.0, 0.5):
        u = np.arange(n) + off  # position in cells from the lower wall
        rho = np.maximum((t - u) / t, (u - (n - t)) / t)
        rho = np.where(rho > 0, rho, 0.0)
        sig, kap, alp = grading(rho, m=pml.m, sigma_max=sig_max, kappa_max=pml.kappa_max,
                                alpha_max=pml.alpha_max, m_alpha=pml.m_alpha)
        s = np.where(rho > 0, stretch(sig, kap, alp, omega), 1.0 + 0j)
        out.append(s.astype(np.complex128))
    return out[0], out[1]


def check_resolution(sim, pml: int | None = None) -> list[str]:
    """Warnings (or SetupError under ``strict``) for < 10 cells per wavelength; PML check
    (``pml``: its cells, as :func:`build` read them; None reads the scenario)."""
    msgs = []
    for label, cpw in sim.cells_per_wavelength():
        if cpw < 10:
            msgs.append(f"medium '{label}': {cpw:.3g} cells per wavelength (< 10) at "
                        f"{sim.frequency:.6g} Hz with spacing {max(sim.domain.spacing3):.4g} m; "
                        "refine the spacing")
    t = sim.boundary.thickness if pml is None else pml
    if t < 8:
        msgs.append(f"boundary: PML thickness = {t} cells is too thin for the Krylov solver "
                    "to converge reliably and reflects strongly; use at least 8 (10 default)")
    if msgs and sim.strict:
        raise SetupError("; ".join(msgs) + " (strict=True)")
    for m in msgs:
        warnings.warn(m, AdviceWarning, stacklevel=3)
    return msgs


def _medium_eps(m, omega):
    """Complex eps (F/m) of medium m at omega (rad/s); a PoleMedium's eps(f) there."""
    if isinstance(m, PoleMedium):
        return eps0 * complex(m.eps(omega / (2 * np.pi)))
    return eps0 * complex(m.eps_r, -m.sigma / (omega * eps0))


def _medium_mu(m, omega):
    if isinstance(m, PoleMedium):  # dispersive on the electric side only
        return complex(mu0)
    return mu0 * complex(m.mu_r, -m.sigma_m / (omega * mu0))


def build(sim, geo: Geometry | None = None) -> FDFDSetup:
    """Grid, material and stretch arrays of ``sim``; raises before large allocations.
    ``geo``: :func:`geometry` of ``sim`` (or of the sweep it belongs to), built here if
    None."""
    pml = sim.boundary.thickness  # the one read of the PML's cells
    msgs = check_resolution(sim, pml)
    geo = geo or geometry(sim)
    grid, mm = geo.grid, geo.raster
    omega = sim.omega
    eps_tab = np.array([_medium_eps(m, omega) for m in mm.media])
    mu_tab = np.array([_medium_mu(m, omega) for m in mm.media])
    couplings, smoothed, values = (), ((), (), ()), ((), (), ())
    if sim.subpixel and sim.structures:
        couplings, smoothed, values = _average(geo, sim, eps_tab, omega)
    s_int, s_half = [], []
    for a in range(3):
        si, sh = pml_stretch(grid.cells[a], grid.spacing[a], pml, sim.boundary, omega)
        s_int.append(si)
        s_half.append(sh)
    return FDFDSetup(grid=grid, omega=omega, s_int=tuple(s_int), s_half=tuple(s_half),
                     warnings=msgs, pml=pml, couplings=couplings, eps_table=eps_tab,
                     eps_index=tuple(mm.index[c] for c in ("Ex", "Ey", "Ez")),
                     smoothed=smoothed, smoothed_eps=values, mu_table=mu_tab,
                     mu_index=tuple(mm.index[c] for c in ("Hx", "Hy", "Hz")),
                     mu_used=geo.h_media)


def _average(geo: Geometry, sim, eps_tab: np.ndarray, omega) -> tuple:
    """(couplings, smoothed, values): the smoothed tensor's diagonal eps_aa at the E
    samples cut by a structure's surface (``smoothed[a]`` their index tuples, ``values[a]``
    eps_aa there, F/m; a later structure overwrites an earlier one's samples) and its
    off-diagonal entries as :class:`emjax.grid.subpixel.Couplings`: the tensor of
    :mod:`emjax.grid.subpixel` with the complex eps of both media at omega (so lossy and
    dispersive media are smoothed exactly at this frequency)."""
    media, index = geo.raster.media, geo.raster.index
    eps_b = _medium_eps(sim.background, omega)
    entries: dict = {}
    written: list[list] = [[], [], []]
    for k, s in enumerate(sim.structures):
        if isinstance(s.geometry, Voxels) or isinstance(s.medium, PEC):
            continue
        mid = next(i for i, x in enumerate(media) if x == s.medium)
        eps_s = _medium_eps(s.medium, omega)
        for a, c in enumerate(("Ex", "Ey", "Ez")):
            cut = geo.cut(k, c, s.geometry)
            if cut.fill.size == 0:
                continue
            own = np.isin(index[c][cut.index], (0, mid))
            at = tuple(v[own] for v in cut.index)
            f, n = cut.fill[own], cut.normal[own]
            written[a].append((np.stack(at, 1),
                               subpixel.tensor_eps(f, n[:, a], n[:, a], True, eps_s, eps_b)))
            for b in range(3):
                if b != a:
                    entries.setdefault((a, b), []).append(
                        (np.stack(at, 1), subpixel.tensor_eps(f, n[:, a], n[:, b], False,
                                                              eps_s, eps_b)))
    smoothed, values = [], []
    for a in range(3):
        if not written[a]:
            smoothed.append(())
            values.append(())
            continue
        pts = np.concatenate([p for p, _ in written[a]])
        val = np.concatenate([v for _, v in written[a]])
        # the last write of a sample wins, as the in-place writes did
        flat = np.ravel_multi_index(pts.T, geo.grid.shape)
        _, last = np.unique(flat[::-1], return_index=True)
        keep = len(flat) - 1 - last
        smoothed.append(tuple(pts[keep].T))
        values.append(val[keep])
    couplings = subpixel.couple(entries, dict.fromkeys(range(3), geo.grid.shape))
    return couplings, tuple(smoothed), tuple(values)


# ----------------------------------------------------------------- coefficients
def coefficient_arrays(st: FDFDSetup):
    """Dense CAS arrays: ce (3, 2, ...), we (3, ...) and ch (3, 2, ...), complex128."""
    jw = 1j * st.omega
    d = st.grid.spacing
    shape = st.grid.shape

    def s_along(b, half):
        s = (st.s_half if half else st.s_int)[b]
        sh = [1, 1, 1]
        sh[b] = -1
        return (s * d[b]).reshape(sh)

    from .operator import E_TERMS, H_TERMS

    ch = np.empty((3, 2, *shape), dtype=np.complex128)
    for h in range(3):
        for slot in range(2):
            _, axis = H_TERMS[h][slot]
            sign = 1.0 if slot == 0 else -1.0
            # H_h lives at a half node along ``axis`` (its derivative's axis)
            ch[h, slot] = sign / (jw * st.mu[h] * s_along(axis, True))
    ce = np.empty((3, 2, *shape), dtype=np.complex128)
    for a in range(3):
        for slot in range(2):
            _, axis = E_TERMS[a][slot]
            sign = 1.0 if slot == 0 else -1.0
            ce[a, slot] = sign / (jw * st.eps[a] * s_along(axis, False))
    we = -(st.omega**2) * st.eps
    return ce, we, ch


def sprod(st: FDFDSetup):
    """Per E component a, the 1D stretches (s_x, s_y, s_z) at E_a's position."""
    return tuple(tuple(st.s_half[b] if b == a else st.s_int[b] for b in range(3))
                 for a in range(3))


def index_tables(ce, we, ch):
    """CIS: uint16 indices and unique coefficient tables; SetupError past 65536 entries."""
    te_rows = np.concatenate([ce.transpose(0, 2, 3, 4, 1), we[..., None]], axis=-1)  # (3,...,3)
    th_rows = ch.transpose(0, 2, 3, 4, 1)
    out = []
    for rows, name in ((te_rows, "E"), (th_rows, "H")):
        flat = rows.reshape(-1, rows.shape[-1])
        view = np.ascontiguousarray(flat).view(np.dtype((np.void, flat.itemsize * flat.shape[1])))
        uniq, inv = np.unique(view.ravel(), return_inverse=True)
        if uniq.size > 65536:
            raise SetupError(
                f"storage='indices': {uniq.size} distinct {name} coefficient tuples exceed the "
                "65536 that uint16 indices address; use storage='arrays' or subpixel=false")
        table = uniq.view(flat.dtype).reshape(-1, flat.shape[1])
        out.append((inv.reshape(rows.shape[:-1]).astype(np.uint16), table))
    (ie, te), (ih, th) = out
    return ie, te, ih, th


def estimate(sim) -> dict[str, int]:
    """Device bytes of a solve, by item: coefficients, Krylov vectors; allocates nothing."""
    n = int(np.prod(sim.domain.cells))
    c = 16 if sim.precision == "complex128" else 8
    if sim.resolved_storage == "arrays":
        coeff = 15 * n * c
    else:
        coeff = 6 * n * 2 + 2 * 65536 * 3 * c  # worst-case tables
    nvec = 6 if sim.solver.method == "cocg" else 9
    vec = nvec * 3 * n * c
    fields = 2 * 3 * n * c
    out = {"coefficients": coeff, "krylov_vectors": vec, "fields": fields}
    pre = sim.resolved_preconditioner()
    if pre == "jacobi":
        out["jacobi_scale"] = 3 * n * c
    elif pre == "fastdiag":
        # r and 1/r, the stored z = M r, and the transform's intermediates (about two
        # vectors); on a GPU the y transform's matrices once per x
        import jax

        from .precond import per_x_bytes

        gpu = jax.default_backend() == "gpu"
        out["fastdiag"] = 5 * 3 * n * c + (per_x_bytes(sim.domain.cells) if gpu else 0)
    out["total"] = sum(out.values())
    return out
