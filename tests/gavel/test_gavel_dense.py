"""The max-min allocation LP of a short queue by the dense simplex (:mod:`hetsched.gavel.dense`),
as the simulated Gavel solves it under our convention: the optimum is HiGHS's, the allocation
passes the validator, and the simulated policy says how its LPs were solved."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetsched.sim.gang_policies.gavel as gavel_policy
from hetsched.gavel.fast import solve_max_min
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.gang_policies.gavel import Gavel
from hetsched.sim.workloads import gavel_poisson


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(1, 70), twins=st.booleans())
def test_the_dense_optimum_is_highs(seed, n, twins):
    rng = np.random.default_rng(seed)
    k = 3
    rows = rng.uniform(0.1, 10.0, (n, k)) * (rng.random((n, k)) > 0.25)
    rows[np.arange(n), rng.integers(0, k, n)] = rng.uniform(0.1, 10.0, n)
    if twins:  # identical jobs: the degenerate case (every fair row ties)
        rows = rows[rng.integers(0, max(1, n // 4), n)]
    scale = rng.choice([1.0, 2.0, 4.0, 8.0], n)
    count = rng.integers(1, 20, k).astype(float)
    status, z, x, _ = solve_max_min(rows, scale, count, merge=False, method="dense")
    _, cold, _, _ = solve_max_min(rows, scale, count, merge=False, method="simplex")
    assert status.value == "optimal" and x.shape == (n, k)
    assert z == pytest.approx(cold, rel=1e-8, abs=1e-10)
    assert float((rows * x).sum(axis=1).min()) == pytest.approx(z, rel=1e-8, abs=1e-10)
    assert np.all(x >= 0) and np.all(x.sum(axis=1) <= 1 + 1e-9)
    assert np.all(scale @ x <= count + 1e-9 * np.maximum(1.0, count))


@pytest.mark.parametrize(
    "allocation", ["max-min-fairness-perf", "makespan", "finish-time-fairness"]
)
def test_the_simulated_policy_solves_short_queues_densely_and_says_so(allocation, monkeypatch):
    inst = gavel_poisson(2, n_jobs=40, rate_per_hour=6.0, per_type=4)
    dense = Gavel(allocation)
    assert simulate_gang(inst, dense, 360.0, 10.0).validation.valid
    stats = dense.solver_stats()
    assert stats["lps_solved"] > 0 and stats["dense_simplex"] == stats["lps_solved"]
    assert stats["dense_simplex_declined"] == 0
    monkeypatch.setattr(gavel_policy, "SMALL_LP", 0)  # every LP to HiGHS instead
    cold = Gavel(allocation)
    assert simulate_gang(inst, cold, 360.0, 10.0).validation.valid
    assert cold.solver_stats()["dense_simplex"] == 0 and cold.lp_solves > 0


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(1, 40))
def test_the_tiebreak_gives_the_most_throughput_among_the_optima_on_both_routes(seed, n):
    rng = np.random.default_rng(seed)
    rows = rng.uniform(0.1, 10.0, (n, 3)) * (rng.random((n, 3)) > 0.25)
    rows[np.arange(n), rng.integers(0, 3, n)] = rng.uniform(0.1, 10.0, n)
    scale = rng.choice([1.0, 2.0, 4.0], n)
    count = rng.integers(1, 20, 3).astype(float)
    _, z, plain, _ = solve_max_min(rows, scale, count, merge=False, method="dense")
    _, z_d, dense, _ = solve_max_min(rows, scale, count, False, "dense", tiebreak=True)
    _, z_h, highs, _ = solve_max_min(rows, scale, count, True, "ipm", tiebreak=True)
    assert z_d == pytest.approx(z, rel=1e-9) and z_h == pytest.approx(z, rel=1e-8)
    for x in (dense, highs):
        assert float((rows * x).sum(axis=1).min()) == pytest.approx(z, rel=1e-7, abs=1e-9)
    total = [float((rows * x).sum()) for x in (plain, dense, highs)]
    assert total[1] == pytest.approx(total[2], rel=1e-6, abs=1e-8)  # the same second optimum
    assert total[1] >= total[0] - 1e-7 * max(1.0, total[0])


def test_the_speed_blind_policies_keep_the_cold_highs_vertex():
    inst = gavel_poisson(2, n_jobs=30, rate_per_hour=6.0, per_type=4)
    for allocation in gavel_policy.SPEED_BLIND:
        policy = Gavel(allocation)
        assert simulate_gang(inst, policy, 360.0, 10.0).validation.valid
        assert policy.lp_solves > 0 and policy.solver_stats()["dense_simplex"] == 0
