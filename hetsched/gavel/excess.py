"""The base constraints of an allocation (:mod:`hetsched.gavel.problem`) checked in one
compiled pass: a simulated Gavel validates the allocation of every change of its active jobs
(hundreds of thousands a run). :func:`hetsched.gavel.validate.check_allocation` names what
this finds."""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import kernel


@kernel
def excess(x, scale, count, tol):  # pragma: no cover - compiled
    """One pass over x: whether every entry is finite, how many violations it has, the entries
    below -tol, the jobs given more than 1 + tol of the time, the types oversubscribed past tol
    (relative to max(1, N_r)), and each type's GPUs allocated, sum_j s_j x_{j,r}."""
    n, k = x.shape
    negative = np.zeros((n, k), dtype=np.bool_)
    over_time = np.zeros(n, dtype=np.bool_)
    used = np.zeros(k)
    finite = True
    for j in range(n):
        share = 0.0
        for r in range(k):
            v = x[j, r]
            finite = finite and np.isfinite(v)
            negative[j, r] = v < -tol
            share += v
            used[r] += scale[j] * v
        over_time[j] = share > 1 + tol
    over_capacity = used > count + tol * np.maximum(1.0, count)
    violations = negative.sum() + over_time.sum() + over_capacity.sum()
    return finite, violations, negative, over_time, over_capacity, used
