"""Anytime answers for Hare_Sched (4)-(8) (issue 44): within its time limit, every instance gets
a validated schedule and the best proven lower bound any method reached, combined in one result.

The portfolio runs, in this order, each with what the limit leaves:

1. *a schedule at once*: the best of four list schedules (arrival and WSPT orders, both GPU
   rules; :func:`~hetsched.hare.upper_bound.quick_upper_bound`) and two bounds: per job,
   sum_n w_n (a_n + |R_n| L_n) of (4), (6), (7) (:meth:`HareView.completion_lower_bounds`);
   over the cluster, the parallel-machine bound of Eastman, Even & Isaacs (1964)
   (:func:`cluster_bound`), which is the strong one when jobs queue for GPUs;
2. *Algorithm 1 on the interval LP's order* (:func:`~hetsched.hare.heuristic.run_heuristic`),
   whose LP optimum is a lower bound that scales to the paper's 200 jobs x 160 GPUs; it gets
   at most :data:`LP_SHARE` of the limit;
3. *the strongest exact method that takes the instance* (``--solver auto``'s pick among the
   other formulations of ``hare-sched``: machine-schedule branch-and-price, CP-SAT, column
   generation), with the time left;
4. where no exact method takes the instance, or one ended early without a proof: *local
   search* over Algorithm 1's round priorities (:func:`local_search_upper_bound`) until the
   limit (with no limit, :data:`LOCAL_SEARCH_EVALUATIONS` list schedules).

The result's schedule is the best validated one, its bound the largest proven one; it is
``optimal`` when an exact method proves it or the bound meets the schedule, ``time_limit`` when
the clock stopped a method before that. Each method's outcome is one note.
"""

from __future__ import annotations

import time
from typing import Any

from hetsched.core.errors import HetschedError
from hetsched.hare.heuristic import run_heuristic
from hetsched.hare.local_search import local_search_upper_bound
from hetsched.hare.upper_bound import quick_upper_bound
from hetsched.hare.view import hare_view
from hetsched.instance.model import Instance
from hetsched.schedule.validate import validate
from hetsched.solvers.portfolio import Portfolio
from hetsched.solvers.result import RawResult, SolverOptions, Status

#: the part of the time limit Algorithm 1's interval LP may take (it is the bound that scales;
#: the exact method gets the rest and whatever the LP leaves)
LP_SHARE = 0.3
#: list schedules the local search evaluates when there is no time limit to stop it
LOCAL_SEARCH_EVALUATIONS = 2000
#: how close (relative) a schedule must be to the bound to count as proven optimal: the
#: solvers' own optimality tolerance (a bound at the schedule's value up to rounding)
PROVEN = 1e-9


def job_bound(instance: Instance) -> float:
    """sum_n w_n (a_n + |R_n| L_n): every schedule's objective is at least this ((4), (6), (7))."""
    lower = hare_view(instance).completion_lower_bounds()
    return float(sum(j.weight * c for j, c in zip(instance.jobs, lower)))


def cluster_bound(instance: Instance) -> float:
    """Eastman, Even & Isaacs (Management Sci. 1964) on a relaxation of Hare_Sched: each task a job
    of its own with weight w_n / N_n (N_n = |R_n| |D_r| tasks, so sum_k w_n/N_n C_{n,k} <= w_n C_n),
    processing time min_m T^c_{n,m} on every GPU (identical machines, no arrivals, barriers or
    synchronization: each only adds). Their bound for P||sum w_j C_j,
    (1/M) sum_j w_j S_j + (M-1)/(2M) sum_j w_j p_j with S_j the WSPT prefix sums, is then a lower
    bound on every schedule's objective. The tasks of a job share one ratio, so they are summed
    in closed form: O(jobs log jobs)."""
    import numpy as np

    view = hare_view(instance)
    n_tasks = (view.rounds * view.tasks_per_round).astype(float)
    p = view.train.min(axis=1)  # the job's fastest training time on any GPU
    w = view.weight / n_tasks  # each task's share of its job's weight
    order = np.argsort(p / w, kind="stable")  # WSPT: p_j / w_j ascending
    p, w, n_tasks = p[order], w[order], n_tasks[order]
    before = np.concatenate(([0.0], np.cumsum(n_tasks * p)[:-1]))  # work of the jobs ahead
    # sum over a job's N tasks k = 1..N of w (before + k p) = w (N before + p N (N + 1) / 2)
    single = float(np.sum(w * (n_tasks * before + p * n_tasks * (n_tasks + 1) / 2)))
    m = float(view.n_gpus)
    return single / m + (m - 1) / (2 * m) * float(np.sum(w * n_tasks * p))


