"""Anytime answers for Hare_Sched (4)-(8) (issue 44): within its time limit, every instance gets
a validated schedule and the best proven lower bound any method reached, combined in one result.

The portfolio runs, in this order, each with what the limit leaves:

1. *schedules at once*: the best of four list schedules (arrival and WSPT orders, both GPU
   rules; :func:`~hetsched.hare.upper_bound.quick_upper_bound`) and of the serial schedules of
   two job orders (Smith's ratio and arrival; :mod:`hetsched.hare.serial`), and two bounds: per
   job, sum_n w_n (a_n + |R_n| L_n) of (4), (6), (7) (:meth:`HareView.completion_lower_bounds`);
   over the cluster, the parallel-machine bound of Eastman, Even & Isaacs (1964)
   (:func:`cluster_bound`);
2. *the bound chain* (:mod:`hetsched.hare.bound_chain`): the interval LP
   (:mod:`hetsched.models.hare_interval_lp`), the bound that scales to the paper's 200 jobs x
   160 GPUs, within :data:`LP_SHARE` of the limit, then, where it fits, the interval MIP
   (:mod:`hetsched.models.hare_interval_mip`) within :data:`MIP_SHARE`: their proven bounds,
   Algorithm 1 on the LP's order, and the LP's and the MIP's completion orders for the search.
   **With two cores** (``--threads`` unset or at least 2), a limit of at least
   :data:`PARALLEL_FROM` seconds and more than :data:`EXACT_MAX_TASKS` tasks (where no exact
   step needs both cores), the chain runs in a second process (one thread) while this one
   searches (one thread), and the MIP has :data:`PARALLEL_MIP_EXTRA` seconds past its share (up
   to :data:`PARALLEL_END` of the limit); the search takes the chain's orders when they come.
   After the MIP (or, where the MIP is left out, after the LP) the second process runs, until
   then, the bucketed job-schedule master (:mod:`hetsched.models.hare_sched_buckets`) from the
   best schedule so far, where the instance has at most
   :data:`~hetsched.hare.bound_chain.BUCKETS_MAX_TASKS` tasks: its Lagrangian bound joins the
   others. Past that size it runs a job-order search of its own from the chain's orders and the
   best one so far, and its best schedule joins the others;
3. *iterated local search over job orders* (:func:`~hetsched.hare.serial.serial_search`) until
   :data:`SEARCH_SHARE` of the limit has passed; where step 4 follows, only a start for it
   (:data:`SEARCH_EVALUATIONS` schedules), since it may prove the schedule at once;
4. *the strongest exact method that takes the instance* (``--solver auto``'s pick among the
   other formulations of ``hare-sched``: machine-schedule branch-and-price, CP-SAT, column
   generation), with the time left but :data:`RESERVE` of the limit, on instances of at most
   :data:`EXACT_MAX_TASKS` tasks;
5. where no proof came: the job-order search again from its best order, and *local search* over
   Algorithm 1's round priorities (:func:`local_search_upper_bound`), half of the rest each
   (with no limit: :data:`SEARCH_EVALUATIONS` and :data:`LOCAL_SEARCH_EVALUATIONS` schedules);
   where step 4 ran and CP-SAT takes the instance, a *large-neighbourhood search* between them
   (:mod:`hetsched.hare.lns`: a few jobs re-solved by CP-SAT, the rest kept), a third each (on
   ``ladder(48, 4)`` it took 457.2 to 449.7 in 40 s; on hare-table2 6 x 8, past step 4's
   sizes, 60 s of it found nothing better than the job-order search).

The result's schedule is the best one (checked by the independent validator, which recomputes
its objective), its bound the largest proven one; it is ``optimal`` when an exact method proves
it or the bound meets the schedule, ``time_limit`` when the clock stopped a method before that.
Each method's outcome is one note.
"""

from __future__ import annotations

import dataclasses
import os
import time
from concurrent.futures import BrokenExecutor, Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import nullcontext
from typing import Any, Callable

import numpy as np

