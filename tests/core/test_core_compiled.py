"""hetsched's compiled kernels hold the signal handlers' exceptions until they return
(:mod:`hetsched.core.compiled`): every kernel, whatever its call site."""

import importlib
import os
import pkgutil
import signal
import threading

import numba
import numpy as np
import pytest
from numba.core.dispatcher import Dispatcher

import hetsched
from hetsched.core import deadline
from hetsched.core.compiled import HeldDispatcher, kernel
from hetsched.core.deadline import raise_or_defer


class Stop(BaseException):
    pass


def _signal_then_finish(out):
    """Sends itself SIGUSR1 from object mode (where the interpreter runs the handler, as it
    does where a kernel boxes its result), then writes its result."""
    with numba.objmode():
        os.kill(os.getpid(), signal.SIGUSR1)
    out[0] = 1.0
    return out


@pytest.fixture
def stop_on_sigusr1():
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: raise_or_defer(Stop()))
    yield
    signal.signal(signal.SIGUSR1, previous)


def test_every_kernel_in_hetsched_is_compiled_with_the_held_dispatcher():
    """A new kernel compiled with numba.njit instead of :func:`kernel` (its Python call sites
    then unheld, the SystemError of session 52) fails here."""
    found: dict[str, Dispatcher] = {}
    for info in pkgutil.walk_packages(hetsched.__path__, "hetsched."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == info.name:
                found[f"{info.name}.{name}"] = value
    assert len(found) >= 60  # the kernels of Hadar, Gavel, Hare and the solvers
    assert [name for name, d in found.items() if not isinstance(d, HeldDispatcher)] == []


def test_a_signal_inside_a_kernel_is_raised_when_it_returns(stop_on_sigusr1):
    held = kernel(cache=False)(_signal_then_finish)
    out = np.zeros(1)
    with pytest.raises(Stop):
        held(out)
    assert out[0] == 1.0  # the kernel ran to its end; the handler's exception came after
    assert deadline._HOLDS.depth == 0 and not deadline._HOLDS.deferred


def test_a_plain_numba_kernel_is_cut_short_by_the_same_signal(stop_on_sigusr1):
    """The hazard the held dispatcher removes: the handler raises inside the kernel."""
    plain = numba.njit(cache=False)(_signal_then_finish)
    out = np.zeros(1)
    with pytest.raises(Stop):
        plain(out)
    assert out[0] == 0.0


def test_a_kernel_calls_a_kernel_and_a_thread_calls_one_without_the_hold():
    @kernel(cache=False)
    def inner(a):
        return a.sum()

    @kernel(cache=False, nogil=True)
    def outer(a):
        return 2.0 * inner(a)

    a = np.arange(4.0)
    assert outer(a) == 12.0 and inner(a) == 6.0
    depths = []

    def from_thread():
        depths.append(deadline._HOLDS.depth)
        depths.append(outer(a))

    thread = threading.Thread(target=from_thread)
    thread.start()
    thread.join()
    assert depths == [0, 12.0]
    assert deadline._HOLDS.depth == 0
