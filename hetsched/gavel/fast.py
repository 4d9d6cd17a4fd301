"""The fast path for the allocation LPs, for thousands of jobs.

Max-min fairness (both forms), makespan (z = 1/makespan) and min-total-duration are all

    max z  s.t.  z <= sum_r a_{j,r} x_{j,r},  sum_r x_{j,r} <= 1,  sum_j s_j x_{j,r} <= N_r,  x >= 0

for a coefficient matrix a (:func:`coefficients`); the throughput sums are max sum a x under the
same base constraints (:func:`solve_max_sum`). Two things make it fast:

1. **Identical jobs are merged.** Jobs with the same row (a_j, s_j) -- in Gavel's workloads, the
   same job type, scale factor and weight -- form a class c of m_c jobs. Giving every job of a
   class the class's average allocation keeps every constraint (they are linear and identical
   within the class) and does not lower min_j a_j x_j (nor change a linear sum), so the LP over classes (capacity
   sum_c m_c s_c x_{c,r} <= N_r) has the same optimum. Gavel's table has 83 job types, so a
   2048-job LP shrinks to at most 83 x (distinct weights) rows.
2. **The max-min LPs are solved by column generation over the GPU types**
   (:mod:`hetsched.gavel.max_min`): linear in the jobs, where HiGHS's interior point on the
   whole LP grows as n^1.34 when no two jobs are alike. The throughput sums, and the max-min
   LPs on request (``method``), go to HiGHS as arrays (highspy, CSC matrix), without a
   modelling layer.

The result is checked by the same independent validator as the Pyomo models, and
:func:`fast_solve` returns the same :class:`SolveResult`.
"""

from __future__ import annotations

import time

import highspy
import numpy as np
import scipy.sparse as sp

from hetsched.gavel.conventions import check_convention
from hetsched.gavel.policies import (
    coefficients,
    fast_objective,
    fast_path,
    policy_view,
    sum_coefficients,
)
from hetsched.gavel.problem import Allocation, allocation_view, equal_share_makespan
from hetsched.gavel.validate import allocation_report
from hetsched.instance.model import Instance
from hetsched.solvers.finalize import finalize
from hetsched.solvers.lp_arrays import INF, ArrayLP, run_highs
from hetsched.solvers.result import SolveResult, Status


def _classes(a: np.ndarray, scale: np.ndarray, merge: bool, prefer: np.ndarray | None = None):
    """Job classes with the same row (a_j, s_j) (and ``prefer``'s row, where given): (rows,
    scales, multiplicities, job -> class, ``prefer``'s rows of the classes)."""
    if not merge:
        return a, scale, np.ones(len(a)), np.arange(len(a)), prefer
    keys = [a, scale[:, None]] if prefer is None else [a, prefer, scale[:, None]]
    classes, inverse, mult = np.unique(
        np.hstack(keys), axis=0, return_inverse=True, return_counts=True
    )
    k = a.shape[1]
    rows = classes[:, k:-1] if prefer is not None else None
    return classes[:, :k], classes[:, -1], mult, inverse.ravel(), rows


def _constraints(
    ca: np.ndarray, demand: np.ndarray, count: np.ndarray, epigraph: bool
) -> tuple[sp.csc_matrix, np.ndarray]:
    """The rows of :func:`_solve_arrays` as a CSC matrix built column by column, and their upper
    bounds: ``fair[c]``: a_c x_c - z >= 0 written -a_c x_c + z <= 0 (if ``epigraph``), then
    ``share[c]``: sum_r x_{c,r} <= 1, then ``cap[r]``: sum_c m_c s_c x_{c,r} <= N_r. Column
    (c, r) holds fair[c], share[c] and cap[r]; the last column, z, holds every fair row. The
    same arrays (entries in row order, explicit zeros kept) as stacking the three blocks, at a
    fraction of the cost on the small LPs a simulation solves every round."""
    n, k = ca.shape
    fair = n if epigraph else 0  # rows before share
    per = 3 if epigraph else 2  # entries per x column
    c, r = np.repeat(np.arange(n), k), np.tile(np.arange(k), n)
    rows = [c, fair + c, fair + n + r] if epigraph else [c, n + r]
    vals = [-ca.ravel(), np.ones(n * k), demand[c]] if epigraph else [np.ones(n * k), demand[c]]
    indices = np.column_stack(rows).ravel()
    data = np.column_stack(vals).ravel()
    indptr = np.arange(n * k + 1) * per
    if epigraph:  # z
        indices = np.concatenate([indices, np.arange(n)])
        data = np.concatenate([data, np.ones(n)])
        indptr = np.append(indptr, indptr[-1] + n)
    shape = (fair + n + k, n * k + (1 if epigraph else 0))
    upper = np.concatenate([np.zeros(fair), np.ones(n), count.astype(float)])
    return sp.csc_matrix((data, indices, indptr), shape=shape), upper


