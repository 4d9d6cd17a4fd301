"""Run a sweep: the runs not yet in the store go to an executor, each result is stored the moment
it arrives, a progress bar counts them.

Executors: ``local`` (a process pool of ``workers`` processes; default) or ``dask`` (a Dask
distributed cluster at ``scheduler``, e.g. ``tcp://10.0.0.1:8786``; ``pip install
'hetsched[dask]'``). Either way the workers run the ``run`` function they are given (hetsched's:
:func:`hetsched.sweep.tasks.run_task`, which also composes the two) and the store is written by
this process only. This module knows nothing of the methods it runs."""

from __future__ import annotations

import multiprocessing
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from hetsched.errors import HetschedError
from hetsched.sweep.spec import SweepSpec, Task
from hetsched.sweep.store import ResultStore

EXECUTORS = ("local", "dask")


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
    if executor not in EXECUTORS:
        raise HetschedError(f"unknown executor '{executor}' (known: {', '.join(EXECUTORS)})")
    if executor == "dask" and not scheduler:
        raise HetschedError(
            "--executor dask needs --scheduler ADDRESS (a Dask scheduler, e.g. tcp://host:8786)"
        )
    tasks = spec.tasks()
    with ResultStore(spec.store) as store:
        done = store.keys()
        missing = [t for t in tasks if t.key not in done]
        todo = missing if limit is None else missing[:limit]
        already = len(tasks) - len(missing)
        bar = _bar(len(tasks), already, spec.name, progress)
        try:
            runner = _run_dask if executor == "dask" else _run_local
            for row in runner(run, todo, workers, scheduler):
                store.add(row)
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


def _run_local(run: RunTask, todo: list[Task], workers: int | None, scheduler: str | None):
    if not todo:
        return
    n = workers or max(1, min(len(todo), os.cpu_count() or 1))
    ctx = multiprocessing.get_context("spawn")  # solver libraries hold threads: never fork them
    pool = ctx.Pool(processes=n)
    try:
        yield from pool.imap_unordered(run, todo)
        pool.close()
    except (
        BaseException
    ):  # SIGINT, SIGTERM (see hetsched.cli.main), an error, or the caller stopped
        pool.terminate()  # stop every worker now; what is stored stays stored
        raise
    finally:
        pool.join()


def _run_dask(run: RunTask, todo: list[Task], workers: int | None, scheduler: str | None):
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError:
        raise HetschedError(
            "--executor dask needs Dask distributed (pip install 'hetsched[dask]')"
        ) from None
    if not todo:
        return
    try:
        client = Client(scheduler, timeout="20s")
    except OSError as e:
        raise HetschedError(f"cannot reach the Dask scheduler at {scheduler} ({e})") from None
    try:
        futures = [client.submit(run, t, key=f"hetsched-run-{t.key}", pure=False) for t in todo]
        for f in dask_completed(futures):
            yield f.result()
    finally:
        client.close()
