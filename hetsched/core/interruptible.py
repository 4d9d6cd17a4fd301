"""A blocking call into a solver's C code that a signal can stop: Ctrl-C, SIGTERM or a deadline.

A solver's ``run()``/``solve()`` holds the calling thread inside C code until it returns, and
Python runs a signal's handler only between bytecodes: a ``hetsched compare`` given SIGTERM while
HiGHS solved a policy's 75 s ordering LP ran to the LP's end, a minute later (the clean-clone CI of
2026-11-27 killed it), and CP-SAT held a ``solve`` 7.6 s past its SIGTERM. So the call runs in a
thread of its own and the calling thread waits for it in Python, where the handler's exception is
raised. The solver is then asked to stop (``stop``: HiGHS's interrupt callbacks, CP-SAT's
``stop_search``) and given ``grace`` seconds; the exception is raised either way. A solver that
has not stopped by then (some HiGHS presolve reductions read no clock and call no callback) runs
on in a daemon thread until it ends; its result is never read.

Such a thread must not be running when the interpreter exits: HiGHS's static destructors then
abort the process ("terminate called without an active exception", exit 134). The command line
therefore ends with ``os._exit`` after flushing its output when :func:`runs_left` says one is
(:func:`hetsched.cli.run`).
"""

from __future__ import annotations

import threading
from typing import Any, Callable, TypeVar

T = TypeVar("T")

STOP_GRACE = 1.0  # seconds a solver gets to notice it was asked to stop before the exception
POLL = 0.1  # seconds between looks at the solver's thread (a signal interrupts the wait anyway)
THREAD_NAME = "hetsched-solver"


def call_interruptibly(
    call: Callable[[], T], stop: Callable[[], Any], grace: float = STOP_GRACE
) -> T:
    """``call()`` in a thread, waited on here: an exception raised meanwhile by a signal's
    handler calls ``stop()``, waits up to ``grace`` seconds for ``call`` to end, and propagates.
    What ``call`` raises is raised here."""
    box: dict[str, Any] = {}
    done = threading.Event()  # not Thread.join: an exception inside join can leave it stuck

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the waiting thread
            box["error"] = exc
        finally:
            done.set()

    try:  # start() included: the signal may land while it waits for the thread to run
        threading.Thread(target=target, name=THREAD_NAME, daemon=True).start()
        while not done.wait(POLL):
            pass
    except BaseException:
        stop()
        done.wait(grace)
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]


def runs_left() -> bool:
    """Whether a call that :func:`call_interruptibly` stopped waiting for is still running."""
    return any(t.name == THREAD_NAME and t.is_alive() for t in threading.enumerate())
