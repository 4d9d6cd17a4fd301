"""The max-min allocation LP by Dantzig-Wolfe decomposition over the GPU types.

The LP (:mod:`hetsched.gavel.fast`; Gavel's max-min fairness, makespan and the finish-time
fairness tests are all this form):

    max z  s.t.  z <= a_j . x_j,  sum_r x_{j,r} <= 1  (every job j),  sum_j s_j x_j <= N,  x >= 0.

Only the K capacity rows (one per GPU type, K = 3 in Gavel's clusters) couple the jobs. As one
LP the variable z is a dense column over every job's row, which is what makes interior-point
solvers slow on it (HiGHS IPX grows as n^1.34 when no two jobs are alike). Here the capacity rows
are the master (K rows and a convexity row) and a column is a whole allocation with its z:

    master:  max sum_c z_c theta_c  s.t.  sum_c U_c theta_c <= N,  sum_c theta_c = 1,  theta >= 0,

with U_c = sum_j s_j x_j^c. A convex combination of columns is feasible for the LP (each job's
throughput is at least sum_c theta_c z_c, its time share at most 1), and every LP solution is
one, so the master's optimum is the LP's. Pricing at capacity prices lam >= 0 is

    max_z [ z - sum_j c_j(z) ],   c_j(z) = min { lam . s_j x : a_j . x >= z, sum x <= 1, x >= 0 },

and c_j is the lower convex hull of the points (0, 0) and (a_{j,r}, s_j lam_r) at z (a share of
time on each type): K segments per job, found for all jobs at once. The sum is convex and
piecewise linear, so the best z is the breakpoint where its slope reaches 1 (one sort of the
n K breakpoints). lam . N + max_z [...] is an upper bound on z* for every lam >= 0 (Lagrangian
relaxation of the capacity rows); the engine's loop (:func:`hetsched.solvers.colgen.lp_relaxation`,
Wentges smoothing) stops when the master's value meets it, within 1e-9.
"""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import kernel
from hetsched.solvers.colgen import Column, DantzigWolfeProblem, lp_relaxation

#: the master's HiGHS feasibility tolerance (see ``DantzigWolfeProblem.lp_tolerance``)
MASTER_TOLERANCE = 1e-10
#: pricing rounds before the loop gives up (it took 20-45 on Gavel's workloads, 256-16,384 jobs)
MAX_ROUNDS = 500


@kernel
def _hulls(a: np.ndarray, cost: np.ndarray):
    """Each job's lower convex hull from (0, 0) over the points (a[j, r], cost[j, r]), as up to
    K segments (gift wrapping; of collinear points the farthest): start z, end z and slope
    (NaN where a job has fewer segments), and the types at the start (-1: the origin) and end."""
    n, k = a.shape
    start = np.full((n, k), np.nan)
    end = np.full((n, k), np.nan)
    slope = np.full((n, k), np.nan)
    first = np.full((n, k), -1, dtype=np.int64)
    last = np.full((n, k), -1, dtype=np.int64)
    for j in range(n):
        at_z, at_cost, at_type = 0.0, 0.0, -1
        for step in range(k):
            least, nxt = np.inf, -1
            for r in range(k):
                if a[j, r] > at_z:
                    s = (cost[j, r] - at_cost) / (a[j, r] - at_z)
                    if s < least or (s == least and a[j, r] > a[j, nxt]):
                        least, nxt = s, r
            if nxt < 0:
                break
            start[j, step], end[j, step], slope[j, step] = at_z, a[j, nxt], least
            first[j, step], last[j, step] = at_type, nxt
            at_z, at_cost, at_type = a[j, nxt], cost[j, nxt], nxt
    return start, end, slope, first, last


@kernel
def _allocation_at(start, end, first, last, z: float) -> np.ndarray:
    """Every job's point of its hull at throughput z: shares of the two types its segment joins."""
    n, k = start.shape
    x = np.zeros((n, k))
    for j in range(n):
        for step in range(k):
            if not np.isnan(end[j, step]) and start[j, step] <= z <= end[j, step]:
                share = (z - start[j, step]) / (end[j, step] - start[j, step])
                x[j, last[j, step]] = share
                if first[j, step] >= 0:
                    x[j, first[j, step]] += 1.0 - share
                break
    return x


