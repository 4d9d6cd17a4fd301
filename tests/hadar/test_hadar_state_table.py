"""The compiled hash table of DP states (hetsched.hadar.state_table): every state added is
found again, through growth by ``add`` and by ``reserve`` to any size (the slots stay a power of
two, which the hash masks with)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.hadar import state_table


def _keys(rng, n, n_words):
    return np.unique(rng.integers(0, 2**40, (n, n_words)).astype(np.uint64), axis=0)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 1000), st.integers(1, 6000), st.integers(1, 3), st.integers(0, 9000))
def test_every_state_added_or_inserted_is_found(seed, n, n_words, size):
    rng = np.random.default_rng(seed)
    keys = _keys(rng, n, n_words)
    half = len(keys) // 2
    table = state_table.new(n_words, 1)
    for e in range(half):  # grown by add
        table = state_table.add(*table, e, e % 7, keys[e])
    table = state_table.reserve(*table, half, max(size, len(keys)))
    slots, e_idx, e_key, _ = table
    assert slots.shape[0] & (slots.shape[0] - 1) == 0  # a power of two
    assert slots.shape[0] == 2 * e_idx.shape[0] and e_idx.shape[0] >= len(keys)
    for e in range(half, len(keys)):  # room reserved: inserted in place
        state_table.insert(slots, e_idx, e_key, e, e % 7, keys[e])
    for e in range(len(keys)):
        assert state_table.find(slots, e_idx, e_key, e % 7, keys[e]) == e
    other = np.full(n_words, 2**50, np.uint64)  # never drawn
    assert state_table.find(slots, e_idx, e_key, 0, other) == -1
