"""Greedy list scheduling of Hare's task set D (the engine of HPDC'22 Algorithm 1, lines 5-17).

Tasks are taken in a given order; each gets its available time t_i (the job's arrival for
round 0, else the end of training + sync of the previous round, line 10) and a GPU chosen
by a rule:

* ``earliest_available`` -- m* = argmin_m phi_m, as printed in Algorithm 1 (line 12);
* ``earliest_finish``    -- the GPU on which the task finishes training + sync first.

phi_m is advanced by training time only (line 16): synchronization overlaps the next task.
"""

from __future__ import annotations

import heapq
from typing import Iterable, Literal

import numpy as np

from hetsched.instance.hare_view import HareTask, HareView
from hetsched.schedule import TaskAssignment, TaskSchedule

MachineRule = Literal["earliest_available", "earliest_finish"]
MACHINE_RULES: tuple[str, ...] = ("earliest_available", "earliest_finish")


def list_schedule(view: HareView, order: Iterable[HareTask], rule: MachineRule = "earliest_available",
                  instance_name: str = "", instance_hash: str = "") -> TaskSchedule:
    """Schedule tasks in ``order``; every round of a job must come after its previous round."""
    if rule not in MACHINE_RULES:
        raise ValueError(f"unknown machine rule {rule!r} (choose from {', '.join(MACHINE_RULES)})")
    n_gpus = view.n_gpus
    phi = np.zeros(n_gpus)
    heap = [(0.0, m) for m in range(n_gpus)]  # (phi_m, m), for earliest_available
    placed = np.zeros((view.n_jobs, int(view.rounds.max())), dtype=np.int64)  # tasks placed per round
    round_end = np.zeros_like(placed, dtype=float)  # max_j x_j + T^c_j + T^s_j so far
    out: list[TaskAssignment] = []
    for t in order:
        n, r = t.n, t.r
        if r == 0:
            avail = view.arrival[n]
        else:
            if placed[n, r - 1] < view.tasks_per_round[n]:
                raise ValueError(f"order places a task of round {r} of job {view.job_ids[n]} "
                                 f"before all tasks of round {r - 1}")
            avail = round_end[n, r - 1]
        if rule == "earliest_available":
            _, m = heapq.heappop(heap)
        else:
            m = int(np.argmin(np.maximum(avail, phi) + view.cycle[n]))
        start = max(avail, phi[m])
        phi[m] = start + view.train[n, m]
        if rule == "earliest_available":
            heapq.heappush(heap, (phi[m], m))
        round_end[n, r] = max(round_end[n, r], start + view.cycle[n, m])
        placed[n, r] += 1
        out.append(TaskAssignment(view.job_ids[n], r, t.k, view.gpu_ids[m], float(start)))
    return TaskSchedule(tuple(out), instance_name, instance_hash)


def arrival_order(view: HareView) -> list[HareTask]:
    """Tasks by their earliest possible start a_n + r * min cycle, ties by job, round, task."""
    return sorted(view.tasks(), key=lambda t: (view.arrival[t.n] + t.r * view.min_cycle[t.n], t.n, t.r, t.k))


def wspt_order(view: HareView) -> list[HareTask]:
    """Whole jobs by weighted shortest processing time (Smith's ratio of least work to weight)."""
    work = view.rounds * view.tasks_per_round * view.train.min(axis=1)
    jobs = sorted(range(view.n_jobs), key=lambda n: (view.arrival[n], work[n] / view.weight[n], n))
    return [HareTask(n, r, k) for n in jobs for r in range(int(view.rounds[n]))
            for k in range(int(view.tasks_per_round[n]))]


def quick_upper_bound(instance) -> tuple[float, TaskSchedule]:
    """A feasible schedule and its objective from a few cheap list schedules.

    Exact models use it to bound the horizon (:meth:`HareView.start_windows`) and as a hint.
    The objective is recomputed by the independent validator.
    """
    from hetsched.instance.hare_view import hare_view
    from hetsched.validate import validate

    view = hare_view(instance)
    best: tuple[float, TaskSchedule] | None = None
    for order in (arrival_order(view), wspt_order(view)):
        for rule in MACHINE_RULES:
            sched = list_schedule(view, order, rule)  # type: ignore[arg-type]
            report = validate(instance, sched)
            if not report.valid or report.objective is None:  # pragma: no cover - a bug in list_schedule
                raise AssertionError(f"list schedule failed validation: {report.violations[:3]}")
            if best is None or report.objective < best[0]:
                best = (report.objective, sched)
    assert best is not None
    return best
