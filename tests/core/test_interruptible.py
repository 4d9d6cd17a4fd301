"""call_interruptibly: a blocking call in a thread, waited on where a signal's exception lands."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from hetsched.core.interruptible import call_interruptibly, runs_left


def test_the_call_s_value_and_exception_come_back() -> None:
    assert call_interruptibly(lambda: 42, lambda: None) == 42
    with pytest.raises(ZeroDivisionError):
        call_interruptibly(lambda: 1 / 0, lambda: None)
    assert not runs_left()


def test_a_signal_s_exception_stops_the_call_and_propagates() -> None:
    """The call blocks in C code (an Event's wait) until stop() releases it."""

    class Stop(Exception):
        pass

    release, waiting = threading.Event(), threading.Event()

    def blocking() -> str:
        waiting.set()
        release.wait()
        return "released"

    def handler(signum, frame):
        raise Stop()

    previous = signal.signal(signal.SIGUSR1, handler)
    sender = threading.Thread(
        target=lambda: waiting.wait() and os.kill(os.getpid(), signal.SIGUSR1), daemon=True
    )
    sender.start()
    try:
        with pytest.raises(Stop):
            call_interruptibly(blocking, release.set, grace=60.0)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert release.is_set()  # stop() was called
    assert not runs_left()  # and the call ended within its grace
