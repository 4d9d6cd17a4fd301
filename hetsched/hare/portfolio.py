"""Anytime answers for Hare_Sched (4)-(8) (issue 44): within its time limit, every instance gets
a validated schedule and the best proven lower bound any method reached, combined in one result.

The portfolio runs, in this order, each with what the limit leaves:

1. *schedules at once*: the best of four list schedules (arrival and WSPT orders, both GPU
   rules; :func:`~hetsched.hare.upper_bound.quick_upper_bound`) and of the serial schedules of
   two job orders (Smith's ratio and arrival; :mod:`hetsched.hare.serial`), and two bounds: per
   job, sum_n w_n (a_n + |R_n| L_n) of (4), (6), (7) (:meth:`HareView.completion_lower_bounds`);
   over the cluster, the parallel-machine bound of Eastman, Even & Isaacs (1964)
   (:func:`cluster_bound`);
2. *the interval LP* (:mod:`hetsched.models.hare_interval_lp`), the bound that scales to the
   paper's 200 jobs x 160 GPUs, within :data:`LP_SHARE` of the limit (on a finer grid,
   :data:`FINE_EPSILON`, where that share allows); Algorithm 1 on its order
   and the serial schedule of its completion order are two more schedules; then, where it has
   at most :data:`MIP_MAX_CELLS` (job, interval) indicators, a time limit, and a share
   (:data:`MIP_SHARE`) long enough for its root (:data:`MIP_CELLS_PER_SECOND`), *the interval
   MIP* (:mod:`hetsched.models.hare_interval_mip`: the LP with completion indicators and
   suffix rate rows): its proven dual bound, and the serial schedule of its incumbent's
   completion order;
3. *iterated local search over job orders* (:func:`~hetsched.hare.serial.serial_search`) until
   :data:`SEARCH_SHARE` of the limit has passed;
4. *the strongest exact method that takes the instance* (``--solver auto``'s pick among the
   other formulations of ``hare-sched``: machine-schedule branch-and-price, CP-SAT, column
   generation), with the time left but :data:`RESERVE` of the limit, on instances of at most
   :data:`EXACT_MAX_TASKS` tasks;
5. where no proof came: the job-order search again from its best order, and *local search* over
   Algorithm 1's round priorities (:func:`local_search_upper_bound`), half of the rest each
   (with no limit: :data:`SEARCH_EVALUATIONS` and :data:`LOCAL_SEARCH_EVALUATIONS` schedules).

The result's schedule is the best one (checked by the independent validator, which recomputes
its objective), its bound the largest proven one; it is ``optimal`` when an exact method proves
it or the bound meets the schedule, ``time_limit`` when the clock stopped a method before that.
Each method's outcome is one note.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from hetsched.core.errors import HetschedError
from hetsched.hare.algorithm1 import hare_alg1
from hetsched.hare.list_scheduling import schedule_arrays
from hetsched.hare.local_search import local_search_upper_bound
from hetsched.hare.serial import SerialRun, arrival_jobs, serial_search, smith_order
from hetsched.hare.upper_bound import quick_upper_bound
from hetsched.hare.view import HareView, hare_view
from hetsched.instance.model import Instance
from hetsched.schedule.validate import validate
from hetsched.solvers.portfolio import Portfolio
from hetsched.solvers.result import RawResult, SolverOptions, Status

#: the part of the time limit the interval LP may take (it is the bound that scales)
LP_SHARE = 0.3
#: the part of the limit the interval MIP may take (its dual bound holds when the clock stops it)
MIP_SHARE = 0.3
#: the interval MIP runs where jobs x intervals is at most this (the paper's 200 x 160 has
#: about 47,000 and its LP already meets the per-job bound there) ...
MIP_MAX_CELLS = 20000
#: ... and where its share of the limit is at least jobs x intervals / this many seconds:
#: measured on hare-table2 (issue 44), 20 x 16 (about 4,000) raised the LP's bound 1-3% in a
#: 15 s share, 50 x 40 (11,550) not at all in 15 s and 1.7% in 200 s
MIP_CELLS_PER_SECOND = 300
#: the exact step (``--solver auto``'s pick) runs on instances of at most this many tasks: CP-SAT
#: found no schedule and no bound on hare-table2 6 x 8 (1,782 tasks) and larger in its share
EXACT_MAX_TASKS = 1000
#: the interval LP's grid grows by this factor where its share of the limit is at least
#: FINE_SECONDS_PER_JOB a job (the formulation's default, DEFAULT_EPSILON, elsewhere): on
#: hare-table2 eps 0.02 raised the LP's bound 0.45% at 6 x 8, 0.64% at 20 x 16 and 0.13% at
#: 200 x 160 (seed 2), for 3x, 6x and 2.7x its time (28 s at 200 x 160)
FINE_EPSILON = 0.02
DEFAULT_EPSILON = 0.05
FINE_SECONDS_PER_JOB = 0.5
#: where the exact pick is CP-SAT and column generation takes the instance, CP-SAT's part of
#: the exact step's budget (column generation, the stronger bound, gets the rest)
CPSAT_SHARE = 0.5
#: the job-order search runs until this part of the limit has passed
SEARCH_SHARE = 0.45
#: the part of the limit the exact method leaves to the searches after it
RESERVE = 0.2
#: serial schedules the job-order search evaluates when there is no time limit to stop it
SEARCH_EVALUATIONS = 1000
#: list schedules the local search evaluates when there is no time limit to stop it
LOCAL_SEARCH_EVALUATIONS = 2000
#: how close (relative) a schedule must be to the bound to count as proven optimal: the
#: solvers' own optimality tolerance (a bound at the schedule's value up to rounding)
PROVEN = 1e-9


def job_bound(instance: Instance, view: HareView | None = None) -> float:
    """sum_n w_n (a_n + |R_n| L_n): every schedule's objective is at least this ((4), (6), (7))."""
    lower = (hare_view(instance) if view is None else view).completion_lower_bounds()
    return float(sum(j.weight * c for j, c in zip(instance.jobs, lower)))


