"""The gang engine under Gavel's convention (issue 19, item 3): the timing of Gavel's own
simulator, its round mechanism (resets every 1920 s, leftover GPUs filled), hand-computed on
small runs; the hang of the agnostic policy on Gavel's trace is gone; ``auto`` picks the
convention from the workload."""

import math

import numpy as np
import pytest
from test_sim_gang import cluster, job

from hetsched.core.errors import InputError
from hetsched.instance.model import Instance
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.gang_policies.gavel_mechanism import GavelMechanism, type_order
from hetsched.sim.registry import make_policy
from hetsched.sim.run import resolve_convention, run_policy
from hetsched.sim.workloads import load_workload


def test_a_round_ends_when_its_last_job_stops_and_arrivals_join_then():
    """One GPU. A (100 steps at 1/s) arrives at 0 and runs alone: it stops at 100, which ends the
    round; B (50 steps), which arrived at 50, starts at 100 and ends at 150. With fixed rounds B
    waits for the boundary at 360."""
    inst = Instance(
        "t",
        cluster({"v100": 1}),
        (job("A", 0, 100, {"v100": 1.0}), job("B", 50, 50, {"v100": 1.0})),
    )
    gavel = simulate_gang(inst, make_policy("yarn-cs"), 360, 0.0, convention="gavel")
    assert gavel.completion == {"A": 100.0, "B": 150.0}
    grid = simulate_gang(inst, make_policy("yarn-cs"), 360, 0.0)
    assert grid.completion == {"A": 100.0, "B": 410.0}


def test_whole_steps_per_round():
    """0.7 steps/s: a round runs floor(0.7 x 360) = 252 steps in 360 s; 600 steps take rounds
    of 252, 252 and 96 steps, back to back, so A completes at 600 / 0.7 s."""
    inst = Instance("w", cluster({"v100": 1}), (job("A", 0, 600, {"v100": 0.7}),))
    r = simulate_gang(inst, make_policy("gavel"), 360, 0.0, convention="gavel")
    assert r.rounds == 3
    assert r.completion["A"] == pytest.approx(600 / 0.7, rel=1e-12)
    assert [s.end for s in r.segments] == pytest.approx([600 / 0.7])  # one segment: no gap


def test_a_job_that_arrives_between_resets_waits_for_the_next_reset():
    """Two GPUs. A (long) arrives at 10: reset at 10, A gets x = 1. B arrives at 100; at the
    round starting at 370 it has no allocation, so Gavel counts it on a GPU but gives it none.
    The next reset is due 1920 s after the last (10 + 1920); the first round starting then, at
    10 + 6 x 360 = 2170, runs B."""
    inst = Instance(
        "r",
        cluster({"v100": 2}),
        (job("A", 10, 10**6, {"v100": 1.0}), job("B", 100, 100, {"v100": 1.0})),
    )
    r = simulate_gang(inst, make_policy("gavel"), 360, 0.0, convention="gavel")
    first = min(s.start for s in r.segments if s.job == "B")
    assert first == pytest.approx(10 + 6 * 360)
    assert r.completion["B"] == pytest.approx(first + 100)
    grid = simulate_gang(inst, make_policy("gavel"), 360, 0.0)
    assert min(s.start for s in grid.segments if s.job == "B") == 360.0


def test_leftover_gpus_go_to_jobs_with_no_share_there():
    """Selection: type v100 first; the job with the higher priority there takes it, and the
    k80 left over goes to the other job although its x on k80 is 0."""
    m = GavelMechanism(2, 360.0)
    for j in (0, 1):
        m.admit(j)
    m.reset(0.0, {0: np.array([1.0, 0.0]), 1: np.array([0.5, 0.0])})
    thr = np.array([[2.0, 1.0], [2.0, 1.0]])
    chosen = m.choose([0, 1], thr, np.array([1, 1]), np.array([1, 1]), [0, 1])
    assert chosen == {0: 0, 1: 1}


