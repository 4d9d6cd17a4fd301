"""The compiled coefficients of the max-min policies (:mod:`hetsched.gavel.share_kernels`) are
the array expressions they replace, to the bit: the same simulated runs follow."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.gavel.share_kernels import equal_share_row, makespan_rows, normalized_rows


def _data(seed: int, n: int, k: int):
    rng = np.random.default_rng(seed)
    thr = rng.uniform(0.01, 300.0, (n, k)) * (rng.random((n, k)) > 0.3)
    thr[np.arange(n), rng.integers(0, k, n)] = rng.uniform(0.01, 300.0, n)  # runs somewhere
    count = rng.integers(1, 40, k).astype(float)
    scale = rng.choice([1.0, 2.0, 4.0, 8.0], n) * rng.choice([1.0, 1.37], n)  # not only integers
    weight = rng.uniform(0.2, 5.0, n)
    steps = rng.uniform(1.0, 1e7, n)
    return thr, count, scale, weight, steps


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(1, 150), k=st.integers(1, 12))
def test_the_kernels_are_the_array_expressions(seed, n, k):
    thr, count, scale, weight, steps = _data(seed, n, k)
    f = min(1.0, float(count.sum() / scale.sum()))
    row = f * count / count.sum()
    assert np.array_equal(equal_share_row(count, scale), row)
    fair = np.sum(thr * np.broadcast_to(row, thr.shape), axis=1)  # thr_j(X^equal)
    assert np.array_equal(
        normalized_rows(thr, row, scale, weight), thr * (scale / weight / fair)[:, None]
    )
    most = float(np.max(steps / fair))
    assert np.array_equal(makespan_rows(thr, row, steps), thr * (most / steps)[:, None])
    prop = count / count.sum()  # Gavel's convention's row
    fair = np.sum(thr * prop[None, :], axis=1)
    assert np.array_equal(
        normalized_rows(thr, prop, scale, weight), thr * (scale / weight / fair)[:, None]
    )
