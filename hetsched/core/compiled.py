"""Compiled kernels (numba) that a signal cannot break: the one decorator every kernel of
hetsched is compiled with.

A signal handler that raises (a time limit's :class:`~hetsched.core.deadline.DeadlinePassed`,
the command line's interrupt and terminate) cannot stop compiled code: CPython runs it where the
kernel next touches the interpreter (boxing its result), and the exception comes back as a
``SystemError`` ("returned a result with an exception set"), an internal error where a time
limit or a Ctrl-C was meant. :func:`~hetsched.core.deadline.signals_held` defers the exception
until the kernel returns, but only where a call site remembers to enter it, and a new call site
can forget (session 52's placement kernel did; the flaky test runs showed it). So the hold is
in the dispatcher itself: a call from Python to a :func:`kernel` runs inside
:func:`signals_held`, and a call from another kernel (compiled straight into its caller) costs
nothing extra.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from numba.core.registry import CPUDispatcher

from hetsched.core.deadline import _HOLDS, _watch_compiles

_call = CPUDispatcher.__call__  # the compiled dispatch (numba's C type)
_current, _main = threading.current_thread, threading.main_thread


class HeldDispatcher(CPUDispatcher):
    """numba's CPU dispatcher whose calls from Python hold the signal handlers' exceptions
    until they return: :func:`~hetsched.core.deadline.signals_held` written out, since a
    kernel may be called a million times a run (0.2 us a call here against 1.5 through the
    context manager)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _current() is not _main():
            return _call(self, *args, **kwargs)
        holds = _HOLDS
        if not holds.watching:
            _watch_compiles()
        holds.depth += 1
        try:
            return _call(self, *args, **kwargs)
        finally:
            holds.depth -= 1
            if holds.depth == 0 and holds.deferred:
                exc = holds.deferred[0]
                holds.deferred.clear()
                raise exc  # noqa: B012 - the deferred signal replaces the kernel's result


def kernel(
    func: Callable | None = None, *, cache: bool = True, **options: Any
) -> HeldDispatcher | Callable[[Callable], HeldDispatcher]:
    """``numba.njit`` for hetsched: nopython mode, cached on disk unless ``cache=False``, and
    every call from Python held against signals (:class:`HeldDispatcher`). ``options``: numba's
    (``nogil``, ``fastmath``, ...). Use as ``@kernel`` or ``@kernel(nogil=True)``."""

    def wrap(f: Callable) -> HeldDispatcher:
        dispatcher = HeldDispatcher(
            py_func=f, locals={}, targetoptions={"nopython": True, "boundscheck": None, **options}
        )
        if cache:
            dispatcher.enable_caching()
        return dispatcher

    return wrap(func) if func is not None else wrap
