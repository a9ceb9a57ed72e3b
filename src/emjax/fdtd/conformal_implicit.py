"""Locally implicit cut faces of the 3D conformal PEC: stability at the regular time step.

Every Dey-Mittra face keeps its true free area; what would make a small face stiffen
the leapfrog (its eigenvalue grows like 1/A) is removed by taking its circulation of E
at the Newmark average ``(E^{n+1} + 2 E^n + E^{n-1}) / 4`` instead of at ``E^n``.
Written for the edge fields u, ``(M + dt^2 K_S / 4)(u^{n+1} - 2 u^n + u^{n-1}) = -dt^2 K
u^n`` with K = K_R + K_S split into the uncut faces' and the cut faces' parts: stable
exactly when ``dt^2 K_R <= 4 M``, which the uncut faces meet at the Courant limit of the
regular grid whatever the cut faces' areas (the theta = 1/4 Newmark scheme applied to
K_S alone), and second order in time (the average is E^n + O(dt^2)). Its exact
invariant is that quadratic form of u (``|u^{n+1} - u^n|^2_{M - dt^2 K_R / 4} / dt^2 +
|u^{n+1} + u^n|^2_K / 4``); the leapfrog energy of the conformal metric (the
EnergyMonitor's, with :func:`energy_term`) is no longer exactly conserved but stays
within a narrow band without drifting.

Per step, with ``q = C E`` the cut faces' explicit circulation terms (``-db l / A``
per side, Dey and Mittra 1997) and ``R`` the E update's dependence on their H, the
correction ``delta`` of their H solves

    (I - C R / 4) delta = (C E^(0) - 2 q^n + q^{n-1}) / 4,

E^(0) being the step's E with the explicit H; then H += delta and E += R delta.
``W (I - C R / 4)`` (W = A / db per face) is symmetric positive definite; it is solved by
a Chebyshev iteration of fixed degree preconditioned by exact inverses of small blocks
of strongly coupled faces (the three faces of a cell's free corner), its spectrum bounded
at set-up: a linear function of the right side with no reductions, so runs resume
bitwise and gradients go through it. The state carries q^{n-1} per cut face.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

BLOCK = 4
"""Largest block of the block-Jacobi preconditioner (faces)."""

TOLERANCE = {"float32": 1e-6, "float64": 1e-8}
"""Relative error (bound) of the cut faces' solve per step, by dtype: about the rounding
of float32 fields; in float64 well below any discretisation error (the scheme's invariant
then moves by 6e-12 in 10,000 steps of the 8-cell sphere cavity)."""

COUPLING = 0.2
"""Normalised coupling |A_fg| / sqrt(A_ff A_gg) from which two faces share a block."""


def implicit_system(groups: list, cb_of, dtype) -> dict:
    """Host arrays of the cut faces' implicit correction (see the module doc).

    groups: per H component with cut faces, a dict with "comp" (0-2), "index" (index
    tuple of the faces), "cval" (n, 4) the explicit coefficients ``db l sg / A_eff`` of
    the four sides (bottom, right, top, left), "sg" (4,) the sides' curl signs over their
    spacing (1/m), "sides" four (E axis, (n, 3) edge nodes), "da" (n,) and "w" (n,) the
    symmetrising weight A_eff / db; cb_of(axis, (m, 3) nodes) -> the E update's cb of
    those edges. Faces are numbered in the groups' order.
    Returns {"arrays": the device arrays, "static": the structure and scalars the step
    is traced with (edge and face counts, Chebyshev degree and bounds), "A": the SPD
    matrix W (I - C R / 4) (scipy, for tests and diagnostics)}."""
    import scipy.sparse as sp

    axes = np.concatenate([np.full(len(p), ax) for g in groups for ax, p in g["sides"]])
    nodes = np.concatenate([p for g in groups for _, p in g["sides"]]).astype(np.int64)
    span = int(nodes.max()) + 2
    keys = ((axes * span + nodes[:, 0]) * span + nodes[:, 1]) * span + nodes[:, 2]
    uk, inv = np.unique(keys, return_inverse=True)
    ne = len(uk)
    e_ax = uk // span**3
    e_ijk = np.stack([(uk // span**2) % span, (uk // span) % span, uk % span], axis=1)
    eid, sg, pos = [], [], 0
    for g in groups:
        n = len(g["cval"])
        eid.append(np.stack([inv[pos + k * n: pos + (k + 1) * n] for k in range(4)], axis=1))
        sg.append(np.broadcast_to(np.asarray(g["sg"], float), (n, 4)))
        pos += 4 * n
    eid, sg = np.concatenate(eid), np.concatenate(sg)
    cval = np.concatenate([g["cval"] for g in groups])
    w = np.concatenate([g["w"] for g in groups])
    nf = len(cval)
    cb = np.zeros(ne)
    for ax in range(3):
        m = e_ax == ax
        cb[m] = cb_of(ax, e_ijk[m])
    rval = -cb[eid] * sg  # dE_e / dH_f: cb_e times the curl's sign over the spacing
    rows = np.repeat(np.arange(nf), 4)
    Cm = sp.csr_matrix((cval.ravel(), (rows, eid.ravel())), shape=(nf, ne))
    Rm = sp.csr_matrix((rval.ravel(), (eid.ravel(), rows)), shape=(ne, nf))
    A = (sp.diags(w) @ (sp.identity(nf, format="csr") - 0.25 * (Cm @ Rm))).tocsr()
    A = (0.5 * (A + A.T)).tocsr()  # symmetric to rounding already; exactly now
    A.eliminate_zeros()
    blocks = _blocks(A)
    B, P = _block_inverse(A, blocks)
    lo, hi = _bounds(A, B)
    rho = (math.sqrt(hi / lo) - 1) / (math.sqrt(hi / lo) + 1)
    tol = TOLERANCE[np.dtype(dtype).name]
    degree = max(1, math.ceil(math.log(tol / 2) / math.log(rho))) if rho > 0 else 1
    cols, vals = _ell((P @ A).tocsr())
    pcols, pvals = _ell(P)
    # edge ids run axis by axis (the keys' order): each axis' edges are one slice
    edges = tuple((ax, int(np.sum(e_ax == ax))) for ax in range(3) if np.any(e_ax == ax))
    faces = tuple((g["comp"], len(g["cval"])) for g in groups)
    arrays = {
        "eid": eid.astype(np.int32), "cval": cval.astype(dtype), "rval": rval.astype(dtype),
        "da": np.concatenate([g["da"] for g in groups]).astype(dtype),
        "w": w.astype(dtype), "cols": cols, "vals": vals.astype(dtype), "pcols": pcols,
        "pvals": pvals.astype(dtype),
        "e_index": [tuple(np.ascontiguousarray(e_ijk[e_ax == ax].T).astype(np.int32))
                    for ax, _ in edges],
        "f_index": [tuple(np.asarray(i, np.int32) for i in g["index"]) for g in groups],
    }
    static = {"edges": edges, "faces": faces, "degree": degree,
              "bounds": (lo, hi), "blocks": int(np.bincount(blocks).max())}
    return {"arrays": arrays, "static": static, "A": A}


def _blocks(A) -> np.ndarray:
    """Block number of each face: connected groups of faces coupled at least COUPLING
    (normalised), a group larger than BLOCK split again by stronger thresholds and,
    failing those, into single faces (any partition is a valid preconditioner)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    C = A.tocoo()
    d = A.diagonal()
    strength = np.abs(C.data) / np.sqrt(d[C.row] * d[C.col])
    off = C.row != C.col
    nf = A.shape[0]
    label = np.zeros(nf, np.int64)
    todo = np.ones(nf, bool)
    next_label = 0
    for tau in (COUPLING, 0.3, 0.45, 0.6, 0.8, 0.95, np.inf):
        keep = off & (strength >= tau) & todo[C.row] & todo[C.col]
        G = sp.coo_matrix((np.ones(keep.sum()), (C.row[keep], C.col[keep])), shape=A.shape)
        _, lab = connected_components(G, directed=False)
        sizes = np.bincount(lab[todo], minlength=lab.max() + 1)
        small = todo & (sizes[lab] <= BLOCK)
        if tau == np.inf:
            small = todo
        _, new = np.unique(lab[small], return_inverse=True)
        label[small] = next_label + new
        next_label += int(new.max()) + 1 if small.any() else 0
        todo &= ~small
        if not todo.any():
            break
    return label