@kernel
def _best_z(start, slope, z_max: float) -> tuple[float, float]:
    """The z where the slope of sum_j c_j reaches 1 (at most ``z_max``), and the breakpoint
    below it (-1 if none, or if z = 0)."""
    n, k = start.shape
    rise0 = 0.0
    for j in range(n):
        if not np.isnan(slope[j, 0]):
            rise0 += slope[j, 0]
    if rise0 >= 1.0:
        return 0.0, -1.0
    at = np.empty(n * (k - 1))
    rise = np.empty(n * (k - 1))
    m = 0
    for j in range(n):
        for step in range(1, k):
            if not np.isnan(slope[j, step]):
                at[m], rise[m] = start[j, step], slope[j, step] - slope[j, step - 1]
                m += 1
    order = np.argsort(at[:m], kind="mergesort")
    z, total = z_max, rise0
    for i in order:
        if at[i] >= z_max:
            break
        total += rise[i]
        if total >= 1.0:
            z = at[i]
            break
    below = -1.0
    for i in order:
        if at[i] >= z:
            break
        if at[i] > 0:
            below = at[i]
    return z, below


def best_allocations(
    a: np.ndarray, scale: np.ndarray, lam: np.ndarray
) -> list[tuple[float, np.ndarray]]:
    """The pricing problem at capacity prices ``lam``: (z, x) maximizing z - lam . sum_j s_j x_j
    subject to every job's throughput a_j . x_j >= z and time share sum x_j <= 1 (module doc);
    then, if there is one, the allocation at the breakpoint below that z (the other end of the
    segment where the slope passes 1: the master often needs both)."""
    if not len(a):
        return [(0.0, np.zeros_like(a))]
    start, end, slope, first, last = _hulls(a, scale[:, None] * lam[None, :])
    z, below = _best_z(start, slope, float(a.max(axis=1).min()))  # the slowest job's best
    best = [(z, _allocation_at(start, end, first, last, z))]
    if below > 0.0:
        best.append((below, _allocation_at(start, end, first, last, below)))
    return best


def max_min_by_decomposition(
    a: np.ndarray, scale: np.ndarray, count: np.ndarray, time_limit: float | None = None
) -> tuple[bool, float, float, np.ndarray, int]:
    """max z over the LP of the module doc: (converged, z of the allocation, the Lagrangian upper
    bound on z*, x[j, r], pricing rounds). ``converged``: the bound meets z within 1e-9."""
    a = np.asarray(a, dtype=float)
    scale = np.asarray(scale, dtype=float)
    k = a.shape[1]
    types = np.arange(k)

    def column(z: float, x: np.ndarray) -> Column:
        return Column(0, -z, types, x, scale @ x)

    def price(_block: int, lam: np.ndarray, _lo: float, _hi: float):
        cols = [column(z, x) for z, x in best_allocations(a, scale, lam)]
        return cols[0].cost + float(lam @ cols[0].amounts), cols

    problem = DantzigWolfeProblem(
        n_blocks=1,
        capacity=np.asarray(count, dtype=float),
        price=price,
        initial=[column(0.0, np.zeros_like(a))],  # nothing allocated: feasible, z = 0
        max_iterations=MAX_ROUNDS,
        lp_tolerance=MASTER_TOLERANCE,
    )
    run, columns, theta = lp_relaxation(problem, time_limit)
    x = np.zeros_like(a)
    for weight, col in zip(theta, columns):  # the master's convex combination of allocations
        if weight > 0:
            x += weight * col.payload
    x = np.clip(x, 0.0, None)
    z = float((a * x).sum(axis=1).min()) if len(a) else 0.0
    upper = -run.bound  # the engine minimizes -z: its Lagrangian lower bound is -(upper bound)
    converged = run.end == "done" and upper - z <= 1e-9 * max(1.0, abs(upper))
    return converged, z, upper, x, run.rounds
