"""The portfolio's bound chain (issue 44): the interval LP, then the interval MIP where it fits,
as one picklable task, so that it runs either in the portfolio's own process or, on two cores, in
a second process while the first one searches for schedules (:mod:`hetsched.hare.portfolio`).

* :mod:`hetsched.models.hare_interval_lp`: the bound that scales to 200 jobs x 160 GPUs, within
  its share of the limit, on the finer grid :data:`FINE_EPSILON` where that share allows;
* :mod:`hetsched.models.hare_interval_mip`: the LP with completion indicators and suffix rate
  rows, where it has at most :data:`MIP_MAX_CELLS` (job, interval) indicators and its budget
  is long enough for its root (:data:`MIP_CELLS_PER_SECOND`); its dual bound holds when the
  clock stops it.

* :mod:`hetsched.models.hare_sched_buckets`: the job-schedule master with capacity rows per GPU
  class and time bucket, on instances of at most :data:`BUCKETS_MAX_TASKS` tasks, from the
  best schedule so far (its windows) until a given time: its Lagrangian bound holds when the
  clock stops it.

The chain returns its bound, its notes, whether a clock stopped a method, the LP's task
priorities (Algorithm 1's H, line 3) and the job orders its solutions give (jobs by C_n): the
caller turns those into schedules.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetsched.exact.registry import formulations
from hetsched.hare.orderings import ordering
from hetsched.instance.model import Instance
from hetsched.solvers.result import Status

#: the interval MIP runs where it has at most this many (job, interval) indicators ...
MIP_MAX_CELLS = 6000
#: ... and at most this many per second of its budget, on the finest of MIP_GRIDS where both
#: hold. Measured on hare-table2, one thread (issue 44): 200 x 160 (seed 2) has 14,986
#: indicators at eps 0.05 (no root in 48 s; 126,051 in 420 s), 7,775 at 0.1 (126,018 in 48 s,
#: 126,183 in 210 s), 4,165 at 0.2 (126,323 in 48 s, 126,410 in 210 s) and 2,980 at 0.3
#: (126,129 in 48 s), over the LP's 125,576; 50 x 40 has 4,633 at 0.05 (11,415 in 48 s) and
#: 2,385 at 0.1 (11,363); 20 x 16 1,942 at 0.05 (3,605)
MIP_CELLS_PER_SECOND = 120
#: the grids (the intervals' growth eps) the MIP may be built on, finest first: the LP's
#: left-endpoint rule loses a factor up to 1 + eps, but past the sizes above a coarser MIP
#: proves more in its budget than a finer one
MIP_GRIDS = (0.05, 0.1, 0.2, 0.3)
#: the interval LP's grid grows by this factor where its share of the limit is at least
#: FINE_SECONDS_PER_JOB a job (the formulation's default, DEFAULT_EPSILON, elsewhere): on
#: hare-table2 eps 0.02 raised the LP's bound 0.45% at 6 x 8, 0.64% at 20 x 16 and 0.13% at
#: 200 x 160 (seed 2), for 3x, 6x and 2.7x its time (28 s at 200 x 160)
FINE_EPSILON = 0.02
DEFAULT_EPSILON = 0.05
FINE_SECONDS_PER_JOB = 0.5


#: the bucketed job-schedule master runs where the instance has at most this many tasks. On
#: hare-table2 seed 0 (the portfolio at 120 s): 20 x 16 (5,697 tasks) 3,682 against the
#: interval MIP's 3,607; 50 x 40 (22,439) not one pricing round (37 s each, the job windows of
#: a 5,940 s horizon), so there the second core searches for schedules instead (at 600 s, with
#: the cap lifted, the master ended at 11,296, under the interval LP's 11,312: 2026-11-29)
BUCKETS_MAX_TASKS = 10_000


@dataclass(frozen=True)
class BoundTask:
    """What the chain gets: the instance, its ``steps`` (``lp``, ``mip``, ``buckets``, in that
    order), the LP's share of the limit (None: no limit), the MIP's budget in seconds (None:
    no limit, and the MIP is left out) or, for a chain in another process, the wall-clock time
    (``time.time()``) by which the MIP must end, and for a MIP alone the LP's ``cells`` on the
    LP's grid ``eps``."""

    instance: Instance
    lp_share: float | None
    mip_budget: float | None = None
    mip_until: float | None = None
    threads: int | None = None
    seed: int = 0
    steps: tuple[str, ...] = ("lp", "mip")
    cells: int = 0
    eps: float = DEFAULT_EPSILON
    until: float | None = None  # the wall-clock time by which the bucketed master ends
    hint: Any = None  # the best schedule so far: the bucketed master's windows


@dataclass
class Bounds:
    """What the chain found: the largest bound (0: none), notes, whether a clock stopped a
    method, the LP's task priorities and the job orders of the LP's and the MIP's solutions."""

    bound: float = 0.0
    notes: list[str] = field(default_factory=list)
    limited: bool = False
    lp_priority: np.ndarray | None = None
    orders: list[np.ndarray] = field(default_factory=list)
    # (job, interval) pairs of the LP's grid where a job may progress; with no LP solution, more
    # than any MIP takes
    cells: int = 10**9
    eps: float = DEFAULT_EPSILON  # the LP's grid

    def raise_to(self, value: float | None) -> None:
        if value is not None and value > self.bound:
            self.bound = float(value)


