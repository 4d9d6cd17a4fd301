"""The allocation LPs of a short queue as a dense matrix, for the dense simplex
(:mod:`hetsched.solvers.dense_simplex`): what a simulated Gavel solves at each change of its
active jobs (issue 41). The LP (:mod:`hetsched.gavel.fast`; Gavel OSDI'20, Sec. 4.1-4.2):

    max z  s.t.  fair[c]:  z - a_c . x_c <= 0,   share[c]:  sum_r x_{c,r} <= 1,
                 cap[r]:   sum_c d_c x_{c,r} <= N_r,   x >= 0,  z >= 0

(d_c: the GPUs class c asks of type r in all, m_c s_c). z >= 0 loses nothing: x = 0, z = 0 is
feasible. Columns x_{c,r} in row-major order, then z. The throughput policies' LP is
max sum_c a_c . x_c under share and cap alone (:func:`dense_max_sum`)."""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import kernel
from hetsched.solvers.dense_simplex import solve_default


@kernel
def max_min_matrix(a, demand, count):  # pragma: no cover - compiled
    """(A, b, c) of the LP above for rows ``a`` (classes x types), ``demand`` d_c, ``count`` N."""
    n, k = a.shape
    A = np.zeros((2 * n + k, n * k + 1))
    b = np.zeros(2 * n + k)
    for i in range(n):
        A[i, n * k] = 1.0
        b[n + i] = 1.0
        for r in range(k):
            A[i, i * k + r] = -a[i, r]
            A[n + i, i * k + r] = 1.0
            A[2 * n + r, i * k + r] = demand[i]
    for r in range(k):
        b[2 * n + r] = count[r]
    c = np.zeros(n * k + 1)
    c[n * k] = 1.0
    return A, b, c


@kernel
def _max_min_vertex(a, demand, count, tiebreak, prefer):  # pragma: no cover - compiled
    """The LP above built and solved in one call: the dense simplex's status, z* and x[c, r]
    (the objective c.x is z itself); with ``tiebreak``, the second objective
    sum_c prefer_c . x_c."""
    n, k = a.shape
    A, b, c = max_min_matrix(a, demand, count)
    second = np.zeros(n * k + 1)
    if tiebreak:
        for i in range(n):
            for r in range(k):
                second[i * k + r] = prefer[i, r]
    status, x, _, _ = solve_default(A, b, c, second)
    return status, x[n * k], x[: n * k].copy().reshape(n, k)


@kernel
def _max_sum_vertex(a, demand, count):  # pragma: no cover - compiled
    """max sum_c a_c . x_c under share[c] and cap[r] alone (the throughput policies): the
    dense simplex's status, the optimum and x[c, r]."""
    n, k = a.shape
    A = np.zeros((n + k, n * k))
    b = np.zeros(n + k)
    c = np.zeros(n * k)
    for i in range(n):
        b[i] = 1.0
        for r in range(k):
            A[i, i * k + r] = 1.0
            A[n + r, i * k + r] = demand[i]
            c[i * k + r] = a[i, r]
    for r in range(k):
        b[n + r] = count[r]
    status, x, _, _ = solve_default(A, b, c, np.zeros(n * k))
    value = 0.0
    for v in range(n * k):
        value += c[v] * x[v]
    return status, value, x.copy().reshape(n, k)


def _arrays(*arrays: np.ndarray) -> list[np.ndarray]:
    return [np.ascontiguousarray(v, dtype=float) for v in arrays]


def dense_max_min(
    a: np.ndarray,
    demand: np.ndarray,
    count: np.ndarray,
    tiebreak: bool = False,
    prefer: np.ndarray | None = None,
) -> tuple[float, np.ndarray] | None:
    """(z*, x[c, r]) of the LP above, certified optimal by the dense simplex's duals; with
    ``tiebreak``, one of most sum_c prefer_c . x_c among the optima (``prefer``: ``a`` unless
    given). None where it declines (too large, non-finite, or not certified)."""
    a, demand, count = _arrays(a, demand, count)
    second = a if prefer is None else _arrays(prefer)[0]
    status, z, x = _max_min_vertex(a, demand, count, tiebreak, second)
    return (float(z), x) if status == 0 else None


def dense_max_sum(
    a: np.ndarray, demand: np.ndarray, count: np.ndarray
) -> tuple[float, np.ndarray] | None:
    """(max sum_c a_c . x_c, x[c, r]) under the share and capacity rows, certified optimal by
    the dense simplex's duals; None where it declines."""
    status, value, x = _max_sum_vertex(*_arrays(a, demand, count))
    return (float(value), x) if status == 0 else None
