"""Harmony's placement in the gang simulator (issue 19, item 1): placed jobs never move, the
greedy takes the fastest GPUs with room, the learned predictor refuses models it was not trained
on, and the exact round (an integer program) agrees with enumeration where both apply."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sim_gang import WORKLOADS, cluster, job

from hetsched.core.errors import InputError
from hetsched.harmony.evaluate import reward
from hetsched.harmony.exhaustive import exhaustive_placement
from hetsched.harmony.problem import PlacementView
from hetsched.harmony.separable import separable_placement
from hetsched.instance.model import Instance
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.registry import make_policy
from hetsched.sim.workloads import philly_window

METHODS = ("load-balancing", "bin-packing", "tetris", "standalone", "greedy", "exact")


@pytest.mark.parametrize("method", METHODS)
def test_placed_jobs_never_move_and_never_wait_again(method):
    inst = WORKLOADS["poisson"]()
    result = simulate_gang(inst, make_policy(f"harmony:{method}"), 360.0, 10.0)
    assert result.validation.valid and result.preemptions == 0
    jobs = [s.job for s in result.segments]
    assert sorted(jobs) == sorted({j.id for j in inst.jobs})  # one segment per job


def test_the_greedy_takes_the_fastest_type_with_room_and_the_rules_need_not():
    """Two types, one GPU each; A runs at 1 on 'slow' and 3 on 'fast'. The greedy puts A on
    'fast' (it completes at 100 / 3); B, arriving with A, gets 'slow'."""
    inst = Instance(
        "two",
        cluster({"fast": 1, "slow": 1}, per_server=1),
        (
            job("A", 0.0, 100, {"fast": 3.0, "slow": 1.0}),
            job("B", 0.0, 100, {"fast": 1.0, "slow": 1.0}),
        ),
    )
    result = simulate_gang(inst, make_policy("harmony-greedy"), 360.0, 10.0)
    assert result.completion == pytest.approx({"A": 100 / 3, "B": 100.0})


def test_the_learned_predictor_names_the_job_whose_model_it_does_not_know():
    inst = philly_window(0, n_jobs=5, per_type=2)
    with pytest.raises(InputError, match=r"jobs\[0\]\.model\.name"):
        simulate_gang(inst, make_policy("harmony:greedy-learned"), 360.0, 10.0)


def _view(rng, n_jobs, n_servers, fixed):
    W = rng.integers(1, 3, n_jobs)
    cap = rng.integers(1, 4, n_servers).astype(float)
    fixed_w = np.zeros((n_jobs, n_servers), dtype=int)
    new = np.ones(n_jobs, dtype=bool)
    if fixed:  # job 0 was placed earlier on server 0
        W[0], cap[0], new[0] = 1, max(cap[0], 1), False
        fixed_w[0, 0] = 1
    speed = rng.choice([0.0, 0.5, 0.8, 1.0], size=(n_jobs, n_servers))
    speed[:, 0] = np.maximum(speed[:, 0], 0.5)
    return PlacementView(
        job_ids=tuple(f"j{n}" for n in range(n_jobs)),
        server_ids=tuple(f"s{s}" for s in range(n_servers)),
        resources=("gpu",),
        models=tuple("m" for _ in range(n_jobs)),
        capacity=cap[:, None],
        workers=W,
        parameter_servers=np.zeros(n_jobs, dtype=int),
        worker_demand=np.ones((n_jobs, 1)),
        ps_demand=np.zeros((n_jobs, 1)),
        epochs=rng.uniform(1, 10, n_jobs),
        standalone_speed=rng.uniform(0.5, 2, n_jobs),
        new=new,
        fixed_workers=fixed_w,
        fixed_ps=np.zeros_like(fixed_w),
        interference=np.zeros((n_jobs, n_jobs)),
        communication=np.zeros(n_jobs),
        min_speed_fraction=0.1,
        allowed=speed > 0,
        server_speed=speed,
    )


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_jobs=st.integers(1, 4),
    n_servers=st.integers(1, 3),
    fixed=st.booleans(),
)
def test_the_exact_round_agrees_with_enumeration(seed, n_jobs, n_servers, fixed):
    view = _view(np.random.default_rng(seed), n_jobs, n_servers, fixed and n_jobs > 1)
    ip, _ = separable_placement(view)
    enum, best = exhaustive_placement(view)
    fixed_tasks = view.fixed_workers
    got = reward(view, fixed_tasks + ip.to_arrays(view)[0])
    assert got == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert reward(view, fixed_tasks + enum.to_arrays(view)[0]) == pytest.approx(best)
