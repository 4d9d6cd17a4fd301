"""HiGHS through Pyomo's solver interface (pyomo >= 6.9.2, ``contrib.solver`` 'highs'); a model
with no integer variable goes to HiGHS as arrays instead (:mod:`hetsched.solvers.pyomo_arrays`)."""

from __future__ import annotations

import time

import pyomo.environ as pe
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

from hetsched.core.deadline import deadline, grace
from hetsched.core.errors import SolverError
from hetsched.solvers.lp_arrays import size_thread_pool
from hetsched.solvers.pyomo_arrays import is_linear_program, solve_pyomo_lp
from hetsched.solvers.result import RawResult, SolverOptions, Status


def solve_pyomo_highs(
    model: pe.ConcreteModel,
    opts: SolverOptions = SolverOptions(),
) -> RawResult:
    """Solve a Pyomo model with HiGHS; load the incumbent into the model if there is one. The
    time limit covers handing the model over (else :class:`~hetsched.core.deadline.BuildTimeout`)."""
    if is_linear_program(model):  # as arrays: the persistent hand-over costs more than the LP
        return solve_pyomo_lp(model, opts)
    time_limit, gap, threads, seed = opts.time_limit, opts.gap, opts.threads, opts.solver_seed
    opt = SolverFactory("highs")
    if not opt.available():
        raise SolverError("HiGHS is not available (pip install highspy)")
    kwargs = {
        "rel_gap": gap,
        "load_solutions": False,
        "raise_exception_on_nonoptimal_result": False,
        # a formulation may ask for HiGHS options it was measured with (e.g. the interior
        # point method for a large LP): ``model.highs_options``
        "solver_options": {"random_seed": seed, **getattr(model, "highs_options", {})},
    }
    if time_limit is not None:
        kwargs["time_limit"] = float(time_limit)
    if threads is not None:
        kwargs["threads"] = int(threads)
    t0 = time.perf_counter()
    # handing the model to HiGHS is Python work without a clock: bounded by a deadline (BuildTimeout)
    with deadline(None if time_limit is None else float(time_limit) + grace(time_limit)):
        opt.set_instance(model)
    for (
        flag
    ) in opt.config.auto_updates:  # the instance is set: solve() need not scan the model again
        setattr(opt.config.auto_updates, flag, False)
    if time_limit is not None:  # the hand-over used part of the limit
        kwargs["time_limit"] = max(0.05, float(time_limit) - (time.perf_counter() - t0))
    size_thread_pool(threads)
    res = opt.solve(model, **kwargs)
    seconds = time.perf_counter() - t0
    tc, ss = res.termination_condition, res.solution_status
    has_solution = ss in (SolutionStatus.feasible, SolutionStatus.optimal)
    if has_solution:
        res.solution_loader.load_vars()
    if tc == TerminationCondition.convergenceCriteriaSatisfied and has_solution:
        status = Status.OPTIMAL
    elif tc == TerminationCondition.maxTimeLimit:
        status = Status.TIME_LIMIT
    elif tc in (TerminationCondition.provenInfeasible, TerminationCondition.locallyInfeasible):
        status = Status.INFEASIBLE
    elif has_solution:
        status = Status.FEASIBLE
    else:
        status = Status.ERROR
    bound = res.objective_bound
    if bound is not None and abs(bound) == float("inf"):
        bound = None
    return RawResult(
        status,
        res.incumbent_objective if has_solution else None,
        bound,
        seconds,
        value=pe.value if has_solution else None,
        log=f"highs: {tc.name}, {ss.name}",
    )
