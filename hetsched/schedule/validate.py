"""The one independent validator for task schedules (Hare_Sched, HPDC'22 eqs. (4)-(8)).

It reads only the raw instance (never a solver's model or a view built for one) and
recomputes the objective sum_n w_n C_n from scratch, where C_n is the latest
training-plus-synchronization end of any task of job n (eq. (6)). It returns every
violation, not only the first.

It works on the schedule's columns (:class:`~hetsched.schedule.model.TaskSchedule`), a numpy pass per
constraint, so a run of millions of tasks is checked in seconds. Each task has a slot: its job's
offset + round x tasks per round + task, so the tasks of one round, and the rounds of one job, are
contiguous in slot order.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from hetsched.core.reports import ValidationReport, Violation
from hetsched.core.scaling import instance_times, on_grid
from hetsched.instance.model import Instance, instance_hash
from hetsched.schedule.model import TaskSchedule

#: Kinds of violation, each tied to the constraint it breaks.
KINDS = {
    "instance_mismatch": "solution names another instance (hash differs)",
    "unknown_task": "(5) task does not exist in the instance",
    "unknown_gpu": "(5) GPU does not exist in the cluster",
    "duplicate_task": "(5) task assigned more than once",
    "missing_task": "(5) task not assigned to any GPU",
    "bad_start": "start time is not a finite number",
    "arrival": "(4) task starts before its job arrives",
    "barrier": "(7) task starts before every task of the previous round has trained and synced",
    "overlap": "(8) training intervals of two tasks overlap on one GPU",
}
# one "missing_task" line, not one per task, past this many (a job may have 10^8 rounds)
_MISSING_ONE_BY_ONE = 10_000


def _tolerance(instance: Instance) -> float:
    """Absolute slack for float comparisons: 1e-9 of the instance's time scale, room for float
    rounding (solutions are retimed before they are checked). It was 1e-6, which at 100,000
    jobs (arrivals up to ~2e7 s) let a task overlap another by up to 20 s unseen."""
    scale = max(
        [1.0]
        + [j.arrival for j in instance.jobs]
        + [
            j.n_tasks * max(list(j.train_time.values()) + list(j.train_time_per_gpu.values()))
            + j.rounds
            * max(list(j.sync_time.values()) + list(j.sync_time_per_gpu.values()) + [0.0])
            for j in instance.jobs
        ]
    )
    return 1e-9 * scale


def _times(instance: Instance, n: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(T^c, T^s) of job n's task on GPU g, per task: the time of the GPU's type, replaced where
    the job gives a per-GPU time (the instance's own rule)."""
    gpus = instance.gpus
    types = sorted({x.type for x in gpus})
    type_of = np.array([types.index(x.type) for x in gpus], dtype=np.int64)[g]
    gpu_at = {x.id: m for m, x in enumerate(gpus)}
    task_keys = n.astype(np.int64) * len(gpus) + g
    out = []
    for field in ("train", "sync"):
        per_type = np.array(
            [[getattr(j, f"{field}_time")[t] for t in types] for j in instance.jobs], dtype=float
        ).reshape(len(instance.jobs), len(types))
        times = per_type[n, type_of]
        pairs = [
            (i * len(gpus) + gpu_at[gid], t)
            for i, j in enumerate(instance.jobs)
            for gid, t in getattr(j, f"{field}_time_per_gpu").items()
        ]
        if pairs:
            keys, values = np.array(pairs, dtype=float).T
            order = np.argsort(keys)
            keys, values = keys[order].astype(np.int64), values[order]
            at = np.minimum(np.searchsorted(keys, task_keys), len(keys) - 1)
            hit = keys[at] == task_keys
            times[hit] = values[at[hit]]
        out.append(times)
    return out[0], out[1]


