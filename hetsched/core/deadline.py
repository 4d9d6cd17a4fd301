"""A time limit on Python code that has no time limit of its own (a Pyomo model build, a
simulation).

Solvers honour their time limits; building a large Pyomo model does not check the clock. Inside
:func:`deadline` a POSIX interval timer interrupts the main thread at the limit with
:class:`BuildTimeout`. Elsewhere (another thread, Windows) the block runs unbounded, as before.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator


class DeadlinePassed(BaseException):
    """A block did not finish within its deadline. A BaseException, as KeyboardInterrupt is, so
    that the ``except Exception`` of the code it interrupts does not swallow it."""


class BuildTimeout(DeadlinePassed):
    """Building a model (or handing it to a solver) did not finish within its time limit."""


class RunTimeout(DeadlinePassed):
    """A simulation did not finish within its time limit: another class than
    :class:`BuildTimeout`, so that a solve inside the run (which turns its own BuildTimeout into
    a time-limit result) does not swallow the run's."""


def grace(time_limit: float) -> float:
    """How long past its time limit a solver may take to stop and hand back its result before a
    deadline interrupts: the solver itself stops at the limit; the deadline catches the Python
    work around it (building the model, passing it to the solver)."""
    return 1.0 + 0.05 * float(time_limit)


def _not_the_timeout(record: logging.LogRecord) -> bool:
    """Pyomo logs an exception raised inside a component rule before re-raising it: not this one."""
    message = record.getMessage()
    return (
        "BuildTimeout" not in message
        and "RunTimeout" not in message
        and not (record.exc_info and isinstance(record.exc_info[1], DeadlinePassed))
    )


IMPORT_RETRY = 0.02  # seconds: how often a deadline due inside an import looks again


def importing(frame) -> bool:
    """Whether ``frame`` (where a signal interrupted the main thread) runs inside an import.

    An exception raised in a module's top level leaves the modules it was importing half-made
    in ``sys.modules`` for good: after a time limit that fell in numba's first import (over a
    second on a loaded machine), every later use of numba in the process failed ("partially
    initialized module 'numba.core.types'"). An import ends on its own, so a deadline waits
    for it."""
    while frame is not None:
        if frame.f_globals.get("__name__") == "importlib._bootstrap":
            return True
        frame = frame.f_back
    return False


