"""OR-Tools CP-SAT adapter for integer models built by a formulation.

A CP-SAT formulation scales its data to integers itself and says how (:class:`CpsatProblem`):
the objective in seconds is ``raw / objective_divisor``, and a valid lower bound on the
true optimum is ``raw_bound / objective_divisor - bound_slack``. When the scaling was not
exact (``exact=False``) a run that CP-SAT proves optimal is reported as ``feasible``. A signal
stops the search (:mod:`hetsched.core.interruptible`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model

from hetsched.core.interruptible import call_interruptibly
from hetsched.solvers.result import RawResult, SolverOptions, Status


@dataclass
class CpsatProblem:
    model: cp_model.CpModel
    objective_divisor: float = 1.0
    bound_slack: float = 0.0
    exact: bool = True
    notes: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)  # the formulation's variables, for extract


def solve_cpsat(
    problem: CpsatProblem,
    opts: SolverOptions = SolverOptions(),
) -> RawResult:
    time_limit, gap, threads, seed = opts.time_limit, opts.gap, opts.threads, opts.solver_seed
    solver = cp_model.CpSolver()
    p = solver.parameters
    if time_limit is not None:
        p.max_time_in_seconds = float(time_limit)
    p.num_workers = int(threads) if threads else 2
    p.random_seed = int(seed)
    p.relative_gap_limit = float(gap)
    # Ctrl-C is Python's (CP-SAT's own handler aborts off the main thread)
    p.catch_sigint_signal = False
    t0 = time.perf_counter()
    code = call_interruptibly(lambda: solver.solve(problem.model), solver.stop_search)
    seconds = time.perf_counter() - t0
    has_solution = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    limited = time_limit is not None and solver.wall_time >= 0.98 * float(time_limit)
    if code == cp_model.OPTIMAL:
        status = Status.OPTIMAL if problem.exact and gap == 0 else Status.FEASIBLE
    elif code == cp_model.FEASIBLE:
        status = Status.TIME_LIMIT if limited else Status.FEASIBLE
    elif code == cp_model.INFEASIBLE:
        status = Status.INFEASIBLE
    elif code == cp_model.UNKNOWN and time_limit is not None:
        # no solution and no proof with a limit set: the limit stopped it (at 6 jobs x 8 GPUs of
        # hare-table2, presolve alone outlasted 20 s and its wall time read 0.94 of the limit)
        status = Status.TIME_LIMIT
    else:
        status = Status.ERROR
    d = problem.objective_divisor
    objective = solver.objective_value / d if has_solution else None
    bound = (
        solver.best_objective_bound / d - problem.bound_slack
        if has_solution or code == cp_model.UNKNOWN
        else None
    )
    return RawResult(
        status,
        objective,
        bound,
        seconds,
        value=(lambda v: solver.value(v)) if has_solution else None,
        log=f"cpsat: {solver.status_name(code)}, {solver.num_branches} branches, "
        f"{solver.num_conflicts} conflicts",
    )
