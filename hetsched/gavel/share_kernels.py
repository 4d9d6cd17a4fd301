"""The normalized coefficients of Gavel's max-min policies in one compiled call each: a simulated
Gavel recomputes them at every change of its active jobs, 150,000 times for 100,000 jobs, where
a dozen array expressions on 20-60 rows cost more than the arithmetic. The sums run in numpy's
order (:mod:`hetsched.core.summation`), so each result is the array expressions' to the bit
(:mod:`hetsched.gavel.problem`, :mod:`hetsched.gavel.policies`; tests compare them)."""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import kernel
from hetsched.core.summation import pairwise_sum, weighted_row_sums


@kernel(error_model="numpy")  # IEEE division, as numpy: x / 0 is inf, not an exception
def equal_share_row(count, scale):  # pragma: no cover - compiled
    """Every job's row of X^equal (Gavel Sec. 4.1): f N_r / sum N, f = min(1, sum N / sum s)."""
    total = pairwise_sum(count, 0, len(count))
    f = min(1.0, total / pairwise_sum(scale, 0, len(scale)))
    row = np.empty(len(count))
    for r in range(len(count)):
        row[r] = f * count[r] / total
    return row


@kernel(error_model="numpy")  # IEEE division, as numpy: x / 0 is inf, not an exception
def normalized_rows(thr, row, scale, weight):  # pragma: no cover - compiled
    """a_{j,r} = T_{j,r} s_j / (w_j thr_j(X)) where every job gets the shares ``row``: the
    heterogeneity-aware max-min fairness of Gavel Sec. 4.1."""
    fair = weighted_row_sums(thr, row)
    n, k = thr.shape
    a = np.empty((n, k))
    for j in range(n):
        c = scale[j] / weight[j] / fair[j]
        for r in range(k):
            a[j, r] = thr[j, r] * c
    return a


@kernel(error_model="numpy")  # IEEE division, as numpy: x / 0 is inf, not an exception
def makespan_rows(thr, row, steps):  # pragma: no cover - compiled
    """a_{j,r} = T_{j,r} M / R_j, M = max_j R_j / thr_j(X) with every job at the shares ``row``
    (the makespan LP's zeta = M / makespan, Gavel Sec. 4.2)."""
    fair = weighted_row_sums(thr, row)
    n, k = thr.shape
    most = -np.inf
    for j in range(n):
        most = max(most, steps[j] / fair[j])
    a = np.empty((n, k))
    for j in range(n):
        c = most / steps[j]
        for r in range(k):
            a[j, r] = thr[j, r] * c
    return a
