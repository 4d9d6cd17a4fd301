"""Task schedules (Hare's x_i and y_{i,m}): each task of each round of each job -> GPU, start.

A schedule is held in columns (one numpy array per field, indices into its job and GPU id
tables): 32 bytes per task, where a tuple of records took ~400. Small consumers (a Gantt chart,
a CP-SAT hint) read :attr:`TaskSchedule.assignments`, the same tasks as records.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable, Iterator

import numpy as np

from hetsched.core.errors import HetschedError, InputError

FORMAT = "hetsched.task_schedule/1"
#: every key of :meth:`TaskSchedule.to_dict` and what it holds (for the generated formats page)
SCHEDULE_KEYS: dict[str, str] = {
    "format": f"`{FORMAT}`",
    "instance": "the instance's name",
    "instance_hash": "the instance's content hash (`hetsched show` finds the instance by it)",
    "assignments": "one object per task: `job`, `round`, `task` (indices from 0), `gpu` (an id "
    "of the cluster) and `start` (seconds); training ends at start + T^c, the round's barrier "
    "waits for every task's start + T^c + T^s",
}
# Measured at the peak of a run with its validation (2026-11-25, before schedules were columns):
# ~440 bytes per task in the task engine and ~400 in `heuristic`. The columns hold 32 bytes per
# task; the engine's and the heuristic's own state bring the peak to what `bench sim` reports.
# Past this many tasks a method that builds a per-task schedule refuses up front.
MAX_SCHEDULE_TASKS = 10_000_000
_INT64 = np.iinfo(np.int64)


def refuse_large(instance: Any, method: str) -> None:
    """Raise before ``method`` builds a per-task schedule of more than ``MAX_SCHEDULE_TASKS`` tasks,
    naming the job that contributes most (its ``rounds x tasks_per_round``)."""
    if instance.n_tasks > MAX_SCHEDULE_TASKS:
        big = max(range(len(instance.jobs)), key=lambda i: instance.jobs[i].n_tasks)
        raise HetschedError(
            f"{instance.name}: $.jobs[{big}].rounds x tasks_per_round: {method} would schedule "
            f"{instance.n_tasks} tasks one by one (limit {MAX_SCHEDULE_TASKS})"
        )


@dataclass(frozen=True, order=True, slots=True)
class TaskAssignment:
    """Task ``task`` (0-based) of round ``round`` (0-based) of job ``job`` starts at ``start`` on ``gpu``."""

    job: str
    round: int
    task: int
    gpu: str
    start: float


@dataclass(frozen=True, eq=False)
class TaskSchedule:
    """Task i is task ``task[i]`` of round ``round[i]`` of job ``job_ids[job[i]]``; it starts at
    ``start[i]`` on GPU ``gpu_ids[gpu[i]]``. The id tables may name jobs or GPUs the instance
    does not have (a schedule read from a file): the validator says so."""

    job_ids: tuple[str, ...]
    gpu_ids: tuple[str, ...]
    job: np.ndarray  # int32, index into job_ids
    round: np.ndarray  # int64
    task: np.ndarray  # int64
    gpu: np.ndarray  # int32, index into gpu_ids
    start: np.ndarray  # float64
    instance: str = ""
    instance_hash: str = ""

    def __post_init__(self) -> None:
        cols = {
            "job": (self.job, np.int32),
            "round": (self.round, np.int64),
            "task": (self.task, np.int64),
            "gpu": (self.gpu, np.int32),
            "start": (self.start, np.float64),
        }
        n = len(self.start)
        for name, (col, dtype) in cols.items():
            col = np.ascontiguousarray(col, dtype=dtype).view()  # read-only; the caller's stays
            if col.ndim != 1 or len(col) != n:
                raise HetschedError(f"TaskSchedule.{name}: {col.shape} tasks, start has {n}")
            col.flags.writeable = False
            object.__setattr__(self, name, col)
        object.__setattr__(self, "job_ids", tuple(self.job_ids))
        object.__setattr__(self, "gpu_ids", tuple(self.gpu_ids))

    @classmethod
    def of(
        cls, assignments: Iterable[TaskAssignment], instance: str = "", instance_hash: str = ""
    ) -> TaskSchedule:
        """The schedule of these records, in this order."""
        rows = list(assignments)
        jobs: dict[str, int] = {}
        gpus: dict[str, int] = {}
        for a in rows:
            jobs.setdefault(a.job, len(jobs))
            gpus.setdefault(a.gpu, len(gpus))
        return cls(
            tuple(jobs),
            tuple(gpus),
            np.fromiter((jobs[a.job] for a in rows), np.int32, len(rows)),
            np.fromiter((a.round for a in rows), np.int64, len(rows)),
            np.fromiter((a.task for a in rows), np.int64, len(rows)),
            np.fromiter((gpus[a.gpu] for a in rows), np.int32, len(rows)),
            np.fromiter((a.start for a in rows), np.float64, len(rows)),
            instance,
            instance_hash,
        )

    def __len__(self) -> int:
        return len(self.start)

    def __eq__(self, other: object) -> bool:
        """The same tasks in the same order, for the same instance (id tables may differ)."""
        if not isinstance(other, TaskSchedule):
            return NotImplemented
        if (self.instance, self.instance_hash, len(self)) != (
            other.instance,
            other.instance_hash,
            len(other),
        ):
            return False
        if (self.job_ids, self.gpu_ids) != (other.job_ids, other.gpu_ids):
            return self.assignments == other.assignments
        return all(
            np.array_equal(getattr(self, c), getattr(other, c))
            for c in ("job", "round", "task", "gpu", "start")
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TaskSchedule({len(self)} tasks, instance={self.instance!r})"

    @cached_property
    def assignments(self) -> tuple[TaskAssignment, ...]:
        """The tasks as records, in the schedule's order (for small schedules: ~400 B a task)."""
        jobs, gpus = self.job_ids, self.gpu_ids
        return tuple(
            TaskAssignment(jobs[n], r, k, gpus[g], s)
            for n, r, k, g, s in zip(
                self.job.tolist(),
                self.round.tolist(),
                self.task.tolist(),
                self.gpu.tolist(),
                self.start.tolist(),
            )
        )

    def sorted_order(self) -> np.ndarray:
        """Task indices by (job id, round, task, GPU id, start): the order of the JSON form."""
        job_rank = np.argsort(np.argsort(np.array(self.job_ids, dtype=object), kind="stable"))
        gpu_rank = np.argsort(np.argsort(np.array(self.gpu_ids, dtype=object), kind="stable"))
        keys = (self.start, gpu_rank[self.gpu], self.task, self.round, job_rank[self.job])
        return np.lexsort(keys) if len(self) else np.zeros(0, dtype=np.int64)

    def rows(self, block: int = 1 << 16) -> Iterator[dict[str, Any]]:
        """The JSON rows in :meth:`sorted_order`, built a block at a time."""
        order = self.sorted_order()
        jobs, gpus = self.job_ids, self.gpu_ids
        for i in range(0, len(order), block):
            o = order[i : i + block]
            for n, r, k, g, s in zip(
                self.job[o].tolist(),
                self.round[o].tolist(),
                self.task[o].tolist(),
                self.gpu[o].tolist(),
                self.start[o].tolist(),
            ):
                yield {"job": jobs[n], "round": r, "task": k, "gpu": gpus[g], "start": s}

    def to_dict(self, lazy: bool = False) -> dict[str, Any]:
        """The JSON form; ``lazy``: the assignments as an iterator of rows, for
        :func:`hetsched.core.jsonio.write_json` to stream (no list of a million dicts)."""
        rows = self.rows()
        return {
            "format": FORMAT,
            "instance": self.instance,
            "instance_hash": self.instance_hash,
            "assignments": rows if lazy else list(rows),
        }


