"""The matrix-free FDFD operator of seed 000, equations (15)-(16), in pure JAX.

Time convention e^{+j omega t}. Unknowns: the scattered E on the Yee edges, one array
``x`` of shape (3, nx, ny, nz) (components Ex, Ey, Ez; z fastest), V/m. With stretched-
coordinate PML (Shin and Fan 2012) the discrete equations (3)-(11) of the seed read

    H = A_h E + (magnetic source),  A_h = -(1 / (j omega mu)) curl_E,
    E = A_e H + (electric source),  A_e = +(1 / (j omega eps)) curl_H,

and eliminating H gives the E-only system (seed eq. 15-16)

    G x = x - A_e(A_h x) = b.

``curl_E`` uses forward differences (E beyond the upper wall is zero, PEC) and
``curl_H`` backward differences; each difference along axis a is divided by
``s_a Delta_a`` at the position of the result. The coefficient pairs of A_h and A_e
(seed eq. 17-18) are stored

* CAS ("arrays"): ``ce`` (3, 2, nx, ny, nz) and ``ch`` (3, 2, nx, ny, nz) complex;
* CIS ("indices"): ``ie`` (3, nx, ny, nz) and ``ih`` (3, nx, ny, nz) uint16 indices
  into small tables ``te`` (M_e, 3) and ``th`` (M_h, 2) of unique coefficient tuples.

Term order (coefficient slot 0, 1) per component:
``Hx: dEy/dz, dEz/dy``; ``Hy: dEz/dx, dEx/dz``; ``Hz: dEx/dy, dEy/dx``;
``Ex: dHz/dy, dHy/dz``; ``Ey: dHx/dz, dHz/dx``; ``Ez: dHy/dx, dHx/dy``.

E tangential to a lower wall sits on the wall (PEC): it is masked out of the
product (``G x = x`` there, columns zero), which keeps the symmetrized system exactly
complex symmetric.

Symmetrized system (Shin and Fan 2012): multiplying row E_a by
``w_a = -omega^2 eps_a S_a``, ``S_a = s_x s_y s_z`` (all at E_a's position) turns G into
``curl_H' mu^-1 curl_E' - omega^2 eps~`` with the UPML tensors, which is complex
symmetric. That left scaling spreads the spectrum (COCG then stalls: measured); the
similarity transform ``T = S^(1/2) (w G) S^(-1/2)`` is symmetric as well and keeps the
SC-PML spectrum, so COCG solves ``T y = S^(1/2) w b`` and ``x = S^(-1/2) y``.
``w_eps = -omega^2 eps`` is the third column of the CIS E table (or the array ``we`` in
CAS); ``S^(1/2)`` is the product of the 1D arrays ``ssqrt`` (sqrt(s) per axis at E_a's
position), never stored in 3D.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax

from ..constants import mu0

# (H component, derivative axis, E component) for the two slots of each H component
H_TERMS = (((1, 2), (2, 1)), ((2, 0), (0, 2)), ((0, 1), (1, 0)))
# (E component slot -> (H component, derivative axis))
E_TERMS = (((2, 1), (1, 2)), ((0, 2), (2, 0)), ((1, 0), (0, 1)))


def _fwd(u, axis):
    """u[i+1] - u[i] along ``axis`` with u[n] = 0."""
    return jnp.diff(u, axis=axis, append=jnp.zeros_like(lax.slice_in_dim(u, 0, 1, axis=axis)))


def _bwd(v, axis):
    """v[i] - v[i-1] along ``axis`` with v[-1] = 0."""
    return jnp.diff(v, axis=axis, prepend=jnp.zeros_like(lax.slice_in_dim(v, 0, 1, axis=axis)))


@partial(jax.jit, static_argnums=0)  # one executable per shape, not a dozen eager ops
def _wall_mask(shape):
    out = []
    for a in range(3):
        m = jnp.ones(shape, dtype=bool)
        for b in range(3):
            if b != a:
                m = m & (lax.broadcasted_iota(jnp.int32, shape, b) > 0)
        out.append(m)
    return jnp.stack(out)


def wall_mask(shape):
    """Boolean (3, nx, ny, nz): False for E tangential to a lower wall (index 0)."""
    return _wall_mask(tuple(shape))


def _coeff_h(coeffs, a):
    """(c0, c1) of H component ``a``: arrays (CAS) or table lookups (CIS)."""
    if "ch" in coeffs:
        return coeffs["ch"][a, 0], coeffs["ch"][a, 1]
    t = coeffs["th"][coeffs["ih"][a].astype(jnp.int32)]
    return t[..., 0], t[..., 1]


def _coeff_e(coeffs, a):
    """(c0, c1, w_eps) of E component ``a``."""
    if "ce" in coeffs:
        return coeffs["ce"][a, 0], coeffs["ce"][a, 1], coeffs["we"][a]
    t = coeffs["te"][coeffs["ie"][a].astype(jnp.int32)]
    return t[..., 0], t[..., 1], t[..., 2]


def apply_ah(coeffs, e):
    """H = A_h e: e (3, nx, ny, nz) -> H (3, nx, ny, nz), on Yee faces."""
    out = []
    for a in range(3):
        c0, c1 = _coeff_h(coeffs, a)
        (e0, d0), (e1, d1) = H_TERMS[a]
        out.append(c0 * _fwd(e[e0], d0) + c1 * _fwd(e[e1], d1))
    return jnp.stack(out)


def apply_ae(coeffs, h):
    """E = A_e h (masked at the walls): h (3, ...) -> (3, ...), on Yee edges."""
    mask = wall_mask(h.shape[1:])
    out = []
    for a in range(3):
        c0, c1, _ = _coeff_e(coeffs, a)
        (h0, d0), (h1, d1) = E_TERMS[a]
        out.append(jnp.where(mask[a], c0 * _bwd(h[h0], d0) + c1 * _bwd(h[h1], d1), 0))
    return jnp.stack(out)


def apply_g(coeffs, x):
    """The seed's product G x = x - A_e(A_h x) (eq. 16)."""
    xm = jnp.where(wall_mask(x.shape[1:]), x, 0)
    return x - apply_ae(coeffs, apply_ah(coeffs, xm))


