"""The compiled sums add in numpy's order: their results equal numpy's to the bit, on rows
short (one by one), blocked (8 running sums) and split (past 128 terms, several levels)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hetsched.core.summation import pairwise_sum, weighted_row_sums


def _row(rng: np.random.Generator, n: int) -> np.ndarray:
    """Terms of mixed magnitudes and signs, so that another order rounds differently."""
    return rng.standard_normal(n) * rng.choice([1e-8, 1.0, 1e8], n)


@pytest.mark.parametrize("n", [*range(0, 140), 255, 256, 257, 1000, 1024, 4097, 70_001])
def test_pairwise_sum_is_numpys_sum(n):
    a = _row(np.random.default_rng(n), n + 5)
    for lo in (0, 5):
        assert pairwise_sum(a, lo, n) == np.sum(a[lo : lo + n])


def test_another_order_would_differ():
    """The rows above are rounding-sensitive: summed one by one, most differ from numpy's."""
    differ = 0
    for n in range(8, 140):
        a = _row(np.random.default_rng(n), n)
        seq = 0.0
        for v in a:
            seq += v
        differ += seq != np.sum(a)
    assert differ > 60


@settings(max_examples=80, deadline=None)
@given(
    m=arrays(
        np.float64,
        st.tuples(st.integers(0, 6), st.integers(1, 40)),
        elements=st.floats(-1e6, 1e6, allow_subnormal=False),
    ),
    seed=st.integers(0, 1000),
)
def test_weighted_row_sums_is_numpys(m, seed):
    w = _row(np.random.default_rng(seed), m.shape[1])
    assert np.array_equal(weighted_row_sums(m, w), np.sum(m * w[None, :], axis=1))
    strided = m[:, ::2]  # a non-contiguous view
    assert np.array_equal(
        weighted_row_sums(strided, w[::2]), np.sum(strided * w[::2][None, :], axis=1)
    )