from hetsched.core.executors import WorkerPool
from hetsched.hare.algorithm1 import hare_alg1
from hetsched.hare.bound_chain import (
    BUCKETS_MAX_TASKS,
    Bounds,
    BoundTask,
    bound_chain,
    mip_grid,
)
from hetsched.hare.exact_step import exact_step, strong_exact_bound
from hetsched.hare.list_scheduling import schedule_arrays
from hetsched.hare.lns import lns, lns_takes
from hetsched.hare.local_search import local_search_upper_bound
from hetsched.hare.quick_bounds import cluster_bound, job_bound
from hetsched.hare.serial import (
    SearchTask,
    SerialRun,
    arrival_jobs,
    search_until,
    serial_schedule,
    serial_search,
    smith_order,
)
from hetsched.hare.upper_bound import quick_upper_bound
from hetsched.hare.view import hare_view
from hetsched.instance.model import Instance
from hetsched.schedule.validate import validate
from hetsched.solvers.portfolio import Portfolio
from hetsched.solvers.result import RawResult, SolverOptions, Status

#: the part of the time limit the interval LP may take (it is the bound that scales)
LP_SHARE = 0.3
#: the part of the limit the interval MIP may take (its dual bound holds when the clock stops it)
MIP_SHARE = 0.3
#: the exact step (``--solver auto``'s pick) runs on instances of at most this many tasks: CP-SAT
#: found no schedule and no bound on hare-table2 6 x 8 (1,782 tasks) and larger in its share
EXACT_MAX_TASKS = 1000
#: with two cores or more (and ``--threads`` not 1), a limit of at least this many seconds and
#: more than EXACT_MAX_TASKS tasks, the bound chain runs in a second process beside the searches;
#: below it, spawning the process and importing the solver stack there (1-2 s) would take too
#: much of the limit; on smaller instances the exact step takes both cores (CP-SAT with one
#: worker found 167.9 instead of 165.6 on ladder(24, 4) at 30 s)
PARALLEL_FROM = 10.0
#: a bound chain in a second process ends its MIP by this part of the limit (three times the
#: MIP's share when both run in one process: at 0.7 the MIP of hare-table2 6 x 8 did not end in
#: 60 s), and the job-order search then runs from the MIP's order until PARALLEL_SEARCH_END; the
#: local search has the rest
PARALLEL_END = 0.9
PARALLEL_SEARCH_END = 0.95
#: ... but not past its share (MIP_SHARE) plus this many seconds: on hare-table2 at 600 s, 540 s
#: instead of 180 s raised the MIP's bound by 0.004% (20 x 16) and 0.16% (50 x 40), while the
#: search lost the MIP's order (20 x 16: 4,269.76 against 4,244.6 with it)
PARALLEL_MIP_EXTRA = 30.0
#: the job-order search runs until this part of the limit has passed
SEARCH_SHARE = 0.45
#: the part of the limit the exact method leaves to the searches after it
RESERVE = 0.2
#: the bucketed job-schedule master (second process) starts only with this many seconds left
#: before PARALLEL_END: its windows and first prices take a few seconds
BUCKETS_MIN_SECONDS = 20.0
#: serial schedules the job-order search evaluates when there is no time limit to stop it
SEARCH_EVALUATIONS = 1000
#: list schedules the local search evaluates when there is no time limit to stop it
LOCAL_SEARCH_EVALUATIONS = 2000
#: how close (relative) a schedule must be to the bound to count as proven optimal: the
#: solvers' own optimality tolerance (a bound at the schedule's value up to rounding)
PROVEN = 1e-9


