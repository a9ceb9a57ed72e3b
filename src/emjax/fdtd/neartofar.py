"""The Huygens box of a NearToFar monitor on the Yee grid: what to accumulate, and
how to turn the accumulated spectra into surface fields for :mod:`emjax.analysis.nf2ff`.

The box faces lie on E-node planes ``lo`` and ``hi`` (indices along each axis). On
the face normal to axis a at plane index p, the samples are the centres of the cell
faces, (p, j + 1/2, k + 1/2) in index units. There the tangential fields are
averages of the nearest Yee samples:

* E_t (t tangential): the two E_t edges of the cell face along the other tangential
  axis u (E_t sits on nodes along u);
* H_t: four samples, the two half-planes p - 1/2 and p + 1/2 times the two H_t
  positions along t (H_t sits on nodes along t).

The running DFT accumulates the raw Yee samples of one E plane and two H planes
per tangential component and face (plane-sized work per step and frequency); the
averaging, being linear, is done once at the end on the host. E spectra carry the
time stamps (n + 1) dt and H spectra (n + 1/2) dt, so both are exact DFTs of their
own samples. Faces must lie in the scattered-field region and outside any CPML.
"""

from __future__ import annotations

import numpy as np

from .cpml import tangential


def regions(lo, hi) -> list[tuple[int, slice, slice, slice]]:
    """(component 0..5, slices) to accumulate for a box with E-node corners lo, hi."""
    out = []
    for ax in range(3):
        for a_f in (lo[ax], hi[ax]):
            for t in tangential(ax):
                u = 3 - ax - t
                sl = [None, None, None]
                sl[ax] = slice(a_f, a_f + 1)
                sl[t] = slice(lo[t], hi[t])
                sl[u] = slice(lo[u], hi[u] + 1)
                out.append((t, *sl))
                sl = [None, None, None]
                sl[ax] = slice(a_f - 1, a_f + 1)
                sl[t] = slice(lo[t], hi[t] + 1)
                sl[u] = slice(lo[u], hi[u])
                out.append((3 + t, *sl))
    return out


def surface(lo, hi, spacing, lower, acc: list, *, xp=np):
    """Surface samples and fields from the accumulated spectra ``acc`` (as
    :func:`regions` orders them, each (nf, *slice shape)).

    Returns points (P, 3) m, normals (P, 3), weights (P,) m^2 (NumPy), E and H (nf, P,
    3): complex128 NumPy arrays, or with ``xp = jax.numpy`` JAX arrays of the
    accumulators' dtype (for objectives of :mod:`emjax.fdtd.gradient`).
    """
    d = np.asarray(spacing, dtype=np.float64)
    low = np.asarray(lower, dtype=np.float64)
    nf = acc[0].shape[0]
    pts, nrm, wts, Es, Hs = [], [], [], [], []
    k = 0
    for ax in range(3):
        for side, a_f in ((-1.0, lo[ax]), (1.0, hi[ax])):
            t1, t2 = tangential(ax)
            n1, n2 = hi[t1] - lo[t1], hi[t2] - lo[t2]
            E: list = [None] * 3
            H: list = [None] * 3
            for t in (t1, t2):
                u = 3 - ax - t
                e_acc, h_acc = acc[k], acc[k + 1]
                k += 2
                # Move axes to (f, ax, t, u) order.
                e = xp.moveaxis(e_acc, (1 + ax, 1 + t, 1 + u), (1, 2, 3))[:, 0]
                e = 0.5 * (e[:, :, :-1] + e[:, :, 1:])
                h = xp.moveaxis(h_acc, (1 + ax, 1 + t, 1 + u), (1, 2, 3))
                h = 0.5 * (h[:, 0] + h[:, 1])
                h = 0.5 * (h[:, :-1, :] + h[:, 1:, :])
                # Now (f, t, u); put in (f, t1, t2) order.
                if t != t1:
                    e, h = xp.swapaxes(e, 1, 2), xp.swapaxes(h, 1, 2)
                E[t], H[t] = e, h
            E[ax] = H[ax] = xp.zeros_like(E[t1])  # no normal components on the face
            cdt = np.complex128 if xp is np else E[t1].dtype
            c1 = low[t1] + (lo[t1] + 0.5 + np.arange(n1)) * d[t1]
            c2 = low[t2] + (lo[t2] + 0.5 + np.arange(n2)) * d[t2]
            P = np.zeros((n1, n2, 3))
            P[..., t1], P[..., t2] = c1[:, None], c2[None, :]
            P[..., ax] = low[ax] + a_f * d[ax]
            nv = np.zeros((n1 * n2, 3))
            nv[:, ax] = side
            pts.append(P.reshape(-1, 3))
            nrm.append(nv)
            wts.append(np.full(n1 * n2, d[t1] * d[t2]))
            Es.append(xp.stack(E, axis=-1).astype(cdt).reshape(nf, -1, 3))
            Hs.append(xp.stack(H, axis=-1).astype(cdt).reshape(nf, -1, 3))
    return (np.concatenate(pts), np.concatenate(nrm), np.concatenate(wts),
            xp.concatenate(Es, axis=1), xp.concatenate(Hs, axis=1))


def surface_bytes(lo, hi, nf: int, item: int) -> int:
    """Device bytes of the complex accumulators of one box (``item``: real itemsize)."""
    total = 0
    for _, *sl in regions(lo, hi):
        total += int(np.prod([s.stop - s.start for s in sl]))
    return total * nf * 2 * item


__all__ = ["regions", "surface", "surface_bytes"]
