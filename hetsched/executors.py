"""Where independent runs execute: the sweep's and the audit's one pool.

``local``: a process pool of ``workers`` processes (spawned: solver libraries hold threads and
must never be forked); ``dask``: a Dask distributed cluster at ``scheduler`` (e.g.
``tcp://10.0.0.1:8786``; ``pip install 'hetsched[dask]'``). :func:`parallel_map` yields each
result as it finishes, in any order; the caller stores it and restores any order it needs. A
SIGINT/SIGTERM or an error stops every worker at once."""

from __future__ import annotations

import multiprocessing
import os
from typing import Any, Callable, Iterable, Iterator

from hetsched.errors import HetschedError

EXECUTORS = ("local", "dask")


def check_executor(executor: str, scheduler: str | None) -> None:
    if executor not in EXECUTORS:
        raise HetschedError(f"unknown executor '{executor}' (known: {', '.join(EXECUTORS)})")
    if executor == "dask" and not scheduler:
        raise HetschedError(
            "--executor dask needs --scheduler ADDRESS (a Dask scheduler, e.g. tcp://host:8786)"
        )


def parallel_map(
    fn: Callable[[Any], Any],
    items: Iterable[Any],
    executor: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    key: Callable[[Any], str] | None = None,
) -> Iterator[Any]:
    """fn(item) for every item on the executor, yielded as they finish. ``fn`` must be picklable
    (a module-level function, or a partial of one); ``key(item)`` names a Dask task."""
    check_executor(executor, scheduler)
    todo = list(items)
    if not todo:
        return
    if executor == "dask":
        yield from _dask(fn, todo, scheduler, key or (lambda item: str(id(item))))
    else:
        yield from _local(fn, todo, workers)


def _local(fn: Callable, todo: list, workers: int | None) -> Iterator[Any]:
    n = workers or max(1, min(len(todo), os.cpu_count() or 1))
    ctx = multiprocessing.get_context("spawn")
    pool = ctx.Pool(processes=n)
    try:
        yield from pool.imap_unordered(fn, todo)
        pool.close()
    except (
        BaseException
    ):  # SIGINT, SIGTERM (see hetsched.cli.main), an error, or the caller stopped
        pool.terminate()  # stop every worker now; what is stored stays stored
        raise
    finally:
        pool.join()


def _dask(fn: Callable, todo: list, scheduler: str | None, key: Callable) -> Iterator[Any]:
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError:
        raise HetschedError(
            "--executor dask needs Dask distributed (pip install 'hetsched[dask]')"
        ) from None
    try:
        client = Client(scheduler, timeout="20s")
    except OSError as e:
        raise HetschedError(f"cannot reach the Dask scheduler at {scheduler} ({e})") from None
    try:
        futures = [client.submit(fn, item, key=key(item), pure=False) for item in todo]
        for f in dask_completed(futures):
            yield f.result()
    finally:
        client.close()