def anytime(instance: Instance, opts: SolverOptions, parallel: bool | None = None) -> RawResult:
    """The portfolio's run (module docstring): the best validated schedule and largest bound.
    ``parallel``: the bound chain in a second process (True, where there are two cores), in
    this one (False), or (None) in a second one where there are two cores, the limit is at
    least :data:`PARALLEL_FROM` and the instance is past :data:`EXACT_MAX_TASKS` tasks (below,
    the exact step runs, and it takes both cores)."""
    t0 = time.perf_counter()
    end = None if opts.time_limit is None else t0 + opts.time_limit

    def until(share: float) -> Callable[[], bool] | None:  # keep going until this part of the limit
        return None if end is None else lambda: time.perf_counter() < t0 + share * opts.time_limit

    def left() -> float | None:
        return None if end is None else end - time.perf_counter()

    view = hare_view(instance)
    run = _Run(instance, view)
    exact = instance.n_tasks <= EXACT_MAX_TASKS  # step 4 runs

    value, schedule = quick_upper_bound(instance, view)
    run.offer("list schedules", value, schedule)
    per_job, cluster = job_bound(instance, view), cluster_bound(instance, view)
    run.bound = max(per_job, cluster)
    run.notes.append(
        f"list schedules: {value:.10g}; per-job bound {per_job:.10g}; "
        f"cluster bound (Eastman-Even-Isaacs) {cluster:.10g}"
    )
    orders = [smith_order(view), arrival_jobs(view)]
    limit = opts.time_limit
    if parallel is None:
        parallel = instance.n_tasks > EXACT_MAX_TASKS and (limit or 0.0) >= PARALLEL_FROM
    two = parallel and limit is not None and _cores(opts) >= 2
    with WorkerPool("local", 1) if two else nullcontext() as pool:
        beside = None
        if pool is not None:  # the bound chain beside the searches, one thread each
            assert limit is not None
            beside = _SecondProcess(pool, instance, limit, t0, opts.seed)
            opts = dataclasses.replace(opts, threads=1)
            run.notes.append("bound chain in a second process")
        elif limit is None or LP_SHARE * limit > 0.1:
            lp_share = None if limit is None else LP_SHARE * limit
            mip_budget = None if limit is None else MIP_SHARE * limit
            steps = ("lp",) if exact and strong_exact_bound(instance) else ("lp", "mip")
            task = BoundTask(
                instance, lp_share, mip_budget, threads=opts.threads, seed=opts.seed, steps=steps
            )
            orders += run.merge(bound_chain(task))
            if "mip" not in steps:
                run.notes.append("interval MIP: left out (the exact step's bound is stronger)")

        def searching(until_then: Callable[[], bool] | None) -> Callable[[], bool] | None:
            """Search until then, or (with a second process) until its stage has ended."""
            if beside is None or until_then is None:
                return until_then
            return lambda: until_then() and not beside.ready()

        keep = until(SEARCH_SHARE)
        evaluations = SEARCH_EVALUATIONS if end is None else 10**12
        # where the exact step follows, this search only gives it a start: the step may prove
        # the schedule at once (hare_fig5: CP-SAT in 0.01 s, after a search of 27 s at 60 s)
        first = SEARCH_EVALUATIONS if exact else evaluations
        search = serial_search(view, orders, opts.seed, first, keep_going=searching(keep))
        run.offer_arrays("job-order search", search)
        run.notes.append(f"job-order search: {search.objective:.10g}")
        if beside is not None and beside.ready():  # the LP's orders, and the MIP in its place
            more = beside.take(run)
            if more and keep is not None and keep():
                search = serial_search(view, [search.order, *more], opts.seed, 10**12, keep)
                run.offer_arrays("job-order search", search)
                run.notes.append(
                    f"job-order search from the interval LP's order: {search.objective:.10g}"
                )
        if exact:
            exact_step(
                run, None if end is None else (left() or 0.0) - RESERVE * opts.time_limit, opts
            )
        else:
            run.notes.append(
                f"exact step left out: {instance.n_tasks} tasks (above {EXACT_MAX_TASKS}, CP-SAT "
                "found no schedule in its share on hare-table2 6 x 8, 1,782 tasks); its time goes "
                "to the searches"
            )
        remaining = left()
        if not run.proven() and (remaining is None or remaining > 0.5):
            parts = 3 if exact and lns_takes(instance) else 2  # with LNS: a third each
            halfway = (
                None if end is None else (lambda: (left() or 0) > remaining * (parts - 1) / parts)
            )
            if beside is not None and beside.mip_running():
                halfway = until(PARALLEL_SEARCH_END)  # until the MIP ends, then from its order
            again = serial_search(
                view, [search.order], opts.seed + 1, evaluations, keep_going=searching(halfway)
            )
            run.offer_arrays("job-order search", again)
            if beside is not None and beside.ready():
                more = beside.take(run)
                if more and halfway is not None and halfway():
                    again = serial_search(
                        view, [again.order, *more], opts.seed + 2, 10**12, keep_going=halfway
                    )
                    run.offer_arrays("job-order search", again)
            if parts == 3:
                assert run.best is not None
                share = None if remaining is None else remaining / 3
                moved = lns(
                    instance,
                    run.best[1],
                    run.best[2],
                    left=None if share is None else lambda: (left() or 0) - share,
                    seed=opts.seed,
                )
                run.offer("large-neighbourhood search", moved.objective, moved.schedule)
                run.notes.append(
                    f"large-neighbourhood search: {moved.objective:.10g} ({moved.moves} moves, "
                    f"{moved.improvements} better, {moved.solved} neighbourhoods solved)"
                )
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
        if beside is not None:  # the MIP ended by PARALLEL_END of the limit; else it is stopped
            proven = run.proven()  # nothing left to bound: stop it now
            beside.take(run, wait=0.0 if proven else 0.5, proven=proven)
    return run.result(time.perf_counter() - t0)


