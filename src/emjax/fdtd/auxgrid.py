"""A dispersion-matched 1D auxiliary Yee grid that carries a plane wave along k_hat.

A total-field/scattered-field (TF/SF) source needs the incident field at every Yee
sample next to the TF/SF surface, and it must be the field the multi-D grid itself
would carry: an analytic ``g(t - k.r/c)`` propagates at c while the Yee grid's waves
are slower (and direction dependent), and the difference leaks into the scattered
field region. This module advances the incident wave on its own 1D Yee grid, with
the same time step, whose spacing ``ds`` is chosen so that at a reference frequency
its phase velocity equals the multi-D grid's phase velocity along k_hat (Taflove and
Hagness 2005, secs. 5.9-5.10; the "matched numerical dispersion" 1D grid). Along an
axis ``ds`` is the cell size and the match holds at every frequency; obliquely it
holds exactly at the reference frequency and closely near it.

The 1D grid, positions ``s`` in m measured along k_hat from the grid's own origin:

    e[i]  at s = s0 + i ds          (E . e_hat, V/m), times n dt
    h[i]  at s = s0 + (i + 1/2) ds  (H . h_hat, A/m), times (n + 1/2) dt

    h^{n+1/2}[i] = da[i] h^{n-1/2}[i] - db[i] (e^n[i+1] - e^n[i]) / ds
    e^{n+1}[i]   = ca[i] e^n[i]       - cb[i] (h^{n+1/2}[i] - h^{n+1/2}[i-1]) / ds

with ``e_hat x h_hat = k_hat``. Node 0 is a hard source, ``e[0] = amplitude g(t)``;
the last ``absorber`` cells hold a graded, matched (sigma_m = sigma mu/eps) lossy
layer, so the wave leaves without returning (reflection below 1e-7 in amplitude).

Use, by a multi-D solver (3D here, 2D likewise):

    aux = make_aux_grid(k_hat, spacing, dt, f_ref, s_min, s_max)  # host, NumPy
    idx_e, w_e = aux.interpolation(s_points, "e")  # host, per surface (cubic)
    state = init(aux, dtype)                                       # JAX arrays
    per step:  H3D(E^n)   += curl corrections from sample(state["e"], idx_e, w_e)
               state = step_h(aux, state)                          # h^{n+1/2}
               E3D(H^n+1/2) += corrections from sample(state["h"], idx_h, w_h)
               state = step_e(aux, state, amplitude * g((n+1) dt)) # e^{n+1}

Positions come from :func:`project` (``k_hat . (r - origin)``); the grid covers
``[s_min, s_max]`` with a few spare cells on each side. Everything here but
:func:`init`, :func:`step_h`, :func:`step_e` and :func:`sample` runs on the host;
those four are pure JAX and jit inside the caller's time loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import jax.numpy as jnp
import numpy as np

from ..constants import c0, eps0, mu0

ABSORBER_CELLS = 64
"""Default thickness of the terminating lossy layer, in 1D cells."""


def numerical_wavenumber(k_hat, spacing, dt: float, frequency: float, v: float = c0) -> float:
    """Wavenumber (rad/m) of the Yee grid's plane wave along ``k_hat`` at ``frequency``.

    Solves ``(sin(w dt/2) / (v dt))^2 = sum_i (sin(k k_i d_i / 2) / d_i)^2`` for k
    (Taflove and Hagness 2005, eq. 4.28 in 3D; the 2D form has two terms). k_hat and
    spacing have 2 or 3 entries; v is the wave speed of the medium in m/s.
    """
    k_hat = np.asarray(k_hat, dtype=np.float64)
    d = np.asarray(spacing, dtype=np.float64)
    w = 2 * math.pi * frequency
    S2 = (math.sin(w * dt / 2) / (v * dt)) ** 2

    def resid(k):
        return float(np.sum((np.sin(k * k_hat * d / 2) / d) ** 2)) - S2

    lo = w / v * 0.5
    hi = math.pi / float(np.max(np.abs(k_hat) * d))  # the left side peaks at k k_i d_i = pi
    if resid(hi) < 0:
        raise ValueError(
            f"frequency {frequency:.4g} Hz is above the grid's cutoff along k_hat "
            f"{tuple(k_hat)} (spacing {tuple(d)} m, dt {dt:.4g} s); refine the grid"
        )
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if resid(mid) < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def matched_spacing(k_hat, spacing, dt: float, frequency: float, v: float = c0) -> float:
    """The 1D cell size (m) whose phase velocity at ``frequency`` equals the multi-D
    grid's along ``k_hat``: solves ``sin(k ds/2) / ds = sin(w dt/2) / (v dt)`` with k
    from :func:`numerical_wavenumber`. Along a grid axis this is that axis's spacing.
    Never below ``v dt`` (the 1D stability limit, where the 1D grid is exact)."""
    k_hat = np.asarray(k_hat, dtype=np.float64)
    d = np.asarray(spacing, dtype=np.float64)
    axis = np.nonzero(np.isclose(np.abs(k_hat), 1.0, rtol=0, atol=1e-12))[0]
    if axis.size:  # exact at every frequency
        return float(d[axis[0]])
    k = numerical_wavenumber(k_hat, d, dt, frequency, v)
    S = math.sin(math.pi * frequency * dt) / (v * dt)
    lo, hi = 1e-9 / k, math.pi / k  # sin(k ds/2)/ds falls from k/2 to 2/(pi/k) ... 0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if math.sin(k * mid / 2) / mid > S:
            lo = mid
        else:
            hi = mid
    return max(0.5 * (lo + hi), v * dt * (1 + 1e-12))


def project(points, k_hat, origin) -> np.ndarray:
    """``k_hat . (points - origin)`` in m; points (..., ndim), k_hat and origin (ndim,)."""
    p = np.asarray(points, dtype=np.float64)
    return (p - np.asarray(origin, dtype=np.float64)) @ np.asarray(k_hat, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class AuxGrid:
    """A 1D grid and its update coefficients (NumPy; made by :func:`make_aux_grid`).

    n: nodes of e and of h; ds: spacing in m; dt: time step in s; s0: position of
    e[0] (the source node) in m; eps, mu: the medium (F/m, H/m) the wave travels in;
    ca, cb, da, db: per-node update coefficients (n,), cb and db including 1/ds.
    """

    n: int
    ds: float
    dt: float
    s0: float
    eps: float
    mu: float
    ca: np.ndarray = field(repr=False)
    cb: np.ndarray = field(repr=False)
    da: np.ndarray = field(repr=False)
    db: np.ndarray = field(repr=False)

    @property
    def eta(self) -> float:
        """Wave impedance of the medium in ohm (h = e / eta in a travelling wave)."""
        return math.sqrt(self.mu / self.eps)

    def positions(self, which: str) -> np.ndarray:
        """Positions in m of the e (``"e"``) or h (``"h"``) nodes, shape (n,)."""
        off = 0.0 if which == "e" else 0.5
        return self.s0 + (np.arange(self.n) + off) * self.ds

    def interpolation(self, s, which: str, order: int = 3) -> tuple[np.ndarray, np.ndarray]:
        """Lagrange interpolation of the ``which`` ("e" or "h") nodes at positions s (m).

        order: 1 (linear, 2 nodes) or 3 (cubic, 4 nodes; the default: its error falls
        as (k ds)^4, which keeps oblique TF/SF leakage low). Returns (idx int32 of s's
        shape, w of shape s.shape + (order + 1,)):
        value = sum_j f[idx + j] w[..., j] (see :func:`sample`).
        Raises ValueError for a position outside the grid's source-free span.
        """
        if order not in (1, 3):
            raise ValueError(f"order {order} must be 1 (linear) or 3 (cubic)")
        s = np.asarray(s, dtype=np.float64)
        off = 0.0 if which == "e" else 0.5
        u = (s - self.s0) / self.ds - off
        if s.size and (u.min() < 2.0 or u.max() > self.n - ABSORBER_CELLS - 3):
            raise ValueError(
                f"positions [{s.min():.6g}, {s.max():.6g}] m fall outside the auxiliary "
                "grid's source-free span; build it with s_min/s_max covering them"
            )
        i = np.floor(u).astype(np.int32)
        x = u - i
        if order == 1:
            return i, np.stack([1 - x, x], axis=-1)
        # Nodes i-1, i, i+1, i+2 at offsets -1, 0, 1, 2 from i.
        w = np.stack([
            -x * (x - 1) * (x - 2) / 6,
            (x + 1) * (x - 1) * (x - 2) / 2,
            -(x + 1) * x * (x - 2) / 2,
            (x + 1) * x * (x - 1) / 6,
        ], axis=-1)
        return (i - 1).astype(np.int32), w

    def device(self, dtype) -> dict:
        """The coefficient arrays as a pytree of ``dtype`` arrays (to pass into jit)."""
        return {k: jnp.asarray(getattr(self, k), dtype) for k in ("ca", "cb", "da", "db")}


def make_aux_grid(k_hat, spacing, dt: float, frequency: float, s_min: float, s_max: float,
                  *, eps_r: float = 1.0, mu_r: float = 1.0, margin: int = 4,
                  absorber: int = ABSORBER_CELLS) -> AuxGrid:
    """A 1D grid matched to a Yee grid of ``spacing`` (2 or 3 entries, m) along k_hat.

    frequency: reference frequency of the dispersion match in Hz (the pulse centre);
    [s_min, s_max]: positions (m, along k_hat) the caller will sample, which the
    grid covers with ``margin`` spare cells beyond, the source ``margin`` cells
    before s_min and the absorber after s_max; eps_r, mu_r: the medium around the
    TF/SF surface (homogeneous there). dt: the multi-D grid's time step in s.
    """
    v = c0 / math.sqrt(eps_r * mu_r)
    ds = matched_spacing(k_hat, spacing, dt, frequency, v)
    if v * dt > ds * (1 + 1e-9):
        raise ValueError(f"dt = {dt:.4g} s exceeds the 1D limit ds / v = {ds / v:.4g} s")
    s0 = s_min - (margin + 1) * ds
    n_free = math.ceil((s_max - s0) / ds) + margin + 2
    n = n_free + absorber
    eps, mu = eps0 * eps_r, mu0 * mu_r
    # Graded conductivity in the last `absorber` cells, polynomial order 3, for a
    # normal-incidence reflection of about exp(-2 sigma_max eta L / 4) = 1e-8 in
    # theory (Taflove and Hagness eq. 7.62); matched magnetic loss sigma_m = sigma mu/eps.
    eta = math.sqrt(mu / eps)
    L = absorber * ds
    sigma_max = -(3 + 1) * math.log(1e-8) / (2 * eta * L) if absorber else 0.0
    start = n_free * ds

    def sigma_at(x):
        rho = np.clip((x - start) / L, 0.0, 1.0) if absorber else np.zeros_like(x)
        return sigma_max * rho**3

    xe = np.arange(n) * ds
    xh = (np.arange(n) + 0.5) * ds
    se = sigma_at(xe)
    sm = sigma_at(xh) * mu / eps
    ca = (1 - se * dt / (2 * eps)) / (1 + se * dt / (2 * eps))
    cb = (dt / (eps * ds)) / (1 + se * dt / (2 * eps))
    da = (1 - sm * dt / (2 * mu)) / (1 + sm * dt / (2 * mu))
    db = (dt / (mu * ds)) / (1 + sm * dt / (2 * mu))
    cb[-1] = 0.0  # PEC end behind the absorber
    ca[-1] = 0.0
    return AuxGrid(n=n, ds=ds, dt=dt, s0=s0, eps=eps, mu=mu, ca=ca, cb=cb, da=da, db=db)


# ----------------------------------------------------------------- JAX part
def init(aux: AuxGrid, dtype=jnp.float32) -> dict:
    """Zero state: {"e": (n,), "h": (n,)} of ``dtype``."""
    return {"e": jnp.zeros((aux.n,), dtype), "h": jnp.zeros((aux.n,), dtype)}


def step_h(coeffs: dict, state: dict) -> dict:
    """h^{n+1/2} from h^{n-1/2} and e^n. ``coeffs`` is :meth:`AuxGrid.device`."""
    e, h = state["e"], state["h"]
    de = jnp.concatenate([e[1:] - e[:-1], jnp.zeros((1,), e.dtype)])
    return {"e": e, "h": coeffs["da"] * h - coeffs["db"] * de}


def step_e(coeffs: dict, state: dict, source) -> dict:
    """e^{n+1} from e^n and h^{n+1/2}; the hard source sets e[0] = ``source``
    (amplitude times the waveform at (n+1) dt, V/m)."""
    e, h = state["e"], state["h"]
    dh = jnp.concatenate([jnp.zeros((1,), h.dtype), h[1:] - h[:-1]])
    e = coeffs["ca"] * e - coeffs["cb"] * dh
    e = e.at[0].set(jnp.asarray(source, e.dtype))
    return {"e": e, "h": h}


def step(coeffs: dict, state: dict, source) -> dict:
    """One full leapfrog step (h then e) for users who run the 1D grid alone."""
    return step_e(coeffs, step_h(coeffs, state), source)


def sample(values, idx, w):
    """Interpolated values of a 1D field at precomputed (idx, w) from
    :meth:`AuxGrid.interpolation`: ``sum_j values[idx + j] w[..., j]``; shape of idx."""
    out = values[idx] * w[..., 0]
    for j in range(1, w.shape[-1]):
        out = out + values[idx + j] * w[..., j]
    return out


__all__ = [
    "ABSORBER_CELLS", "AuxGrid", "init", "make_aux_grid", "matched_spacing",
    "numerical_wavenumber", "project", "sample", "step", "step_e", "step_h",
]
