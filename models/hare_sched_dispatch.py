"""Hare_Sched (Hare, HPDC'22, (4)-(8)) by depth-first branch and bound over dispatch orders
(:mod:`hetsched.hare.dispatch_search`): no relaxation of (4)-(8), an exact search of the
semi-active schedules, whose start order it fixes.

    node   = tasks dispatched so far, each at max(its round's barrier (4), (7); its GPU's free time (8))
    child  = the next task of an open job's round on one GPU, its start >= the last start
    bound  = max( sum_n w_n C_n(job n alone), min over completion orders of sum_n w_n max(C_n(alone), fluid) )   (6)
    prune  = bound >= the best schedule; identical GPUs with the same free time; dominance

For small instances (at most ``MAX_TASKS`` tasks): a second exact method beside CP-SAT, and the
proof of ``ladder(24, 4)``. It searches on ``--threads`` threads (default two, as CP-SAT's
workers), each on its share of the subtrees. ``hint`` (a valid schedule) is the upper bound it starts from: the
search then looks only for better schedules, and ends with a proof that none is better.
"""

from __future__ import annotations

from typing import Any

from hetsched.exact.spec import FormulationSpec
from hetsched.hare.dispatch_search import (
    dispatch_problem,
    dispatch_search,
    refusal,
    search_threads,
)
from hetsched.instance.model import Instance
from hetsched.schedule.model import TaskSchedule
from hetsched.solvers.portfolio import Portfolio
from hetsched.solvers.result import RawResult, SolverOptions, search_status


def build(instance: Instance, hint: TaskSchedule | None = None) -> Portfolio:
    problem = dispatch_problem(instance)

    def run(opts: SolverOptions) -> RawResult:
        res = dispatch_search(problem, hint, opts.time_limit, search_threads(opts.threads))
        schedule, objective = res.schedule, res.objective
        if schedule is None and hint is not None:  # nothing beats the hint
            schedule, objective = hint, res.upper_objective
        if schedule is None:
            status = search_status(False, not res.proven)
            return RawResult(status, None, res.root_bound, res.seconds, log=_log(res))
        bound = objective if res.proven else min(res.root_bound, objective)
        return RawResult(
            search_status(res.proven, not res.proven),
            objective,
            bound,
            res.seconds,
            log=_log(res),
            solution=schedule,
        )

    return Portfolio(run)


def _log(res: Any) -> str:
    return (
        f"dispatch search: {res.nodes:,} nodes ({res.dominated:,} dominated), root bound "
        f"{res.root_bound:.6g}, {'searched to the end' if res.proven else 'stopped by the clock'}"
    )


def extract(built: Any, instance: Instance, schedule: Any) -> Any:
    return schedule  # solve() validates it


SPEC = FormulationSpec(
    name="hare-sched",
    kind="dispatch-search",
    build=build,
    extract=extract,
    options=("hint",),
    supports=refusal,
    summary="Hare_Sched (4)-(8) by depth-first branch and bound over semi-active dispatch orders, "
    "with dominance: exact for small instances",
)
