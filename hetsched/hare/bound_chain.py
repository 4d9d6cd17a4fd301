"""The portfolio's bound chain (issue 44): the interval LP, then the interval MIP where it fits,
as one picklable task, so that it runs either in the portfolio's own process or, on two cores, in
a second process while the first one searches for schedules (:mod:`hetsched.hare.portfolio`).

* :mod:`hetsched.models.hare_interval_lp`: the bound that scales to 200 jobs x 160 GPUs, within
  its share of the limit, on the finer grid :data:`FINE_EPSILON` where that share allows;
* :mod:`hetsched.models.hare_interval_mip`: the LP with completion indicators and suffix rate
  rows, where it has at most :data:`MIP_MAX_CELLS` (job, interval) indicators and its budget
  is long enough for its root (:data:`MIP_CELLS_PER_SECOND`); its dual bound holds when the
  clock stops it.

The chain returns its bound, its notes, whether a clock stopped a method, the LP's task
priorities (Algorithm 1's H, line 3) and the job orders its solutions give (jobs by C_n): the
caller turns those into schedules.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from hetsched.hare.orderings import ordering
from hetsched.instance.model import Instance
from hetsched.solvers.result import Status

#: the interval MIP runs where jobs x intervals is at most this (the paper's 200 x 160 has
#: about 47,000 and its LP already meets the per-job bound there) ...
MIP_MAX_CELLS = 20000
#: ... and where its budget is at least jobs x intervals / this many seconds: measured on
#: hare-table2 (issue 44), 20 x 16 (about 4,000) raised the LP's bound 1-3% in a 15 s share,
#: 50 x 40 (11,550) not at all in 15 s and 1.7% in 200 s
MIP_CELLS_PER_SECOND = 300
#: the interval LP's grid grows by this factor where its share of the limit is at least
#: FINE_SECONDS_PER_JOB a job (the formulation's default, DEFAULT_EPSILON, elsewhere): on
#: hare-table2 eps 0.02 raised the LP's bound 0.45% at 6 x 8, 0.64% at 20 x 16 and 0.13% at
#: 200 x 160 (seed 2), for 3x, 6x and 2.7x its time (28 s at 200 x 160)
FINE_EPSILON = 0.02
DEFAULT_EPSILON = 0.05
FINE_SECONDS_PER_JOB = 0.5


@dataclass(frozen=True)
class BoundTask:
    """What the chain gets: the instance, its ``steps`` (``lp``, ``mip`` or both, in that
    order), the LP's share of the limit (None: no limit), the MIP's budget in seconds (None:
    no limit, and the MIP is left out) or, for a chain in another process, the wall-clock time
    (``time.time()``) by which the MIP must end, and for a MIP alone the LP's ``cells``."""

    instance: Instance
    lp_share: float | None
    mip_budget: float | None = None
    mip_until: float | None = None
    threads: int | None = None
    seed: int = 0
    steps: tuple[str, ...] = ("lp", "mip")
    cells: int = 0


@dataclass
class Bounds:
    """What the chain found: the largest bound (0: none), notes, whether a clock stopped a
    method, the LP's task priorities and the job orders of the LP's and the MIP's solutions."""

    bound: float = 0.0
    notes: list[str] = field(default_factory=list)
    limited: bool = False
    lp_priority: np.ndarray | None = None
    orders: list[np.ndarray] = field(default_factory=list)
    cells: int = MIP_MAX_CELLS + 1  # jobs x intervals of the LP's grid (the MIP's indicators)

    def raise_to(self, value: float | None) -> None:
        if value is not None and value > self.bound:
            self.bound = float(value)


def bound_chain(task: BoundTask) -> Bounds:
    """The interval LP, then the interval MIP where it fits (module docstring): the ``steps``
    of ``task``."""
    out = Bounds(cells=task.cells)
    if "lp" in task.steps:
        out.cells = _interval_lp(task, out)
    if "mip" not in task.steps:
        return out
    budget = task.mip_budget
    if task.mip_until is not None:
        budget = task.mip_until - time.time()
    why = mip_left_out(out.cells, budget)
    if why is not None:
        out.notes.append(f"interval MIP: left out ({why})")
    else:
        assert budget is not None
        interval_mip(task.instance, budget, out, task.threads, task.seed)
    return out


def mip_left_out(cells: int, budget: float | None) -> str | None:
    """Why the interval MIP does not run with ``cells`` (job, interval) indicators and
    ``budget`` seconds (None: it runs)."""
    if budget is None:
        return "no time limit to stop it"
    if cells > MIP_MAX_CELLS or budget < cells / MIP_CELLS_PER_SECOND:
        return (
            f"{cells} job-interval indicators; its root needs about "
            f"{cells / MIP_CELLS_PER_SECOND:.0f} s, its share is {max(0.0, budget):.0f} s"
        )
    return None


def _interval_lp(task: BoundTask, out: Bounds) -> int:
    """The interval LP's bound, priorities and completion order into ``out``; returns jobs x
    intervals (what the interval MIP would have as indicators at most)."""
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
        return MIP_MAX_CELLS + 1
    out.lp_priority = ordered.priority
    out.notes.append(f"interval LP: bound {ordered.bound:.10g}")
    solution = ordered.relaxation.solution
    cells = n_jobs * (len(solution.tau) - 1)
    if fine:  # the MIP is built on the default grid: about log1p(fine) / log1p(default) as many
        cells = int(cells * math.log1p(FINE_EPSILON) / math.log1p(DEFAULT_EPSILON))
    _add_completion_order(out, getattr(solution, "completion", None))
    return cells


def interval_mip(
    instance: Instance, budget: float, out: Bounds, threads: int | None = None, seed: int = 0
) -> None:
    """The interval MIP's proven bound within ``budget`` seconds and its incumbent's completion
    order into ``out``."""
    from hetsched.exact.solve import solve

    res = solve(instance, "hare-interval-mip", "highs", budget, 0.0, threads, seed)
    if res.validation is not None and not res.validation.valid:  # pragma: no cover - a model bug
        raise AssertionError(f"interval MIP failed its check: {res.validation.violations[:3]}")
    if res.status != Status.ERROR:
        out.raise_to(res.bound)
    out.limited = out.limited or res.status == Status.TIME_LIMIT
    shown = "-" if res.bound is None else f"{res.bound:.10g}"
    out.notes.append(f"interval MIP: {res.status.value}, bound {shown}")
    _add_completion_order(out, getattr(res.solution, "completion", None))


def _add_completion_order(out: Bounds, completion) -> None:
    """The jobs by a relaxation's C_n (ties by index) into ``out``'s orders, where it has C_n."""
    if completion is not None:
        c = np.asarray(completion)
        out.orders.append(np.lexsort((np.arange(len(c)), c)))
