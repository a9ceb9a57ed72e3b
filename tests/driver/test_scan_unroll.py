"""Two steps per trip of a chunk's scan or while loop (``scan_with_frames(unroll=2)``),
as the one-pass kernel's swapping scratch buffers need: the same states and outputs as
one step a trip, for every number of active steps, odd ones included."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from emjax.driver.monitors import FRAMES, scan_with_frames, tail_policy


def body(state, frames, x):
    """A state (n, (current, scratch)) whose next value is written into the scratch
    slot and the old one handed back as the next scratch, with a per-step output."""
    n, (cur, spare) = state
    new = spare * 0 + cur * 1.5 + x
    return (n + 1, (new, cur)), frames, {"y": jnp.sum(new)}


@pytest.mark.parametrize("active", [None, 7, 8, 1, 0])
@pytest.mark.parametrize("while_loop", [False, True])
def test_two_steps_a_trip_equal_one(active, while_loop):
    length = 8
    xs = jnp.arange(length, dtype=jnp.float32)
    state = (jnp.int32(0), (jnp.ones(4, jnp.float32), jnp.zeros(4, jnp.float32)))
    act = None if active is None else jnp.int32(active)
    with tail_policy(while_loop):
        out = [scan_with_frames(body, state, xs, length, [], act, unroll=u) for u in (1, 2)]
    (s1, y1), (s2, y2) = out
    assert int(s1[0]) == int(s2[0]) == (length if active is None or not while_loop
                                        else active)
    np.testing.assert_array_equal(np.asarray(s1[1][0]), np.asarray(s2[1][0]))
    np.testing.assert_array_equal(np.asarray(y1["y"]), np.asarray(y2["y"]))
    assert FRAMES in y2