def _cores(opts: SolverOptions) -> int:
    """The cores the portfolio may use: ``--threads`` (default: every core of the machine)."""
    cores = os.cpu_count() or 1
    return cores if opts.threads is None else min(cores, int(opts.threads))


class _SecondProcess:
    """The second process (module docstring, step 2): the interval LP within its share, then
    the interval MIP where it fits, then a job-order search of its own from the chain's orders
    until :data:`PARALLEL_END` of the limit; one stage at a time, each merged into the run when
    it ends."""

    def __init__(self, pool: WorkerPool, instance: Instance, limit: float, t0: float, seed: int):
        self.pool, self.instance, self.limit, self.t0, self.seed = pool, instance, limit, t0, seed
        lp = BoundTask(instance, LP_SHARE * limit, threads=1, seed=seed, steps=("lp",))
        self.future: Future | None = pool.submit(bound_chain, lp)
        self.stage = "lp"

    def ready(self) -> bool:
        """A stage has ended and waits to be taken."""
        return self.future is not None and self.future.done()

    def mip_running(self) -> bool:
        """The MIP stage has started and is not taken yet."""
        return self.stage == "mip" and self.future is not None

    def _wall(self, seconds: float) -> float:
        """The wall-clock time (``time.time()``, which the other process shares) ``seconds``
        after the portfolio's start."""
        return time.time() + (self.t0 + seconds - time.perf_counter())

    def take(self, run: "_Run", wait: float = 0.0, proven: bool = False) -> list[np.ndarray]:
        """Merge the stage's result into ``run``, waiting at most ``wait`` seconds for it: a
        stage that has not ended by then is stopped (its process killed) and, unless the
        schedule is ``proven`` optimal already, counts as a method the clock stopped. After the
        LP, the next stage starts. Returns the stage's job orders for the searches."""
        if self.future is None:
            return []
        try:
            result = self.future.result(timeout=wait)
        except FutureTimeout:
            self.pool.stop()
            why = "the schedule is proven optimal" if proven else "past the limit"
            result = Bounds(notes=[f"{self.stage} stage: stopped ({why})"], limited=not proven)
        except BrokenExecutor as exc:  # its process died (e.g. out of memory): schedules stand
            result = Bounds(notes=[f"{self.stage} stage: its process ended ({exc})"], limited=True)
        self.future = None
        if not isinstance(result, Bounds):  # the search stage: its best order
            order, value = result
            start, gpu = serial_schedule(run.view, order)
            run.offer_arrays(
                "job-order search (second process)", SerialRun(value, order, start, gpu)
            )
            run.notes.append(f"job-order search in the second process: {value:.10g}")
            return [order]
        if self.stage == "lp" and result.lp_priority is not None:
            mip_end = min(PARALLEL_END * self.limit, MIP_SHARE * self.limit + PARALLEL_MIP_EXTRA)
            budget = self.t0 + mip_end - time.perf_counter()
            eps, why = mip_grid(result.cells, result.eps, len(self.instance.jobs), budget)
            if eps is not None:
                mip = BoundTask(
                    self.instance,
                    None,
                    mip_until=self._wall(mip_end),
                    threads=1,
                    seed=self.seed,
                    steps=("mip",),
                    cells=result.cells,
                    eps=result.eps,
                )
                self.future, self.stage = self.pool.submit(bound_chain, mip), "mip"
            else:
                result.notes.append(f"interval MIP: left out ({why})")
                self._after_chain(run, result.orders)
        elif self.stage == "mip":
            self._after_chain(run, result.orders)
        return run.merge(result)

    def _after_chain(self, run: "_Run", orders: list[np.ndarray]) -> None:
        """After the LP and the MIP, the second core runs the bucketed job-schedule master from
        the best schedule so far where the instance has at most :data:`BUCKETS_MAX_TASKS` tasks
        and :data:`BUCKETS_MIN_SECONDS` are left, and otherwise searches from the chain's
        orders, until :data:`PARALLEL_END` of the limit."""
        end = PARALLEL_END * self.limit
        left = self.t0 + end - time.perf_counter()
        if self.instance.n_tasks > BUCKETS_MAX_TASKS or run.best is None:
            self._search(run, orders)
        elif left < BUCKETS_MIN_SECONDS:  # too little time for its windows and first prices
            self._search(run, orders)
        else:
            task = BoundTask(
                self.instance,
                None,
                seed=self.seed,
                steps=("buckets",),
                until=self._wall(end),
                hint=run.best[2],
            )
            self.future, self.stage = self.pool.submit(bound_chain, task), "buckets"

    def _search(self, run: "_Run", orders: list[np.ndarray]) -> None:
        """Start the search stage from ``orders``, the run's best job order and Smith's, until
        :data:`PARALLEL_END` of the limit (if a second is left before it)."""
        if time.perf_counter() > self.t0 + PARALLEL_END * self.limit - 1.0:
            run.notes.append("job-order search in the second process: left out (under 1 s left)")
            return
        best = [] if run.order is None else [run.order]
        orders = (*orders, *best, smith_order(run.view))
        end = self._wall(PARALLEL_END * self.limit)
        search = SearchTask(self.instance, tuple(orders), self.seed + 3, end)
        self.future, self.stage = self.pool.submit(search_until, search), "search"


