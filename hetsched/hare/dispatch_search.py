"""Hare_Sched (HPDC'22, (4)-(8)) solved exactly by depth-first branch and bound over dispatch
orders: a second exact method for small instances, and proofs where CP-SAT and column
generation leave a gap (``ladder(24, 4)``).

**The tree.** Times are integer ticks (:func:`hetsched.core.scaling.exact_decimal_scale`). A node
dispatches tasks one at a time: the next task of an open job's current round (tasks of a round
in index order) on some GPU, at its earliest start max(barrier of its round (4), (7); the GPU's
free time (8)). Starts must be non-decreasing in dispatch order, ties by job index. This loses
no optimum: the objective is regular, so some optimal schedule is semi-active (each task starts
as early as its barrier and its GPU's previous task allow); dispatching its tasks in (start,
job) order rebuilds it exactly, each task at the earliest start this tree gives it.

**Pruned without loss.**
* Identical GPUs (the same T^c, T^s for every job) with the same free time: one child.
* The bound (``node_bound``): every later task starts at or after the last start. The larger of
  (a) the sum of w_n x job n's earliest completion alone, given the GPUs' free times, and (b) a
  dynamic program over the order in which the open jobs complete: the first k of them complete
  no sooner than their own (a), nor than the time their remaining training takes on the GPUs
  as a fluid, each GPU at the speed max_n (fastest T^c_n / T^c_{n,m}) (a uniform relaxation).
* Dominance: a node is dropped when a visited node with the same tasks dispatched has GPU free
  times (sorted within identical GPUs), barriers and round ends no later, a cost of finished
  jobs no larger, a last (start, job) no later and a sum of starts no larger, one of the last
  two strictly (or the same state). Every completion of the dropped node then has a copy after
  the visited one, no later task by task, so of no larger cost; its semi-active, start-ordered
  form is in the tree with a strictly smaller (cost, sum of starts), which makes the argument
  well founded. The visited node's subtree is done before the dropped one is met (the two
  are at the same depth).

Searched to the end, the best schedule is optimal (or the upper bound it started from is).
Stopped by its clock, it returns its best schedule and the root's bound.

**Threads.** With several, every thread expands the same nodes down to :data:`SPLIT_DEPTH`
and takes every parts-th node there, round robin; each keeps its own memo (dominance stays
within its subtrees) and its own best, and prunes against another's only when strictly better,
so the optimum it reports does not depend on the timing (``dispatch_kernel.search``).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hetsched.core.deadline import signals_held
from hetsched.core.errors import HetschedError
from hetsched.core.scaling import exact_decimal_scale, instance_in_ticks, instance_times
from hetsched.hare import dispatch_kernel
from hetsched.hare.view import HareView, hare_view
from hetsched.instance.io import instance_hash
from hetsched.instance.model import Instance
from hetsched.schedule.model import TaskAssignment, TaskSchedule
from hetsched.schedule.retime import retime
from hetsched.schedule.validate import validate

#: the most tasks the search takes: it proves ladder(24, 4) in minutes; each 4 more tasks
#: multiply its nodes by about 30 (ladder 16 -> 20 -> 24), so past this it only searches
MAX_TASKS = 40
#: with more than one thread, the depth at which the tree is dealt out among them (round robin)
SPLIT_DEPTH = 2
MAX_THREADS = 8
#: dominance memo: buckets (one per set of dispatched tasks) and visited states kept per bucket
MEMO_BUCKETS = 1 << 16
MEMO_SLOTS = 8


@dataclass(frozen=True)
class DispatchProblem:
    """The instance in integer ticks (times x ``scale``, weights x ``weight_scale``)."""

    instance: Instance
    view: HareView  # of the instance in ticks
    scale: int
    weight_scale: int
    train: np.ndarray  # [n, m] ticks
    sync: np.ndarray
    weight: np.ndarray  # [n] integers
    arrival: np.ndarray  # [n] ticks
    gpu_class: np.ndarray  # [m] GPUs of one class are identical for every job

    @property
    def divisor(self) -> int:
        """Ticks x weights per unit of the instance's objective."""
        return self.scale * self.weight_scale


@dataclass(frozen=True)
class DispatchResult:
    schedule: TaskSchedule | None  # the best schedule found (None: none below the upper bound)
    objective: float | None  # its objective, in the instance's units
    proven: bool  # the search ended: nothing is better than min(objective, upper bound)
    root_bound: float  # the root's lower bound, in the instance's units
    nodes: int
    dominated: int  # nodes dropped by dominance
    seconds: float
    upper_objective: float | None = None  # the upper-bound schedule's validated objective


def search_threads(threads: int | None) -> int:
    """The threads the search runs on for ``--threads`` (None: two, or one on a one-core
    machine, as CP-SAT's default workers)."""
    if threads is not None:
        return max(1, int(threads))
    return min(2, os.cpu_count() or 1)


def _scales(instance: Instance) -> tuple[int, int] | str:
    """The tick and weight scales the search would use on ``instance``, or why it does not
    take it."""
    if instance.n_tasks > MAX_TASKS:
        return f"{instance.n_tasks} tasks (the dispatch search takes at most {MAX_TASKS})"
    s = exact_decimal_scale(instance_times(instance), max_digits=4)
    if s is None:
        return "times with more than 4 decimal digits"
    ws = exact_decimal_scale([j.weight for j in instance.jobs], max_digits=6)
    if ws is None:
        return "weights with more than 6 decimal digits"
    return s, ws


def refusal(instance: Instance) -> str | None:
    """Why the search does not take ``instance`` (None: it does)."""
    scales = _scales(instance)
    return scales if isinstance(scales, str) else None


