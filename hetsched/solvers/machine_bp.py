"""The ``bp`` backend: branch-and-price over machine schedules (:mod:`hetsched.solvers.colgen.machines`)."""

from __future__ import annotations

from hetsched.solvers.colgen.machines import MachineProblem, solve_machine_schedules
from hetsched.solvers.result import RawResult, SolverOptions, search_status


def solve_machine_bp(
    problem: MachineProblem,
    opts: SolverOptions = SolverOptions(),
) -> RawResult:
    """Solve; objective and bound in the instance's units (weight x seconds)."""
    time_limit, gap, seed = opts.time_limit, opts.gap, opts.solver_seed
    res = solve_machine_schedules(problem, time_limit=time_limit, seed=seed, gap=gap)
    d = problem.divisor
    st = res.stats
    status = search_status(res.proven and gap == 0, res.timed_out)
    root = "-" if st.root_bound is None else f"{st.root_bound / d:.6g}"
    log = (
        f"bp: {st.nodes} nodes ({st.open_nodes} open), {st.iterations} LP iterations, "
        f"{len(problem.class_gpus)} GPU classes, root bound {root} in {st.root_seconds:.2f}s, "
        f"integer master {'-' if st.integer_master is None else f'{st.integer_master / d:.6g}'}, "
        f"phase one at {st.phase_one} nodes"
    )
    return RawResult(
        status, res.solution.cost / d, res.bound / d, 0.0, log=log, solution=res.solution
    )
