"""The Pallas node kernel's warp tiles (emjax.dga.tiles): packings, the tile table, the
launch groups, and the kernel on a mesh of many node widths against the XLA one."""

from __future__ import annotations

import numpy as np
import pytest

from emjax.constants import eps0, mu0
from emjax.dga import tiles
from emjax.dga.arrays import _pack_cyclic
from emjax.dga.layout import U_TILE, tile_position


@pytest.mark.parametrize("w", [1, 2, 5, 6, 13, 14])
def test_cyclic_packing_round_trips_and_gives_the_quadratic_form(w):
    """The operators' packed node matrices (local.pack_cyclic): w (w + 1) / 2 rows that
    unpack to the symmetric matrix exactly, the same on NumPy and JAX, and whose
    quadratic form (step.cyclic_form: Rayleigh quotient, energy) is u^T M u."""
    import jax.numpy as jnp

    from emjax.dga.local import cyclic_size, pack_cyclic, packed_inverse, unpack_cyclic
    from emjax.dga.step import cyclic_form
    from emjax.driver.precision import require_x64

    require_x64()
    rng = np.random.default_rng(w)
    A = rng.standard_normal((w, w, 9))
    S = A + A.transpose(1, 0, 2)
    P = pack_cyclic(S)
    assert P.shape == (cyclic_size(w), 9)
    assert np.array_equal(unpack_cyclic(P, w), S)
    assert np.array_equal(np.asarray(pack_cyclic(jnp.asarray(S), jnp)), P)
    # the symmetric part of a matrix that is symmetric only to rounding
    assert np.array_equal(unpack_cyclic(packed_inverse(A), w), 0.5 * (A + A.transpose(1, 0, 2)))
    u = rng.standard_normal((w, 9))
    dense = float(np.einsum("iv,ijv,jv->", u, S, u))
    got = float(jnp.sum(cyclic_form(jnp.asarray(P), jnp.asarray(u), jnp.asarray(u))))
    assert got == pytest.approx(dense, rel=1e-13, abs=1e-13 * np.abs(S).sum())


@pytest.mark.parametrize("w", [5, 6, 13, 14, 22])
def test_packings_hold_every_entry_with_prefixes_shared_across_widths(w):
    rng = np.random.default_rng(w)
    A = rng.standard_normal((w, w, 7))
    S = A + A.transpose(1, 0, 2)
    E = tiles.symmetric_entries(*_pack_cyclic(S))
    F = tiles.full_entries(A)
    for i in range(w):
        for j in range(w):
            assert np.array_equal(E[tiles.sym_index(min(i, j), max(i, j))], S[i, j])
            assert np.array_equal(F[tiles.full_index(i, j)], A[i, j])
    # a narrower matrix's entries are the first ones of the wider packing
    sym = sorted(tiles.sym_index(i, j) for j in range(w - 1) for i in range(j + 1))
    full = sorted(tiles.full_index(i, j) for i in range(w - 1) for j in range(w - 1))
    assert sym == list(range((w - 1) * w // 2)) and full == list(range((w - 1) ** 2))


def test_tile_table_positions_match_u_tiles():
    buckets = [(0, 7, 40), (280, 9, 32), (568, 12, 65)]
    tab = tiles.tile_table(buckets, lossy=True)
    assert tab.shape == (6, 2 + 1 + 3)
    t = 0
    for off, w, nv in buckets:
        for v in range(nv):
            tt = t + v // U_TILE
            for i in range(w):
                pos = tab[tiles.UBASE, tt] + i * tab[tiles.NB, tt] + v % U_TILE
                assert pos == off + tile_position(v, i, w, nv)
            assert tab[tiles.WIDTH, tt] == w
        t += -(-nv // U_TILE)
    # each tile's gidx / M / P block follows the previous one
    w = tab[tiles.WIDTH]
    for row, size in ((tiles.GBASE, w), (tiles.MBASE, w * (w + 1) // 2), (tiles.PBASE, w * w)):
        assert np.array_equal(np.diff(tab[row]), (size * U_TILE)[:-1])


def test_groups_cover_the_tiles_within_their_slack():
    rng = np.random.default_rng(3)
    widths = np.sort(rng.integers(6, 40, 300))
    for slack in (0.0, 0.5, 3.0, np.inf):
        g = tiles.groups(widths, slack)
        assert sum(n for _, n, _ in g) == widths.size
        assert [t0 for t0, _, _ in g] == list(np.cumsum([0] + [n for _, n, _ in g])[:-1])
        for t0, n, W in g:
            part = widths[t0:t0 + n]
            assert part.max() == W
            assert n == 1 or n * W * (W + 1) / 2 <= (1 + slack) * (part * (part + 1) / 2).sum()
    assert len(tiles.groups(widths, np.inf)) == 1


@pytest.mark.parametrize("lossy, slack, launches", [(False, 3.0, 1), (True, 0.25, 3)])
def test_pallas_node_tiles_match_xla_on_many_widths(lossy, slack, launches):
    """A small ring-mesh cylinder whose node degrees (6 to 14) fall in six buckets, each
    ending in a partial tile, run in one launch or three: one Ampere half-step of the
    Pallas kernels (compiled on a GPU, in the interpreter elsewhere) equals the XLA
    kernels' to float64 rounding."""
    import jax
    import jax.numpy as jnp

    from emjax.dga import pallas, structured
    from emjax.dga import step as kern
    from emjax.dga.arrays import kernel_arrays
    from emjax.dga.complex import build
    from emjax.dga.layout import make_layout
    from emjax.dga.mass import assemble

    cx = build(structured.cylinder(0.5, 0.3, rings=3, layers=2))
    sig = np.where(np.arange(cx.num_tets) % 2 == 0, 0.02, 0.0) if lossy else None
    ops = assemble(cx, np.full(cx.num_tets, 3 * eps0), np.full(cx.num_tets, mu0), sig,
                   min_count=8, min_share=0.0)
    assert len(ops.buckets) == 6 and all(b.count % U_TILE for b in ops.buckets)
    got = tiles.groups(tiles.tile_widths(make_layout(ops, "pallas").spec.buckets), slack)
    assert len(got) == launches, got
    rng = np.random.default_rng(0)
    u0 = rng.standard_normal(ops.nu)
    f0 = rng.standard_normal((4, cx.num_tets))
    out = []
    with jax.enable_x64(True):
        for name in ("xla", "pallas"):
            old = pallas.NODE_SLACK
            pallas.NODE_SLACK = slack
            try:
                lay = make_layout(ops, name)
                K = kernel_arrays(ops, lay, 2e-12, np.float64)
                K.pop("gpos")
                # jitted: the Pallas interpreter as one program, not op by op (3x faster)
                u = jax.jit(kern.ampere, static_argnums=3)(
                    jnp.asarray(lay.u_from_canonical(u0)), jnp.asarray(lay.f_from_canonical(f0)),
                    K, lay.spec)
                out.append(np.asarray(lay.u_canonical(u)))
            finally:
                pallas.NODE_SLACK = old
    ref, got = out
    assert np.abs(ref - u0).max() > 1e-3 * np.abs(u0).max()
    assert np.abs(got - ref).max() <= 1e-12 * np.abs(ref).max()
