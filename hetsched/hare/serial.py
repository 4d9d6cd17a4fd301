"""Serial schedule generation for Hare_Sched (4)-(8): whole jobs in priority order, each round's
tasks inserted into the earliest gaps the GPUs' timelines still have.

Algorithm 1's list scheduling (:mod:`hetsched.hare.list_scheduling`) appends tasks at the end of
each GPU's timeline in one global task order, so a task never uses a gap an earlier task left
(a barrier's synchronization, a job that had not arrived). The *serial* scheme of project
scheduling (Kolisch, EJOR 1996) schedules job after job instead, in a priority order, and
places every task where it *finishes* first among the gaps left by the jobs before it:

* the first job gets its schedule alone on the cluster (rounds of length L_n, ``round_length``);
* a later job trains in what the earlier ones left, including before they arrive and during
  their synchronization, which (8) allows: only training occupies a GPU;
* round r + 1 of a job is ready when round r ends (7): its last task's training + sync.

For tasks of one round (identical, one per GPU slot) earliest-finish placement keeps the round
short. A job's priority order is what a search changes (:func:`serial_search`); the
schedule of an order is deterministic.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from hetsched.core.compiled import kernel
from hetsched.hare.list_scheduling import arrays_objective
from hetsched.hare.view import HareView, hare_view
from hetsched.instance.gavel_table import NEVER
from hetsched.instance.model import Instance

#: moves without a better schedule before the search restarts from the best order with a kick
PATIENCE = 200
#: random moves in a kick
KICK = 3


@dataclass(frozen=True)
class SerialRun:
    """A job order and its serial schedule: starts and GPU indices in D order, and objective."""

    objective: float
    order: np.ndarray
    start: np.ndarray
    gpu: np.ndarray


def serial_schedule(view: HareView, job_order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and GPU indices of every task (D order) when jobs are placed in ``job_order``
    (a permutation of the job indices) by the serial scheme (module docstring)."""
    order = np.asarray(job_order, dtype=np.int64)
    if order.shape != (view.n_jobs,) or not np.array_equal(np.sort(order), np.arange(view.n_jobs)):
        raise ValueError(f"job_order must be a permutation of the {view.n_jobs} job indices")
    n_tasks = view.n_tasks
    # each GPU's busy intervals, sorted; room for every task on every GPU would be too much,
    # so the arrays grow (doubling) inside the kernel's caller when one fills up
    capacity = max(16, 2 * n_tasks // max(1, view.n_gpus) + 16)
    while True:
        busy_lo = np.empty((view.n_gpus, capacity))
        busy_hi = np.empty((view.n_gpus, capacity))
        count = np.zeros(view.n_gpus, dtype=np.int64)
        start = np.empty(n_tasks)
        gpu = np.empty(n_tasks, dtype=np.int32)
        done = _serial(
            order,
            view.arrival.astype(float),
            view.rounds.astype(np.int64),
            view.tasks_per_round.astype(np.int64),
            view.task_offset.astype(np.int64),
            np.ascontiguousarray(view.train, dtype=float),
            np.ascontiguousarray(view.cycle, dtype=float),
            busy_lo,
            busy_hi,
            count,
            start,
            gpu,
        )
        if done:
            return start, gpu
        capacity *= 2


@kernel
def _earliest_gap(lo, hi, count, ready, length, tail, best):  # pragma: no cover - compiled
    """(start, index) of the earliest x >= ready with [x, x + length) free on one GPU whose busy
    intervals are lo[:count], hi[:count] (sorted, disjoint); index: where it is inserted. The
    scan gives up, with index -1, once x + tail >= ``best``: the caller has a place that
    finishes by then already."""
    # first interval that ends after ready
    a, b = 0, count
    while a < b:
        mid = (a + b) // 2
        if hi[mid] <= ready:
            a = mid + 1
        else:
            b = mid
    x = ready
    i = a
    while i < count:
        if x + tail >= best:
            return x, -1
        if x + length <= lo[i]:
            return x, i
        if hi[i] > x:
            x = hi[i]
        i += 1
    return x, count


@kernel
def _serial(
    order, arrival, rounds, per_round, offset, train, cycle, busy_lo, busy_hi, count, start, gpu
):  # pragma: no cover - compiled
    n_gpus = train.shape[1]
    any_gpu = np.zeros(train.shape[0], dtype=np.bool_)  # job n has a GPU it can run on
    for n in range(train.shape[0]):
        for g in range(n_gpus):
            if train[n, g] < NEVER:
                any_gpu[n] = True
    cap = busy_lo.shape[1]
    for n in order:
        ready = arrival[n]
        for r in range(rounds[n]):
            end = ready
            for k in range(per_round[n]):
                best_f, best_x, best_g, best_i = np.inf, 0.0, -1, 0
                for g in range(n_gpus):
                    if train[n, g] >= NEVER and any_gpu[n]:
                        continue
                    # no start at or after ready finishes before best_f here: skip the scan.
                    # _earliest_gap stops on the same test, but checking it here also saves
                    # slicing busy_lo[g] / busy_hi[g] for the call (measured: 0.84x CPU time
                    # at 200 x 160 with this check, 1.0x with the scan's own alone)
                    if best_g >= 0 and ready + cycle[n, g] >= best_f:
                        continue
                    x, i = _earliest_gap(
                        busy_lo[g], busy_hi[g], count[g], ready, train[n, g], cycle[n, g], best_f
                    )
                    if i < 0:
                        continue
                    f = x + cycle[n, g]
                    if f < best_f or best_g < 0:
                        best_f, best_x, best_g, best_i = f, x, g, i
                g, c = best_g, count[best_g]
                if c == cap:
                    return False
                for j in range(c, best_i, -1):  # shift to keep the intervals sorted
                    busy_lo[g, j] = busy_lo[g, j - 1]
                    busy_hi[g, j] = busy_hi[g, j - 1]
                busy_lo[g, best_i] = best_x
                busy_hi[g, best_i] = best_x + train[n, g]
                count[g] = c + 1
                task = offset[n] + r * per_round[n] + k
                start[task] = best_x
                gpu[task] = g
                if best_f > end:
                    end = best_f
            ready = end
    return True


def smith_order(view: HareView) -> np.ndarray:
    """Jobs by Smith's ratio of their alone length |R_n| L_n to weight, ties by index."""
    length = view.rounds * view.round_length
    return np.lexsort((np.arange(view.n_jobs), length / view.weight))


def arrival_jobs(view: HareView) -> np.ndarray:
    """Jobs by arrival, ties by index."""
    return np.argsort(view.arrival, kind="stable")


def serial_search(
    view: HareView,
    orders: list[np.ndarray],
    seed: int = 0,
    evaluations: int = 1000,
    keep_going: Callable[[], bool] | None = None,
) -> SerialRun:
    """Iterated local search over job orders from the best of ``orders``: move one job to another
    place (the insertion neighbourhood of permutation scheduling), keep a move that does not
    worsen sum_n w_n C_n; after :data:`PATIENCE` moves without a better schedule,
    restart from the best order with a few random moves (a kick). Counted in evaluations and
    seeded, so the same seed gives the same schedule; ``keep_going`` (asked before each move)
    may stop it early. Returns the best schedule met."""
    best: SerialRun | None = None
    for order in orders:
        order = np.asarray(order, dtype=np.int64)
        start, gpu = serial_schedule(view, order)
        run = SerialRun(arrays_objective(view, start, gpu), order, start, gpu)
        if best is None or run.objective < best.objective:
            best = run
    assert best is not None, "serial_search needs at least one order"
    current, stale = best, 0
    rng = np.random.default_rng([seed, 44])
    jobs = view.n_jobs
    for _ in range(evaluations if jobs > 1 else 0):
        if keep_going is not None and not keep_going():
            break
        order = list(current.order)
        if stale >= PATIENCE:  # a kick from the best order
            order, stale = list(best.order), 0
            for _ in range(KICK):
                a, b = rng.integers(jobs, size=2)
                order.insert(int(b), order.pop(int(a)))
        a = int(rng.integers(jobs))
        near = int(np.clip(a + rng.integers(-3, 4), 0, jobs - 1))
        b = near if rng.random() < 0.7 else int(rng.integers(jobs))
        order.insert(b, order.pop(a))
        cand = np.asarray(order, dtype=np.int64)
        start, gpu = serial_schedule(view, cand)
        value = arrays_objective(view, start, gpu)
        if value <= current.objective:
            current = SerialRun(value, cand, start, gpu)
        stale += 1
        if value < best.objective:
            best, stale = current, 0
    return best


@dataclass(frozen=True)
class SearchTask:
    """A job-order search to run in another process: from ``orders``, with ``seed``, until the
    wall-clock time ``until`` (``time.time()``)."""

    instance: Instance
    orders: tuple[np.ndarray, ...]
    seed: int
    until: float


def search_until(task: SearchTask) -> tuple[np.ndarray, float]:
    """:func:`serial_search` of ``task``: its best job order and that order's objective (the
    caller rebuilds the schedule with :func:`serial_schedule`, which is deterministic)."""
    view = hare_view(task.instance)
    best = serial_search(
        view, list(task.orders), task.seed, 10**12, keep_going=lambda: time.time() < task.until
    )
    return best.order, best.objective