def bound_chain(task: BoundTask) -> Bounds:
    """The interval LP, then the interval MIP where it fits, then the bucketed master (module
    docstring): the ``steps`` of ``task``. The formulations' registry is loaded before any share
    of the limit starts: in a fresh process (the portfolio's second) its imports take about 3 s,
    which came out of the LP's share (hare-table2 6 x 8 at 15 s: no LP bound, the result's
    bound 403.21 against 446.5 in one process)."""
    formulations()
    out = Bounds(cells=task.cells, eps=task.eps)
    if "lp" in task.steps:
        _interval_lp(task, out)
    if "mip" in task.steps:
        budget = task.mip_budget
        if task.mip_until is not None:
            budget = task.mip_until - time.time()
        eps, why = mip_grid(out.cells, out.eps, len(task.instance.jobs), budget)
        if eps is None:
            out.notes.append(f"interval MIP: left out ({why})")
        else:
            assert budget is not None
            interval_mip(task.instance, budget, out, task.threads, task.seed, eps)
    if "buckets" in task.steps:
        assert task.until is not None
        buckets_bound(task.instance, task.until - time.time(), out, task.hint, task.seed)
    return out


def mip_grid(cells: int, eps: float, n_jobs: int, budget: float | None) -> tuple[float | None, str]:
    """The grid (eps) to build the interval MIP on, the finest of :data:`MIP_GRIDS` where its
    indicators fit :data:`MIP_MAX_CELLS` and ``budget`` seconds; or None and why not. ``cells``:
    the LP's (job, interval) pairs on its grid ``eps`` (a grid with growth e has about
    log1p(eps) / log1p(e) as many intervals, and each job up to one more at its ends)."""
    if budget is None:
        return None, "no time limit to stop it"
    fits = min(MIP_MAX_CELLS, budget * MIP_CELLS_PER_SECOND)
    for e in MIP_GRIDS:
        need = cells * math.log1p(eps) / math.log1p(e) + n_jobs
        if need <= fits:
            return e, ""
    return None, (
        f"about {need:.0f} job-interval indicators on its coarsest grid (eps {MIP_GRIDS[-1]}); "
        f"{fits:.0f} fit its {max(0.0, budget):.0f} s"
    )


def _interval_lp(task: BoundTask, out: Bounds) -> None:
    """The interval LP's bound, priorities, completion order and (job, interval) pairs (with
    its grid) into ``out``."""
    n_jobs = len(task.instance.jobs)
    share = task.lp_share
    fine = share is None or share >= n_jobs * FINE_SECONDS_PER_JOB
    ordered = ordering(
        "hare-interval-lp",
        task.instance,
        time_limit=share,
        threads=task.threads,
        seed=task.seed,
        model_options={"eps": FINE_EPSILON} if fine else None,
    )
    out.raise_to(ordered.bound)
    if ordered.priority is None:
        out.limited = True
        out.notes.append("interval LP: no solution in its share of the limit")
        return
    out.lp_priority = ordered.priority
    out.notes.append(f"interval LP: bound {ordered.bound:.10g}")
    solution = ordered.relaxation.solution
    out.cells, out.eps = solution.cells, FINE_EPSILON if fine else DEFAULT_EPSILON
    _add_completion_order(out, getattr(solution, "completion", None))


def interval_mip(
    instance: Instance,
    budget: float,
    out: Bounds,
    threads: int | None = None,
    seed: int = 0,
    eps: float = DEFAULT_EPSILON,
) -> None:
    """The interval MIP's proven bound on the grid ``eps`` within ``budget`` seconds and its
    incumbent's completion order into ``out``."""
    from hetsched.exact.solve import solve

    options = {"eps": eps}
    res = solve(instance, "hare-interval-mip", "highs", budget, 0.0, threads, seed, options)
    _take_bound(out, res, f"interval MIP (eps {eps:g})")
    _add_completion_order(out, getattr(res.solution, "completion", None))


def buckets_bound(instance: Instance, budget: float, out: Bounds, hint=None, seed: int = 0) -> None:
    """The bucketed job-schedule master's Lagrangian bound within ``budget`` seconds into
    ``out`` (``hint``: a schedule that sets its windows)."""
    from hetsched.exact.solve import solve

    options = {} if hint is None else {"hint": hint}
    res = solve(instance, "hare-sched-buckets", "colgen", max(0.0, budget), 0.0, 1, seed, options)
    _take_bound(out, res, "bucketed job-schedule master")


def _take_bound(out: Bounds, res, label: str) -> None:
    """A method's proven bound, whether the clock stopped it, and its note into ``out``."""
    if res.validation is not None and not res.validation.valid:  # pragma: no cover - a model bug
        raise AssertionError(f"{label} failed its check: {res.validation.violations[:3]}")
    if res.status != Status.ERROR:
        out.raise_to(res.bound)
    out.limited = out.limited or res.status == Status.TIME_LIMIT
    shown = "-" if res.bound is None else f"{res.bound:.10g}"
    out.notes.append(f"{label}: {res.status.value}, bound {shown}")


def _add_completion_order(out: Bounds, completion) -> None:
    """The jobs by a relaxation's C_n (ties by index) into ``out``'s orders, where it has C_n."""
    if completion is not None:
        c = np.asarray(completion)
        out.orders.append(np.lexsort((np.arange(len(c)), c)))
