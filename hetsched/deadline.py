"""A time limit on Python code that has no time limit of its own (a Pyomo model build).

Solvers honour their time limits; building a large Pyomo model does not check the clock. Inside
:func:`deadline` a POSIX interval timer interrupts the main thread at the limit with
:class:`BuildTimeout`. Elsewhere (another thread, Windows) the block runs unbounded, as before.
"""

from __future__ import annotations

import logging
import signal
import threading
from contextlib import contextmanager
from typing import Iterator


class BuildTimeout(BaseException):
    """The block did not finish within its deadline. A BaseException, as KeyboardInterrupt is,
    so that the ``except Exception`` of the code it interrupts does not swallow it."""


def grace(time_limit: float) -> float:
    """How long past its time limit a solver may take to stop and hand back its result before a
    deadline interrupts: the solver itself stops at the limit; the deadline catches the Python
    work around it (building the model, passing it to the solver)."""
    return 1.0 + 0.05 * float(time_limit)


def _not_the_timeout(record: logging.LogRecord) -> bool:
    """Pyomo logs an exception raised inside a component rule before re-raising it: not this one."""
    return "BuildTimeout" not in record.getMessage() and not (
        record.exc_info and isinstance(record.exc_info[1], BuildTimeout)
    )


@contextmanager
def deadline(seconds: float | None, quiet: tuple[str, ...] = ("pyomo",)) -> Iterator[None]:
    """Raise :class:`BuildTimeout` in the block once ``seconds`` of wall time pass (None: no
    limit); the handlers of the ``quiet`` loggers drop their reports of that exception. Not
    reentrant: one deadline at a time (``solve`` holds it only around the build and hand-over)."""
    usable = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def fire(signum, frame):
        raise BuildTimeout(f"not finished within {seconds:g} s")

    handlers = [h for name in quiet for h in logging.getLogger(name).handlers]
    for h in handlers:
        h.addFilter(_not_the_timeout)
    previous = signal.signal(signal.SIGALRM, fire)
    # and again every 0.5 s until the block ends, in case a handler swallowed the first one
    signal.setitimer(signal.ITIMER_REAL, max(float(seconds), 1e-3), 0.5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        for h in handlers:
            h.removeFilter(_not_the_timeout)
