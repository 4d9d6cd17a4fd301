"""The compiled utilities of a slot (hetsched.hadar.progress_kernel, SlotArrays.with_progress)
against the scalar definitions they stand for: U_i(JCT) of hetsched.hadar.utility at the JCT of
HadarView.jct for a gang whose slowest type is r, to the bit, for every utility; the bound's
knapsack and ranking against NumPy's stable sort."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.hadar.bnb_kernel import suffix_knapsack
from hetsched.hadar.slot_arrays import SlotArrays
from hetsched.hadar.utility import utility
from hetsched.instance.extensions import UTILITY_NAMES
from hetsched.testing.hadar_slots import queue_slots


def _scalar_utilities(slot, name) -> np.ndarray:
    """U_i at each type r as the scalar functions compute it (-inf where r is unusable)."""
    v = slot.view
    out = np.full((len(slot.queue), v.throughput.shape[1]), -np.inf)
    for i, j in enumerate(slot.queue):
        for r in range(v.throughput.shape[1]):
            if v.throughput[j, r] > 0:
                rate = v.rate(j, [r], int(v.workers[j]))
                finish = slot.t + math.ceil(slot.remaining[j] / rate - 1e-12) - 1
                out[i, r] = utility(v, name, j, v.jct(j, finish))
    return out


@settings(max_examples=20, deadline=None)
@given(
    st.integers(0, 10_000),
    st.integers(1, 12),
    st.sampled_from([1.0, 0.5]),
    st.sampled_from(UTILITY_NAMES),
)
def test_the_compiled_utilities_are_the_scalar_ones_to_the_bit(seed, n, keep, name):
    first, *later = queue_slots(seed, n, keep, 3)
    arrays = SlotArrays.of(first, utility_name=name)
    for slot in [first, *later]:
        got = arrays.with_progress(slot).bounded()
        assert np.array_equal(got.util, _scalar_utilities(slot, name))
        # the bound: each job at its fastest type, best u/W first (stable), its knapsacks
        ub = got.util[np.arange(n), np.argmax(got.thr, axis=1)]
        by_ratio = np.argsort(-ub / np.maximum(got.need, 1), kind="stable")
        assert np.array_equal(got.rank[0][by_ratio], np.arange(n))
        expected = suffix_knapsack(got.need, ub, by_ratio.astype(np.int64), int(got.free0.sum()))
        assert np.array_equal(got.suffix_value, expected)


def test_an_empty_queue_has_empty_arrays():
    slot = queue_slots(3, 1, 1.0, 1)[0]
    empty = type(slot)(slot.view, [], slot.prices, slot.remaining, slot.t, slot.free)
    arrays = SlotArrays.of(empty).bounded()
    assert arrays.util.shape == (0, slot.view.throughput.shape[1])
    assert arrays.suffix_value.shape == (1, int(arrays.free0.sum()) + 1)
    assert arrays.rank.shape == (1, 0)
