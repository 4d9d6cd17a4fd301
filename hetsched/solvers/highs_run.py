"""A HiGHS run that a signal can stop: Ctrl-C, SIGTERM or a deadline while HiGHS works.

``Highs.run()`` holds the calling thread inside C code until it returns, and Python runs a
signal's handler only between bytecodes: a ``hetsched compare`` given SIGTERM while HiGHS solved
a policy's 80 s ordering LP ran to its end, a minute later (the clean-clone CI of 2026-11-27
killed it). So HiGHS runs in a thread of its own and this thread waits for it in Python, where
the handler's exception is raised. HiGHS is then asked to stop (its interrupt callbacks, checked
between simplex and interior-point iterations and branch-and-cut nodes) and given ``grace``
seconds to do so; the exception is raised either way. A HiGHS that does not stop in time (some
presolve reductions read no clock and call no callback) runs on in a daemon thread until it
ends; its result is never read. Such a thread must not be running when the interpreter exits:
HiGHS's static destructors then abort the process ("terminate called without an active
exception", exit 134). The command line therefore ends with ``os._exit`` after flushing its
output when :func:`runs_left` says one is (:func:`hetsched.cli.run`).

highspy's own ``solve()`` does the same for Ctrl-C but swallows the ``KeyboardInterrupt`` (and
this command line's SIGTERM, a subclass of it) and returns an interrupted status, which its
caller would take for an answer.
"""

from __future__ import annotations

import threading

import highspy

STOP_GRACE = 1.0  # seconds HiGHS gets to notice it was asked to stop before the exception is raised
THREAD_NAME = "hetsched-highs"
POLL = 0.1  # seconds between looks at the solver thread (a signal interrupts the wait anyway)


def run_interruptibly(h: highspy.Highs, grace: float = STOP_GRACE) -> highspy.HighsStatus:
    """``h.run()``, waited on in Python: an exception raised by a signal's handler meanwhile asks
    HiGHS to stop, waits up to ``grace`` seconds for it, and propagates. The interrupt callbacks
    are on for this run only (a master LP re-solved after it runs without them)."""
    was = h.HandleUserInterrupt
    if not was:
        h.HandleUserInterrupt = True
    thread = None
    try:
        thread = h.startSolve()
        thread.name = THREAD_NAME
        while True:
            done, status = h.wait(POLL)
            if done:
                return status
    except BaseException:
        h.cancelSolve()
        if thread is not None:
            thread.join(grace)
        raise
    finally:
        if not was and (thread is None or not thread.is_alive()):
            h.HandleUserInterrupt = False


def runs_left() -> bool:
    """Whether a HiGHS run asked to stop by :func:`run_interruptibly` is still running."""
    return any(t.name == THREAD_NAME and t.is_alive() for t in threading.enumerate())
