"""The finite-difference mode operator on the cross-section's Yee grid.

Fields vary as e^{j(omega t - beta z)}; with H' = eta0 H and lengths scaled by k0 (so
that derivatives are D / k0 and the eigenvalue is n_eff^2), Maxwell's curl equations
with d/dz = -j beta split into the transverse pair (Zhu and Brown, Opt. Express 10, 853
(2002), eqs. 5-10; the same Yee staggering as Tidy3D's and ceviche's FDFD mode solvers):

    psi = mu_z^-1 (Dyf Ex - Dxf Ey)          Hz' = -j psi
    n Hx' = Dxb psi - eps_y Ey               n Hy' = Dyb psi + eps_x Ex        (P)
    chi = eps_z^-1 (Dxb Hy' - Dyb Hx')       Ez = -j chi
    n Ex = mu_y Hy' + Dxf chi                n Ey = -mu_x Hx' + Dyf chi        (Q)

so that Q P Et = n_eff^2 Et. ``Dxf`` is the forward difference from integer-x nodes to
half-x nodes, ``Dxb`` the backward one back (likewise along y); both are Kronecker
products of 1D stencils, so Dxb Dyb = Dyb Dxb exactly and the D^4 part of Q P vanishes
(no 1 / k0^2 growth at low frequency, no spurious curl-free modes).

Walls: a PEC wall's tangential E nodes (the wall nodes of Ey, Ez on an x wall; of Ex,
Ez on a y wall) are removed from the unknowns (Ez through eps_z^-1 = 0), as are the E
nodes of :attr:`CrossSection.pec`. A PMC wall keeps them; its tangential H vanishes on
the wall, half a cell beyond the last H node, which the backward difference reads as
the odd image H[-1] = -H[0] (the wall row becomes 2 H[0] / d).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .section import CrossSection


def _forward(n: int, d: float) -> sp.csr_matrix:
    """(n, n + 1): integer nodes 0..n -> half nodes 0..n-1, (e[i+1] - e[i]) / d."""
    return sp.diags([-np.ones(n), np.ones(n)], [0, 1], shape=(n, n + 1), format="csr") / d


def _backward(n: int, d: float) -> sp.csr_matrix:
    """(n + 1, n): half nodes -> integer nodes 0..n, odd images beyond both walls."""
    m = sp.diags([np.ones(n), -np.ones(n)], [0, -1], shape=(n + 1, n), format="lil")
    m[0, 0] = 2.0
    m[n, n - 1] = -2.0
    return m.tocsr() / d


@dataclass(frozen=True)
class Operators:
    """The sparse pieces of the mode operator (normalised units, module docstring).

    ``dxf_e``: Ey -> Hz, ``dyf_e``: Ex -> Hz, ``dxb_h``: Hz -> Ey, ``dyb_h``: Hz -> Ex,
    ``dxb_z``: Hy -> Ez, ``dyb_z``: Hx -> Ez, ``dxf_z``: Ez -> Ex, ``dyf_z``: Ez -> Ey;
    ``free``: indices of the unknown (Ex, Ey) entries in the stacked flat vector;
    ``n_ex``: the number of Ex entries (the stacked vector is Ex then Ey, C order).
    """

    dxf_e: sp.csr_matrix
    dyf_e: sp.csr_matrix
    dxb_h: sp.csr_matrix
    dyb_h: sp.csr_matrix
    dxb_z: sp.csr_matrix
    dyb_z: sp.csr_matrix
    dxf_z: sp.csr_matrix
    dyf_z: sp.csr_matrix
    eps: tuple[np.ndarray, np.ndarray, np.ndarray]
    inv_eps_z: np.ndarray
    mu: tuple[np.ndarray, np.ndarray]
    inv_mu_z: np.ndarray
    free: np.ndarray
    n_ex: int


def e_masks(xs: CrossSection) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boolean masks at (Ex, Ey, Ez), True where E is held at zero: the section's PEC
    and the tangential E nodes of its PEC walls."""
    mx, my, mz = (m.copy() for m in xs.pec)
    xlo, xhi, ylo, yhi = (w == "pec" for w in xs.boundaries)
    for flag, idx in ((xlo, 0), (xhi, -1)):
        if flag:
            my[idx, :] = mz[idx, :] = True
    for flag, idx in ((ylo, 0), (yhi, -1)):
        if flag:
            mx[:, idx] = mz[:, idx] = True
    return mx, my, mz


