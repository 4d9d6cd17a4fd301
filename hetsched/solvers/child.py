"""A solver call in a child process, stopped at its deadline: for solver code that does not look
at its clock.

HiGHS's presolve of a large MILP runs some reductions to their end without reading its clock:
measured on the time-indexed Hare model (``hare-sched-ti``), one thread, its own time limit set,
2026-11-28:

======================  ==========  =============
model (nonzeros)        time limit  HiGHS's run
======================  ==========  =============
ladder(12, 4) (39 k)    1-8 s       1.0-8.0 s
ladder(16, 4) (320 k)   2 s         3.7 s
ladder(20, 4) (1.5 M)   1 s, 8 s    5.7 s, 24.5 s
ladder(24, 4) (2.7 M)   15 s        45.6 s
======================  ==========  =============

A deadline in this process cannot interrupt C code, so such a run goes to a child process
(spawned, never forked: the solver libraries hold threads), which is ended if it has not
answered by its deadline. A SIGINT or SIGTERM to this process (or its deadline's exception) ends
it too: the wait is in Python, where the signal's handler runs.
"""

from __future__ import annotations

import multiprocessing
import os
from typing import Any, Callable

from hetsched.core.errors import SolverError


def _leave_sigint_to_the_parent() -> None:
    """Ctrl-C in a terminal reaches the whole process group; the parent ends the child itself."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _end_with_the_parent(parent: int) -> None:
    """On Linux, this process gets SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG): a parent
    killed without running its cleanup (SIGKILL, or SIGTERM to a pool worker, which holds no
    handler) leaves no solver running on. Elsewhere the child ends at its own time limit."""
    import ctypes
    import ctypes.util
    import os
    import signal
    import sys

    if not sys.platform.startswith("linux"):  # pragma: no cover - Linux here
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(1, int(signal.SIGTERM))  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the call
        os._exit(1)


def _child(conn, parent: int, fn: Callable[..., Any], args: tuple) -> None:
    _leave_sigint_to_the_parent()
    _end_with_the_parent(parent)
    try:
        conn.send((True, fn(*args)))
    except BaseException as exc:  # handed to the parent, which raises it
        conn.send((False, exc))
    finally:
        conn.close()


def _stop(proc: multiprocessing.process.BaseProcess) -> None:
    if proc.is_alive():
        proc.terminate()  # SIGTERM; HiGHS holds no handler, so the process ends at once
        proc.join(2.0)
    if proc.is_alive():  # pragma: no cover - only a process that ignores SIGTERM
        proc.kill()
    proc.join()


def call_in_child(fn: Callable[..., Any], args: tuple, wait: float | None) -> tuple[bool, Any]:
    """(True, fn(*args)) run in a spawned child process, or (False, None) if it has not answered
    within ``wait`` seconds (None: no limit); the child is then ended. ``fn`` and ``args`` must be
    picklable (a module-level function). An exception in the child is raised here."""
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, os.getpid(), fn, args), daemon=True)
    proc.start()
    send.close()
    try:
        if not receive.poll(wait):
            return False, None
        try:
            ok, value = receive.recv()
        except EOFError:
            proc.join(2.0)
            raise SolverError(
                f"the solver's child process ended without an answer (exit code {proc.exitcode})"
            ) from None
        if not ok:
            raise value
        return True, value
    finally:
        receive.close()
        _stop(proc)
