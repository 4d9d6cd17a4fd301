"""The one resumable run store: a JSON-lines file, one finished run per line, appended the
moment the run ends.

A run is identified by the values of some of its fields (the store's ``key``); a rerun asks the
store what is done and computes only the rest. A killed writer leaves at most one partial last
line: it is dropped on open (that run is recomputed), never read as a result. A line that is
not a JSON object means the file is not a run store: one :class:`~hetsched.errors.InputError`
naming the file and the line.

Used by the sweeps (``sweep/runner.py``), the audits (``trials.jsonl``), ``simulate`` /
``compare`` and the shortcut simulators (``runs.jsonl`` beside the per-job CSVs) and the
exact benchmarks (``bench-results/*.jsonl``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Sequence

from hetsched.errors import InputError


def _frozen(value: Any) -> Any:
    """A key value as a hashable one (a JSON list becomes a tuple)."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


class RunStore:
    """Finished runs keyed by the fields ``key`` (``store.get((a, b))``, ``(a, b) in store``);
    a later row with the same key replaces an earlier one."""

    def __init__(self, path: str | Path, key: Sequence[str]) -> None:
        self.path = Path(path)
        self.key = tuple(key)
        self._rows: dict[tuple, dict[str, Any]] = {}
        if self.path.exists():
            self._load()

    def key_of(self, row: dict[str, Any]) -> tuple:
        """The key of a row: its values of the key fields (None where a field is absent)."""
        return tuple(_frozen(row.get(f)) for f in self.key)

    def _load(self) -> None:
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):  # a writer killed mid-line: drop the partial run
            with self.path.open("r+b") as f:
                f.truncate(end)
        for n, line in enumerate(data[:end].splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (ValueError, UnicodeDecodeError):
                row = None
            if not isinstance(row, dict):
                raise InputError(
                    str(self.path), f"line {n}", "not a JSON object: not a hetsched run store"
                )
            self._rows[self.key_of(row)] = row

    def __contains__(self, key: tuple) -> bool:
        return tuple(key) in self._rows

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, key: tuple) -> dict[str, Any] | None:
        return self._rows.get(tuple(key))

    def keys(self) -> set[tuple]:
        return set(self._rows)

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every stored run, in the order first written."""
        return iter(list(self._rows.values()))

    def add(self, row: dict[str, Any]) -> None:
        """Append one finished run; it is in the file (flushed) when this returns."""
        line = json.dumps(row, default=str) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line)
        self._rows[self.key_of(row)] = row
