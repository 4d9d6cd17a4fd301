"""Time limits cover the Python work no solver clocks (building a model, handing it over), and the
size guards refuse per-task work that cannot fit, before anything is built (issue 20, item 2)."""

from __future__ import annotations

import dataclasses
import gc
import signal
import sys
import time

import pytest

from hetsched.core.deadline import BuildTimeout, RunTimeout, deadline, grace
from hetsched.core.errors import HetschedError
from hetsched.exact.registry import find_formulation
from hetsched.exact.solve import solve
from hetsched.hare.heuristic import run_heuristic
from hetsched.instance.io import load_instance
from hetsched.schedule.model import MAX_SCHEDULE_TASKS
from hetsched.sim.engine import simulate
from hetsched.sim.registry import make_policy
from hetsched.solvers import Status


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_deadline_interrupts_python_work_and_restores_the_timer():
    t0 = time.perf_counter()
    with pytest.raises(BuildTimeout):
        with deadline(0.2):
            _spin(30)
    assert time.perf_counter() - t0 < 10
    with deadline(5):  # a block that ends in time is left alone, and no alarm is left behind
        _spin(0.05)
    _spin(0.3)


def _replaced_by_c_code(seconds: float) -> None:
    """What numpy's structured-array comparison does to an exception raised inside it: reports
    its own error in its place (the clean-clone CI saw a sim bench's time limit come out of
    Hadar's ``np.unique(axis=0)`` as "Cannot compare structured arrays")."""
    try:
        _spin(seconds)
    except BaseException:
        raise TypeError("Cannot compare structured arrays unless they have a common dtype")


def test_an_error_that_replaced_the_deadlines_exception_leaves_as_the_deadlines():
    with pytest.raises(RunTimeout) as stopped:
        with deadline(0.2, exception=RunTimeout):
            _replaced_by_c_code(30)
    assert isinstance(stopped.value.__cause__, TypeError)
    with pytest.raises(BuildTimeout):  # the inner deadline's, replaced inside the outer one
        with deadline(20, exception=RunTimeout):
            with deadline(0.2):
                _replaced_by_c_code(30)


def test_an_error_before_the_deadline_fires_is_that_error():
    with pytest.raises(ValueError, match="bad input"):
        with deadline(5, exception=RunTimeout):
            raise ValueError("bad input")
    with pytest.raises(KeyboardInterrupt):  # not an ordinary error: never replaced
        with deadline(0.2):
            try:
                _spin(30)
            except BuildTimeout:
                raise KeyboardInterrupt from None
    _spin(0.3)  # and no alarm is left behind


def test_a_deadline_due_inside_an_import_waits_for_the_import(tmp_path, monkeypatch):
    """A module half-imported stays broken for the process (numba's first import, interrupted
    by a simulation's time limit, broke every later test in the CI's worker): the import ends,
    then the deadline fires."""
    (tmp_path / "slow_to_import.py").write_text(
        "import time\n"
        "end = time.perf_counter() + 0.6\n"
        "while time.perf_counter() < end:\n"
        "    pass\n"
        "DONE = True\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slow_to_import", raising=False)
    with pytest.raises(RunTimeout):
        with deadline(0.1, exception=RunTimeout):
            import slow_to_import  # noqa: F401

            _spin(30)
    assert sys.modules["slow_to_import"].DONE


def test_an_outer_deadline_fires_inside_an_inner_one_with_its_own_exception():
    """A simulation's limit (outer) passes while a policy's solve holds its own deadline
    (inner, longer): the outer exception, at the outer limit, not the inner one."""
    t0 = time.perf_counter()
    with pytest.raises(RunTimeout):
        with deadline(0.3, exception=RunTimeout):
            with deadline(20):
                _spin(30)
    assert time.perf_counter() - t0 < 10


def test_an_inner_deadline_fires_first_and_the_outer_one_runs_on():
    t0 = time.perf_counter()
    with pytest.raises(RunTimeout):
        with deadline(3.0, exception=RunTimeout):
            with pytest.raises(BuildTimeout):  # the inner limit comes first: its exception
                with deadline(0.1):
                    _spin(30)
            _spin(30)  # the outer timer was restored: it still stops this
    assert time.perf_counter() - t0 < 10
    with deadline(5, exception=RunTimeout):  # an inner block that ends in time changes nothing
        with deadline(5):
            _spin(0.05)
        _spin(0.05)
    _spin(0.3)  # and no alarm is left behind


def test_a_deadline_that_fires_where_exceptions_cannot_propagate_says_nothing_and_fires_again(
    monkeypatch,
):
    """The first alarm lands in a garbage-collector callback, where Python can only report an
    exception ("Exception ignored in ..."), not raise it: no report, and the next alarm, 0.5 s
    later, stops the block."""
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    busy = {"once": True}

    def slow_callback(phase, info):
        if busy["once"]:  # the first collection holds the interpreter past the limit
            busy["once"] = False
            _spin(0.4)

    gc.callbacks.append(slow_callback)
    try:
        t0 = time.perf_counter()
        with pytest.raises(BuildTimeout):
            with deadline(0.1):
                gc.collect()  # the alarm fires inside the callback and is swallowed there
                _spin(30)
        assert time.perf_counter() - t0 < 10
    finally:
        gc.callbacks.remove(slow_callback)
    assert reported == [] and sys.unraisablehook == reported.append  # restored


