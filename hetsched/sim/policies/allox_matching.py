"""AlloX's matching (``hetsched.sim.policies.allox``) compiled: the cost of job n k-th from the
end on GPU m, k p_{n,m}, the min-cost assignment of jobs to (position, GPU) columns, and the
job each GPU runs first, in one call.

The assignment is the shortest augmenting path method of Crouse (IEEE Trans. Aerospace and
Electronic Systems 52(4), 2016, pp. 1685-1686), the method of scipy's
``linear_sum_assignment`` (1.17), with the same choices among equal costs: the columns scanned
from the last, and of the columns of least path cost, one that ends a path preferred. So AlloX
decides exactly as it did with scipy (hashed runs, and ``tests/sim/test_sim_allox_matching.py``
against scipy), without building the arrays in Python at each of its some nine decisions a job
(93,519 matchings at 10,000 jobs of the stable load).
"""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import kernel


@kernel
def assignment(cost: np.ndarray) -> np.ndarray:
    """The column of each row in a least-cost assignment of every row of ``cost`` (rows <=
    columns, finite costs) to its own column."""
    nr, nc = cost.shape
    u = np.zeros(nr)
    v = np.zeros(nc)
    spc = np.empty(nc)  # the shortest path cost to each column
    path = np.full(nc, -1, np.int64)
    col4row = np.full(nr, -1, np.int64)
    row4col = np.full(nc, -1, np.int64)
    row_seen = np.zeros(nr, np.bool_)
    col_seen = np.zeros(nc, np.bool_)
    remaining = np.empty(nc, np.int64)
    for row in range(nr):
        # the shortest path from row to a free column over the reduced costs
        for it in range(nc):
            remaining[it] = nc - it - 1
        n_left = nc
        row_seen[:] = False
        col_seen[:] = False
        spc[:] = np.inf
        low = 0.0
        i = row
        sink = -1
        while sink == -1:
            row_seen[i] = True
            index, lowest = -1, np.inf
            for it in range(n_left):
                j = remaining[it]
                r = low + cost[i, j] - u[i] - v[j]
                if r < spc[j]:
                    path[j] = i
                    spc[j] = r
                if spc[j] < lowest or (spc[j] == lowest and row4col[j] == -1):
                    lowest = spc[j]
                    index = it
            low = lowest
            j = remaining[index]
            if row4col[j] == -1:
                sink = j
            else:
                i = row4col[j]
            col_seen[j] = True
            n_left -= 1
            remaining[index] = remaining[n_left]
        # the duals, then the path's columns change hands
        u[row] += low
        for i in range(nr):
            if row_seen[i] and i != row:
                u[i] += low - spc[col4row[i]]
        for j in range(nc):
            if col_seen[j]:
                v[j] -= low - spc[j]
        j = sink
        while True:
            i = path[j]
            row4col[j] = i
            j, col4row[i] = col4row[i], j
            if i == row:
                break
    return col4row


@kernel
def first_jobs(
    train: np.ndarray, jobs: np.ndarray, gpus: np.ndarray, left: np.ndarray
) -> np.ndarray:
    """For each of ``gpus``, the row (in ``jobs``) of the job AlloX's matching puts at its
    highest position (the one it runs first), or -1: the cost of row i k-th from the end on
    column g is k x left[i] x T^c[jobs[i], gpus[g]], columns (k - 1) |gpus| + g."""
    J, G = len(jobs), len(gpus)
    cost = np.empty((J, J * G))
    for i in range(J):
        for g in range(G):
            p = left[i] * train[jobs[i], gpus[g]]
            for k in range(J):
                cost[i, k * G + g] = float(k + 1) * p
    cols = assignment(cost)
    top = np.full(G, -1, np.int64)
    first = np.full(G, -1, np.int64)
    for i in range(J):
        k, g = cols[i] // G, cols[i] % G
        if k >= top[g]:
            top[g] = k
            first[g] = i
    return first
