"""Every solver backend that runs C code is stopped by a signal (hetsched.core.interruptible):
HiGHS (its interrupt callbacks) and CP-SAT (stop_search).

The instance is a market split problem (tests/support.py), which neither solver ends by itself
within hours: a run that ended was stopped. The tests wait for events (the solver's thread alive,
the status the solver reports), never for an amount of time; the solvers' own time limits
(300 s) only keep a broken interrupt from running on.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import highspy
import numpy as np
import pytest
import scipy.sparse as sp
from ortools.sat.python import cp_model
from support import market_split_rows

import hetsched.solvers.lp_arrays as lp_arrays
from hetsched.core.interruptible import THREAD_NAME, runs_left
from hetsched.solvers.cpsat import CpsatProblem, solve_cpsat
from hetsched.solvers.highs_run import run_interruptibly
from hetsched.solvers.lp_arrays import ArrayLP, run_highs
from hetsched.solvers.result import SolverOptions


def market_split_lp(m: int = 5, n: int = 40) -> ArrayLP:
    """min the slacks of a x = b, x binary (a MILP as arrays)."""
    a, b = market_split_rows(m, n)
    matrix = sp.hstack([sp.csr_matrix(a.astype(float)), sp.eye(m), -sp.eye(m)]).tocsc()
    return ArrayLP(
        cost=np.r_[np.zeros(n), np.ones(2 * m)],
        matrix=matrix,
        row_lower=b.astype(float),
        row_upper=b.astype(float),
        col_lower=np.zeros(n + 2 * m),
        col_upper=np.r_[np.ones(n), np.full(2 * m, np.inf)],
        integrality=np.r_[np.ones(n), np.zeros(2 * m)],
    )


class Stop(Exception):
    """What the test's signal handler raises (as the command line's raises Terminated)."""


def _signal_once_running() -> None:
    """SIGUSR1 to this process once a solver runs in call_interruptibly's thread."""
    while not runs_left():
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGUSR1)


@pytest.fixture
def stop_on_usr1():
    def handler(signum, frame):
        raise Stop()

    previous = signal.signal(signal.SIGUSR1, handler)
    threading.Thread(target=_signal_once_running, daemon=True).start()
    yield
    signal.signal(signal.SIGUSR1, previous)
    for t in threading.enumerate():  # a broken interrupt ends at the solver's own limit
        if t.name == THREAD_NAME:
            t.join(300.0)
    assert not runs_left()


def test_highs_stops_at_a_signal_and_keeps_no_callbacks(stop_on_usr1, monkeypatch) -> None:
    """The handler's exception comes out of run_highs; HiGHS reports the run interrupted (it was
    told to stop), and its interrupt callbacks are gone once it has."""
    seen: list[highspy.Highs] = []

    def keep(h: highspy.Highs) -> highspy.HighsStatus:
        seen.append(h)
        return run_interruptibly(h)

    monkeypatch.setattr(lp_arrays, "run_interruptibly", keep)
    with pytest.raises(Stop):
        run_highs(market_split_lp(), {"time_limit": 300.0})
    (h,) = seen
    for t in threading.enumerate():
        if t.name == THREAD_NAME:
            t.join(300.0)
    assert h.getModelStatus() == highspy.HighsModelStatus.kInterrupt


def test_a_highs_run_that_ends_returns_its_answer_and_keeps_no_callbacks() -> None:
    h, _ = run_highs(market_split_lp(m=1, n=6), rerun=True)
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert not any(getattr(h, cb).callbacks for cb in ("cbSimplexInterrupt", "cbMipInterrupt"))
    assert not runs_left()
    released, _ = run_highs(market_split_lp(m=1, n=6))  # the default: its cycle broken
    assert released.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert released.callbacks == [] and not runs_left()


def _market_split_cpsat() -> CpsatProblem:
    a, b = market_split_rows()
    model = cp_model.CpModel()
    x = [model.new_bool_var(f"x{j}") for j in range(a.shape[1])]
    for i in range(a.shape[0]):
        model.add(sum(int(a[i, j]) * x[j] for j in range(a.shape[1])) == int(b[i]))
    return CpsatProblem(model)


def test_cpsat_stops_at_a_signal(stop_on_usr1) -> None:
    with pytest.raises(Stop):
        solve_cpsat(_market_split_cpsat(), SolverOptions(time_limit=300.0, threads=2))


def test_cpsat_leaves_ctrl_c_to_python(monkeypatch) -> None:
    """CP-SAT's own SIGINT handler, installed from the solver's thread, aborted the process
    (std::bad_function_call) at Ctrl-C: it is off."""
    seen = []
    original = cp_model.CpSolver.solve

    def record(self, model, *args):
        seen.append(self.parameters.catch_sigint_signal)
        return original(self, model, *args)

    monkeypatch.setattr(cp_model.CpSolver, "solve", record)
    solve_cpsat(CpsatProblem(cp_model.CpModel()), SolverOptions(time_limit=1.0))
    assert seen == [False]
