"""The one resumable run store: a JSON-lines file, one finished run per line, appended the
moment the run ends.

A run is identified by the values of some of its fields (the store's ``key``); a rerun asks the
store what is done and computes only the rest. A killed writer leaves at most one partial last
line: it is dropped on open (that run is recomputed), never read as a result. A line that is
not a JSON object means the file is not a run store: one :class:`~hetsched.core.errors.InputError`
naming the file and the line.

A store may hold the *settings* its runs were made with (what changes a run's result but is not
part of its key): its first line is then ``{"run_store_settings": {...}}``, and opening it with
other settings is an input error that names the first setting that differs, so that one store
never mixes runs of two settings. A process that fills a store holds :meth:`RunStore.writer`:
a second one is refused at once instead of running every missing run again beside it.

Used by the sweeps (``sweep/runner.py``), the audits (``trials.jsonl``), ``simulate`` /
``compare`` and the shortcut simulators (``runs.jsonl`` beside the per-job CSVs) and the
exact benchmarks (``bench-results/*.jsonl``).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from hetsched.core.errors import InputError


def _frozen(value: Any) -> Any:
    """A key value as a hashable one (a JSON list becomes a tuple)."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


class RunStore:
    """Finished runs keyed by the fields ``key`` (``store.get((a, b))``, ``(a, b) in store``);
    a later row with the same key replaces an earlier one."""

    #: the first line's field that holds a store's settings
    SETTINGS = "run_store_settings"

    def __init__(
        self, path: str | Path, key: Sequence[str], settings: Mapping[str, Any] | None = None
    ) -> None:
        self.path = Path(path)
        self.key = tuple(key)
        self.settings = None if settings is None else json.loads(json.dumps(dict(settings)))
        self._stored_settings: dict[str, Any] | None = None
        self._rows: dict[tuple, dict[str, Any]] = {}
        if self.path.exists():
            self._load()
        if self.settings is not None:
            self._check_settings()

    def _check_settings(self) -> None:
        """Refuse settings other than the stored ones; give a store without any these."""
        stored = self._stored_settings
        if stored is None:
            self._write_header()
            return
        for name in sorted(set(stored) | set(self.settings)):
            was, now = stored.get(name), self.settings.get(name)
            if was != now:
                raise InputError(
                    str(self.path),
                    None,
                    f"its runs were made with {name} = {json.dumps(was)}, not {json.dumps(now)}: "
                    "rerun with the stored settings to resume, or write to a new store "
                    "(another --out, or delete this one)",
                )

    def _write_header(self) -> None:
        """Put the settings line first (a store from before settings keeps its runs after it)."""
        from hetsched.core.files import write_text_atomic

        body = self.path.read_text(encoding="utf-8") if self.path.exists() else ""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.path, json.dumps({self.SETTINGS: self.settings}) + "\n" + body)
        self._stored_settings = dict(self.settings)

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
            if n == 1 and set(row) == {self.SETTINGS}:
                self._stored_settings = row[self.SETTINGS]
                continue
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

    @contextmanager
    def writer(self) -> Iterator[RunStore]:
        """Hold the store while this process fills it: a second process that asks is refused at
        once (an :class:`InputError`), so two never run the same missing runs; the rows are read
        again once the lock is held. The lock is the operating system's (``flock`` on the file),
        released when the block ends or the process dies."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock
            yield self
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise InputError(
                    str(self.path),
                    None,
                    "another process is filling this run store now: wait for it to end, "
                    "or write to another store (another --out)",
                ) from None
            self._rows.clear()  # what another writer stored before we got the lock counts
            self._load()
            try:
                yield self
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def add(self, row: dict[str, Any]) -> None:
        """Append one finished run; it is in the file (flushed) when this returns."""
        line = json.dumps(row, default=str) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line)
        self._rows[self.key_of(row)] = row