def sym_factors(coeffs, shape):
    """(w_eps, r): w_eps = -omega^2 eps and r = sqrt(s_x s_y s_z), (3, nx, ny, nz) each.

    ``r`` is built on the fly from the 1D arrays ``coeffs["ssqrt"]`` (never stored in 3D).
    """
    ws = jnp.stack([_coeff_e(coeffs, a)[2] for a in range(3)])
    return ws, _sep_factors(coeffs, shape)[1]


def apply_sym(coeffs, y):
    """The symmetrized product T y = r w G(y / r) (complex symmetric, similar to w G / ...).

    With S = s_x s_y s_z, S w G is symmetric (the UPML form); T = S^(1/2) w G S^(-1/2) is
    symmetric too and similar to the SC-PML operator w G, so it keeps SC-PML's spectrum
    (Shin and Fan 2012), where the UPML scaling S w G spreads it.
    """
    w, r = sym_factors(coeffs, y.shape[1:])
    return _with_offdiagonal(coeffs, y, r * w * apply_g(coeffs, y / r), 1.0 / mu0)


PAIRS = ((0, 1), (0, 2), (1, 2))
"""The coupled component pairs of ``ops["od"]``, in its order."""


def offdiagonal(ops, y, scale=1.0):
    """The smoothed tensor's off-diagonal part applied to y, (3, ...): ``ops["od"]`` holds
    per pair of :data:`PAIRS` (flat index of E_a, flat index of E_b, weight -k0^2
    eps_ab / eps0 / 8-summed: :func:`emjax.grid.subpixel.couple`), symmetric, so the
    system stays complex symmetric; the couplings lie outside the PML, where r = 1.
    ``scale`` converts to another form's units (1 / mu0 for :func:`apply_sym`)."""
    flat = [v.reshape(-1) for v in y]
    out = [jnp.zeros_like(v) for v in flat]
    for (a, b), (p, q, w) in zip(PAIRS, ops["od"], strict=True):
        out[a] = out[a].at[p].add(scale * w * flat[b][q])
        out[b] = out[b].at[q].add(scale * w * flat[a][p])
    return jnp.stack([o.reshape(y.shape[1:]) for o in out])


def _with_offdiagonal(ops, y, out, scale=1.0):
    return out + offdiagonal(ops, y, scale) if "od" in ops else out


def _jacobi(apply, ops, x):
    """``d * apply(ops, d * x)`` with the Jacobi scaling d = ops["scale"] where present."""
    d = ops.get("scale")
    return apply(ops, x) if d is None else d * apply(ops, d * x)


def matvec_g(ops, x):
    """Krylov product on the seed system: ``d * G(d * x)`` (d = ops["scale"] if present)."""
    return _jacobi(apply_g, ops, x)


def matvec_sym(ops, x):
    """Krylov product on the symmetrized system: ``d * w G(d * x)``."""
    return _jacobi(apply_sym, ops, x)


