"""Semi-active re-timing of a Hare_Sched schedule (HPDC'22, (4)-(8)).

A MILP solver's start times are feasible only within its tolerances: ``--solver highs`` can
return 48.999999 for an optimum of 49, a task starting 1e-6 before the previous one on its GPU
ends. :func:`retime` keeps the solver's decisions (each task's GPU and each GPU's order) and
starts every task as early as (4) its arrival, (7) its round's barrier and (8) its GPU allow,
computed with the same float sums as :func:`hetsched.schedule.validate.validate`, so the result is
feasible with no tolerance and its objective is never below the true optimum.
"""

from __future__ import annotations

from collections import defaultdict

from hetsched.instance.model import Instance
from hetsched.schedule.model import TaskAssignment, TaskSchedule


def retime(instance: Instance, schedule: TaskSchedule) -> TaskSchedule:
    """The schedule with the same GPUs and GPU orders, every task started as early as allowed.

    Tasks are taken in the order of their given starts; a schedule whose order cannot be kept
    (a task before a task of its previous round) is returned unchanged, for the validator to judge.
    """
    order = sorted(schedule.assignments, key=lambda a: (a.start, a.job, a.round, a.task))
    gpu_free: dict[str, float] = defaultdict(lambda: float("-inf"))
    left: dict[tuple[str, int], int] = {}
    round_end: dict[tuple[str, int], float] = defaultdict(lambda: float("-inf"))
    for a in schedule.assignments:
        left[a.job, a.round] = left.get((a.job, a.round), 0) + 1
    out = []
    for a in order:
        if not instance.has_job(a.job) or not instance.has_gpu(a.gpu):
            return schedule
        job = instance.job(a.job)
        start = max(job.arrival, gpu_free[a.gpu])
        if a.round > 0:
            if left.get((a.job, a.round - 1), 0) > 0:  # its previous round is not all placed yet
                return schedule
            start = max(start, round_end[a.job, a.round - 1])
        train = instance.train_time(a.job, a.gpu)
        gpu_free[a.gpu] = start + train
        end = start + train + instance.sync_time(a.job, a.gpu)
        round_end[a.job, a.round] = max(round_end[a.job, a.round], end)
        left[a.job, a.round] -= 1
        out.append(TaskAssignment(a.job, a.round, a.task, a.gpu, start))
    return TaskSchedule.of(out, schedule.instance, schedule.instance_hash)