#: HiGHS options of each whole-LP method: ``ipm`` and ``simplex`` end at a vertex (the interior
#: point method crosses over to one); ``interior`` stops at the interior point method's last
#: iterate, near the analytic centre of the optimal face, as Gavel's ECOS does (on the LP as
#: written: HiGHS's presolve, which ECOS does not have, can leave the interior point method
#: with no status, as on one job whose gang fills a type). Where the interior point method
#: ends without an optimum, the LP is solved again by ``ipm`` (a vertex)
LP_METHODS = {
    "ipm": {"solver": "ipm"},
    "simplex": {"solver": "simplex"},
    "interior": {"solver": "ipm", "run_crossover": "off", "presolve": "off"},
}


def _solve_arrays(
    a: np.ndarray,
    scale: np.ndarray,
    count: np.ndarray,
    merge: bool,
    solver: str,
    epigraph: bool,
    floor: float | None = None,
    prefer: np.ndarray | None = None,
) -> tuple[Status, float, np.ndarray, int]:
    """The base constraints over job classes plus either ``fair[c]``: z <= a_c x_c (max z) or
    the objective max sum_c m_c a_c x_c; one HiGHS LP passed as arrays, solved by ``solver``
    (a key of :data:`LP_METHODS`). With ``floor``, both: z is held at ``floor`` and the
    objective is the sum (the tie-break of :func:`solve_max_min`), of ``prefer`` where given."""
    ca, cs, mult, inverse, cp = _classes(a, scale, merge, prefer)
    n, k = ca.shape
    A, upper = _constraints(ca, mult * cs, count, epigraph)
    nv = A.shape[1]
    cost = np.zeros(nv)
    lower, top = np.zeros(nv), np.full(nv, INF)
    if epigraph and floor is None:
        cost[-1] = -1.0
    else:
        cost[: n * k] = -((ca if cp is None else cp) * mult[:, None]).ravel()
    if floor is not None:
        lower[-1] = top[-1] = floor
    lp = ArrayLP(
        cost,
        A,
        np.full(A.shape[0], -INF),
        upper,
        lower,
        top,
        options=dict(LP_METHODS[solver]),
    )
    h, _ = run_highs(lp)
    if solver == "interior" and h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        h, _ = run_highs(lp, LP_METHODS["ipm"] | {"presolve": "on", "run_crossover": "on"})
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return Status.ERROR, float("nan"), np.zeros_like(a), n
    values = np.asarray(h.getSolution().col_value)
    x = np.clip(values[: n * k].reshape(n, k), 0.0, None)[inverse]
    value = float(values[-1]) if epigraph else float(-h.getInfo().objective_function_value)
    return Status.OPTIMAL, value, x, n


def solve_max_min(
    a: np.ndarray,
    scale: np.ndarray,
    count: np.ndarray,
    merge: bool = True,
    method: str = "decomposition",
    notes: list[str] | None = None,
    tiebreak: bool = False,
    prefer: np.ndarray | None = None,
) -> tuple[Status, float, np.ndarray, int]:
    """max z over the LP above; returns (status, z, x[j, r], number of job classes solved).
    With ``tiebreak``, x is among the optima one of most total sum_{j,r} a_{j,r} x_{j,r}
    (:data:`TIEBREAK_SLACK`), so that no job is left below what the cluster could give it
    at no cost to the minimum (a step toward Gavel's water filling); with ``prefer`` too, of
    most sum_{j,r} prefer_{j,r} x_{j,r} instead (the simulated agnostic policies: the
    heterogeneity-aware coefficients among the agnostic optima).

    ``method``: ``decomposition`` (:mod:`hetsched.gavel.max_min`: column generation over the
    GPU types, linear in the jobs; should it not meet its bound within its rounds, the same LP
    goes to HiGHS's interior point instead, and ``notes`` says so), or ``ipm`` / ``simplex`` /
    ``interior``: the whole LP to HiGHS (:data:`LP_METHODS`), or ``dense``: a dense simplex
    with a dual certificate for the small LPs of a simulation (:func:`_dense_max_min`; HiGHS's
    ``ipm`` where it declines). ``notes``: a list the method
    appends what it did to."""
    log = notes if notes is not None else []
    if method == "dense":
        found = _dense_max_min(a, scale, count, merge, tiebreak, prefer)
        if found is not None:
            return found
        log.append("dense simplex gave no certified optimum: HiGHS interior point instead")
        method = "ipm"
    status, z, x, classes = _max_min(a, scale, count, merge, method, log)
    if tiebreak and status == Status.OPTIMAL:
        floor = z - TIEBREAK_SLACK * max(1.0, abs(z))
        method = "ipm" if method in ("decomposition", "interior") else method
        second = _solve_arrays(
            a, scale, count, merge, method, epigraph=True, floor=floor, prefer=prefer
        )
        if second[0] == Status.OPTIMAL:
            x = second[2]
        else:
            log.append("the tie-break LP ended unsolved: the max-min optimum as found")
    return status, z, x, classes


