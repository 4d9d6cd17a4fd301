"""Optional MILP solvers, found at run time through Pyomo's solver plugins: whichever of them this
machine has is usable as ``--solver NAME``; the default install needs none of them (HiGHS and
CP-SAT come with it).

| name   | needs                                  | Pyomo plugin   |
|--------|----------------------------------------|----------------|
| gurobi | ``gurobipy`` and a licence             | gurobi_direct  |
| cplex  | the ``cplex`` Python package            | cplex_direct   |
| scip   | the ``scip`` executable on PATH        | scip           |
| cbc    | the ``cbc`` executable on PATH         | cbc            |
| glpk   | the ``glpsol`` executable on PATH      | glpk           |

Each adapter maps the same options as HiGHS (time limit, relative MIP gap, threads, seed) to the
solver's own names, and its termination to the one status vocabulary: a time-limited run is
``time_limit`` (never ``optimal``) even if it holds an incumbent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from hetsched.core.errors import SolverError
from hetsched.solvers.result import RawResult, SolverOptions, Status

if TYPE_CHECKING:
    import pyomo.environ as pe


@dataclass(frozen=True)
class OptionalSolver:
    name: str
    plugin: str
    needs: str
    time_limit: str
    gap: str
    threads: str | None
    seed: str | None


OPTIONAL: dict[str, OptionalSolver] = {
    s.name: s
    for s in (
        OptionalSolver(
            "gurobi",
            "gurobi_direct",
            "gurobipy and a Gurobi licence",
            "TimeLimit",
            "MIPGap",
            "Threads",
            "Seed",
        ),
        OptionalSolver(
            "cplex",
            "cplex_direct",
            "the cplex Python package",
            "timelimit",
            "mip_tolerances_mipgap",
            "threads",
            "randomseed",
        ),
        OptionalSolver(
            "scip",
            "scip",
            "the scip executable on PATH",
            "limits/time",
            "limits/gap",
            None,
            "randomization/randomseedshift",
        ),
        OptionalSolver(
            "cbc", "cbc", "the cbc executable on PATH", "sec", "ratio", "threads", "randomCbcSeed"
        ),
        OptionalSolver(
            "glpk", "glpk", "the glpsol executable on PATH", "tmlim", "mipgap", None, None
        ),
    )
}


def is_available(name: str) -> bool:
    """Whether the optional solver ``name`` can run on this machine (quietly)."""
    import pyomo.environ as pe

    try:
        return bool(pe.SolverFactory(OPTIONAL[name].plugin).available(exception_flag=False))
    except Exception:  # a plugin that cannot even be asked is not available
        return False


def solve_optional(
    spec: OptionalSolver,
    model: pe.ConcreteModel,
    opts: SolverOptions = SolverOptions(),
) -> RawResult:
    """Solve a Pyomo model with an optional solver; load the incumbent if there is one."""
    time_limit, gap, threads, seed = opts.time_limit, opts.gap, opts.threads, opts.solver_seed
    import pyomo.environ as pe
    from pyomo.opt import SolverStatus, TerminationCondition

    opt = pe.SolverFactory(spec.plugin)
    if not is_available(spec.name):
        raise SolverError(
            f"solver '{spec.name}' is not available on this machine (it needs {spec.needs})"
        )
    options: dict[str, float | int] = {spec.gap: gap}
    if time_limit is not None:
        options[spec.time_limit] = (
            int(max(1, round(time_limit))) if spec.name == "glpk" else float(time_limit)
        )
    if threads is not None and spec.threads:
        options[spec.threads] = int(threads)
    if spec.seed and seed:
        options[spec.seed] = int(seed)
    t0 = time.perf_counter()
    res = opt.solve(model, load_solutions=False, options=options)
    seconds = time.perf_counter() - t0
    tc = res.solver.termination_condition
    has_solution = len(res.solution) > 0 and tc not in (
        TerminationCondition.infeasible,
        TerminationCondition.invalidProblem,
    )
    if has_solution:
        model.solutions.load_from(res)
    if tc == TerminationCondition.optimal and has_solution and res.solver.status == SolverStatus.ok:
        status = Status.OPTIMAL
    elif tc == TerminationCondition.maxTimeLimit or (
        time_limit is not None and seconds >= 0.95 * time_limit
    ):
        status = Status.TIME_LIMIT  # GLPK's plugin reports a stop at its time limit as 'feasible'
    elif tc == TerminationCondition.infeasible:
        status = Status.INFEASIBLE
    elif has_solution:
        status = Status.FEASIBLE
    else:
        status = Status.ERROR
    objective = next(model.component_data_objects(pe.Objective, active=True))
    minimize = objective.sense == pe.minimize
    bound = res.problem.lower_bound if minimize else res.problem.upper_bound
    bound = None if bound is None or abs(float(bound)) == float("inf") else float(bound)
    if status == Status.OPTIMAL and bound is None:
        bound = pe.value(objective)  # proven optimal: the incumbent is its own bound
    incumbent = pe.value(objective) if has_solution else None
    return RawResult(
        status,
        incumbent,
        bound,
        seconds,
        value=pe.value if has_solution else None,
        log=f"{spec.name}: {tc}, {res.solver.status}",
    )


def optional_solve(name: str):
    """The adapter function for ``--solver name``."""
    return partial(solve_optional, OPTIONAL[name])