def validate(
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
    jobs = instance.jobs
    slots = _Slots(instance)
    holder, n_placed = _placements(instance, schedule, slots, bad)
    if holder is None:  # say it once, not once per missing task
        bad.append(
            Violation(
                "missing_task",
                f"the schedule places {n_placed} of the instance's {instance.n_tasks} tasks",
            )
        )
        return ValidationReport(valid=False, objective=None, completion={}, violations=bad)

    # the placed tasks in slot order: slot, job, round id, start, GPU, and their times (arrays
    # are dropped as soon as they are used: a run of millions of tasks is checked in ~100 B each)
    present = holder >= 0
    p_slot = np.flatnonzero(present)
    at = holder[p_slot]
    del holder
    p_start = schedule.start[at]
    p_gpu = _index(schedule.gpu_ids, instance.gpus)[schedule.gpu[at]]
    del at
    p_job = np.repeat(np.arange(len(jobs), dtype=np.int32), slots.rounds * slots.width)[p_slot]
    train_end, end = _times(instance, p_job, p_gpu)
    train_end += p_start
    end += train_end  # (6): training-plus-synchronization end
    # each round's placed tasks are contiguous: they start at its first slot's position
    cut = np.append(np.searchsorted(p_slot, slots.round_first), len(end))
    placed = cut[:-1] < cut[1:]
    round_end = np.full(len(placed), np.nan)  # NaN: no task of the round placed
    round_end[placed] = np.maximum.reduceat(end, cut[:-1][placed]) if len(end) else []
    del placed
    p_round = slots.round_of()[p_slot]  # the round's id over all jobs' rounds
    # (7): the previous round's end; NaN (a first round, or none of it placed) compares False
    prev_end = round_end[np.maximum(p_round - 1, 0)]
    prev_end[p_round == slots.round_index[p_job]] = np.nan
    arrival = np.array([j.arrival for j in jobs], dtype=float)
    per_slot: list[tuple[int, int, Violation]] = []
    for i in np.flatnonzero(~present).tolist():
        per_slot.append((i, 0, Violation("missing_task", f"{slots.name(i)} is not scheduled")))
    del present
    for i in np.flatnonzero(p_start < arrival[p_job] - tol).tolist():
        what = f"{slots.name(p_slot[i])} starts at {p_start[i]:g}"
        j = jobs[p_job[i]]
        per_slot.append(
            (p_slot[i], 1, Violation("arrival", f"{what} before arrival {j.arrival:g}"))
        )
    for i in np.flatnonzero(p_start < prev_end - tol).tolist():
        q = int(p_round[i]) - 1
        last = p_slot[cut[q] + int(np.argmax(end[cut[q] : cut[q + 1]]))]
        per_slot.append(
            (
                p_slot[i],
                2,
                Violation(
                    "barrier",
                    f"{slots.name(p_slot[i])} starts at {p_start[i]:g} before round "
                    f"{q - int(slots.round_index[p_job[i]])} ends at {prev_end[i]:g} "
                    f"({slots.name(last)} trains and syncs until then)",
                ),
            )
        )
    bad += [v for *_, v in sorted(per_slot, key=lambda x: x[:2])]
    del end, prev_end, p_round, cut

    completion: dict[str, float] = {}
    job_end = np.fmax.reduceat(round_end, slots.round_index[:-1])
    for j, c in zip(jobs, job_end.tolist()):
        if math.isfinite(c):
            completion[j.id] = c
    bad += _overlaps(instance, slots, p_slot, p_job, p_gpu, p_start, train_end, tol)
    complete = len(p_slot) == slots.total
    del p_slot, p_job, p_gpu, train_end

    objective = None
    if complete:  # exact on the grid of the instance's and the schedule's times
        objective = on_grid(
            sum(j.weight * completion[j.id] for j in jobs),
            np.concatenate((np.array(instance_times(instance), dtype=float), p_start)),
            [j.weight for j in jobs],
        )
    return ValidationReport(
        valid=not bad, objective=objective, completion=completion, violations=bad
    )


class _Slots:
    """The instance's tasks numbered in slot order: job, then round, then task."""

    def __init__(self, instance: Instance):
        self.ids = [j.id for j in instance.jobs]
        self.rounds = np.array([j.rounds for j in instance.jobs], dtype=np.int64)
        self.width = np.array([j.tasks_per_round for j in instance.jobs], dtype=np.int64)
        self.offset = np.concatenate(([0], np.cumsum(self.rounds * self.width)))
        self.total = int(self.offset[-1])
        self.round_index = np.concatenate(([0], np.cumsum(self.rounds)))  # job -> first round id

    @cached_property
    def round_first(self) -> np.ndarray:
        """Round id -> its first slot."""
        job = np.repeat(np.arange(len(self.ids)), self.rounds)
        local = np.arange(int(self.round_index[-1])) - self.round_index[job]
        return self.offset[job] + local * self.width[job]

    def round_of(self) -> np.ndarray:
        """Slot -> round id (a new array: the caller drops it when done)."""
        ids = np.arange(int(self.round_index[-1]), dtype=np.int64)
        return np.repeat(ids, np.repeat(self.width, self.rounds))

    def name(self, slot: int) -> str:
        n = int(np.searchsorted(self.offset, slot, side="right")) - 1
        r, k = divmod(int(slot) - int(self.offset[n]), int(self.width[n]))
        return _name(self.ids[n], r, k)


def _index(ids: tuple[str, ...], items) -> np.ndarray:
    """Position of each id among ``items`` (jobs or GPUs, by ``.id``); -1 where there is none."""
    at = {x.id: i for i, x in enumerate(items)}
    return np.array([at.get(x, -1) for x in ids], dtype=np.int32)


def _placements(
    instance: Instance, schedule: TaskSchedule, slots: _Slots, bad: list[Violation]
) -> tuple[np.ndarray | None, int]:
    """(5): every task named exists, on a GPU that exists, at a finite time, once. Appends the
    violations in the schedule's order; returns slot -> the task placed there (-1: none) and
    how many slots are placed, or None for the first where the instance has over 10,000 more
    tasks than the schedule places."""
    n = _index(schedule.job_ids, instance.jobs)[schedule.job]
    r, k = schedule.round, schedule.task
    nn = np.maximum(n, 0)
    is_task = (n >= 0) & (r >= 0) & (r < slots.rounds[nn]) & (k >= 0) & (k < slots.width[nn])
    slot = slots.offset[nn]
    slot += np.where(is_task, r, 0) * slots.width[nn]
    slot += np.where(is_task, k, 0)
    del n, nn
    on_gpu = is_task & (_index(schedule.gpu_ids, instance.gpus)[schedule.gpu] >= 0)
    timed = on_gpu & np.isfinite(schedule.start)
    idx = np.flatnonzero(timed)
    placed = slot[idx]
    unique = False
    if slots.total <= len(schedule) + _MISSING_ONE_BY_ONE:
        unique = np.bincount(placed, minlength=slots.total).max(initial=0) <= 1
    if not unique:  # the first of each slot's tasks is placed; the others are duplicates
        placed, first = np.unique(placed, return_index=True)
        idx = idx[first]
    kept = np.zeros(len(schedule), dtype=bool)
    kept[idx] = True
    for i in np.flatnonzero(~kept).tolist():
        a = _name(schedule.job_ids[schedule.job[i]], int(r[i]), int(k[i]))
        gpu = schedule.gpu_ids[schedule.gpu[i]]
        if not is_task[i]:
            bad.append(Violation("unknown_task", f"{a} is not a task of the instance"))
        elif not on_gpu[i]:
            bad.append(Violation("unknown_gpu", f"{a} is assigned to unknown GPU '{gpu}'"))
        elif not timed[i]:
            bad.append(Violation("bad_start", f"{a} has start {schedule.start[i]}"))
        else:  # ``placed`` is sorted here (np.unique)
            was = schedule.gpu_ids[schedule.gpu[idx[np.searchsorted(placed, slot[i])]]]
            bad.append(Violation("duplicate_task", f"{a} is assigned twice ({was}, {gpu})"))
    if slots.total > len(idx) + _MISSING_ONE_BY_ONE:
        return None, len(idx)
    holder = np.full(slots.total, -1, dtype=np.int64)
    holder[placed] = idx
    return holder, len(idx)


def _overlaps(instance, slots, p_slot, p_job, gpu, start, train_end, tol) -> list[Violation]:
    """(8): on each GPU, in start order (ties by job id, round, task), a task starts no earlier
    than every earlier task's training end. A task that overlaps any earlier one overlaps its
    predecessor or the predecessor overlaps another, so one numpy pass over neighbours finds the
    GPUs to explain; the explanation walks only those."""
    if not len(start):
        return []
    in_id_order = np.argsort(np.array(slots.ids, dtype=object), kind="stable")
    sizes = (slots.rounds * slots.width)[in_id_order]
    by_id = np.empty(len(sizes), dtype=np.int64)  # job offsets with jobs in id order
    by_id[in_id_order] = np.cumsum(sizes) - sizes
    tie = by_id[p_job] + (p_slot - slots.offset[p_job])
    order = np.lexsort((tie, start, gpu))
    del tie
    g, s, e = gpu[order], start[order], train_end[order]
    clash = (g[1:] == g[:-1]) & (s[1:] < e[:-1] - tol)
    out: list[Violation] = []
    for m in np.unique(g[1:][clash]).tolist():
        busy_until, holder = -math.inf, -1
        for i in order[g == m].tolist():
            if start[i] < busy_until - tol:
                out.append(
                    Violation(
                        "overlap",
                        f"on {instance.gpus[m].id}: {slots.name(p_slot[i])} starts at "
                        f"{start[i]:g} while {slots.name(p_slot[holder])} trains until "
                        f"{busy_until:g}",
                    )
                )
            if train_end[i] > busy_until:
                busy_until, holder = train_end[i], i
    return out


def _name(job: str, round: int, task: int) -> str:
    return f"{job}/r{round}/t{task}"
