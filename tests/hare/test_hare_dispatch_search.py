"""The dispatch search (hetsched.hare.dispatch_search, ``--solver dfs``): an exact method of
Hare_Sched, checked against CP-SAT's proven optima and against itself from a given bound."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from hetsched.core.errors import HetschedError
from hetsched.exact.registry import find_formulation
from hetsched.exact.solve import solve
from hetsched.hare.dispatch_search import (
    MAX_TASKS,
    dispatch_problem,
    dispatch_search,
    refusal,
)
from hetsched.instance.generators import ladder
from hetsched.schedule.validate import validate
from hetsched.solvers import Status
from hetsched.solvers.portfolio import solve_portfolio
from hetsched.solvers.result import SolverOptions
from hetsched.testing.strategies import hare_instances


@settings(max_examples=40, deadline=None)
@given(hare_instances(max_gpus=3, max_jobs=4, max_tasks=8))
def test_the_dispatch_search_and_cpsat_prove_the_same_optimum(inst):
    """Two exact methods agree: identical GPUs, sync times and arrivals included."""
    cp = solve(inst, "hare-sched", "cpsat", time_limit=60)
    dfs = solve(inst, "hare-sched", "dfs")
    assert cp.status == Status.OPTIMAL and dfs.status == Status.OPTIMAL
    assert dfs.validation.valid
    assert dfs.objective == pytest.approx(cp.objective, rel=1e-9, abs=1e-9)
    assert dfs.bound == pytest.approx(dfs.objective)


@settings(max_examples=15, deadline=None)
@given(hare_instances(max_gpus=3, max_jobs=3, max_tasks=7))
def test_from_the_optimum_as_hint_it_proves_that_nothing_is_better(inst):
    first = dispatch_search(dispatch_problem(inst))
    assert first.proven and first.schedule is not None
    again = dispatch_search(dispatch_problem(inst), upper=first.schedule)
    assert again.proven and again.schedule is None  # nothing strictly better than the optimum
    res = solve(inst, "hare-sched", "dfs", options={"hint": first.schedule})
    assert res.status == Status.OPTIMAL
    assert res.objective == pytest.approx(first.objective)
    assert first.root_bound <= first.objective + 1e-9


def test_ladder_16_is_proven_at_the_optimum_cpsat_proves():
    inst = ladder(16, 4, seed=0)
    cp = solve(inst, "hare-sched", "cpsat", time_limit=60)
    res = dispatch_search(dispatch_problem(inst))
    assert cp.status == Status.OPTIMAL and res.proven
    assert res.objective == pytest.approx(cp.objective)
    assert res.dominated > 0  # the dominance rule is at work on it
    assert validate(inst, res.schedule).objective == pytest.approx(res.objective)


def test_a_search_stopped_by_its_clock_is_never_optimal():
    """A limit of 0 s has passed at the first look at the clock (after 65,536 nodes): ladder(20,
    4) needs millions, so the stop does not depend on the machine's speed. The backend is
    called on the built model: through ``solve``, a limit of 0 s would stop the build itself
    wherever it takes more than the 1 ms ``solve`` then gives it (a race with the machine)."""
    inst = ladder(20, 4, seed=0)
    raw = solve_portfolio(
        find_formulation("hare-sched", "dispatch-search").build(inst), SolverOptions(time_limit=0.0)
    )
    assert raw.status == Status.TIME_LIMIT
    report = validate(inst, raw.solution)
    assert report.valid and report.objective == pytest.approx(raw.objective)
    assert raw.bound is not None and raw.bound <= raw.objective


@pytest.mark.parametrize("threads", [1, 2])
def test_the_same_instance_gives_the_same_schedule(threads):
    """Two threads too: each keeps its own best and prunes only against a strictly better one
    of the other, so the optimum each reports does not depend on their timing."""
    inst = ladder(12, 4, seed=1)
    a = dispatch_search(dispatch_problem(inst), threads=threads).schedule
    b = dispatch_search(dispatch_problem(inst), threads=threads).schedule
    assert a == b


@pytest.mark.parametrize("threads", [2, 3])
def test_threads_prove_the_optimum_one_thread_proves(threads):
    """The tree dealt out among threads at depth SPLIT_DEPTH: every subtree is searched by one
    of them (ladder(16, 4): 58,822 nodes on one thread)."""
    inst = ladder(16, 4, seed=0)
    one = dispatch_search(dispatch_problem(inst), threads=1)
    many = dispatch_search(dispatch_problem(inst), threads=threads)
    assert one.proven and many.proven
    assert many.objective == pytest.approx(one.objective)
    assert validate(inst, many.schedule).objective == pytest.approx(many.objective)
    assert many.root_bound == pytest.approx(one.root_bound)
    # from the optimum, every thread proves that nothing is better
    again = dispatch_search(dispatch_problem(inst), upper=one.schedule, threads=threads)
    assert again.proven and again.schedule is None and again.upper_objective == one.objective


def test_threads_stopped_by_the_clock_all_stop():
    inst = ladder(20, 4, seed=0)
    res = dispatch_search(dispatch_problem(inst), time_limit=0.0, threads=2)
    assert not res.proven


@pytest.mark.parametrize("threads", [1, 2])
def test_a_deadline_that_fires_inside_the_search_raises_its_own_exception(threads):
    """A deadline's alarm (or Ctrl-C) landing in the compiled search comes out as the deadline's
    exception, and soon: the search holds it back, stops at its next poll and raises it on
    return. Raised from the kernel's object-mode poll it came back as numba's SystemError, an
    internal error, on every one of 40 deadlines (session 42). ladder(20, 4) takes seconds to
    prove, so every alarm below lands in the search."""
    from hetsched.core.deadline import RunTimeout, deadline

    inst = ladder(20, 4)
    dispatch_search(dispatch_problem(ladder(8, 4)))  # compiled and warm: no alarm in the compiler
    for seconds in (0.05, 0.2, 0.4):
        with pytest.raises(RunTimeout), deadline(seconds, exception=RunTimeout):
            dispatch_search(dispatch_problem(inst), threads=threads)


def test_instances_past_its_size_are_refused_in_one_line():
    inst = ladder(MAX_TASKS + 4, 4, seed=0)
    reason = refusal(inst)
    assert reason is not None and str(MAX_TASKS) in reason
    with pytest.raises(HetschedError, match="dispatch search"):
        solve(inst, "hare-sched", "dfs", time_limit=5)


def test_the_portfolio_runs_it_after_a_short_cpsat_on_small_instances(monkeypatch):
    """CP-SAT's share is cut to almost nothing, so that the search (which proves ladder(20, 4)
    in a few seconds from CP-SAT's first schedule) is what proves the optimum."""
    from hetsched.hare import exact_step

    monkeypatch.setattr(exact_step, "DISPATCH_CPSAT_SHARE", 1e-3)
    res = solve(ladder(20, 4, seed=0), "hare-sched", "portfolio", time_limit=120)
    assert res.status == Status.OPTIMAL and res.validation.valid, res.log
    assert "dfs: optimal" in res.log
    assert res.log.index("cpsat:") < res.log.index("dfs:")
    assert res.bound == pytest.approx(res.objective)
