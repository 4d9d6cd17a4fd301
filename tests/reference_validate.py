"""A second, loop-by-loop validator of task schedules, the oracle of the columnar one.

It is ``hetsched.schedule.validate`` as it was before schedules became columns (commit bb1ce37): it walks
the tasks as records, one Python step per task. ``tests/schedule/test_validate_columns.py`` checks that
both find the same violations, completions and objective on random, broken schedules.

The original docstring follows.

The one independent validator for task schedules (Hare_Sched, HPDC'22 eqs. (4)-(8)).

It reads only the raw instance (never a solver's model or a view built for one) and
recomputes the objective sum_n w_n C_n from scratch, where C_n is the latest
training-plus-synchronization end of any task of job n (eq. (6)). It returns every
violation, not only the first.
"""

from __future__ import annotations

import math
from collections import defaultdict

from hetsched.core.reports import ValidationReport, Violation
from hetsched.core.scaling import instance_times, on_grid
from hetsched.instance.model import Instance, instance_hash
from hetsched.schedule.model import TaskAssignment, TaskSchedule
from hetsched.schedule.validate import _tolerance  # the same slack: both must agree on it


def reference_validate(
    instance: Instance, schedule: TaskSchedule, tol: float | None = None
) -> ValidationReport:
    """Check (4), (5), (7), (8) of Hare_Sched and recompute sum_n w_n C_n."""
    tol = _tolerance(instance) if tol is None else tol
    bad: list[Violation] = []
    if schedule.instance_hash and schedule.instance_hash != instance_hash(instance):
        bad.append(
            Violation(
                "instance_mismatch",
                f"solution is for instance hash {schedule.instance_hash}, this is {instance_hash(instance)}",
            )
        )

    # task (job, round, task) -> its slot: the job's offset + round x tasks per round + task.
    # One list entry per task (8 bytes) where the schedule could fill the instance; a dict where
    # the instance is far larger than the schedule (it is then reported as missing tasks)
    offset: dict[str, int] = {}
    total = 0
    for j in instance.jobs:
        offset[j.id] = total
        total += j.n_tasks
    slots: list[TaskAssignment | None] | dict[int, TaskAssignment]
    slots = [None] * total if total <= len(schedule.assignments) + 10_000 else {}
    slot = slots.__getitem__ if isinstance(slots, list) else slots.get
    n_placed = 0
    for a in schedule.assignments:
        if (
            not instance.has_job(a.job)
            or not (0 <= a.round < instance.job(a.job).rounds)
            or not (0 <= a.task < instance.job(a.job).tasks_per_round)
        ):
            bad.append(
                Violation(
                    "unknown_task", f"{_name(a.job, a.round, a.task)} is not a task of the instance"
                )
            )
            continue
        if not instance.has_gpu(a.gpu):
            bad.append(
                Violation(
                    "unknown_gpu",
                    f"{_name(a.job, a.round, a.task)} is assigned to unknown GPU '{a.gpu}'",
                )
            )
            continue
        if not math.isfinite(a.start):
            bad.append(
                Violation("bad_start", f"{_name(a.job, a.round, a.task)} has start {a.start}")
            )
            continue
        key = offset[a.job] + a.round * instance.job(a.job).tasks_per_round + a.task
        earlier = slot(key)
        if earlier is not None:
            bad.append(
                Violation(
                    "duplicate_task",
                    f"{_name(a.job, a.round, a.task)} is assigned twice ({earlier.gpu}, {a.gpu})",
                )
            )
            continue
        slots[key] = a
        n_placed += 1
    placed = [a for a in slots if a is not None] if isinstance(slots, list) else slots.values()

    if (
        instance.n_tasks > n_placed + 10_000
    ):  # say it once, not once per missing task (a job may have 10^8 rounds)
        bad.append(
            Violation(
                "missing_task",
                f"the schedule places {n_placed} of the instance's {instance.n_tasks} tasks",
            )
        )
        return ValidationReport(valid=False, objective=None, completion={}, violations=bad)

    cached: dict[tuple[str, str], tuple[float, float]] = {}

    def times(job_id: str, gpu: str) -> tuple[float, float]:
        """(T^c, T^s) of the job on the GPU, from the instance, looked up once per pair."""
        t = cached.get((job_id, gpu))
        if t is None:
            t = cached[job_id, gpu] = (
                instance.train_time(job_id, gpu),
                instance.sync_time(job_id, gpu),
            )
        return t

    completion: dict[str, float] = {}
    complete = True
    for job in instance.jobs:
        prev_end: float | None = None  # when the previous round has fully trained and synced
        prev_last = -1  # the task of the previous round that ends last
        job_end = -math.inf  # (6): C_n >= x_i + T^c + T^s for every task i of job n
        first = offset[job.id]
        for r in range(job.rounds):
            round_end, round_last = -math.inf, -1
            for k in range(job.tasks_per_round):
                a = slot(first + r * job.tasks_per_round + k)
                if a is None:
                    bad.append(Violation("missing_task", f"{_name(job.id, r, k)} is not scheduled"))
                    complete = False
                    continue
                if a.start < job.arrival - tol:
                    bad.append(
                        Violation(
                            "arrival",
                            f"{_name(job.id, r, k)} starts at {a.start:g} before arrival {job.arrival:g}",
                        )
                    )
                if prev_end is not None and a.start < prev_end - tol:
                    bad.append(
                        Violation(
                            "barrier",
                            f"{_name(job.id, r, k)} starts at {a.start:g} before round {r - 1} ends at "
                            f"{prev_end:g} ({_name(job.id, r - 1, prev_last)} trains and syncs until then)",
                        )
                    )
                train, sync = times(job.id, a.gpu)
                end = a.start + train + sync
                if end > round_end:
                    round_end, round_last = end, k
            prev_end, prev_last = round_end, round_last
            job_end = max(job_end, round_end)
        if math.isfinite(job_end):
            completion[job.id] = job_end

    by_gpu: dict[str, list[TaskAssignment]] = defaultdict(list)
    for a in placed:
        by_gpu[a.gpu].append(a)
    for gpu, tasks in by_gpu.items():
        tasks.sort(key=lambda a: (a.start, a.job, a.round, a.task))
        busy_until, holder = -math.inf, None
        for a in tasks:
            if a.start < busy_until - tol:
                bad.append(
                    Violation(
                        "overlap",
                        f"on {gpu}: {a.job}/r{a.round}/t{a.task} starts at {a.start:g} while "
                        f"{holder.job}/r{holder.round}/t{holder.task} trains until {busy_until:g}",
                    )
                )
            end = a.start + times(a.job, gpu)[0]
            if end > busy_until:
                busy_until, holder = end, a

    objective = None
    if (
        complete
    ):  # exact on the grid of the instance's times and the schedule's starts (no float noise)
        objective = on_grid(
            sum(j.weight * completion[j.id] for j in instance.jobs),
            [*instance_times(instance), *(a.start for a in placed)],
            [j.weight for j in instance.jobs],
        )
    return ValidationReport(
        valid=not bad, objective=objective, completion=completion, violations=bad
    )


def _name(job: str, round: int, task: int) -> str:
    return f"{job}/r{round}/t{task}"
