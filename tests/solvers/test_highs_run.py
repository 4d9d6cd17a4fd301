"""A HiGHS run that a signal stops (hetsched.solvers.highs_run) and the command line's exit with
one that has not stopped yet (hetsched.cli.run).

The instance is a market split problem (Cornuejols and Dawande): 5 rows, 40 binaries, which
branch and bound takes hours on; a run that ended by itself would not be interrupted. The tests
wait for events (the solver's thread alive, the status HiGHS reports), never for an amount of
time; HiGHS's own time limit (300 s) only keeps a broken interrupt from running on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import highspy
import numpy as np
import pytest
import scipy.sparse as sp

from hetsched.solvers.highs_run import THREAD_NAME, run_interruptibly, runs_left
from hetsched.solvers.lp_arrays import ArrayLP, run_highs


def market_split(m: int = 5, n: int = 40, seed: int = 0) -> ArrayLP:
    """min the slacks of a x = floor(sum a / 2), x binary: hard for branch and bound."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 100, size=(m, n)).astype(float)
    b = np.floor(a.sum(axis=1) / 2)
    matrix = sp.hstack([sp.csr_matrix(a), sp.eye(m), -sp.eye(m)]).tocsc()
    return ArrayLP(
        cost=np.r_[np.zeros(n), np.ones(2 * m)],
        matrix=matrix,
        row_lower=b,
        row_upper=b,
        col_lower=np.zeros(n + 2 * m),
        col_upper=np.r_[np.ones(n), np.full(2 * m, np.inf)],
        integrality=np.r_[np.ones(n), np.zeros(2 * m)],
    )


class Stop(Exception):
    """What the test's signal handler raises (as the command line's raises Terminated)."""


def _signal_once_running() -> None:
    """SIGUSR1 to this process once a HiGHS run of run_interruptibly is on."""
    while not runs_left():
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGUSR1)


@pytest.fixture
def stop_on_usr1():
    def handler(signum, frame):
        raise Stop()

    previous = signal.signal(signal.SIGUSR1, handler)
    yield
    signal.signal(signal.SIGUSR1, previous)


def test_a_signal_during_a_highs_run_raises_and_stops_highs(stop_on_usr1) -> None:
    """The handler's exception comes out of run_highs, and HiGHS reports the run interrupted,
    not finished: it was told to stop."""
    seen: list[highspy.Highs] = []

    def keep(h: highspy.Highs) -> highspy.HighsStatus:
        seen.append(h)
        return run_interruptibly(h)

    import hetsched.solvers.lp_arrays as lp_arrays

    sender = threading.Thread(target=_signal_once_running, daemon=True)
    sender.start()
    original = lp_arrays.run_interruptibly
    lp_arrays.run_interruptibly = keep
    try:
        with pytest.raises(Stop):
            run_highs(market_split(), {"time_limit": 300.0})
    finally:
        lp_arrays.run_interruptibly = original
    (h,) = seen
    for t in threading.enumerate():
        if t.name == THREAD_NAME:
            t.join(300.0)
    assert not runs_left()
    assert h.getModelStatus() == highspy.HighsModelStatus.kInterrupt
    assert not h.HandleUserInterrupt  # a later run of this solver has no callbacks to pay for


def test_a_run_that_ends_returns_its_status_and_leaves_no_callbacks() -> None:
    lp = market_split(m=1, n=6)
    h, _ = run_highs(lp)
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert not h.HandleUserInterrupt
    assert not runs_left()


def test_the_command_line_exits_with_its_code_while_highs_runs_on() -> None:
    """A HiGHS run still on at exit makes a normal interpreter exit abort in HiGHS's destructors
    (exit 134, "terminate called"); hetsched.cli.run ends the process with main's code and its
    output flushed."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import hetsched.cli as cli
        from hetsched.solvers.highs_run import THREAD_NAME, runs_left
        from hetsched.solvers.lp_arrays import run_highs
        from test_highs_run import market_split

        def main():
            import highspy
            h = highspy.Highs()
            h.setOptionValue("output_flag", False)
            h.setOptionValue("time_limit", 300.0)
            lp = market_split()
            import hetsched.solvers.lp_arrays as la
            started = []
            def start(h):
                t = h.startSolve()  # left running, as a run that did not stop in its grace
                t.name = THREAD_NAME
                started.append(t)
            la.run_interruptibly = start
            run_highs(lp, {{"time_limit": 300.0}})
            assert runs_left()
            print("the answer so far", end="")  # unflushed: run() must flush it
            return 143

        cli.main = main
        cli.run()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 143, done.stderr
    assert "terminate called" not in done.stderr
    assert done.stdout == "the answer so far"
