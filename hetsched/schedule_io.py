"""Task schedule files: read (checked, one clear error per problem) and write."""

from __future__ import annotations

import json
from pathlib import Path

from hetsched.jsonfile import read_json
from hetsched.schedule import TaskSchedule, schedule_from_dict


def load_schedule(path: str | Path) -> TaskSchedule:
    p = Path(path)
    return schedule_from_dict(read_json(p), p.name)


def dump_schedule(schedule: TaskSchedule, path: str | Path) -> None:
    Path(path).write_text(json.dumps(schedule.to_dict(), indent=1) + "\n", encoding="utf-8")
