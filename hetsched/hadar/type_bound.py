"""A second bound for the slot's branch and bound that keeps the GPU types apart: a Lagrangian
relaxation of the types' capacities, with one multiplier a type fixed once per slot.

Every way the jobs from queue position idx on can still be taken, from a node whose free GPUs are
F (f_r of type r over all machines), earns at most

    L(idx, F) = N(idx, f) + sum_r lambda_r f_r,
    p_j = max(0, max_q U_j(q) - W_j min_{r among j's q fastest types} (lambda_r + k_r)),

N(idx, f): the fractional knapsack of (p_j, W_j) over the jobs from idx within f = sum_r f_r
GPUs, for any lambda >= 0: a gang whose slowest type is j's q-th fastest holds W_j GPUs of its
q fastest types and is worth U_j(q) (``util``) minus its GPUs' prices, each at least k_r, the
least price of a free type-r GPU at the slot's start (prices rise as GPUs are allocated); adding
lambda_r (f_r - what the taken gangs use of type r) >= 0 leaves each taken job worth at most
p_j, and the taken jobs hold at most f GPUs in all.
The searches' own bound (:func:`hetsched.hadar.bnb_kernel.node_bound`) credits every job with its
fastest type wherever GPUs are free; L charges a job for the type it uses.

lambda is the type rows' duals of an LP relaxation at the slot's start
(:func:`type_multipliers`), where L(0, F0) is that LP's optimum. Any lambda >= 0 gives a bound,
so an LP that HiGHS does not solve only weakens it (lambda = 0).
"""

from __future__ import annotations

import highspy
import numpy as np
import scipy.sparse as sp

from hetsched.solvers.lp_arrays import ArrayLP, run_highs

INF = np.inf


def least_type_prices(
    price: np.ndarray, cap: np.ndarray, free0: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(k_r, f_r): per type, the least price of a free GPU at the slot's start (inf where none is
    free) and its free GPUs over all machines; ``free0`` is [h * R + r]."""
    H, R = cap.shape
    free = free0.reshape(H, R)
    level = np.clip(cap - free, 0, None)
    at = np.take_along_axis(price, level[:, :, None], axis=2)[:, :, 0]
    least = np.where((cap > 0) & (free > 0), at, INF).min(axis=0) if H else np.full(R, INF)
    return least, free.sum(axis=0).astype(float)


def net_payoffs(
    util: np.ndarray,
    order: np.ndarray,
    n_order: np.ndarray,
    need: np.ndarray,
    charge: np.ndarray,
) -> np.ndarray:
    """p_j = max(0, max_q U_j(q) - W_j min_{q' <= q} charge[order[j, q']]) (module doc)."""
    if len(need) == 0:
        return np.zeros(0)
    q = np.arange(order.shape[1])
    usable = q[None, :] < n_order[:, None]
    types = np.where(usable, order, 0)
    per = np.where(usable, charge[types], INF)
    cheapest = np.minimum.accumulate(per, axis=1)
    worth = np.take_along_axis(util, types, axis=1) - need[:, None] * cheapest
    worth = np.where(usable & np.isfinite(cheapest), worth, 0.0)
    return np.maximum(worth.max(axis=1), 0.0)


def type_multipliers(
    util: np.ndarray,
    order: np.ndarray,
    n_order: np.ndarray,
    need: np.ndarray,
    least: np.ndarray,
    free_types: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(lambda, share): lambda >= 0 the duals of the type rows of the transportation LP

        max sum_{j,r} (U_j(r) / W_j - k_r) z_jr   s.t.  sum_r z_jr <= W_j,  sum_j z_jr <= f_r

    (z_jr: job j's GPUs of its usable type r; U_j(r): at the rate of a gang whose slowest type
    is r). Any lambda >= 0 makes L a bound; these minimize it where U_j falls with the gang's
    slowest type (then L's p_j is max_r U_j(r) - W_j (lambda_r + k_r), the dual of this LP, and
    L(0, F0) its optimum); share_j = sum_r z_jr / W_j, the part of job j the LP takes (the
    search ranks its first incumbents by it too). Zeros if the LP has no optimum."""
    n, R = len(need), len(least)
    if n == 0:
        return np.zeros(R), np.zeros(0)
    q = np.arange(order.shape[1])
    jobs, levels = np.nonzero(q[None, :] < n_order[:, None])
    types = order[jobs, levels]
    value = util[jobs, types] / need[jobs] - least[types]
    keep = np.isfinite(value) & (value > 0)  # a column worth <= 0 is 0 at an optimum
    jobs, types, value = jobs[keep], types[keep], value[keep]
    k = len(jobs)
    if k == 0:
        return np.zeros(R), np.zeros(n)
    # rows: R type rows (<= f_r), then a row a job (<= W_j)
    matrix = sp.csc_matrix(
        (np.ones(2 * k), (np.concatenate([types, R + jobs]), np.tile(np.arange(k), 2))),
        shape=(R + n, k),
    )
    lp = ArrayLP(
        cost=-value,
        matrix=matrix,
        row_lower=np.full(R + n, -INF),
        row_upper=np.concatenate([free_types, need.astype(float)]),
        col_lower=np.zeros(k),
        col_upper=np.full(k, INF),
        options={},
    )
    h, _ = run_highs(lp)
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return np.zeros(R), np.zeros(n)
    solution = h.getSolution()
    share = np.zeros(n)
    np.add.at(share, jobs, np.asarray(solution.col_value))
    return np.maximum(-np.asarray(solution.row_dual)[:R], 0.0), share / np.maximum(need, 1)