def cluster_bound(instance: Instance, view: HareView | None = None) -> float:
    """Eastman, Even & Isaacs (Management Sci. 1964) on a relaxation of Hare_Sched: each task a job
    of its own with weight w_n / N_n (N_n = |R_n| |D_r| tasks, so sum_k w_n/N_n C_{n,k} <= w_n C_n),
    processing time min_m T^c_{n,m} on every GPU (identical machines, no arrivals, barriers or
    synchronization: each only adds). Their bound for P||sum w_j C_j,
    (1/M) sum_j w_j S_j + (M-1)/(2M) sum_j w_j p_j with S_j the WSPT prefix sums, is then a lower
    bound on every schedule's objective. The tasks of a job share one ratio, so they are summed
    in closed form: O(jobs log jobs)."""
    view = hare_view(instance) if view is None else view
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
    t0 = time.perf_counter()
    end = None if opts.time_limit is None else t0 + opts.time_limit

    def until(share: float) -> Callable[[], bool] | None:  # keep going until this part of the limit
        return None if end is None else lambda: time.perf_counter() < t0 + share * opts.time_limit

    def left() -> float | None:
        return None if end is None else end - time.perf_counter()

    view = hare_view(instance)
    run = _Run(instance, view)

    value, schedule = quick_upper_bound(instance, view)
    run.offer("list schedules", value, schedule)
    per_job, cluster = job_bound(instance, view), cluster_bound(instance, view)
    run.bound = max(per_job, cluster)
    run.notes.append(
        f"list schedules: {value:.10g}; per-job bound {per_job:.10g}; "
        f"cluster bound (Eastman-Even-Isaacs) {cluster:.10g}"
    )
    orders = [smith_order(view), arrival_jobs(view)]
    share = None if end is None else LP_SHARE * opts.time_limit
    if share is None or share > 0.1:
        lp_order, cells = _interval_lp(run, share, opts)
        if lp_order is not None:
            orders.append(lp_order)
        budget = None if end is None else MIP_SHARE * opts.time_limit
        if budget is None:
            run.notes.append("interval MIP: left out (no time limit to stop it)")
        elif cells > MIP_MAX_CELLS or budget < cells / MIP_CELLS_PER_SECOND:
            run.notes.append(
                f"interval MIP: left out ({cells} job-interval indicators; its root needs about "
                f"{cells / MIP_CELLS_PER_SECOND:.0f} s, its share is {budget:.0f} s)"
            )
        else:
            mip_order = _interval_mip(run, budget, opts)
            if mip_order is not None:
                orders.append(mip_order)
    search = serial_search(
        view,
        orders,
        seed=opts.seed,
        evaluations=SEARCH_EVALUATIONS if end is None else 10**12,
        keep_going=until(SEARCH_SHARE),
    )
    run.offer_arrays("job-order search", search)
    run.notes.append(f"job-order search: {search.objective:.10g}")
    if instance.n_tasks <= EXACT_MAX_TASKS:
        _exact(run, None if end is None else (left() or 0.0) - RESERVE * opts.time_limit, opts)
    else:
        run.notes.append(
            f"exact step left out: {instance.n_tasks} tasks (above {EXACT_MAX_TASKS}, CP-SAT found "
            "no schedule in its share on hare-table2 6 x 8, 1,782 tasks); its time goes to the searches"
        )
    remaining = left()
    if not run.proven() and (remaining is None or remaining > 0.5):
        again = serial_search(
            view,
            [search.order],
            seed=opts.seed + 1,
            evaluations=SEARCH_EVALUATIONS if end is None else 10**12,
            keep_going=None if end is None else (lambda: (left() or 0) > remaining / 2),
        )
        run.offer_arrays("job-order search", again)
        value, found = local_search_upper_bound(
            instance,
            evaluations=LOCAL_SEARCH_EVALUATIONS if end is None else 10**12,
            seed=opts.seed,
            keep_going=None if end is None else lambda: (left() or 0) > 0.2,
            view=view,
        )
        run.offer("local search", value, found)
        run.notes.append(
            f"local search: {value:.10g}; job-order search again: {again.objective:.10g}"
        )
        run.limited = run.limited or end is not None
    return run.result(time.perf_counter() - t0)