class _Run:
    """What the portfolio has found so far: the best schedule (objective as computed by its
    method), the largest bound, the notes, and whether a method was stopped or proved."""

    def __init__(self, instance: Instance, view) -> None:
        self.instance, self.view = instance, view
        self.best: tuple[str, float, Any] | None = None  # (label, objective, schedule)
        self.order: np.ndarray | None = None  # the best serial schedule's job order
        self.bound = 0.0
        self.notes: list[str] = []
        self.limited = self.exact_proof = False

    def offer(self, label: str, value: float, schedule: Any) -> None:
        if self.best is None or value < self.best[1]:
            self.best = (label, value, schedule)

    def offer_arrays(self, label: str, run: SerialRun) -> None:
        if self.best is None or run.objective < self.best[1]:
            self.best = (label, run.objective, schedule_arrays(self.view, run.start, run.gpu))
            self.order = run.order

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

    def merge(self, bounds: Bounds) -> list[np.ndarray]:
        """The bound chain's bound, notes and Algorithm 1 on the interval LP's priorities (a
        schedule); returns the chain's job orders for the searches."""
        self.bound = max(self.bound, bounds.bound)
        self.notes.extend(bounds.notes)
        self.limited = self.limited or bounds.limited
        if bounds.lp_priority is not None:
            alg1 = hare_alg1(self.view, bounds.lp_priority, "earliest_finish")
            self.offer("Algorithm 1 (interval-LP order)", alg1.objective(), alg1.to_schedule())
            self.notes.append(f"Algorithm 1 on the interval LP's order: {alg1.objective():.10g}")
        return list(bounds.orders)

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


def portfolio(instance: Instance) -> Portfolio:
    """The portfolio as a model of kind ``portfolio`` (:mod:`hetsched.solvers.portfolio`)."""
    return Portfolio(lambda opts: anytime(instance, opts))