def anytime(instance: Instance, opts: SolverOptions) -> RawResult:
    """The portfolio's run (module docstring): the best validated schedule and largest bound."""
    from hetsched.exact.registry import auto_formulation
    from hetsched.exact.solve import solve
    from hetsched.solvers import SOLVERS

    t0 = time.perf_counter()
    end = None if opts.time_limit is None else t0 + opts.time_limit

    def left() -> float | None:
        return None if end is None else end - time.perf_counter()

    notes: list[str] = []
    objective, schedule = quick_upper_bound(instance)
    per_job, cluster = job_bound(instance), cluster_bound(instance)
    bound = max(per_job, cluster)
    notes.append(
        f"list schedules: {objective:.10g}; per-job bound {per_job:.10g}; "
        f"cluster bound (Eastman-Even-Isaacs) {cluster:.10g}"
    )
    best = ("list schedules", objective, schedule)
    limited = proven = False

    def take(label: str, res: Any) -> None:
        nonlocal best, bound, limited, proven
        valid = res.validation is not None and res.validation.valid
        if valid and res.objective is not None and res.objective < best[1]:
            best = (label, res.objective, res.solution)
        if res.bound is not None and res.bound > bound:
            bound = res.bound
        limited = limited or res.status == Status.TIME_LIMIT
        proven = proven or (res.status == Status.OPTIMAL and valid)
        shown = "-" if res.objective is None else f"{res.objective:.10g}"
        shown_bound = "-" if res.bound is None else f"{res.bound:.10g}"
        notes.append(f"{label}: {res.status.value}, {shown}, bound {shown_bound}")

    share = None if end is None else LP_SHARE * opts.time_limit
    if share is None or share > 0.1:
        take(
            "Algorithm 1 (interval-LP order)",
            run_heuristic(
                instance,
                order="hare-interval-lp",
                rule="earliest_finish",
                time_limit=share,
                threads=opts.threads,
                seed=opts.seed,
            ),
        )
    try:
        spec, _ = auto_formulation("hare-sched", instance, exclude=("portfolio",))
    except HetschedError as exc:  # no exact model takes it: the schedules and bounds above
        spec = None
        notes.append(f"no exact method: {exc}")
    remaining = left()
    if spec is not None and not proven and (remaining is None or remaining > 0.1):
        solver = next(name for name, b in SOLVERS.items() if b.model_kind == spec.kind)
        exact = solve(instance, spec, solver, remaining, opts.gap, opts.threads, opts.seed)
        take(solver, exact)
    elif spec is not None and not proven:
        limited = True
        notes.append(f"no time left for {spec.kind}")
    remaining = left()
    if not proven and (remaining is None or remaining > 0.5):
        value, found = local_search_upper_bound(
            instance,
            evaluations=LOCAL_SEARCH_EVALUATIONS if end is None else 10**12,
            seed=opts.seed,
            keep_going=None if end is None else lambda: left() > 0.2,
        )
        if value < best[1]:
            report = validate(instance, found)  # its own value, as every schedule here
            if report.valid and report.objective is not None and report.objective < best[1]:
                best = ("local search", report.objective, found)
                value = report.objective
        notes.append(f"local search: {value:.10g}")
        limited = limited or end is not None
    label, objective, schedule = best
    proven = proven or bound >= objective - PROVEN * max(1.0, abs(objective))
    status = Status.OPTIMAL if proven else (Status.TIME_LIMIT if limited else Status.FEASIBLE)
    notes.append(f"schedule from {label}")
    return RawResult(
        status,
        objective,
        min(bound, objective) if proven else bound,
        time.perf_counter() - t0,
        solution=schedule,
        log="; ".join(notes),
    )


def portfolio(instance: Instance) -> Portfolio:
    """The portfolio as a model of kind ``portfolio`` (:mod:`hetsched.solvers.portfolio`)."""
    return Portfolio(lambda opts: anytime(instance, opts))