#: the tie-break of :func:`solve_max_min` on HiGHS holds z at its optimum less this much
#: (relative); the dense simplex needs none (it moves on the optimal face itself)
TIEBREAK_SLACK = 1e-9


def _max_min(
    a: np.ndarray, scale: np.ndarray, count: np.ndarray, merge: bool, method: str, log: list
) -> tuple[Status, float, np.ndarray, int]:
    """:func:`solve_max_min` by ``decomposition`` or a HiGHS method, without the tie-break."""
    if method == "decomposition":
        from hetsched.gavel.max_min import max_min_by_decomposition  # numba: when it is used

        ca, cs, mult, inverse, _ = _classes(a, scale, merge)
        converged, z, upper, x, rounds = max_min_by_decomposition(ca, mult * cs, count)
        if converged:
            log.append(
                f"decomposition: {rounds} pricing rounds, z {z:.12g}, Lagrangian bound {upper:.12g}"
            )
            return Status.OPTIMAL, z, x[inverse], len(ca)
        log.append(
            f"decomposition stopped after {rounds} rounds (z {z:.12g}, bound {upper:.12g}): "
            "HiGHS interior point instead"
        )
        method = "ipm"
    return _solve_arrays(a, scale, count, merge, method, epigraph=True)


def _dense_max_min(
    a: np.ndarray,
    scale: np.ndarray,
    count: np.ndarray,
    merge: bool,
    tiebreak: bool,
    prefer: np.ndarray | None = None,
) -> tuple[Status, float, np.ndarray, int] | None:
    """The max-min LP over job classes by the dense simplex (:mod:`hetsched.gavel.dense`);
    None where it declines."""
    from hetsched.gavel.dense import dense_max_min  # numba: when it is used

    # one row per job unmerged: no class arrays to build on the simulation's hot path
    ca, demand, inverse, cp = a, scale, None, prefer
    if merge:
        ca, cs, mult, inverse, cp = _classes(a, scale, merge, prefer if tiebreak else None)
        demand = mult * cs
    found = dense_max_min(ca, demand, count, tiebreak, cp)
    if found is None:
        return None
    z, x = found
    return Status.OPTIMAL, z, x if inverse is None else x[inverse], len(ca)


def solve_max_sum(
    a: np.ndarray,
    scale: np.ndarray,
    count: np.ndarray,
    merge: bool = True,
    solver: str = "ipm",
    notes: list[str] | None = None,
) -> tuple[Status, float, np.ndarray, int]:
    """max sum_{j,r} a_{j,r} x_{j,r} under the base constraints (the throughput policies).
    Merging keeps the optimum: averaging a class's allocations keeps every constraint and the
    linear objective. ``solver``: a key of :data:`LP_METHODS`, or ``dense``: the dense simplex
    (:func:`hetsched.gavel.dense.dense_max_sum`), HiGHS's ``ipm`` where it declines (``notes``
    says so)."""
    if solver == "dense":
        from hetsched.gavel.dense import dense_max_sum  # numba: when it is used

        ca, cs, mult, inverse, _ = _classes(a, scale, merge)
        found = dense_max_sum(ca, mult * cs, count)
        if found is not None:
            return Status.OPTIMAL, found[0], found[1][inverse], len(ca)
        if notes is not None:
            notes.append("dense simplex gave no certified optimum: HiGHS interior point instead")
        solver = "ipm"
    return _solve_arrays(a, scale, count, merge, solver, epigraph=False)


def fast_solve(
    instance: Instance, policy: str, merge: bool = True, convention: str = "hetsched"
) -> SolveResult:
    """The fast path behind the same result type as :func:`hetsched.exact.solve.solve`."""
    t0 = time.perf_counter()
    view = allocation_view(instance)
    log: list[str] = []
    if fast_path(policy, check_convention(convention)) == "sum":
        a = sum_coefficients(view, policy, convention)
        status, z, x, classes = solve_max_sum(a, view.scale, view.count, merge=merge)
    else:
        a = coefficients(view, policy, convention)
        status, z, x, classes = solve_max_min(a, view.scale, view.count, merge, notes=log)
    objective, sense = fast_objective(policy, convention)
    claimed = z
    if sense == "min":  # makespan, min-total-duration: zeta = M / makespan
        claimed = equal_share_makespan(policy_view(view, policy)) / z if z > 0 else float("inf")
    alloc = Allocation(policy, view, x, instance.name, {"convention": convention})
    report = allocation_report(objective)(instance, alloc)
    result = SolveResult(
        instance=instance.name,
        model=f"gavel-{policy}",
        solver="highs-arrays",
        status=status,
        solution=alloc,
        solver_objective=claimed,
        sense=sense,
        notes=[
            f"fast path: {classes} job classes for {view.n_jobs} jobs"
            if merge
            else "fast path, no merging",
            *log,
        ],
    )
    finalize(result, report)  # proven optimal: the bound is the validated objective
    result.seconds = time.perf_counter() - t0
    return result
