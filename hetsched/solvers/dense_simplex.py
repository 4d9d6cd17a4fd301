"""A dense primal simplex method for the tiny LPs a simulation solves hundreds of thousands of
times, with a dual certificate checked on every answer.

    max c.x  s.t.  A x <= b,  x >= 0,   with b >= 0 (so x = 0 is a feasible start)

Why not HiGHS here: a simulated Gavel solves its allocation LP (20-60 columns) at every round
boundary where the active jobs changed, 150,000 times for 100,000 jobs. HiGHS takes about
0.2 ms of its own a warm solve and 0.4-2 ms cold through highspy (building, passing, its
presolve and crashes), most of it fixed cost per call; a dense tableau of that size pivots in
tens of microseconds. Larger LPs stay with HiGHS (:data:`MAX_ROWS`).

Every answer carries its proof: the duals y read off the final tableau must satisfy
y >= 0, A^T y >= c and b.y = c.x (to a relative 1e-9), and x must satisfy A x <= b, x >= 0;
:func:`solve_dense` returns None where any of these fails (or the method cycles past its
iteration cap), and the caller solves the LP with HiGHS instead. Dantzig's rule picks the
entering column; after :data:`DEGENERATE_STREAK` x rows degenerate pivots in a row Bland's rule takes
over for good, which cannot cycle. The same input gives the same vertex (no state is kept
between calls).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetsched.core.compiled import kernel

#: LPs with more rows go to HiGHS (a pivot costs rows x columns)
MAX_ROWS = 400
#: degenerate pivots in a row, per row, before Bland's rule (the max-min LPs start with a
#: degenerate pivot per job: every fair row has right side 0)
DEGENERATE_STREAK = 2
PIVOT_TOL = 1e-9  # entries this small are not pivots
CERTIFICATE_TOL = 1e-9  # relative


@dataclass(frozen=True)
class DenseLPResult:
    """An optimal vertex x, the row duals y and the objective c.x (certified)."""

    x: np.ndarray
    y: np.ndarray
    value: float
    pivots: int


@kernel
def _tableau_simplex(A, b, c, c2, max_pivots):  # pragma: no cover - compiled
    m, n = A.shape
    width = n + m + 1
    T = np.zeros((m + 2, width))  # rows: A | the objective c | the tie-break c2
    T[:m, :n] = A
    for i in range(m):
        T[i, n + i] = 1.0
        T[i, width - 1] = b[i]
    for j in range(n):
        T[m, j] = -c[j]
        T[m + 1, j] = -c2[j]
    basis = np.arange(n, n + m)
    nonzero = np.empty(width, dtype=np.int64)
    scale = scale2 = 0.0
    for j in range(n):
        scale = max(scale, abs(c[j]))
        scale2 = max(scale2, abs(c2[j]))
    dtol = 1e-12 * max(1.0, scale)
    tol = dtol
    row = m  # the objective the pivots improve: c, then c2 over c's optimal face
    streak = 0
    bland = False
    pivots = 0
    status = 1  # 0 optimal, 1 pivot cap, 2 unbounded
    while pivots < max_pivots:
        enter = -1
        most = -tol
        for j in range(n + m):
            if row > m and abs(T[m, j]) > dtol:
                continue  # would leave c's optimal face
            if T[row, j] < most:
                enter = j
                if bland:
                    break
                most = T[row, j]
        if enter < 0:
            if row == m and scale2 > 0.0:
                row, tol, streak, bland = m + 1, 1e-12 * max(1.0, scale2), 0, False
                continue
            status = 0
            break
        leave = -1
        best = np.inf
        for i in range(m):
            a = T[i, enter]
            if a > PIVOT_TOL:
                ratio = T[i, width - 1] / a
                if ratio < best - 1e-15:
                    best = ratio
                    leave = i
                elif ratio <= best + 1e-15:  # a tie: Bland's lowest index, else the largest pivot
                    if (bland and basis[i] < basis[leave]) or (not bland and a > T[leave, enter]):
                        best = min(best, ratio)
                        leave = i
        if leave < 0:
            status = 2 if row == m else 0  # c2 unbounded on c's face: stop at c's optimum
            break
        if best <= 1e-15:
            streak += 1
            if streak >= DEGENERATE_STREAK * m:
                bland = True
        else:
            streak = 0
        p = T[leave, enter]
        support = 0  # the pivot row's nonzero columns: only they change in the other rows
        for j in range(width):
            if T[leave, j] != 0.0:
                T[leave, j] /= p
                nonzero[support] = j
                support += 1
        for i in range(m + 2):
            f = T[i, enter]
            if i != leave and f != 0.0:
                for s in range(support):
                    j = nonzero[s]
                    T[i, j] -= f * T[leave, j]
        basis[leave] = enter
        pivots += 1
    x = np.zeros(n)
    for i in range(m):
        if basis[i] < n:
            x[basis[i]] = max(0.0, T[i, width - 1])
    y = T[m, n : n + m].copy()
    return status, x, y, pivots


@kernel
def _certified(A, b, c, x, y, tol):  # pragma: no cover - compiled
    m, n = A.shape
    big = 0.0
    for i in range(m):
        for j in range(n):
            big = max(big, abs(A[i, j]))
    top = 0.0
    for j in range(n):
        if x[j] < 0.0:
            return False
        top = max(top, x[j])
    size = 1.0 + big * (1.0 + top)
    primal = 0.0
    cmax = 0.0
    for j in range(n):
        primal += c[j] * x[j]
        cmax = max(cmax, abs(c[j]))
    dual = 0.0
    dual_size = 0.0
    for i in range(m):
        row = 0.0
        for j in range(n):
            row += A[i, j] * x[j]
        if row > b[i] + tol * size or y[i] < -tol * (1.0 + cmax):
            return False
        dual += b[i] * y[i]
        dual_size += abs(b[i] * y[i])
    for j in range(n):
        reduced = -c[j]
        scale = 1.0 + abs(c[j])
        for i in range(m):
            reduced += A[i, j] * y[i]
            scale += abs(A[i, j] * y[i])
        if reduced < -tol * scale:
            return False
    return abs(primal - dual) <= tol * (1.0 + abs(primal) + dual_size)


@kernel
def _solve_certified(A, b, c, c2, max_pivots, tol):  # pragma: no cover - compiled
    """Status 0 (certified optimum), 1 (pivot cap), 2 (unbounded), 3 (certificate failed) or 4
    (b < 0 or a non-finite entry), x, y, pivots."""
    m, n = A.shape
    ok = True
    for i in range(m):
        ok = ok and np.isfinite(b[i]) and b[i] >= 0.0
        for j in range(n):
            ok = ok and np.isfinite(A[i, j])
    for j in range(n):
        ok = ok and np.isfinite(c[j]) and np.isfinite(c2[j])
    if not ok:
        return 4, np.zeros(n), np.zeros(m), 0
    status, x, y, pivots = _tableau_simplex(A, b, c, c2, max_pivots)
    if status == 0 and not _certified(A, b, c, x, y, tol):
        status = 3
    return status, x, y, pivots


@kernel
def solve_default(A, b, c, c2):  # pragma: no cover - compiled
    """:func:`solve_dense`'s kernel with its default pivot cap, for kernels that build their LP:
    status 5 past :data:`MAX_ROWS`, else :func:`_solve_certified`'s (status, x, y, pivots)."""
    m, n = A.shape
    if m > MAX_ROWS:
        return 5, np.zeros(n), np.zeros(m), 0
    return _solve_certified(A, b, c, c2, 20 * (m + n), CERTIFICATE_TOL)


