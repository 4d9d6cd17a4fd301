"""The gang engine's short path for the jobs that run on as they ran (``run_on``, with
``check_moved``) gives the same run as the round's full loop with the full check: the same
segments, completions, first starts, events, rounds and preemptions, on workloads whose policies
keep, move, preempt and pack jobs."""

import pytest

from hetsched.sim import gang_engine
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.registry import make_policy
from hetsched.sim.workloads import load_workload


def _run(workload: str, n_jobs: int | None, policy: str):
    inst = load_workload(workload, n_jobs=n_jobs) if n_jobs else load_workload(workload)
    r = simulate_gang(inst, make_policy(policy), record_events=True)
    return (r.segments, r.completion, r.first_start, r.events, r.rounds, r.preemptions)


@pytest.mark.parametrize(
    "workload, n_jobs, policy",
    [
        ("gavel-poisson:stable", 300, "yarn-cs"),
        ("gavel-poisson:stable", 300, "tiresias"),
        ("gavel-poisson:stable", 200, "hadar"),
        ("gavel-poisson", 200, "gavel"),
        ("philly", None, "harmony-greedy"),
        ("similarity-jobs", None, "similarity:pack"),
    ],
)
def test_run_on_matches_the_full_loop(monkeypatch, workload, n_jobs, policy):
    advanced = []
    run_on = gang_engine.run_on

    def counted(plan, *args):
        slow = run_on(plan, *args)
        advanced.append(len(plan) - len(slow))
        return slow

    monkeypatch.setattr(gang_engine, "run_on", counted)
    short = _run(workload, n_jobs, policy)
    assert sum(advanced) > 0, "no job ran on through the short path"
    calls = []

    def never(*args):  # the short path is never taken: every round runs the full loop
        calls.append(1)
        return False

    monkeypatch.setattr(gang_engine, "check_moved", never)
    full = _run(workload, n_jobs, policy)
    assert calls, "the short path was never offered"
    assert short == full