@contextmanager
def deadline(
    seconds: float | None,
    quiet: tuple[str, ...] = ("pyomo",),
    exception: type[BaseException] = BuildTimeout,
) -> Iterator[None]:
    """Raise ``exception`` (:class:`BuildTimeout`) in the block once ``seconds`` of wall time
    pass (None: no limit); the handlers of the ``quiet`` loggers drop their reports of it.

    Deadlines nest: inside another deadline (a simulation's, around a policy that solves a
    model each round) the inner one raises its own exception at its own limit, the outer one
    raises the outer exception at the outer limit even in the middle of the inner block, and
    the outer timer runs on after the inner block ends. Another program's timer (an embedding
    application's) is honoured the same way: its handler gets its alarm, once if one-shot.

    An ordinary exception (an ``Exception``) that leaves the block after ours was raised is
    ours, replaced: C code the handler interrupted may report its own error in its place. It
    leaves as ``exception``, with the replacing one as its cause. A deadline due inside an
    import is raised when the import is done (:func:`importing`)."""
    usable = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return
    now = time.monotonic()
    # 0: no enclosing timer; an enclosing deadline's repeats (every 0.5 s), a one-shot one not
    outer_left, outer_every = signal.getitimer(signal.ITIMER_REAL)
    outer_end = now + outer_left if outer_left > 0 else None
    own_end = now + float(seconds)

    passed_on = False  # a one-shot enclosing timer's alarm is passed on once
    fired = False  # whether our exception was raised (or deferred) in the block

    def fire(signum, frame):
        nonlocal passed_on, fired
        now = time.monotonic()
        outer_due = outer_end is not None and now >= outer_end and callable(previous)
        if outer_due and not (passed_on and outer_every == 0):
            passed_on = True
            previous(signum, frame)  # the enclosing deadline's raises its own exception
        if now >= own_end - 0.05:
            if importing(frame):  # not inside an import: it would leave a module half-made
                signal.setitimer(signal.ITIMER_REAL, IMPORT_RETRY, 0.5)
                return
            fired = True
            raise_or_defer(exception(f"not finished within {seconds:g} s"))
            return
        # the alarm was someone else's: ours is next
        signal.setitimer(signal.ITIMER_REAL, max(own_end - now, 1e-3), 0.5)

    def unraisable(report) -> None:
        """Where an exception cannot propagate (a garbage-collector callback or a ``__del__``
        that the signal interrupted), Python would print it: say nothing, the timer fires
        again in 0.5 s."""
        if not isinstance(report.exc_value, DeadlinePassed):
            previous_hook(report)

    handlers = [h for name in quiet for h in logging.getLogger(name).handlers]
    for h in handlers:
        h.addFilter(_not_the_timeout)
    previous_hook, sys.unraisablehook = sys.unraisablehook, unraisable
    previous = signal.signal(signal.SIGALRM, fire)
    first = float(seconds) if outer_end is None else min(float(seconds), outer_left)
    # and again every 0.5 s until the block ends, in case a handler swallowed the first one
    signal.setitimer(signal.ITIMER_REAL, max(first, 1e-3), 0.5)
    try:
        yield
    except Exception as replaced:
        if not fired:
            raise
        # C code that the handler interrupted put its own error in ours' place (numpy's
        # structured-array comparison turns any error into "Cannot compare structured arrays"):
        # the block ran out of time all the same
        raise exception(f"not finished within {seconds:g} s") from replaced
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.unraisablehook = previous_hook
        left = None if outer_end is None else outer_end - time.monotonic()
        if left is not None and (left > 0 or outer_every > 0):  # the enclosing timer runs on
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-3), outer_every)
        for h in handlers:
            h.removeFilter(_not_the_timeout)


class _Holds:
    """The main thread's count of :func:`signals_held` blocks it is in, and the exceptions the
    signal handlers deferred meanwhile. Signal handlers are process-wide and run in the main
    thread, so this is one object per process, like the handlers themselves."""

    def __init__(self) -> None:
        self.depth = 0
        self.deferred: list[BaseException] = []
        self.compiling = 0  # numba compilations under way in the main thread
        self.watching = False  # whether the compile listener is registered (once a process)


_HOLDS = _Holds()


def _watch_compiles() -> None:
    """Count numba's compilations in the main thread (its ``numba:compile`` events), once a
    process: a kernel's first call compiles it, in Python, for seconds (32 s for ``hetsched
    online`` from a fresh wheel in the clean-clone CI, which sent SIGTERM 8 s in and waited 24 s
    for the compile and the run), and an exception raised there is no hazard."""
    if _HOLDS.watching:
        return
    from numba.core import event

    class _Compiling(event.Listener):
        def on_start(self, ev) -> None:
            if threading.current_thread() is threading.main_thread():
                _HOLDS.compiling += 1

        def on_end(self, ev) -> None:
            if threading.current_thread() is threading.main_thread():
                _HOLDS.compiling -= 1

    event.register("numba:compile", _Compiling())
    _HOLDS.watching = True


def raise_or_defer(exc: BaseException) -> None:
    """For a signal handler: raise ``exc`` now or, inside :func:`signals_held` while compiled
    code runs, as soon as it returns (while numba compiles a kernel, now)."""
    if _HOLDS.depth > 0 and not _HOLDS.compiling:
        _HOLDS.deferred.append(exc)
        return
    raise exc


REDELIVER_AFTER = 0.05  # seconds before a swallowed signal is delivered again


