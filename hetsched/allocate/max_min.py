"""The max-min allocation LP by Dantzig-Wolfe decomposition over the GPU types.

The LP (:mod:`hetsched.allocate.fast`; Gavel's max-min fairness, makespan and the finish-time
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

from hetsched.solvers.colgen import Column, DantzigWolfeProblem, lp_relaxation

#: the master's HiGHS feasibility tolerance (see ``DantzigWolfeProblem.lp_tolerance``)
MASTER_TOLERANCE = 1e-10
#: pricing rounds before the loop gives up (it took 20-45 on Gavel's workloads, 256-16,384 jobs)
MAX_ROUNDS = 500


def _hull(a: np.ndarray, cost: np.ndarray) -> list[tuple[np.ndarray, ...]]:
    """Each job's lower convex hull from (0, 0) over the points (a[j, r], cost[j, r]), as up to
    K segments: (start z, end z, slope, type at the start (-1: the origin), type at the end);
    a job with fewer segments has NaN ends (and type -1) in the rest."""
    n, k = a.shape
    rows = np.arange(n)
    at_z, at_cost, at_type = np.zeros(n), np.zeros(n), np.full(n, -1)
    alive = np.ones(n, dtype=bool)
    segments = []
    for _ in range(k):
        ahead = (a > at_z[:, None]) & alive[:, None]  # points to the right of the current vertex
        run = np.where(ahead, a - at_z[:, None], 1.0)
        slope = np.where(ahead, (cost - at_cost[:, None]) / run, np.inf)
        least = slope.min(axis=1)
        # of the points on the least slope, the farthest (a collinear nearer one is no vertex)
        nxt = np.where(slope <= least[:, None], a, -np.inf).argmax(axis=1)
        alive = np.isfinite(least)
        end = np.where(alive, a[rows, nxt], np.nan)
        segments.append(
            (
                at_z.copy(),
                end,
                np.where(alive, least, np.nan),
                at_type.copy(),
                np.where(alive, nxt, -1),
            )
        )
        at_z = np.where(alive, end, at_z)
        at_cost = np.where(alive, cost[rows, nxt], at_cost)
        at_type = np.where(alive, nxt, at_type)
    return segments


def _allocation_at(segments: list[tuple[np.ndarray, ...]], z: float, shape) -> np.ndarray:
    """Every job's point of its hull at throughput z: shares of the two types its segment joins."""
    x = np.zeros(shape)
    placed = np.zeros(shape[0], dtype=bool)
    for start, end, _, first, last in segments:  # the segment holding z, once per job
        on = ~placed & ~np.isnan(end) & (start <= z) & (z <= end)
        share = (z - start[on]) / (end[on] - start[on])
        jobs = np.flatnonzero(on)
        x[jobs, last[on]] = share
        inner = first[on] >= 0
        x[jobs[inner], first[on][inner]] += 1.0 - share[inner]
        placed |= on
    return x


def best_allocations(
    a: np.ndarray, scale: np.ndarray, lam: np.ndarray
) -> list[tuple[float, np.ndarray]]:
    """The pricing problem at capacity prices ``lam``: (z, x) maximizing z - lam . sum_j s_j x_j
    subject to every job's throughput a_j . x_j >= z and time share sum x_j <= 1 (module doc);
    then, if there is one, the allocation at the breakpoint below that z (the other end of the
    segment where the slope passes 1: the master often needs both)."""
    n, k = a.shape
    segments = _hull(a, scale[:, None] * lam[None, :])
    z_max = float(a.max(axis=1).min()) if n else 0.0  # the slowest job's best rate
    slope = float(np.nansum(segments[0][2]))  # d/dz sum_j c_j just after z = 0
    z, below = 0.0, None
    if slope < 1.0:
        at = np.concatenate([seg[0][~np.isnan(seg[2])] for seg in segments[1:]] or [np.zeros(0)])
        rise = np.concatenate(
            [(seg[2] - prev[2])[~np.isnan(seg[2])] for prev, seg in zip(segments, segments[1:])]
            or [np.zeros(0)]
        )
        order = np.argsort(at, kind="stable")
        at, rise = at[order], rise[order]
        reached = np.flatnonzero((slope + np.cumsum(rise) >= 1.0) & (at < z_max))
        z = float(at[reached[0]]) if len(reached) else z_max
        earlier = at[(at < z) & (at > 0)]
        below = float(earlier[-1]) if len(earlier) else 0.0
    best = [(z, _allocation_at(segments, z, a.shape))]
    if below is not None and below < z:
        best.append((below, _allocation_at(segments, below, a.shape)))
    return best


def best_allocation(a: np.ndarray, scale: np.ndarray, lam: np.ndarray) -> tuple[float, np.ndarray]:
    """The pricing problem's optimum (the first of :func:`best_allocations`)."""
    return best_allocations(a, scale, lam)[0]


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
    x = sum(t * c.payload for t, c in zip(theta, columns) if t > 0)
    x = np.clip(x, 0.0, None) if isinstance(x, np.ndarray) else np.zeros_like(a)
    z = float((a * x).sum(axis=1).min()) if len(a) else 0.0
    upper = -run.bound  # the engine minimizes -z: its Lagrangian lower bound is -(upper bound)
    converged = run.end == "done" and upper - z <= 1e-9 * max(1.0, abs(upper))
    return converged, z, upper, x, run.rounds