def _block_inverse(A, blocks):
    """(B, P): A's diagonal blocks and their exact inverses (the block-Jacobi
    preconditioner), sparse."""
    import scipy.sparse as sp

    A = A.tocsr()
    order = np.argsort(blocks, kind="stable")
    starts = np.searchsorted(blocks[order], np.arange(blocks.max() + 1))
    sizes = np.diff(np.append(starts, len(order)))
    rows, cols, vals, ivals = [], [], [], []
    for s in np.unique(sizes):
        which = np.nonzero(sizes == s)[0]
        members = order[starts[which][:, None] + np.arange(s)[None, :]]  # (nb, s)
        r = np.repeat(members, s, axis=1)  # (nb, s * s): row of each entry
        c = np.tile(members, (1, s))
        sub = np.asarray(A[r.ravel(), c.ravel()]).reshape(len(members), s, s)
        rows.append(r.ravel())
        cols.append(c.ravel())
        vals.append(sub.ravel())
        ivals.append(np.linalg.inv(sub).ravel())
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    B = sp.csr_matrix((np.concatenate(vals), (rows, cols)), shape=A.shape)
    P = sp.csr_matrix((np.concatenate(ivals), (rows, cols)), shape=A.shape)
    return B, P


def _bounds(A, B) -> tuple[float, float]:
    """(lo, hi) bracketing the eigenvalues of P A = B^-1 A (the generalized symmetric
    problem A x = lambda B x), widened by 2%."""
    import scipy.linalg as sl
    import scipy.sparse.linalg as sla

    if A.shape[0] <= 2000:
        ev = sl.eigh(A.toarray(), B.toarray(), eigvals_only=True)
        lo, hi = float(ev[0]), float(ev[-1])
    else:
        hi = float(sla.eigsh(A, k=1, M=B.tocsc(), which="LA", tol=1e-4,
                             return_eigenvectors=False)[0])
        lo = float(sla.eigsh(A.tocsc(), k=1, M=B.tocsc(), sigma=0.0, which="LM", tol=1e-4,
                             return_eigenvectors=False)[0])
    return 0.98 * lo, 1.02 * hi