def build(xs: CrossSection, k0: float) -> Operators:
    """The mode operator's pieces for ``xs`` at free-space wavenumber ``k0`` (1/m)."""
    nx, ny = xs.cells
    dx, dy = xs.spacing[0] * k0, xs.spacing[1] * k0
    fx, bx = _forward(nx, dx), _backward(nx, dx)
    fy, by = _forward(ny, dy), _backward(ny, dy)
    eye = lambda n: sp.identity(n, format="csr")  # noqa: E731 - a short local name
    mx, my, mz = e_masks(xs)
    inv_eps_z = np.where(mz, 0.0, 1.0 / xs.eps[2]).ravel()
    free = np.flatnonzero(~np.concatenate([mx.ravel(), my.ravel()]))
    return Operators(
        dxf_e=sp.kron(fx, eye(ny), format="csr"), dyf_e=sp.kron(eye(nx), fy, format="csr"),
        dxb_h=sp.kron(bx, eye(ny), format="csr"), dyb_h=sp.kron(eye(nx), by, format="csr"),
        dxb_z=sp.kron(bx, eye(ny + 1), format="csr"),
        dyb_z=sp.kron(eye(nx + 1), by, format="csr"),
        dxf_z=sp.kron(fx, eye(ny + 1), format="csr"),
        dyf_z=sp.kron(eye(nx + 1), fy, format="csr"),
        eps=tuple(np.asarray(e).ravel() for e in xs.eps), inv_eps_z=inv_eps_z,
        mu=(np.asarray(xs.mu[0]).ravel(), np.asarray(xs.mu[1]).ravel()),
        inv_mu_z=(1.0 / np.asarray(xs.mu[2])).ravel(),
        free=free, n_ex=mx.size)


def _zeros(rows: int, cols: int) -> sp.csr_matrix:
    return sp.csr_matrix((rows, cols))


def p_parts(op: Operators) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """P = P_D + P_0, (Ex, Ey) -> n (Hx', Hy'), rows Hx' then Hy': the curl part
    P_D = grad psi and the media part P_0 = [[0, -eps_y], [eps_x, 0]]."""
    imu = sp.diags(op.inv_mu_z)
    curl = sp.hstack([imu @ op.dyf_e, -imu @ op.dxf_e])   # (Ex, Ey) -> psi
    n_hx, n_ey = op.dxb_h.shape[0], op.eps[1].size
    p_d = sp.vstack([op.dxb_h @ curl, op.dyb_h @ curl], format="csr")
    p_0 = sp.bmat([[_zeros(n_hx, op.n_ex), -sp.diags(op.eps[1])],
                   [sp.diags(op.eps[0]), _zeros(op.n_ex, n_ey)]], format="csr")
    return p_d, p_0


def q_parts(op: Operators) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Q = Q_D + Q_0, (Hx', Hy') -> n (Ex, Ey), rows Ex then Ey: the gradient of chi
    Q_D and the media part Q_0 = [[0, mu_y], [-mu_x, 0]]."""
    iep = sp.diags(op.inv_eps_z)
    div = sp.hstack([-iep @ op.dyb_z, iep @ op.dxb_z])    # (Hx', Hy') -> chi
    n_hx = op.mu[0].size
    q_d = sp.vstack([op.dxf_z @ div, op.dyf_z @ div], format="csr")
    q_0 = sp.bmat([[_zeros(op.n_ex, n_hx), sp.diags(op.mu[1])],
                   [-sp.diags(op.mu[0]), _zeros(n_hx, op.mu[1].size)]], format="csr")
    return q_d, q_0


def mode_matrix(op: Operators) -> tuple[sp.csc_matrix, sp.csr_matrix]:
    """(A, P): A = Q P restricted to the free (Ex, Ey) unknowns, eigenvalues n_eff^2;
    P to recover the transverse H from the full transverse E.

    Q_D P_D is zero (module docstring) and is left out rather than formed: its entries,
    of order 1 / (k0 d)^4, would cancel only to rounding, which at low frequency (a
    quasi-TEM line with k0 d ~ 1e-4) swamps the eigenvalues of order 1."""
    p_d, p_0 = p_parts(op)
    q_d, q_0 = q_parts(op)
    a = (q_d @ p_0 + q_0 @ p_d + q_0 @ p_0)[op.free][:, op.free]
    return a.tocsc(), (p_d + p_0).tocsr()


__all__ = ["Operators", "build", "e_masks", "mode_matrix", "p_parts", "q_parts"]
