"""What a slot's progress changes in DP_allocation's arrays, compiled
(:meth:`hetsched.hadar.slot_arrays.SlotArrays.with_progress`): each job's utility U_i at the rate
of a gang whose slowest type is r ((1b), Eq. (4)'s f_js, :func:`utilities`), and the branch and
bound's knapsacks and ranking built on it (:func:`bound`, when a search asks:
:meth:`~hetsched.hadar.slot_arrays.SlotArrays.bounded`).

Every value is the same arithmetic, in the same order, as the elementwise NumPy it replaces
(:func:`hetsched.hadar.utility.utilities` over the JCT of :meth:`HadarView.jct`), so the arrays
are the same to the bit (``tests/hadar/test_hadar_progress_kernel.py``); a call each instead of
a dozen array operations on a queue of 15-40 jobs.
"""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import kernel
from hetsched.hadar.bnb_kernel import suffix_knapsack


@kernel
def utilities(thr, need, per_worker, slot_seconds, rem, t, arrival, jct_offset, numer):
    """U_i at the rate of a gang whose slowest type is r, [i, r]: ``thr`` [i, r] X_i^r, ``need``
    W_i, ``rem`` the remaining work, ``arrival`` a_i (slots), ``numer`` U_i(d) * d (E_i N_i, 1
    or t_i^iso: the utilities are numer / d); -inf where r is not usable."""
    n, R = thr.shape
    util = np.empty((n, R))
    for i in range(n):
        workers = need[i] if per_worker else 1
        for r in range(R):
            if thr[i, r] > 0:
                rate = thr[i, r] * slot_seconds * workers
                finish = (t + np.ceil(rem[i] / rate - 1e-12)) - 1
                jct = (finish - arrival[i] + jct_offset) * slot_seconds
                util[i, r] = numer[i] / jct
            else:
                util[i, r] = -np.inf
    return util


@kernel
def bound(util, thr, need, n_free):
    """The branch and bound's arrays on the utilities: (suffix_value, rank), the fractional
    knapsack V(G) of each queue suffix over ``n_free`` free GPUs of each job at its fastest
    type (the first of the largest X_i^r), and each job's position with the jobs best u/W
    first (stable)."""
    n, R = thr.shape
    ub = np.zeros(n)
    key = np.empty(n)
    for i in range(n):
        best = 0
        for r in range(R):
            if thr[i, r] > thr[i, best]:
                best = r
        ub[i] = util[i, best]  # the bound's u_i: job i at its fastest type
        key[i] = -ub[i] / max(need[i], 1)
    by_ratio = np.argsort(key, kind="mergesort").astype(np.int64)  # best u/W first, stable
    suffix_value = suffix_knapsack(need, ub, by_ratio, n_free)
    rank = np.empty((1, n), np.int64)
    for k in range(n):
        rank[0, by_ratio[k]] = k
    return suffix_value, rank