def diagonal(coeffs, shape, *, symmetrize: bool):
    """The diagonal of G (or w G), (3, nx, ny, nz): for the Jacobi scaling."""
    mask = wall_mask(shape)
    out = []
    for a in range(3):
        c = _coeff_e(coeffs, a)
        d = jnp.zeros(shape, dtype=c[0].dtype)
        for slot in range(2):
            h, axis = E_TERMS[a][slot]
            # the slot of H component h whose derivative is along ``axis`` of E_a
            hslot = next(i for i, (e, _) in enumerate(H_TERMS[h]) if e == a)
            ch = _coeff_h(coeffs, h)[hslot]
            # E_a[i] enters H[i] with -ch[i] and H[i-1] with +ch[i-1]; E row takes
            # c * (H[i] - H[i-1]).
            ch_prev = jnp.concatenate(
                [jnp.zeros_like(lax.slice_in_dim(ch, 0, 1, axis=axis)),
                 lax.slice_in_dim(ch, 0, shape[axis] - 1, axis=axis)], axis=axis)
            d = d + c[slot] * (-ch - ch_prev)
        out.append(jnp.where(mask[a], 1 - d, 1))
    diag = jnp.stack(out)
    if symmetrize:
        diag = diag * sym_factors(coeffs, shape)[0]  # r * w * g_ii / r
    return diag


# ------------------------------------------------------------------ separable path
def apply_sep(ops, y):
    """mu0 T y for uniform mu = mu0, with no 3D curl coefficients at all ("separable").

    With mu = mu0 everywhere, w A_e and A_h have coefficients that depend on one axis
    only (eps cancels), so

        mu0 T y = -k0^2 eps_r y + r * curl'(curl'(m * y / r)),

    curl' the stretched Yee curls with 1D factors ``inv[a]`` = 1/(s_a Delta_a) at integer
    (``inv_int``) and half (``inv_half``) nodes, m the wall mask and r = sqrt(s_x s_y s_z).
    The only 3D coefficient is ``-k0^2 eps_r`` (``ops["kt"]`` table indexed by
    ``ops["ki"]``, uint8/uint16), so one product reads y and the index and writes one
    vector. Equals ``mu0 * apply_sym`` to rounding (a test checks it).
    """
    shape = y.shape[1:]
    mask = wall_mask(shape)
    _, r = _sep_factors(ops, shape)
    x = jnp.where(mask, y / r, 0)

    def f1(a, b):  # 1D factor along axis b for a result on component a (half or int node)
        return ops["inv_half" if a == "h" else "inv_int"][b].reshape(
            [-1 if i == b else 1 for i in range(3)])

    h = []
    for c in range(3):
        (e0, d0), (e1, d1) = H_TERMS[c]
        h.append(f1("h", d0) * _fwd(x[e0], d0) - f1("h", d1) * _fwd(x[e1], d1))
    out = []
    kw = _kw(ops)
    for a in range(3):
        (h0, d0), (h1, d1) = E_TERMS[a]
        curl = f1("e", d0) * _bwd(h[h0], d0) - f1("e", d1) * _bwd(h[h1], d1)
        out.append(kw[a] * y[a] - jnp.where(mask[a], r[a] * curl, 0))
    return _with_offdiagonal(ops, y, jnp.stack(out))


def apply_ah_sep(ops, e, omega):
    """H = A_h e on the separable path (mu = mu0): (3, nx, ny, nz) A/m per V/m."""
    return _ah_sep(ops["inv_half"], e, omega)


@jax.jit
def _ah_sep(inv_half, e, omega):
    h = []
    for c in range(3):
        (e0, d0), (e1, d1) = H_TERMS[c]
        f0 = inv_half[d0].reshape([-1 if i == d0 else 1 for i in range(3)])
        f1 = inv_half[d1].reshape([-1 if i == d1 else 1 for i in range(3)])
        h.append(f0 * _fwd(e[e0], d0) - f1 * _fwd(e[e1], d1))
    return jnp.stack(h) / (1j * omega * mu0)


def _sep_factors(ops, shape):
    """(None, r): r = sqrt(s_x s_y s_z) at each E component's samples, (3, nx, ny, nz),
    from the 1D arrays ``ops["ssqrt"]``."""
    return None, _r_of(ops["ssqrt"], tuple(shape))


@partial(jax.jit, static_argnums=1)
def _r_of(ssqrt, shape):
    rs = []
    for a in range(3):
        sx, sy, sz = (ssqrt[a][b] for b in range(3))
        rs.append(jnp.broadcast_to(sx[:, None, None] * sy[None, :, None] * sz[None, None, :],
                                   shape))
    return jnp.stack(rs)


def _kw(ops):
    """-k0^2 eps_r at the E samples, (3, nx, ny, nz): ``ops["kw"]`` where given (a traced
    array: :mod:`emjax.fdfd.adjoint` differentiates through it), else the table lookup."""
    if "kw" in ops:
        return ops["kw"]
    return ops["kt"][ops["ki"].astype(jnp.int32)]