def test_type_order_is_gavels_and_the_shuffle_is_seeded():
    assert type_order(("k80", "p100", "v100"), None) == [2, 1, 0]
    assert type_order(("a", "k80", "v100"), None) == [2, 1, 0]
    assert type_order(("k80", "p100", "v100"), 7) == type_order(("k80", "p100", "v100"), 7)


@pytest.mark.parametrize("convention", ["gavel", "hetsched"])
def test_agnostic_max_min_fairness_finishes_gavels_trace(convention):
    """The hang: a job that cannot run on K80 got its whole agnostic share there and never ran
    ("left every GPU idle for 1000 rounds"). Under Gavel's convention leftover GPUs run it;
    under ours a type the job cannot use gets no share."""
    inst = load_workload("gavel-trace:physical_cluster_max_min_fairness")
    r = simulate_gang(inst, make_policy("gavel:max-min-fairness"), 360, 0.0, convention=convention)
    assert r.validation.valid and len(r.completion) == len(inst.jobs)


def test_auto_convention_follows_the_workload():
    trace = load_workload("gavel-trace:physical_cluster_max_min_fairness")
    assert resolve_convention(trace) == "gavel"
    philly = load_workload("philly-static", n_jobs=8)
    assert resolve_convention(philly) == "hetsched"
    assert resolve_convention(trace, "hetsched") == "hetsched"
    with pytest.raises(InputError):
        resolve_convention(trace, "slurm")
    s = run_policy(trace, "gavel")
    assert (s["convention"], s["restore_seconds"], s["valid"]) == ("gavel", 0.0, True)
    assert math.isfinite(s["metrics"]["avg_jct"])


def test_gavel_convention_is_deterministic_for_a_seed():
    inst = load_workload("gavel-trace:physical_cluster_minimize_makespan")
    runs = [
        simulate_gang(
            inst, make_policy("gavel:max-min-fairness", seed=3), 360, 0.0, convention="gavel"
        )
        for _ in range(2)
    ]
    assert runs[0].completion == runs[1].completion


def test_gavel_convention_refuses_a_restore_delay():
    inst = Instance("w", cluster({"v100": 1}), (job("A", 0, 600, {"v100": 0.7}),))
    with pytest.raises(InputError, match="restore"):
        simulate_gang(inst, make_policy("gavel"), 360, 10.0, convention="gavel")


def test_gavel_finish_time_fairness_accumulates_isolated_time_as_gavel_does():
    """Under Gavel's convention I_j grows by the steps done between two allocations over the
    first allocation's isolated throughput, and every run validates."""
    from hetsched.gavel.conventions import isolated_throughput
    from hetsched.sim.gang_policies.gavel import Gavel

    inst = load_workload("gavel-trace:physical_cluster_max_min_fairness")
    calls = []
    policy = Gavel("finish-time-fairness")
    original = policy._ftf

    def spy(state, active, view):
        before = policy.isolated_time.copy()
        last = dict(policy.last_steps)
        now = {j: state.remaining(j) for j in active}
        out = original(state, active, view)
        calls.append((now, list(active), view, before, last, policy.isolated_time.copy()))
        return out

    policy._ftf = spy
    result = simulate_gang(inst, policy, 360, 0.0, convention="gavel")
    assert result.validation.valid and len(calls) > 2
    grew = 0
    for now, active, view, before, last, after in calls[1:]:
        iso_now = isolated_throughput(view, "gavel")
        for i, j in enumerate(active):
            if j in last:  # Gavel: I_j += (steps before - steps now) / the earlier isolated rate
                remaining_then, iso = last[j]
                assert after[j] - before[j] == pytest.approx((remaining_then - now[j]) / iso)
                grew += after[j] > before[j]
            assert policy.last_steps.get(j, (0, 1))[1] > 0 and iso_now[i] > 0
    assert grew > 0