@contextmanager
def swallowed_signals_redelivered(signals: dict[type[BaseException], int]) -> Iterator[None]:
    """Inside the block, a signal handler's exception that Python swallowed is delivered again.

    Python cannot propagate an exception raised in a ``__del__``, a weakref callback or the
    garbage collector's callbacks: it reports it to ``sys.unraisablehook`` and goes on. A
    SIGTERM or Ctrl-C landing there (a Pyomo model or a HiGHS object being freed) was lost,
    and the command ran to its end (the clean-clone CI saw `hetsched compare philly` run on a
    minute past its SIGTERM). Here such an exception, an instance of a key of ``signals``
    (checked in order), is not printed; a moment later another thread sends that signal to the
    main thread again (``pthread_kill``: a real signal, so that a blocking wait there is
    interrupted too), whose handler then runs outside the ``__del__`` in all but a pathological
    case (then once more)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous_hook = sys.unraisablehook
    active = [True]

    main = threading.main_thread().ident

    def again(signum: int) -> None:
        if active[0] and main is not None:
            signal.pthread_kill(main, signum)

    def hook(report) -> None:
        signum = next(
            (n for kind, n in signals.items() if isinstance(report.exc_value, kind)), None
        )
        if signum is None or not active[0]:
            previous_hook(report)
            return
        timer = threading.Timer(REDELIVER_AFTER, again, (signum,))
        timer.daemon = True
        timer.start()

    sys.unraisablehook = hook
    try:
        yield
    finally:
        active[0] = False
        sys.unraisablehook = previous_hook


def signal_pending() -> bool:
    """Whether a handler deferred an exception inside :func:`signals_held`: for a long kernel's
    poll (in object mode), which then stops so that the exception is raised soon."""
    return bool(_HOLDS.deferred)


def signals_held() -> "_SignalsHeld":
    """Run compiled code (a numba kernel) with the signal handlers' exceptions held back until
    it returns.

    A handler that raises (a deadline's :class:`DeadlinePassed`, the command line's interrupt
    and terminate) cannot stop compiled code. CPython runs the handler where the kernel next
    touches the interpreter (its arguments' types, a call to object mode, its result), and an
    exception raised there comes back as a ``SystemError``: an internal error where a time limit
    or a Ctrl-C was meant. Blocking the signals is not enough, since another thread (a test
    runner's, a library's) then takes the signal and the handler still runs in the main thread.
    So the handlers defer (:func:`raise_or_defer`) and the first deferred exception is raised
    here when the block ends. For kernels that return within a fraction of a second (a slot of
    Hadar's searches); a kernel that runs as long as its own time limit also polls
    :func:`signal_pending` and stops (the Hare dispatch search). A kernel's first call compiles
    it, in Python: an exception is raised there at once (:func:`_watch_compiles`). Every kernel
    compiled with :func:`hetsched.core.compiled.kernel` enters this block on each call from
    Python by itself; a block here is for Python work that must not be cut between calls."""
    return _SIGNALS_HELD


class _SignalsHeld:
    """:func:`signals_held`'s context manager: a class, not a generator, since Hadar's slots
    enter it several times each (a generator-based one cost 4 us an entry); the count of open
    blocks is process state (``_HOLDS``), so one instance serves every block, nested or not."""

    __slots__ = ()

    def __enter__(self) -> None:
        if _current() is _main():
            if not _HOLDS.watching:
                _watch_compiles()
            _HOLDS.depth += 1

    def __exit__(self, *exc_info) -> bool:
        if _current() is not _main():
            return False
        _HOLDS.depth -= 1
        if _HOLDS.depth == 0 and _HOLDS.deferred:
            exc = _HOLDS.deferred[0]
            _HOLDS.deferred.clear()
            raise exc
        return False


_SIGNALS_HELD = _SignalsHeld()
_current, _main = threading.current_thread, threading.main_thread
