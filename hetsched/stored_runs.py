"""One simulation run kept as it finishes: a summary JSON and a per-job CSV in an output
directory. A rerun with the same key reads the JSON instead of recomputing (resume)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Callable, Sequence


def run_or_resume(
    out: Path | None, key: str, compute: Callable[[], dict], fields: Sequence[str]
) -> dict:
    """``compute()`` unless ``out/key.json`` exists; writes ``key.json`` and ``key-jobs.csv``
    (the result's ``jobs`` rows, columns ``fields``) when ``out`` is given."""
    done = out / f"{key}.json" if out else None
    if done is not None and done.exists():
        return json.loads(done.read_text())
    res = compute()
    if out is not None and done is not None:
        out.mkdir(parents=True, exist_ok=True)
        with (out / f"{key}-jobs.csv").open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(fields))
            w.writeheader()
            for row in res["jobs"]:
                w.writerow({k: row[k] for k in fields})
        done.write_text(json.dumps(res, indent=1) + "\n")  # last: a half-written run is recomputed
    return res
