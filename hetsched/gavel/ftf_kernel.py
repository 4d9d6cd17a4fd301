"""The bisection of :func:`hetsched.gavel.ftf.bisect_rho` in one compiled call, with every LP
test by the dense simplex (one row per job, :func:`hetsched.gavel.dense._max_min_vertex`): what
the simulated ``gavel:finish-time-fairness`` solves at each change of its active jobs under our
convention (issue 41: 4.8 tests a change on the stable load, each about 40 us of Python around
a 20 us kernel). The same operations in the same order as the Python loop, so the same rho and
the same allocation; where a test is declined, the caller runs the Python loop instead (whose
declined tests go to HiGHS)."""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import kernel
from hetsched.core.summation import weighted_row_sums
from hetsched.gavel.dense import _max_min_vertex
from hetsched.gavel.ftf import Z_MARGIN  # a constant of the compiled code, as numba reads globals
from hetsched.gavel.share_kernels import equal_share_row


@kernel
def _test(thr, scale, count, steps, d, t, rho, tiebreak):  # pragma: no cover - compiled
    """The LP test of ``rho``: max z with a_{j,r} = thr_{j,r} / need_j(rho)
    (:func:`hetsched.gavel.policies.need_given`): the dense simplex's (status, z, x)."""
    n, k = thr.shape
    a = np.empty((n, k))
    for j in range(n):
        slack = rho * d[j] - t[j]
        req = steps[j] / slack if slack > 0 else np.inf
        for r in range(k):
            a[j, r] = thr[j, r] / req
    return _max_min_vertex(a, scale, count, tiebreak, a)


@kernel
def _attained(thr, steps, d, t, x):  # pragma: no cover - compiled
    """:func:`hetsched.gavel.policies.attained_rho`."""
    n, k = thr.shape
    worst = -np.inf
    for j in range(n):
        got = 0.0
        for r in range(k):
            got += thr[j, r] * x[j, r]
        shared = t[j] + steps[j] / got if got > 0 else np.inf
        worst = max(worst, shared / d[j])
    return worst


@kernel
def _infeasible_below(t, d, rho, z):  # pragma: no cover - compiled
    """:func:`hetsched.gavel.ftf.infeasible_below`."""
    z = z * (1.0 + Z_MARGIN)
    if not 0.0 < z < 1.0:
        return rho
    for j in range(t.shape[0]):
        if not rho * d[j] - t[j] > 0:
            return rho
    least = np.inf
    for j in range(t.shape[0]):
        least = min(least, (t[j] + (rho * d[j] - t[j]) / z) / d[j])
    return max(rho, least)


@kernel
def bisect_dense(thr, scale, count, steps, d, t, tol, max_steps):  # pragma: no cover - compiled
    """:func:`hetsched.gavel.ftf.bisect_rho` under our convention (upper end 1) with the
    tie-break's test at the end, whose x is kept: (solved, lo, hi, x, tests); ``solved`` is
    False where the dense simplex declined a test (then nothing else is meaningful)."""
    lo = -np.inf
    for j in range(t.shape[0]):
        lo = max(lo, t[j] / d[j])
    hi = 1.0
    status, z, best = _test(thr, scale, count, steps, d, t, hi, False)
    if status != 0:
        return False, lo, hi, best, 1
    if z >= 1.0:
        hi = min(hi, _attained(thr, steps, d, t, best))
    tests = 0
    while hi - lo > tol * hi and tests < max_steps:
        mid = (lo + hi) / 2
        status, z, x = _test(thr, scale, count, steps, d, t, mid, False)
        if status != 0:
            return False, lo, hi, best, tests + 1
        if z >= 1.0:
            hi, best = min(mid, _attained(thr, steps, d, t, x)), x
        else:
            lo = _infeasible_below(t, d, mid, z)
        tests += 1
    status, z, x = _test(thr, scale, count, steps, d, t, hi, True)
    return status == 0, lo, hi, x, tests


@kernel
def ftf_dense(thr, scale, count, steps, arrival, now, tol, max_steps):  # pragma: no cover
    """The simulated policy's allocation under our convention in one call: t_j = max(0, now -
    a_j), D_j = t_j + R_j / thr_j(X^equal) (:func:`hetsched.gavel.policies.denominators`, to
    the bit), then :func:`bisect_dense`, or where every t_j is 0 the one LP at rho = 1 and its
    tie-break (as :func:`hetsched.gavel.ftf.bisect_rho`): (solved, x)."""
    n = thr.shape[0]
    t = np.empty(n)
    waiting = False
    for j in range(n):
        t[j] = max(0.0, now - arrival[j])
        waiting = waiting or t[j] > 0
    iso = weighted_row_sums(thr, equal_share_row(count, scale))
    d = np.empty(n)
    for j in range(n):
        d[j] = t[j] + steps[j] / iso[j]
    if waiting:
        solved, _, _, x, _ = bisect_dense(thr, scale, count, steps, d, t, tol, max_steps)
        return solved, x
    status, _, x = _test(thr, scale, count, steps, d, t, 1.0, False)
    if status != 0:
        return False, x
    status, _, x = _test(thr, scale, count, steps, d, t, 1.0, True)
    return status == 0, x