def matvec_sep(ops, x):
    """Krylov product of the separable path (``d * mu0 T (d * x)`` with Jacobi)."""
    return _jacobi(apply_sep, ops, x)


# ------------------------------------------------- separable path, one stencil
def _shifted(u, s):
    """u at i + s (s in {-1, 0, 1}^3), zero beyond the array: one ``lax.pad`` with
    negative edges, which XLA fuses into its consumer as an offset read."""
    return lax.pad(u, jnp.zeros((), u.dtype), [(-k, k, 0) for k in s])


def _line(f, axis, shift, n):
    """1D factor ``f`` at i + shift (zero outside), shaped to broadcast along ``axis``."""
    fp = jnp.pad(f, 1)[1 + shift:1 + shift + n]
    return fp.reshape([-1 if i == axis else 1 for i in range(3)])


def wall_lines(ops, shape) -> dict:
    """{"into", "outof"}: per component a and axis b, the 1D factors into and out of the
    curl-curl: the wall mask (zero at index 0 of every axis b != a) times 1/sqrt(s_b)
    and sqrt(s_b). Their products over b are m / r and m * r of :func:`apply_sep`,
    never formed in 3D. Stored with the operator (:func:`emjax.fdfd.solver.prepare`):
    computed inside the product they cost nine tiny kernels per iteration."""
    if "into" in ops:
        return {"into": ops["into"], "outof": ops["outof"]}
    return _wall_lines(ops["ssqrt"], tuple(shape))


@partial(jax.jit, static_argnums=1)
def _wall_lines(ssqrt, shape) -> dict:
    into, out = [], []
    for a in range(3):
        ia, oa = [], []
        for b in range(3):
            sq = ssqrt[a][b]
            m = (jnp.arange(shape[b]) > 0) if b != a else jnp.ones(shape[b], bool)
            ia.append(jnp.where(m, 1 / sq, 0))
            oa.append(jnp.where(m, sq, 0))
        into.append(tuple(ia))
        out.append(tuple(oa))
    return {"into": tuple(into), "outof": tuple(out)}


def apply_sep_stencil(ops, y):
    """:func:`apply_sep` written as one stencil expression per output component.

    The same product (a test checks it to 1e-13), but neither H nor the scaled and
    masked input is ever formed as an array: each E_a reads the 13 samples of y it
    depends on (E_a at i and i +- e_b, E_b at i, i + e_a, i - e_b, i + e_a - e_b) as
    offset reads of y itself, times separable 1D factors, so XLA compiles the product
    into loop fusions that read y and the permittivity index once and write the result
    once. (Padding the scaled input first cost three extra passes: 0.415 ms of a
    0.43 ms COCG iteration at 96^3 on an H100 went to those and the stencil.)
    """
    shape = y.shape[1:]
    lines = wall_lines(ops, shape)
    into, outof = lines["into"], lines["outof"]

    def x_at(e, s):
        """The masked, 1/r-scaled E_e at i + s (zero beyond the arrays)."""
        v = _shifted(y[e], s)
        for b in range(3):
            v = v * _line(into[e][b], b, s[b], shape[b])
        return v

    def h_at(c, s):
        """H component c at i + s."""
        out = 0
        for slot, (e, d) in enumerate(H_TERMS[c]):
            s1 = list(s)
            s1[d] += 1
            term = _line(ops["inv_half"][d], d, s[d], shape[d]) * (x_at(e, s1) - x_at(e, s))
            out = out + (term if slot == 0 else -term)
        return out

    kw = _kw(ops)
    out = []
    for a in range(3):
        curl = 0
        for slot, (hc, d) in enumerate(E_TERMS[a]):
            sm = [0, 0, 0]
            sm[d] = -1
            first = lax.broadcasted_iota(jnp.int32, shape, d) > 0
            diff = h_at(hc, (0, 0, 0)) - jnp.where(first, h_at(hc, tuple(sm)), 0)
            term = _line(ops["inv_int"][d], d, 0, shape[d]) * diff
            curl = curl + (term if slot == 0 else -term)
        r_out = _line(outof[a][0], 0, 0, shape[0]) * _line(outof[a][1], 1, 0, shape[1]) \
            * _line(outof[a][2], 2, 0, shape[2])
        out.append(kw[a] * y[a] - r_out * curl)
    return _with_offdiagonal(ops, y, jnp.stack(out))


def matvec_sep_stencil(ops, x):
    """:func:`matvec_sep` with :func:`apply_sep_stencil`."""
    return _jacobi(apply_sep_stencil, ops, x)
