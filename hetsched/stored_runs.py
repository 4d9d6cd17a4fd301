"""One shortcut-simulator run kept as it finishes: a per-job CSV and the result in the run store
``runs.jsonl`` (:mod:`hetsched.runstore`) of an output directory. A rerun with the same key
reads the stored result instead of recomputing (resume)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Callable, Sequence

from hetsched.runstore import RunStore

RUNS = "runs.jsonl"


def run_or_resume(
    out: Path | None, key: str, compute: Callable[[], dict], fields: Sequence[str]
) -> dict:
    """``compute()`` unless ``out/runs.jsonl`` holds run ``key`` and its CSV is there; writes
    ``key-jobs.csv`` (the result's ``jobs`` rows, columns ``fields``) and stores the result when
    ``out`` is given."""
    if out is None:
        return compute()
    store, csv_path = RunStore(out / RUNS, ("run",)), out / f"{key}-jobs.csv"
    kept = store.get((key,))
    if kept is not None and csv_path.exists():
        return kept["result"]
    res = compute()
    out.mkdir(parents=True, exist_ok=True)
    with csv_path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(fields))
        w.writeheader()
        for row in res["jobs"]:
            w.writerow({k: row[k] for k in fields})
    store.add({"run": key, "result": res})  # last: a half-written run is recomputed
    return res
