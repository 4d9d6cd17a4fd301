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

A deadline in this process cannot interrupt C code, so such a run goes to a child process, which
is ended if it has not answered by its deadline. The child is a fresh interpreter running this
module (``python -m hetsched.solvers.child``), never a fork (the solver libraries hold threads)
and not :mod:`multiprocessing`'s spawn, which runs the caller's main script again in the child:
a user's script without an ``if __name__ == "__main__"`` guard would solve everything twice and
fail. The call and its answer are pickled over the child's stdin and stdout. A SIGINT or SIGTERM
to this process (or its deadline's exception) ends the child too: the wait is in Python, where
the signal's handler runs; and on Linux the child ends when this process dies without cleaning
up (:func:`hetsched.core.children.end_with_the_parent`).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from typing import Any, Callable

from hetsched.core.children import end_with_the_parent, leave_sigint_to_the_parent
from hetsched.core.errors import SolverError


def _child_main(parent: int) -> None:  # pragma: no cover - runs in the child process
    """Read (fn, args) from stdin, write (True, fn(*args)) or (False, its exception) to stdout.
    Ctrl-C in a terminal reaches the whole process group: the parent ends the child itself."""
    leave_sigint_to_the_parent()
    end_with_the_parent(parent)
    answer = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what a library prints goes to stderr, not into the answer
    fn, args = pickle.loads(sys.stdin.buffer.read())
    try:
        out = (True, fn(*args))
    except BaseException as exc:  # handed to the parent, which raises it
        out = (False, exc)
    answer.write(pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL))
    answer.close()


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()  # SIGTERM: HiGHS holds no handler, so the process ends at once
        try:
            proc.wait(2.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - a child that ignores SIGTERM
            proc.kill()
    proc.wait()


def call_in_child(fn: Callable[..., Any], args: tuple, wait: float | None) -> tuple[bool, Any]:
    """(True, fn(*args)) run in a child process, or (False, None) if it has not answered within
    ``wait`` seconds (None: no limit); the child is then ended. ``fn`` and ``args`` must be
    picklable (a module-level function). An exception in the child is raised here."""
    payload = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
    proc = subprocess.Popen(
        [sys.executable, "-m", __name__, str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        try:
            out, _ = proc.communicate(payload, timeout=wait)
        except subprocess.TimeoutExpired:
            return False, None
        if proc.returncode != 0 or not out:
            raise SolverError(
                f"the solver's child process ended without an answer (exit code {proc.returncode})"
            )
        ok, value = pickle.loads(out)
        if not ok:
            raise value
        return True, value
    finally:
        _stop(proc)


if __name__ == "__main__":  # pragma: no cover - the child
    _child_main(int(sys.argv[1]))
