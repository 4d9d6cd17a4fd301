"""The max-min allocation LP of a short queue as a dense matrix, for the dense simplex
(:mod:`hetsched.solvers.dense_simplex`): what a simulated Gavel solves at each change of its
active jobs (issue 41). The LP (:mod:`hetsched.gavel.fast`; Gavel OSDI'20, Sec. 4.1-4.2):

    max z  s.t.  fair[c]:  z - a_c . x_c <= 0,   share[c]:  sum_r x_{c,r} <= 1,
                 cap[r]:   sum_c d_c x_{c,r} <= N_r,   x >= 0,  z >= 0

(d_c: the GPUs class c asks of type r in all, m_c s_c). z >= 0 loses nothing: x = 0, z = 0 is
feasible. Columns x_{c,r} in row-major order, then z."""

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
def _max_min_vertex(a, demand, count, tiebreak):  # pragma: no cover - compiled
    """The LP above built and solved in one call: the dense simplex's status, z* and x[c, r]
    (the objective c.x is z itself); with ``tiebreak``, the second objective sum_c a_c . x_c."""
    n, k = a.shape
    A, b, c = max_min_matrix(a, demand, count)
    second = np.zeros(n * k + 1)
    if tiebreak:
        for i in range(n):
            for r in range(k):
                second[i * k + r] = a[i, r]
    status, x, _, _ = solve_default(A, b, c, second)
    return status, x[n * k], x[: n * k].copy().reshape(n, k)


def dense_max_min(
    a: np.ndarray, demand: np.ndarray, count: np.ndarray, tiebreak: bool = False
) -> tuple[float, np.ndarray] | None:
    """(z*, x[c, r]) of the LP above, certified optimal by the dense simplex's duals; with
    ``tiebreak``, one of most sum_c a_c . x_c among the optima. None where it declines (too
    large, non-finite, or not certified)."""
    status, z, x = _max_min_vertex(
        np.ascontiguousarray(a, dtype=float),
        np.ascontiguousarray(demand, dtype=float),
        np.ascontiguousarray(count, dtype=float),
        tiebreak,
    )
    return (float(z), x) if status == 0 else None
