"""Run a sweep: the runs not yet in the store go to an executor, each result is stored the moment
it arrives, a progress bar counts them.

Executors: ``local`` (a process pool of ``workers`` processes; default) or ``dask`` (a Dask
distributed cluster at ``scheduler``, e.g. ``tcp://10.0.0.1:8786``; ``pip install
'hetsched[dask]'``). Either way the workers run the ``run`` function they are given (hetsched's:
:func:`hetsched.sweep.tasks.run_task`, which also composes the two) and the store is written by
this process only. This module knows nothing of the methods it runs."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from hetsched.core.errors import InputError
from hetsched.core.executors import check_executor, parallel_map
from hetsched.sweep.spec import SweepSpec, Task
from hetsched.sweep.store import open_store


@dataclass
class SweepReport:
    name: str
    store: str
    total: int
    already: int  # runs found in the store (not recomputed)
    ran: int  # runs finished now
    statuses: dict[str, int] = field(default_factory=dict)  # over all stored runs of this spec

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


RunTask = Callable[[Task], dict[str, Any]]


def execute(
    spec: SweepSpec,
    run: RunTask,
    executor: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    limit: int | None = None,
) -> SweepReport:
    """Run the spec's missing runs (at most ``limit`` of them) with ``run`` (a module-level
    function: workers unpickle it) and return counts."""
    check_executor(executor, scheduler)
    tasks = spec.tasks()
    try:  # the store is the sweep's output: one that cannot be written is the spec's error
        spec.store.parent.mkdir(parents=True, exist_ok=True)
        with spec.store.open("a", encoding="utf-8"):
            pass
    except OSError as e:
        raise InputError(
            spec.path.name, "sweep.store", f"cannot write {spec.store}: {e.strerror or e}"
        ) from None
    store = open_store(spec.store)
    with store.writer():  # a second sweep on this store is refused, never run beside it
        missing = [t for t in tasks if (t.key,) not in store]
        todo = missing if limit is None else missing[:limit]
        already = len(tasks) - len(missing)
        bar = _bar(len(tasks), already, spec.name, progress)
        try:
            rows = parallel_map(
                run, todo, executor, workers, scheduler, key=lambda t: f"hetsched-run-{t.key}"
            )
            for row in rows:
                store.add({**row, "finished_at": time.time()})
                bar.update(1)
                bar.set_postfix_str(f"{row['method']} {row['status']}", refresh=False)
        finally:
            bar.close()
    keys = {t.key for t in tasks}
    statuses = Counter(r["status"] for r in store.rows() if r["key"] in keys)
    return SweepReport(spec.name, str(spec.store), len(tasks), already, len(todo), dict(statuses))


def _bar(total: int, initial: int, name: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(
        total=total, initial=initial, desc=name, unit="run", disable=not enabled, dynamic_ncols=True
    )
