"""The JSON-lines run log the exact benchmarks share: read what is done (resume), solve one
instance into a row (wall and CPU seconds, or the error), append the row as soon as it ends."""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path
from typing import Iterable

from hetsched.instance.model import Instance
from hetsched.solve import solve


def read_runs(path: Path, key: Iterable[str]) -> dict[tuple, dict]:
    """The rows already in the log, by the values of the ``key`` fields."""
    fields = tuple(key)
    done: dict[tuple, dict] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                done[tuple(row.get(f) for f in fields)] = row
    return done


def solve_row(inst: Instance, model: str, solver: str, time_limit: float, **kwargs) -> dict:
    """One solve as a row: status, objective, bound, gap, wall and CPU seconds, the method's log;
    a method that cannot take the instance gives status ``error`` and the reason."""
    cpu = time.process_time()
    try:
        r = solve(inst, model, solver, time_limit=time_limit, **kwargs)
        row = {
            "instance": inst.name,
            "status": r.status.value,
            "objective": r.objective,
            "bound": r.bound,
            "gap": r.gap,
            "seconds": round(r.seconds, 3),
            "log": r.log,
        }
    except Exception as exc:  # a method that cannot build the model at this size
        row = {"instance": inst.name, "status": "error", "note": f"{exc.__class__.__name__}: {exc}"}
    return {
        **row,
        "cpu_seconds": round(time.process_time() - cpu, 3),
        "python": platform.python_version(),
    }


def append_run(path: Path, row: dict) -> None:
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")
