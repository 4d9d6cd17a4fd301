"""The max-min allocation LP of a short queue by the dense simplex (:mod:`hetsched.gavel.dense`),
as the simulated Gavel solves it under our convention: the optimum is HiGHS's, the allocation
passes the validator, and the simulated policy says how its LPs were solved."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetsched.sim.gang_policies.gavel as gavel_policy
from hetsched.gavel.fast import solve_max_min, solve_max_sum
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
@given(seed=st.integers(0, 100_000), n=st.integers(1, 40), own=st.booleans())
def test_the_tiebreak_gives_the_most_throughput_among_the_optima_on_both_routes(seed, n, own):
    """``own``: the tie-break's coefficients are the LP's (the speed-aware policies); else other
    ones (the agnostic policies, tie-broken by their aware counterpart's coefficients)."""
    rng = np.random.default_rng(seed)
    rows = rng.uniform(0.1, 10.0, (n, 3)) * (rng.random((n, 3)) > 0.25)
    rows[np.arange(n), rng.integers(0, 3, n)] = rng.uniform(0.1, 10.0, n)
    if not own:  # agnostic rows: a few distinct values, so that many jobs tie
        rows = np.where(rows > 0, rng.choice([1.0, 2.0], (n, 1)), 0.0)
    prefer = None if own else rows * rng.uniform(0.1, 10.0, (n, 3))
    second = rows if prefer is None else prefer
    scale = rng.choice([1.0, 2.0, 4.0], n)
    count = rng.integers(1, 20, 3).astype(float)
    _, z, plain, _ = solve_max_min(rows, scale, count, merge=False, method="dense")
    found = [
        solve_max_min(rows, scale, count, merge, method, tiebreak=True, prefer=prefer)
        for merge, method in ((False, "dense"), (True, "ipm"), (False, "ipm"))
    ]
    for _, z_found, x, _ in found:
        assert z_found == pytest.approx(z, rel=1e-8)
        assert float((rows * x).sum(axis=1).min()) == pytest.approx(z, rel=1e-7, abs=1e-9)
    total = [float((second * x).sum()) for x in [plain] + [f[2] for f in found]]
    for other in total[2:]:  # the same second optimum on every route
        assert total[1] == pytest.approx(other, rel=1e-6, abs=1e-8)
    assert total[1] >= total[0] - 1e-7 * max(1.0, total[0])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(1, 60), twins=st.booleans())
def test_the_dense_max_sum_is_highs(seed, n, twins):
    rng = np.random.default_rng(seed)
    rows = rng.uniform(0.1, 10.0, (n, 3)) * (rng.random((n, 3)) > 0.25)
    if twins:
        rows = rows[rng.integers(0, max(1, n // 4), n)]
    scale = rng.choice([1.0, 2.0, 4.0, 8.0], n)
    count = rng.integers(1, 20, 3).astype(float)
    notes: list[str] = []
    status, value, x, _ = solve_max_sum(rows, scale, count, False, "dense", notes)
    _, cold, _, _ = solve_max_sum(rows, scale, count, True, "simplex")
    assert status.value == "optimal" and not notes
    assert value == pytest.approx(cold, rel=1e-8, abs=1e-10)
    assert float((rows * x).sum()) == pytest.approx(value, rel=1e-9, abs=1e-10)
    assert np.all(x >= 0) and np.all(x.sum(axis=1) <= 1 + 1e-9)
    assert np.all(scale @ x <= count + 1e-9 * np.maximum(1.0, count))


@pytest.mark.parametrize("allocation", [*gavel_policy.AWARE_TIEBREAK, "max-throughput"])
def test_the_agnostic_and_throughput_policies_solve_short_queues_densely(allocation):
    inst = gavel_poisson(2, n_jobs=30, rate_per_hour=6.0, per_type=4)
    policy = Gavel(allocation)
    assert simulate_gang(inst, policy, 360.0, 10.0).validation.valid
    stats = policy.solver_stats()
    assert policy.lp_solves > 0 and stats["dense_simplex"] == policy.lp_solves


@pytest.mark.parametrize("seed", [2, 4])
def test_the_compiled_finish_time_fairness_runs_as_the_python_bisection(seed, monkeypatch):
    """The policy's one compiled call (:func:`hetsched.gavel.ftf_kernel.ftf_dense`: the
    denominators, the bisection and the tie-break) against the Python loop it replaces, which
    still runs where the dense simplex declines: the same runs, to the bit."""
    from hetsched.gavel import ftf_kernel

    inst = gavel_poisson(seed, n_jobs=60, rate_per_hour=6.0, per_type=4)
    compiled = simulate_gang(inst, Gavel("finish-time-fairness"), 360.0, 10.0)
    monkeypatch.setattr(ftf_kernel, "ftf_dense", lambda *args: (False, None))
    python = Gavel("finish-time-fairness")
    by_loop = simulate_gang(inst, python, 360.0, 10.0)
    assert compiled.validation.valid and by_loop.validation.valid
    assert python.dense_solves > 0  # the loop's tests went to the dense simplex too
    assert compiled.completion == by_loop.completion
    assert compiled.segments == by_loop.segments
