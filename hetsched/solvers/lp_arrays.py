"""Linear programs as arrays, passed to HiGHS without a modelling layer (highspy, CSC matrix).

A formulation of kind ``lp`` builds an :class:`ArrayLP` (min c'x, row_lower <= A x <= row_upper,
col_lower <= x <= col_upper); the backend ``highs-lp`` solves it (the interior point method
unless the formulation asks otherwise) and hands the column values back as the solution. The
allocation fast path (:mod:`hetsched.gavel.fast`) solves its LPs with the same function. An
ArrayLP with ``integrality`` is a MILP (:func:`solve_array_mip`; the ``highs`` backend's route
for a Pyomo model with integer variables, :mod:`hetsched.solvers.highs`).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

import highspy
import numpy as np
import scipy.sparse as sp

from hetsched.solvers.highs_run import release, run_interruptibly
from hetsched.solvers.result import RawResult, SolverOptions, Status

INF = highspy.kHighsInf
#: an LP with fewer nonzeros runs in the calling thread, not interruptibly
#: (:mod:`hetsched.solvers.highs_run`): the solver thread costs about 0.7 ms of CPU a run, more
#: than a tiny LP's whole solve (0.56 ms), and the allocation fast path solves such LPs by the
#: thousand; one just under the limit ends soon (a 70 x 70 transportation LP, 9,800 nonzeros:
#: 35 ms by simplex, 82 ms by interior point; measured 2026-11-28), so a signal waits no
#: longer. A MILP, however small, may run for hours and always waits interruptibly
DIRECT_NONZEROS = 10_000


def size_thread_pool(threads: int | None) -> None:
    """Before a HiGHS run with the ``threads`` option set: HiGHS keeps one thread pool per
    process, sized by the first run, and a later run asking for another size returns no status
    ("Not Set", an error here): a portfolio whose LP runs on two threads after an LP on one, or
    two tests in one worker. Resetting the pool lets the run size it (measured: no cost)."""
    if threads is not None:
        highspy.Highs.resetGlobalScheduler(True)


@dataclass
class ArrayLP:
    """min ``cost`` x s.t. ``row_lower`` <= ``matrix`` x <= ``row_upper``, ``col_lower`` <= x
    <= ``col_upper``; ``data`` is what the formulation needs to decode x; ``options`` are HiGHS
    options the formulation was measured with; ``notes`` go into the result."""

    cost: np.ndarray
    matrix: sp.spmatrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    data: Any = None
    options: dict[str, Any] = field(default_factory=lambda: {"solver": "ipm"})
    notes: list[str] = field(default_factory=list)
    offset: float = 0.0
    integrality: np.ndarray | None = None  # 1 where a column is integer (None: all continuous)

    @classmethod
    def from_inequalities(
        cls,
        cost: np.ndarray,
        a_ub: sp.spmatrix,
        b_ub: np.ndarray,
        a_eq: sp.spmatrix,
        b_eq: np.ndarray,
        col_lower: np.ndarray,
        col_upper: np.ndarray,
        options: dict[str, Any] | None = None,
    ) -> "ArrayLP":
        """min cost x s.t. a_ub x <= b_ub, a_eq x = b_eq, col bounds (``scipy.optimize.linprog``'s
        form): the rows stacked, the inequalities first."""
        b_ub, b_eq = np.asarray(b_ub, dtype=float), np.asarray(b_eq, dtype=float)
        return cls(
            cost=np.asarray(cost, dtype=float),
            matrix=sp.vstack([a_ub, a_eq]).tocsc(),
            row_lower=np.concatenate([np.full(len(b_ub), -INF), b_eq]),
            row_upper=np.concatenate([b_ub, b_eq]),
            col_lower=np.asarray(col_lower, dtype=float),
            col_upper=np.asarray(col_upper, dtype=float),
            options=dict(options or {}),
        )


def run_highs(
    lp: ArrayLP, options: dict[str, Any] | None = None, rerun: bool = False
) -> tuple[highspy.Highs, float]:
    """HiGHS run on ``lp`` (its options, then ``options``); (the solver, seconds). After its run
    the solver is released (:func:`hetsched.solvers.highs_run.release`: read it, do not run it
    again; freed by reference counting even where the collector is paused), unless ``rerun``."""
    a = sp.csc_matrix(lp.matrix)
    model = highspy.HighsLp()
    model.num_col_, model.num_row_ = a.shape[1], a.shape[0]
    model.col_cost_ = np.asarray(lp.cost, dtype=float)
    model.col_lower_ = np.asarray(lp.col_lower, dtype=float)
    model.col_upper_ = np.asarray(lp.col_upper, dtype=float)
    model.row_lower_ = np.asarray(lp.row_lower, dtype=float)
    model.row_upper_ = np.asarray(lp.row_upper, dtype=float)
    model.offset_ = float(lp.offset)
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.start_ = a.indptr
    model.a_matrix_.index_ = a.indices
    model.a_matrix_.value_ = a.data
    if lp.integrality is not None:
        kinds = (highspy.HighsVarType.kContinuous, highspy.HighsVarType.kInteger)
        model.integrality_ = [kinds[int(i)] for i in lp.integrality]
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    given = {**lp.options, **(options or {})}
    for key, value in given.items():
        h.setOptionValue(key, value)
    t0 = time.perf_counter()
    h.passModel(model)
    size_thread_pool(given.get("threads"))
    if lp.integrality is None and a.nnz < DIRECT_NONZEROS:
        h.run()  # ends within milliseconds (DIRECT_NONZEROS)
    else:
        run_interruptibly(h)
    if not rerun:
        release(h)
    return h, time.perf_counter() - t0


def solve_array_lp(
    lp: ArrayLP,
    opts: SolverOptions = SolverOptions(),
) -> RawResult:
    """The backend of kind ``lp``: status, objective (a proven bound of an LP at its optimum)
    and the column values (``RawResult.solution``)."""
    time_limit, threads, seed = opts.time_limit, opts.threads, opts.solver_seed
    options: dict[str, Any] = {"random_seed": seed}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    if threads is not None:
        options["threads"] = int(threads)
    h, seconds = run_highs(lp, options)
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        x = np.asarray(h.getSolution().col_value)
        value = float(h.getInfo().objective_function_value)
        return RawResult(Status.OPTIMAL, value, value, seconds, solution=x, log="highs-lp: optimal")
    kind = {
        highspy.HighsModelStatus.kTimeLimit: Status.TIME_LIMIT,
        highspy.HighsModelStatus.kInfeasible: Status.INFEASIBLE,
    }.get(status, Status.ERROR)
    return RawResult(kind, None, None, seconds, log=f"highs-lp: {h.modelStatusToString(status)}")


def solve_array_mip(lp: ArrayLP, opts: SolverOptions = SolverOptions()) -> RawResult:
    """HiGHS's branch and cut on a MILP as arrays: status, the incumbent's objective and column
    values (``RawResult.solution``) where it has one, and its proven dual bound. ``opts.gap`` is
    the relative gap it stops at (``optimal`` then means within it, as HiGHS reports)."""
    options: dict[str, Any] = {"random_seed": opts.solver_seed, "mip_rel_gap": float(opts.gap)}
    if opts.time_limit is not None:
        options["time_limit"] = float(opts.time_limit)
    if opts.threads is not None:
        options["threads"] = int(opts.threads)
    h, seconds = run_highs(lp, options)
    status, info = h.getModelStatus(), h.getInfo()
    has = info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
    bound = float(info.mip_dual_bound)
    kind = {
        highspy.HighsModelStatus.kOptimal: Status.OPTIMAL,
        highspy.HighsModelStatus.kTimeLimit: Status.TIME_LIMIT,
        highspy.HighsModelStatus.kInfeasible: Status.INFEASIBLE,
    }.get(status, Status.FEASIBLE if has else Status.ERROR)
    if kind == Status.OPTIMAL and not has:  # pragma: no cover - HiGHS reports one with it
        kind = Status.ERROR
    return RawResult(
        kind,
        float(info.objective_function_value) if has else None,
        bound if np.isfinite(bound) and kind != Status.INFEASIBLE else None,
        seconds,
        solution=np.asarray(h.getSolution().col_value) if has else None,
        log=f"highs: {h.modelStatusToString(status)}",
    )


def solve_array_mip_until(lp: ArrayLP, opts: SolverOptions, end: float) -> RawResult:
    """:func:`solve_array_mip` with what is left until ``end`` (wall clock, ``time.time()``): in a
    child process (:func:`hetsched.solvers.highs.solve_mip`), so that starting it and handing it
    the model come out of the limit, not out of the grace. Here, not beside its caller: the
    child imports this module, and not Pyomo."""
    left = max(0.05, end - time.time())
    return solve_array_mip(lp, dataclasses.replace(opts, time_limit=left))


def optimal_duals(lp: ArrayLP) -> tuple[float, np.ndarray] | None:
    """(optimum, row duals) of ``lp`` by HiGHS with its options; None if it has no optimum."""
    h, _ = run_highs(lp)
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return float(h.getInfo().objective_function_value), np.asarray(h.getSolution().row_dual)
