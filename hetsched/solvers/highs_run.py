"""A HiGHS run that a signal can stop (:mod:`hetsched.core.interruptible`): HiGHS is asked to
stop through its interrupt callbacks, which it checks between simplex and interior-point
iterations and branch-and-cut nodes, and which are on for this run only (a master LP re-solved
after it runs without them).

highspy's own ``solve()`` runs HiGHS in a thread for Ctrl-C too, but swallows the
``KeyboardInterrupt`` (and the command line's SIGTERM, a subclass of it) and returns an
interrupted status, which its caller would take for an answer.
"""

from __future__ import annotations

import threading

import highspy

from hetsched.core.interruptible import STOP_GRACE, call_interruptibly

_INTERRUPTS = ("cbSimplexInterrupt", "cbIpmInterrupt", "cbMipInterrupt")


def run_interruptibly(h: highspy.Highs, grace: float = STOP_GRACE) -> highspy.HighsStatus:
    """``h.run()``, stopped by a signal's exception (which propagates) within ``grace`` seconds
    where HiGHS checks its interrupt callbacks."""
    asked = threading.Event()

    def interrupt(event) -> None:
        if asked.is_set():
            event.interrupt()

    for name in _INTERRUPTS:
        getattr(h, name).subscribe(interrupt)
    status = call_interruptibly(h.run, asked.set, grace)
    # only after a run that ended: an exception leaves a run still going, and its callbacks
    for name in _INTERRUPTS:
        getattr(h, name).unsubscribe(interrupt)
    return status


def release(h: highspy.Highs) -> None:
    """Break the reference cycle every ``highspy.Highs`` carries (its callbacks refer to it), so
    that reference counting frees it and its model as soon as its last name goes. Where the
    collector is paused (the simulators' event loops, :mod:`hetsched.core.collector`) a solver
    made each round would otherwise stay in memory to the end of the run: Hadar's type-bound
    LP grew a run on the multi-GPU Philly window to 2.3 GB. ``h`` can still be read, not run.
    :func:`hetsched.solvers.lp_arrays.run_highs` releases what it runs unless asked not to."""
    h.callbacks.clear()
