"""Task schedule files: read (checked, one clear error per problem) and write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hetsched.core.files import atomic_path, write_text_atomic
from hetsched.core.jsonio import read_json
from hetsched.schedule.model import TaskSchedule, schedule_from_dict


def load_schedule(path: str | Path) -> TaskSchedule:
    p = Path(path)
    return schedule_from_dict(read_json(p), p.name)


def dump_schedule(schedule: TaskSchedule | Any, path: str | Path) -> None:
    """Write the schedule's JSON, one assignment a line, streamed (no list or text of the whole).
    Any other solution with a ``to_dict()`` (a placement, an allocation) is written whole."""
    if not isinstance(schedule, TaskSchedule):
        write_text_atomic(path, json.dumps(schedule.to_dict(), indent=1) + "\n")
        return
    data = schedule.to_dict(lazy=True)
    rows = data.pop("assignments")
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as f:
        f.write("{\n")
        for key, value in data.items():
            f.write(f" {json.dumps(key)}: {json.dumps(value)},\n")
        f.write(' "assignments": [')
        for k, row in enumerate(rows):
            f.write(("," if k else "") + "\n  " + json.dumps(row, allow_nan=False))
        f.write("\n ]\n}\n")