class _Run:
    """What the portfolio has found so far: the best schedule (objective as computed by its
    method), the largest bound, the notes, and whether a method was stopped or proved."""

    def __init__(self, instance: Instance, view) -> None:
        self.instance, self.view = instance, view
        self.best: tuple[str, float, Any] | None = None  # (label, objective, schedule)
        self.bound = 0.0
        self.notes: list[str] = []
        self.limited = self.exact_proof = False

    def offer(self, label: str, value: float, schedule: Any) -> None:
        if self.best is None or value < self.best[1]:
            self.best = (label, value, schedule)

    def offer_arrays(self, label: str, run: SerialRun) -> None:
        if self.best is None or run.objective < self.best[1]:
            self.best = (label, run.objective, schedule_arrays(self.view, run.start, run.gpu))

    def take(self, label: str, res: Any) -> None:
        """A solver's result: its schedule if validated, its bound if proven."""
        valid = res.validation is not None and res.validation.valid
        if valid and res.objective is not None:
            self.offer(label, res.objective, res.solution)
        if res.bound is not None and res.bound > self.bound:
            self.bound = res.bound
        self.limited = self.limited or res.status == Status.TIME_LIMIT
        self.exact_proof = self.exact_proof or (res.status == Status.OPTIMAL and valid)
        shown = "-" if res.objective is None else f"{res.objective:.10g}"
        shown_bound = "-" if res.bound is None else f"{res.bound:.10g}"
        self.notes.append(f"{label}: {res.status.value}, {shown}, bound {shown_bound}")

    def proven(self) -> bool:
        assert self.best is not None
        value = self.best[1]
        return self.exact_proof or self.bound >= value - PROVEN * max(1.0, abs(value))

    def result(self, seconds: float) -> RawResult:
        assert self.best is not None
        label, _, schedule = self.best
        report = validate(self.instance, schedule)  # the reported value is the validator's
        if not report.valid or report.objective is None:  # pragma: no cover - a bug in a method
            raise AssertionError(f"{label} gave an invalid schedule: {report.violations[:3]}")
        self.best = (label, report.objective, schedule)
        proven = self.proven()
        status = (
            Status.OPTIMAL if proven else (Status.TIME_LIMIT if self.limited else Status.FEASIBLE)
        )
        self.notes.append(f"schedule from {label}")
        return RawResult(
            status,
            report.objective,
            min(self.bound, report.objective) if proven else self.bound,
            seconds,
            solution=schedule,
            log="; ".join(self.notes),
        )


def _interval_lp(
    run: _Run, share: float | None, opts: SolverOptions
) -> tuple[np.ndarray | None, int]:
    """Step 2: the interval LP's bound, Algorithm 1 on its order; returns its completion order
    (jobs by the LP's C_n; None when the LP gave no solution in time) and jobs x intervals (what
    the interval MIP would have as indicators at most)."""
    from hetsched.hare.orderings import ordering

    fine = share is None or share >= run.view.n_jobs * FINE_SECONDS_PER_JOB
    ordered = ordering(
        "hare-interval-lp",
        run.instance,
        time_limit=share,
        threads=opts.threads,
        seed=opts.seed,
        model_options={"eps": FINE_EPSILON} if fine else None,
    )
    if ordered.bound is not None and ordered.bound > run.bound:
        run.bound = ordered.bound
    if ordered.priority is None:
        run.limited = True
        run.notes.append("interval LP: no solution in its share of the limit")
        return None, MIP_MAX_CELLS + 1
    alg1 = hare_alg1(run.view, ordered.priority, "earliest_finish")
    run.offer("Algorithm 1 (interval-LP order)", alg1.objective(), alg1.to_schedule())
    run.notes.append(
        f"interval LP: bound {ordered.bound:.10g}; Algorithm 1 on its order: {alg1.objective():.10g}"
    )
    solution = ordered.relaxation.solution
    cells = run.view.n_jobs * (len(solution.tau) - 1)
    if fine:  # the MIP is built on the default grid: about log1p(fine) / log1p(default) as many
        cells = int(cells * math.log1p(FINE_EPSILON) / math.log1p(DEFAULT_EPSILON))
    completion = getattr(solution, "completion", None)
    if completion is None:
        return None, cells
    return np.lexsort((np.arange(run.view.n_jobs), np.asarray(completion))), cells


