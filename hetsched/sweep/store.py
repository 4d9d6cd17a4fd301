"""The sweep's runs in the run store (:mod:`hetsched.core.runstore`): one JSON line per finished run,
written as each run ends (a killed sweep keeps every finished run). The key of a run is a hash
of its method, the instance's content hash (or workload), its seed, time limit and threads: a
rerun skips keys that are already stored, and an edited instance gets new keys."""

from __future__ import annotations

from pathlib import Path

from hetsched.core.runstore import RunStore

#: the field that identifies a sweep run (:attr:`hetsched.sweep.spec.Task.key`)
KEY = ("key",)


def open_store(path: str | Path) -> RunStore:
    """The sweep store at ``path`` (created on the first run)."""
    return RunStore(path, KEY)