def _ell(M) -> tuple[np.ndarray, np.ndarray]:
    """(cols, vals) of a sparse matrix in ELL form: rows padded with their own index."""
    M = M.tocsr()
    n = M.shape[0]
    cnt = np.diff(M.indptr)
    width = max(int(cnt.max()), 1)
    cols = np.repeat(np.arange(n)[:, None], width, axis=1).astype(np.int32)
    vals = np.zeros((n, width))
    slot = np.arange(M.nnz) - np.repeat(M.indptr[:-1], cnt)
    r = np.repeat(np.arange(n), cnt)
    cols[r, slot] = M.indices
    vals[r, slot] = M.data
    return cols, vals


def _gather(E, arrays, static):
    """E on the cut faces' edges, (ne,) in the system's edge order (by axis)."""
    return jnp.concatenate([E[ax][idx] for (ax, _), idx in zip(static["edges"],
                                                                 arrays["e_index"],
                                                                 strict=True)])


def circulation(E, arrays, static):
    """q = C E per cut face (its explicit Dey-Mittra term), (nf,)."""
    e = _gather(E, arrays, static)
    return jnp.sum(arrays["cval"] * e[arrays["eid"]], axis=1)


def explicit_h(H_new, H_old, q, arrays, static):
    """The cut faces' explicit Dey-Mittra H: ``da H_old + q``."""
    H, off = list(H_new), 0
    for (comp, n), idx in zip(static["faces"], arrays["f_index"], strict=True):
        H[comp] = H[comp].at[idx].set(arrays["da"][off:off + n] * H_old[comp][idx]
                                      + q[off:off + n])
        off += n
    return tuple(H)


def solve(b, arrays, static):
    """x with A x = b (A = W (I - C R / 4)): Chebyshev iteration of the set-up's degree
    over the bounds of P A (Saad, Iterative Methods, Alg. 12.1) on the preconditioned
    residual z = P r, so that each step gathers once (P A, one ELL matrix)."""
    lo, hi = static["bounds"]
    theta, delta = 0.5 * (hi + lo), 0.5 * (hi - lo)
    sigma = theta / delta
    vals, cols = arrays["vals"], arrays["cols"]  # P A
    x = jnp.zeros_like(b)
    z = jnp.sum(arrays["pvals"] * b[arrays["pcols"]], axis=1)
    d = z / theta
    rho = 1.0 / sigma
    for _ in range(static["degree"]):  # unrolled: one small gather and fusion each
        x = x + d
        z = z - jnp.sum(vals * d[cols], axis=1)
        rho_new = 1.0 / (2 * sigma - rho)
        d = rho_new * rho * d + (2 * rho_new / delta) * z
        rho = rho_new
    return x


def correct(E_new, H_new, q_n, q_prev, arrays, static):
    """The implicit correction after the explicit step: (E^{n+1}, H^{n+1/2})."""
    rhs = 0.25 * (circulation(E_new, arrays, static) - 2 * q_n + q_prev)
    delta = solve(arrays["w"] * rhs, arrays, static)
    dE = jnp.zeros((sum(n for _, n in static["edges"]),), E_new[0].dtype).at[
        arrays["eid"]].add(arrays["rval"] * delta[:, None])
    E, off = list(E_new), 0
    for (ax, n), idx in zip(static["edges"], arrays["e_index"], strict=True):
        E[ax] = E[ax].at[idx].add(dE[off:off + n])
        off += n
    H, off = list(H_new), 0
    for (comp, n), idx in zip(static["faces"], arrays["f_index"], strict=True):
        H[comp] = H[comp].at[idx].add(delta[off:off + n])
        off += n
    return tuple(E), tuple(H)


def energy_term(H_old, E_new, q_n, w_H, arrays, static):
    """The cut faces' share of the H energy's Newmark mass, added to the leapfrog energy
    ``sum w_E E^n E^n + sum w_H H^{n-1/2} H^{n+1/2}`` (J): ``-1/4 sum_S w_H H^{n-1/2}
    (q^{n+1} - q^n)``, i.e. ``dt^2 / 8 h_S^{n-1/2} Q_S h^{n+1/2}`` (Q = G M_eps^-1 G^T).
    The scheme's exact invariant is the quadratic form of the module doc (the first-order
    form's H mass is not symmetric); with this term the leapfrog energy of the 8-cell
    sphere cavity at courant 0.99 stays in a band of 5.3e-4 peak to peak (2.7e-3 without)."""
    dq = circulation(E_new, arrays, static) - q_n
    total, off = 0.0, 0
    for (comp, n), idx in zip(static["faces"], arrays["f_index"], strict=True):
        total = total + jnp.sum(w_H[comp][idx] * H_old[comp][idx] * dq[off:off + n])
        off += n
    return -0.25 * total