def _interval_mip(run: _Run, budget: float, opts: SolverOptions) -> np.ndarray | None:
    """Step 2, where it fits: the interval MIP's proven bound within ``budget`` seconds, and its
    incumbent's completion order (None: no incumbent in time)."""
    from hetsched.exact.solve import solve

    res = solve(run.instance, "hare-interval-mip", "highs", budget, 0.0, opts.threads, opts.seed)
    if res.validation is not None and not res.validation.valid:  # pragma: no cover - a model bug
        raise AssertionError(f"interval MIP failed its check: {res.validation.violations[:3]}")
    if res.status != Status.ERROR and res.bound is not None and res.bound > run.bound:
        run.bound = res.bound
    run.limited = run.limited or res.status == Status.TIME_LIMIT
    shown = "-" if res.bound is None else f"{res.bound:.10g}"
    run.notes.append(f"interval MIP: {res.status.value}, bound {shown}")
    completion = getattr(res.solution, "completion", None)
    if completion is None:
        return None
    return np.lexsort((np.arange(run.view.n_jobs), np.asarray(completion)))


def _exact(run: _Run, budget: float | None, opts: SolverOptions) -> None:
    """Step 4: ``--solver auto``'s exact pick within ``budget`` seconds (None: no limit). Where
    the pick is CP-SAT (strong schedules, weak bounds) and column generation over job schedules
    takes the instance, CP-SAT gets :data:`CPSAT_SHARE` of the budget and column generation the
    rest, from the best schedule found so far (its windows and first incumbent), all of it on the
    bound (``prove``: no dive, no integer master): on ladder(24, 4) CP-SAT's bound is 124 after
    600 s, column generation's 160.6 after 7 s."""
    from hetsched.exact.registry import auto_formulation, find_formulation
    from hetsched.exact.solve import solve
    from hetsched.solvers import SOLVERS

    if run.proven():
        return
    try:
        spec, _ = auto_formulation("hare-sched", run.instance, exclude=("portfolio",))
    except HetschedError as exc:  # no exact model takes it: the schedules and bounds above
        run.notes.append(f"no exact method: {exc}")
        return
    if budget is not None and budget <= 0.1:
        run.limited = True
        run.notes.append(f"no time left for {spec.kind}")
        return
    follow = None
    if spec.kind == "cpsat" and budget is not None:
        colgen = find_formulation("hare-sched", "colgen")
        if colgen.supports is None or colgen.supports(run.instance) is None:
            follow = colgen
    t0 = time.perf_counter()
    first = budget if follow is None or budget is None else CPSAT_SHARE * budget
    solver = next(name for name, b in SOLVERS.items() if b.model_kind == spec.kind)
    assert run.best is not None
    hint = {"hint": run.best[2]} if "hint" in spec.options else None  # the best schedule so far
    run.take(
        solver,
        solve(run.instance, spec, solver, first, opts.gap, opts.threads, opts.seed, options=hint),
    )
    rest = None if budget is None else budget - (time.perf_counter() - t0)
    if follow is None or run.proven() or rest is None or rest <= 0.1:
        return
    try:
        res = solve(
            run.instance,
            follow,
            "colgen",
            rest,
            opts.gap,
            opts.threads,
            opts.seed,
            options={"hint": run.best[2], "prove": True},
        )
    except HetschedError as exc:  # e.g. times off the 10^-4 grid: CP-SAT's answer stands
        run.notes.append(f"colgen: {exc}")
        return
    run.take("colgen", res)


def portfolio(instance: Instance) -> Portfolio:
    """The portfolio as a model of kind ``portfolio`` (:mod:`hetsched.solvers.portfolio`)."""
    return Portfolio(lambda opts: anytime(instance, opts))