def test_someone_elses_timer_neither_stops_the_block_early_nor_fires_twice():
    ticks = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: ticks.append(signum))
    signal.setitimer(signal.ITIMER_REAL, 0.1)  # a one-shot alarm of the embedding program
    try:
        t0 = time.perf_counter()
        with pytest.raises(BuildTimeout):
            with deadline(1.2):
                _spin(30)  # its alarm at 0.1 s goes to its handler, once; ours stops the spin
        assert 1.1 < time.perf_counter() - t0 < 10
        _spin(0.3)
        assert ticks == [signal.SIGALRM]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_deadline_none_is_no_limit():
    with deadline(None):
        _spin(0.05)


def test_a_build_past_the_time_limit_is_a_time_limit_result_without_solution():
    inst = load_instance("hare_fig9")
    spec = find_formulation("hare-sched", "pyomo")

    def slow_build(instance, **options):
        _spin(60)
        return spec.build(instance, **options)

    slow = dataclasses.replace(spec, build=slow_build, supports=None)
    res = solve(inst, slow, "highs", time_limit=0.5)
    assert res.status == Status.TIME_LIMIT
    assert res.objective is None and res.solution is None and res.bound is None
    assert res.seconds < 30  # stopped near 0.5 s + grace, not after the 60 s build
    assert any("did not finish within the time limit" in n for n in res.notes)


def test_the_limit_runs_from_the_call_and_stops_a_build_at_the_limit_itself():
    """What solve() does before building (here a slow ``supports``, in real use the first import
    of the formulations) counts against the limit, and the build is stopped at the limit, not
    after the grace that a solver gets to hand back its result: the call returns within the
    limit plus grace, however slowly the build's caller got there."""
    inst = load_instance("hare_fig9")
    spec = find_formulation("hare-sched", "pyomo")

    def slow_supports(instance):
        _spin(0.4)
        return None

    def endless_build(instance, **options):
        _spin(60)

    slow = dataclasses.replace(spec, build=endless_build, supports=slow_supports)
    t0 = time.perf_counter()
    res = solve(inst, slow, "highs", time_limit=0.6)
    waited = time.perf_counter() - t0
    assert res.status == Status.TIME_LIMIT and res.objective is None
    # the build's alarm is due 0.2 s into the build; an alarm counted from the build's start
    # (0.6 + 1.03 s grace after the 0.4 s check) would have let the caller wait past 2 s
    assert waited < 0.6 + grace(0.6), waited


def test_heuristic_whose_ordering_runs_out_of_time_reports_time_limit():
    inst = load_instance(
        "gavel_two_jobs"
    )  # 200 tasks: Hare_Sched_RL's pair rows take far longer than 1 s
    res = run_heuristic(inst, order="hare-sched-rl", time_limit=1.0)
    assert res.status == Status.TIME_LIMIT and res.objective is None
    assert res.seconds < 30
    assert "no solution within the time limit" in res.notes[0]


def _huge():
    inst = load_instance("hare_fig9")
    job = dataclasses.replace(inst.jobs[1], rounds=10**9)
    return dataclasses.replace(inst, jobs=(inst.jobs[0], job))


def test_simulator_refuses_more_tasks_than_a_schedule_holds():
    huge = _huge()
    assert huge.n_tasks > MAX_SCHEDULE_TASKS
    with pytest.raises(
        HetschedError, match=r"\$\.jobs\[1\]\.rounds x tasks_per_round: the task engine"
    ):
        simulate(huge, make_policy("fifo"))


def test_heuristic_refuses_more_tasks_than_a_schedule_holds():
    with pytest.raises(
        HetschedError, match=r"\$\.jobs\[1\]\.rounds x tasks_per_round: Algorithm 1"
    ):
        run_heuristic(_huge(), order="arrival")


def test_a_signal_while_numba_compiles_inside_signals_held_is_raised_at_once() -> None:
    """signals_held defers a handler's exception while compiled code runs, but a kernel's first
    call compiles it, in Python, for seconds: the exception is raised there, and the kernel
    never runs. The signal is sent when the compile starts (a numba event listener)."""
    import os
    import signal

    import numba
    import numpy as np
    from numba.core import event

    from hetsched.core.deadline import raise_or_defer, signals_held

    class Stop(BaseException):
        pass

    @numba.njit(cache=False)
    def kernel(out):  # a fresh function: its first call compiles
        out[0] = 1.0

    class SignalAtCompile(event.Listener):
        def on_start(self, ev) -> None:
            os.kill(os.getpid(), signal.SIGUSR1)

        def on_end(self, ev) -> None:
            pass

    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: raise_or_defer(Stop()))
    out = np.zeros(1)
    try:
        with pytest.raises(Stop):
            with signals_held():
                with event.install_listener("numba:compile", SignalAtCompile()):
                    kernel(out)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert out[0] == 0.0  # stopped in the compiler, not after the kernel ran
    kernel(out)  # the dispatcher still compiles and runs afterwards
    assert out[0] == 1.0