def dispatch_problem(instance: Instance) -> DispatchProblem:
    scales = _scales(instance)
    if isinstance(scales, str):
        raise HetschedError(f"the dispatch search does not take this instance: {scales}")
    s, ws = scales
    v = hare_view(instance_in_ticks(instance, s))
    gpu_class = np.zeros(v.n_gpus, np.int64)
    for c, gpus in enumerate(v.gpu_classes()):  # in order of first appearance
        gpu_class[gpus] = c
    return DispatchProblem(
        instance,
        v,
        s,
        ws,
        np.rint(v.train).astype(np.int64),
        np.rint(v.sync).astype(np.int64),
        np.rint(v.weight * ws).astype(np.int64),
        np.rint(v.arrival).astype(np.int64),
        gpu_class,
    )


def dispatch_search(
    problem: DispatchProblem,
    upper: TaskSchedule | None = None,
    time_limit: float | None = None,
    threads: int = 1,
) -> DispatchResult:
    """Search for a schedule better than ``upper`` (if given; it must be valid) within
    ``time_limit`` seconds (None: to the end), on ``threads`` threads (each searches its share
    of the subtrees at depth :data:`SPLIT_DEPTH`; the kernel runs without the GIL)."""
    t0 = time.perf_counter()
    dispatch_kernel.compile_search()
    v = problem.view
    ub, upper_objective = dispatch_kernel.BIG, None
    if upper is not None:
        report = validate(problem.instance, upper)
        if not report.valid:
            raise HetschedError(f"the upper-bound schedule is not valid: {report.violations[0]}")
        # the schedule's objective in ticks x weights, rounded up: a schedule is searched for
        # only if it is strictly below (the ticked objective of any schedule is an integer)
        ub = math.ceil(report.objective * problem.divisor - 1e-6)
        upper_objective = report.objective
    pmin = problem.train.min(axis=1).astype(np.float64)
    speed = (pmin[:, None] / problem.train).max(axis=0)
    radix_space = math.prod(int(r) * int(k) + 1 for r, k in zip(v.rounds, v.tasks_per_round))
    buckets = min(MEMO_BUCKETS, radix_space) if radix_space < dispatch_kernel.BIG else 0
    deadline = math.inf if time_limit is None else t0 + time_limit
    parts = max(1, min(int(threads), MAX_THREADS)) if v.n_tasks > SPLIT_DEPTH + 1 else 1
    split = SPLIT_DEPTH if parts > 1 else 0
    shared = np.full(parts + 1, dispatch_kernel.BIG, np.int64)
    shared[parts] = 0  # the stop flag

    def part(p: int) -> tuple:
        return dispatch_kernel.search(
            problem.train,
            problem.sync,
            problem.weight,
            problem.arrival,
            v.rounds.astype(np.int64),
            v.tasks_per_round.astype(np.int64),
            problem.gpu_class,
            pmin,
            speed,
            int(ub),
            float(deadline),
            buckets,
            MEMO_SLOTS,
            split,
            p,
            parts,
            shared,
        )

    # a signal's exception (a deadline, Ctrl-C) raised inside the kernel's object-mode poll came
    # back as numba's SystemError (every one of 40 deadlines on ladder(20, 4)): held back instead,
    # it stops every part at its next poll and is raised when they have returned
    with signals_held():
        outs = _run_parts(part, parts, shared)
    found = [o for o in outs if o[1]]
    # the least objective; of equal ones, the lowest part's (each part's own best does not
    # depend on the threads' timing when it is the optimum: see the kernel)
    best = min(found, key=lambda o: o[0]) if found else None
    schedule = _schedule(problem, best[2], best[3], best[4]) if best is not None else None
    return DispatchResult(
        schedule,
        best[0] / problem.divisor if best is not None else None,
        all(bool(o[6]) for o in outs),
        float(outs[0][8]) / problem.divisor,
        sum(int(o[5]) for o in outs),
        sum(int(o[7]) for o in outs),
        time.perf_counter() - t0,
        upper_objective,
    )


def _run_parts(part: Callable[[int], tuple], parts: int, shared: np.ndarray) -> list[tuple]:
    """``part(p)`` for p < ``parts``, each on a thread of its own beyond the first; on any
    exception here (a signal's), the stop flag in ``shared`` ends the others within a poll."""
    if parts == 1:
        return [part(0)]
    outs: list[tuple | None] = [None] * parts

    def target(p: int) -> None:
        outs[p] = part(p)

    workers = [threading.Thread(target=target, args=(p,), daemon=True) for p in range(1, parts)]
    try:
        for t in workers:
            t.start()
        outs[0] = part(0)
        for t in workers:
            while t.is_alive():
                t.join(0.2)
    finally:
        shared[parts] = 1
    if any(o is None for o in outs):
        raise HetschedError("a thread of the dispatch search ended without a result")
    return outs  # type: ignore[return-value]


def _schedule(
    problem: DispatchProblem, steps_n: np.ndarray, steps_m: np.ndarray, steps_s: np.ndarray
) -> TaskSchedule:
    """The dispatch steps as a schedule in seconds, re-timed (:func:`retime`) so that float
    sums meet the validator's exactly."""
    v, inst = problem.view, problem.instance
    dispatched = np.zeros(v.n_jobs, np.int64)
    out = []
    for n, m, s in zip(steps_n.tolist(), steps_m.tolist(), steps_s.tolist()):
        per = int(v.tasks_per_round[n])
        i = int(dispatched[n])
        dispatched[n] += 1
        out.append(TaskAssignment(v.job_ids[n], i // per, i % per, v.gpu_ids[m], s / problem.scale))
    return retime(inst, TaskSchedule.of(out, inst.name, instance_hash(inst)))