def solve_dense(
    A: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    tiebreak: np.ndarray | None = None,
    max_pivots: int | None = None,
) -> DenseLPResult | None:
    """An optimal vertex of max c.x s.t. A x <= b, x >= 0 (b >= 0), certified by its duals;
    with ``tiebreak`` c2, one that also maximizes c2.x over the optimal face of c (the simplex
    continues on c2 through the columns whose reduced cost on c is 0; c2 is not certified);
    None where the LP is too large (:data:`MAX_ROWS`), has b < 0 or a non-finite entry, is
    unbounded, is not solved within the pivot cap, or the certificate fails: the caller then
    solves it another way."""
    A = np.ascontiguousarray(A, dtype=float)
    m, n = A.shape
    if m > MAX_ROWS:
        return None
    b = np.ascontiguousarray(b, dtype=float)
    c = np.ascontiguousarray(c, dtype=float)
    c2 = np.zeros(n) if tiebreak is None else np.ascontiguousarray(tiebreak, dtype=float)
    if max_pivots is None:
        status, x, y, pivots = solve_default(A, b, c, c2)
    else:
        status, x, y, pivots = _solve_certified(A, b, c, c2, max_pivots, CERTIFICATE_TOL)
    if status != 0:
        return None
    return DenseLPResult(x, y, float(c @ x), int(pivots))


def certified(A: np.ndarray, b: np.ndarray, c: np.ndarray, x: np.ndarray, y: np.ndarray) -> bool:
    """Whether (x, y) proves x optimal: x >= 0 feasible, y >= 0 dual feasible (A^T y >= c),
    and c.x = b.y, each to a relative :data:`CERTIFICATE_TOL`."""
    arrays = (np.ascontiguousarray(v, dtype=float) for v in (A, b, c, x, y))
    return bool(_certified(*arrays, CERTIFICATE_TOL))
