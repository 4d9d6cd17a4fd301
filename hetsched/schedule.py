"""Task schedules (Hare's x_i and y_{i,m}): each task of each round of each job -> GPU, start."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hetsched.errors import HetschedError, InputError

FORMAT = "hetsched.task_schedule/1"
# A task schedule holds one record per task. Measured at the peak of a run with its validation
# (2026-11-25): ~440 bytes per task in the task engine (fifo, 2M and 6.2M tasks: 0.9 and 2.6 GB)
# and ~400 in `heuristic`. Past this many tasks (~4.5 GB) a method that builds one would not fit a
# workstation's memory, so it refuses up front; 100,000 jobs of `gavel-poisson` (6.2M) fit.
MAX_SCHEDULE_TASKS = 10_000_000


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


@dataclass(frozen=True)
class TaskSchedule:
    assignments: tuple[TaskAssignment, ...]
    instance: str = ""
    instance_hash: str = ""

    def to_dict(self, lazy: bool = False) -> dict[str, Any]:
        """The JSON form; ``lazy``: the assignments as an iterator of rows, for
        :func:`hetsched.jsonout.write_json` to stream (no list of a million dicts)."""
        rows = (
            {"job": a.job, "round": a.round, "task": a.task, "gpu": a.gpu, "start": a.start}
            for a in sorted(self.assignments)
        )
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
        out.append(TaskAssignment(a["job"], a["round"], a["task"], a["gpu"], float(a["start"])))
    return TaskSchedule(
        tuple(out), str(data.get("instance", "")), str(data.get("instance_hash", ""))
    )


def schedule_from_round_starts(
    view: Any,
    starts: dict[tuple[int, int], list[tuple[float, int]]],
    instance_name: str = "",
    instance_hash: str = "",
) -> TaskSchedule:
    """A task schedule from each round's (start in seconds, GPU index) pairs (``view``: a
    :class:`~hetsched.instance.hare_view.HareView`, for its job and GPU ids).

    Formulations that count the identical tasks of a round instead of naming them use this:
    the tasks of round r of job n are numbered in start order (ties by GPU).
    """
    out = []
    for (n, r), used in starts.items():
        for k, (start, g) in enumerate(sorted(used)):
            out.append(TaskAssignment(view.job_ids[n], r, k, view.gpu_ids[g], float(start)))
    return TaskSchedule(tuple(out), instance_name, instance_hash)