def schedule_from_dict(data: Any, source: str = "<solution>") -> TaskSchedule:
    """Read a schedule from its JSON form; malformed input raises :class:`InputError`."""
    if not isinstance(data, dict):
        raise InputError(source, "$", f"must be an object (got {type(data).__name__})")
    if isinstance(data.get("solution"), dict) and "assignments" not in data:
        data, base = data["solution"], "$.solution"  # accept the output of `hetsched solve --json`
    else:
        base = "$"
    items = data.get("assignments")
    if not isinstance(items, list):
        raise InputError(source, f"{base}.assignments", "missing or not an array")
    out = []
    for i, a in enumerate(items):
        p = f"{base}.assignments[{i}]"
        if not isinstance(a, dict):
            raise InputError(source, p, "must be an object")
        for key, kinds in (
            ("job", str),
            ("gpu", str),
            ("round", int),
            ("task", int),
            ("start", (int, float)),
        ):
            if key not in a:
                raise InputError(source, f"{p}", f"missing required field '{key}'")
            if not isinstance(a[key], kinds) or isinstance(a[key], bool):
                raise InputError(source, f"{p}.{key}", f"wrong type (got {json.dumps(a[key])})")
        for key in ("round", "task"):
            if not _INT64.min <= a[key] <= _INT64.max:
                raise InputError(source, f"{p}.{key}", f"out of range (got {a[key]})")
        try:
            start = float(a["start"])
        except OverflowError:
            raise InputError(source, f"{p}.start", "out of range (not a finite float)") from None
        out.append(TaskAssignment(a["job"], a["round"], a["task"], a["gpu"], start))
    return TaskSchedule.of(out, str(data.get("instance", "")), str(data.get("instance_hash", "")))


def schedule_from_round_starts(
    view: Any,
    starts: dict[tuple[int, int], list[tuple[float, int]]],
    instance_name: str = "",
    instance_hash: str = "",
) -> TaskSchedule:
    """A task schedule from each round's (start in seconds, GPU index) pairs (``view``: a
    :class:`~hetsched.hare.view.HareView`, for its job and GPU ids).

    Formulations that count the identical tasks of a round instead of naming them use this:
    the tasks of round r of job n are numbered in start order (ties by GPU).
    """
    cols: tuple[list, ...] = ([], [], [], [], [])
    for (n, r), used in starts.items():
        for k, (start, g) in enumerate(sorted(used)):
            for col, value in zip(cols, (n, r, k, g, float(start))):
                col.append(value)
    return TaskSchedule(view.job_ids, view.gpu_ids, *cols, instance_name, instance_hash)
