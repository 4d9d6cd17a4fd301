"""How a child process of hetsched's (a pool worker, a solver's child) treats signals."""

from __future__ import annotations

import os
import signal
import sys


def leave_sigint_to_the_parent() -> None:
    """Ignore SIGINT: Ctrl-C in a terminal reaches the whole process group, and the parent stops
    its children itself (:meth:`hetsched.core.executors.WorkerPool.__exit__`,
    :func:`hetsched.solvers.child.call_in_child`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def end_with_the_parent(parent: int) -> None:
    """On Linux, this process gets SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG): a parent
    killed without running its cleanup (SIGKILL, or SIGTERM to a pool worker, which holds no
    handler) leaves no solver running on. Elsewhere the child ends at its own time limit. The
    kernel's "parent" is the thread that started this process: call it only for a child started
    by a thread that lives as long as the child is needed."""
    import ctypes
    import ctypes.util

    if not sys.platform.startswith("linux"):  # pragma: no cover - Linux here
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(1, int(signal.SIGTERM))  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the call
        os._exit(1)
