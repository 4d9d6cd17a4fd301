"""Linear programs by Clarabel's interior point method (a sparse direct solve of the KKT system):
the ``clarabel`` backend, for Pyomo models with no integer variable.

Why beside HiGHS (issue 41, item 6): Gavel's max-min LPs have one column, the epigraph variable
z, in every job's row. HiGHS's interior point (IPX) works on the normal equations, which such a
column makes dense, and took 6.5-6.9 CPU s on the 16,384-job LP; its simplex 45-58 s; splitting
z into a chain of linked copies or handing it the dual LP changed nothing (7.0, 7.8 s). Clarabel
factors the KKT system itself, where a dense column stays one column: 0.7 s on the same LP (1.3 s
with its iterative refinement, which is kept for a second try), the same optimum to 1e-10 (and,
like ECOS, which Gavel's own code calls through cvxpy, it ends at a point inside the optimal
face, not at a vertex).

The rows l <= A x <= u and the bounds of x become Clarabel's A' x + s = b with s in a product of
a zero cone (equations) and a non-negative cone (one row per finite side). The status is
``optimal`` only when Clarabel says ``Solved`` (at :data:`TOL` on feasibility and on the gap);
``AlmostSolved`` is ``feasible``, with no bound.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from hetsched.core.errors import HetschedError, SolverError
from hetsched.solvers.lp_arrays import ArrayLP
from hetsched.solvers.result import RawResult, SolverOptions, Status

TOL = 1e-10  # Clarabel's feasibility and absolute and relative gap tolerances


def cone_form(lp: ArrayLP) -> tuple[sp.csc_matrix, np.ndarray, int, int]:
    """(A', b, equations, inequalities): the rows of ``lp`` and the finite bounds of its columns
    as A' x + s = b, the first ``equations`` slacks zero and the rest non-negative."""
    a = sp.csr_matrix(lp.matrix)
    lo, hi = np.asarray(lp.row_lower, float), np.asarray(lp.row_upper, float)
    col_lo, col_hi = np.asarray(lp.col_lower, float), np.asarray(lp.col_upper, float)
    eq = np.isfinite(lo) & (lo == hi)
    upper = np.isfinite(hi) & ~eq
    lower = np.isfinite(lo) & ~eq
    unit = sp.identity(a.shape[1], format="csr")
    cu, cl = np.isfinite(col_hi), np.isfinite(col_lo)
    rows = sp.vstack([a[eq], a[upper], -a[lower], unit[cu], -unit[cl]], format="csc")
    b = np.concatenate([lo[eq], hi[upper], -lo[lower], col_hi[cu], -col_lo[cl]])
    return rows, b, int(eq.sum()), rows.shape[0] - int(eq.sum())


#: the statuses after which a second try (with iterative refinement) would not help
ANSWERS = ("Solved", "PrimalInfeasible", "DualInfeasible", "MaxTime")


def _settings(clarabel, opts: SolverOptions, refine: bool, spent: float):
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    # 1e-10 instead of Clarabel's 1e-8 on the gap and on feasibility: one more iteration on the
    # 16,384-job LP, and an optimum that agrees with HiGHS's vertex to about 1e-10
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = TOL
    settings.iterative_refinement_enable = refine
    if opts.time_limit is not None:
        settings.time_limit = max(0.0, float(opts.time_limit) - spent)
    if opts.threads is not None:
        settings.max_threads = int(opts.threads)
    return settings


def solve_array_lp_clarabel(lp: ArrayLP, opts: SolverOptions = SolverOptions()) -> RawResult:
    """min ``lp.cost`` x over ``lp`` by Clarabel: status, objective (the bound too, at an
    optimum) and the column values (``RawResult.solution``)."""
    try:
        import clarabel
    except ImportError as exc:  # an installation problem, not bad input
        raise SolverError(f"clarabel is not installed ({exc}): pip install clarabel") from exc
    t0 = time.perf_counter()
    rows, b, n_eq, n_ineq = cone_form(lp)
    n = rows.shape[1]
    cones = ([clarabel.ZeroConeT(n_eq)] if n_eq else []) + (
        [clarabel.NonnegativeConeT(n_ineq)] if n_ineq else []
    )
    p, q = sp.csc_matrix((n, n)), np.asarray(lp.cost, float)
    # first without iterative refinement of each KKT solve: 0.70 instead of 1.30 CPU s on the
    # 16,384-job max-min LP (32 iterations instead of 30), the same optimum to 1e-10; where that
    # ends without an answer (a status other than these), again with Clarabel's defaults
    for refine in (False, True):
        settings = _settings(clarabel, opts, refine, time.perf_counter() - t0)
        sol = clarabel.DefaultSolver(p, q, rows, b, cones, settings).solve()
        if str(sol.status) in ANSWERS:
            break
    seconds = time.perf_counter() - t0
    status = str(sol.status)
    if status in ("Solved", "AlmostSolved"):
        value = float(sol.obj_val) + float(lp.offset)
        exact = status == "Solved"
        return RawResult(
            Status.OPTIMAL if exact else Status.FEASIBLE,
            value,
            value if exact else None,
            seconds,
            solution=np.asarray(sol.x, dtype=float),
            log=f"clarabel: {status}, {sol.iterations} iterations"
            + ("" if refine else ", no iterative refinement"),
        )
    kind = {
        "MaxTime": Status.TIME_LIMIT,
        "PrimalInfeasible": Status.INFEASIBLE,
    }.get(status, Status.ERROR)
    return RawResult(kind, None, None, seconds, log=f"clarabel: {status}")


def solve_pyomo_clarabel(model, opts: SolverOptions = SolverOptions()) -> RawResult:
    """The ``clarabel`` backend: a Pyomo model with no integer variable, compiled to arrays
    (:mod:`hetsched.solvers.pyomo_arrays`) and solved by Clarabel; the optimum is loaded into
    the model's variables. The time limit covers the compiling."""
    from hetsched.solvers.pyomo_arrays import is_linear_program, solve_pyomo_arrays

    if not is_linear_program(model):
        raise HetschedError(
            f"--solver clarabel solves linear programs; {model.name} has integer variables "
            "(use --solver highs or cpsat)"
        )
    return solve_pyomo_arrays(model, opts, engine=solve_array_lp_clarabel)
