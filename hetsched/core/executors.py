"""Where independent runs execute: the sweep's and the audit's one pool.

``local``: a process pool of ``workers`` processes (spawned: solver libraries hold threads and
must never be forked; :class:`concurrent.futures.ProcessPoolExecutor`, which, unlike
``multiprocessing.Pool``, does not hang when a worker dies under it, e.g. from a SIGTERM sent to
the whole process group by a batch scheduler); ``dask``: a Dask distributed cluster at ``scheduler`` (e.g.
``tcp://10.0.0.1:8786``; ``pip install 'hetsched[dask]'``). :func:`parallel_map` yields each
result as it finishes, in any order; the caller stores it and restores any order it needs. A
SIGINT/SIGTERM or an error stops every worker at once."""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import Any, Callable, Iterable, Iterator

from hetsched.core.children import leave_sigint_to_the_parent
from hetsched.core.errors import HetschedError

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
    (a module-level function, or a partial of one); ``key(item)`` names a Dask task. One pool
    for this call; a caller that maps many times opens a :class:`WorkerPool` once."""
    todo = list(items)
    if not todo:
        check_executor(executor, scheduler)
        return
    n = workers or max(1, min(len(todo), os.cpu_count() or 1))
    with WorkerPool(executor, n, scheduler) as pool:
        yield from pool.map(fn, todo, key)


REAP_SECONDS = 5.0  # how long stop() waits for the killed workers to be reaped


def _reap(workers: list, seconds: float) -> None:
    """Wait until every killed worker is reaped, for at most ``seconds``, so that none outlives
    the pool as a zombie. ``join(timeout)`` alone is not enough: it waits on the worker's pipe,
    which a killed process closes before the kernel lets it be reaped, so it can return with
    the process still there (seen as a flaky test on a loaded machine)."""
    deadline = time.monotonic() + seconds
    for proc in workers:
        proc.join(timeout=max(0.0, deadline - time.monotonic()))
        while proc.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)


class WorkerPool:
    """The processes (``local``) or the Dask client (``dask``) of many maps, started once: a
    spawned worker imports the solver stack (about a second), which a pool per map would pay on
    every batch. Leaving the ``with`` block normally closes the pool; an exception (SIGINT,
    SIGTERM, an error, a caller that stops reading) stops every worker at once."""

    def __init__(
        self, executor: str = "local", workers: int | None = None, scheduler: str | None = None
    ) -> None:
        check_executor(executor, scheduler)
        self.executor, self.workers, self.scheduler = executor, workers, scheduler
        self._pool: Any = None
        self._client: Any = None

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._pool is not None:
            if exc_type is None:
                self._pool.shutdown(wait=True, cancel_futures=True)
            else:  # stop every worker now; what is stored stays stored
                self.stop()
        if self._client is not None:
            self._client.close()

    def stop(self) -> None:
        """Kill every local worker now (an error, a signal, or a task past its deadline)."""
        if self._pool is None:
            return
        # the executor has no public kill (3.14 adds terminate_workers): its processes,
        # read before shutdown forgets them
        workers = list((getattr(self._pool, "_processes", None) or {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for proc in workers:
            proc.kill()
        _reap(workers, REAP_SECONDS)
        self._pool = None

    def submit(self, fn: Callable[[Any], Any], item: Any) -> Future:
        """fn(item) on a local worker, as a future the caller polls (``done()``) or waits for."""
        if self.executor != "local":
            raise HetschedError("submit() runs on local workers only")
        return self._local().submit(fn, item)

    def _local(self) -> ProcessPoolExecutor:
        if self._pool is None:
            n = self.workers or max(1, os.cpu_count() or 1)
            self._pool = ProcessPoolExecutor(
                max_workers=n,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=leave_sigint_to_the_parent,
            )
        return self._pool

    def map(
        self,
        fn: Callable[[Any], Any],
        items: Iterable[Any],
        key: Callable[[Any], str] | None = None,
    ) -> Iterator[Any]:
        """fn(item) for every item, yielded as they finish (in any order)."""
        todo = list(items)
        if not todo:
            return
        if self.executor == "dask":
            yield from self._dask(fn, todo, key or (lambda item: str(id(item))))
        else:
            pool = self._local()
            futures = [pool.submit(fn, item) for item in todo]
            for done in as_completed(futures):
                yield done.result()

    def _dask(self, fn: Callable, todo: list, key: Callable) -> Iterator[Any]:
        try:
            from distributed import Client
            from distributed import as_completed as dask_completed
        except ImportError:
            raise HetschedError(
                "--executor dask needs Dask distributed (pip install 'hetsched[dask]')"
            ) from None
        if self._client is None:
            try:
                self._client = Client(self.scheduler, timeout="20s")
            except OSError as e:
                raise HetschedError(
                    f"cannot reach the Dask scheduler at {self.scheduler} ({e})"
                ) from None
        futures = [self._client.submit(fn, item, key=key(item), pure=False) for item in todo]
        for f in dask_completed(futures):
            yield f.result()
