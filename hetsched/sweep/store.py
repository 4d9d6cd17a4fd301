"""The sweep's result store: one SQLite file, one row per finished run, committed as each run
ends (a killed sweep keeps every finished run). The key of a run is a hash of its method, the
instance's content hash (or workload), its seed, time limit and threads: a rerun skips keys that
are already stored, and an edited instance gets new keys."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterator

from hetsched.errors import InputError

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    method TEXT NOT NULL,
    instance TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    objective REAL,
    bound REAL,
    gap REAL,
    valid INTEGER,
    seconds REAL,
    payload TEXT NOT NULL,
    finished_at REAL NOT NULL
)
"""
COLUMNS = (
    "key",
    "method",
    "instance",
    "seed",
    "status",
    "objective",
    "bound",
    "gap",
    "valid",
    "seconds",
    "payload",
    "finished_at",
)


class ResultStore:
    """Append-only store of run rows (``with ResultStore(path) as store: ...``)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=30)
            self._db.execute(
                "PRAGMA journal_mode=WAL"
            )  # a reader (a notebook) may look while a sweep writes
            self._db.execute(SCHEMA)
            self._db.commit()
        except sqlite3.DatabaseError as exc:  # a file that is not a store of ours: the user's input
            raise InputError(
                self.path.name, None, f"not a hetsched run store (SQLite): {exc}"
            ) from None

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def keys(self) -> set[str]:
        return {k for (k,) in self._db.execute("SELECT key FROM results")}

    def add(self, row: dict[str, Any]) -> None:
        """Store one finished run and commit at once."""
        values = dict(
            row,
            payload=json.dumps(row.get("payload", {}), default=str),
            valid=None if row.get("valid") is None else int(bool(row["valid"])),
            finished_at=time.time(),
        )
        self._db.execute(
            f"INSERT OR IGNORE INTO results ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
            [values.get(c) for c in COLUMNS],
        )
        self._db.commit()

    def rows(self) -> Iterator[dict[str, Any]]:
        for values in self._db.execute(
            f"SELECT {', '.join(COLUMNS)} FROM results ORDER BY finished_at, key"
        ):
            row = dict(zip(COLUMNS, values))
            row["payload"] = json.loads(row["payload"])
            row["valid"] = None if row["valid"] is None else bool(row["valid"])
            yield row
