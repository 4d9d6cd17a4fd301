"""Gavel's max-min LP kept warm across a simulation (:mod:`hetsched.gavel.warm`): after every
change of the active set it reaches the cold LP's optimum, and the simulated policy stays valid."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.gavel.fast import solve_max_min
from hetsched.gavel.warm import WarmMaxMin
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.gang_policies.gavel import Gavel
from hetsched.sim.workloads import gavel_poisson


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), steps=st.integers(1, 12))
def test_the_warm_lp_meets_the_cold_optimum_after_every_change(seed, steps):
    rng = np.random.default_rng(seed)
    k, pool = 3, 30
    rows = rng.uniform(0.1, 10.0, (pool, k)) * (rng.random((pool, k)) > 0.2)
    rows[np.arange(pool), rng.integers(0, k, pool)] = rng.uniform(0.1, 10.0, pool)
    scale = rng.choice([1.0, 2.0, 4.0], pool)
    count = rng.integers(1, 12, k).astype(float)
    warm = WarmMaxMin(count)
    active: list[int] = []
    for _ in range(steps):  # jobs leave and arrive, in any order
        keep = [j for j in active if rng.random() < 0.7]
        new = [int(j) for j in rng.choice(pool, rng.integers(1, 6), replace=False) if j not in keep]
        active = keep + new
        if not active:
            continue
        x = warm.solve(active, {j: rows[j] for j in active}, {j: scale[j] for j in active})
        _, cold, _, _ = solve_max_min(
            rows[active], scale[active], count, merge=False, method="simplex"
        )
        assert x is not None and x.shape == (len(active), k)
        assert np.all(x.sum(axis=1) <= 1 + 1e-9)
        assert np.all(scale[active] @ x <= count + 1e-7 * np.maximum(1.0, count))
        assert float((rows[active] * x).sum(axis=1).min()) == pytest.approx(
            cold, rel=1e-7, abs=1e-9
        )


def test_the_simulated_policy_with_a_warm_lp_is_valid_and_says_so():
    inst = gavel_poisson(2, n_jobs=40, rate_per_hour=6.0, per_type=4)
    warm, cold = Gavel(), Gavel(warm=False)
    runs = [simulate_gang(inst, p, 360.0, 10.0) for p in (warm, cold)]
    assert all(r.validation.valid for r in runs)
    assert warm.solver_stats()["warm_fallbacks"] == 0 and warm.lp_solves > 0
    assert "warm_fallbacks" not in cold.solver_stats()
    agnostic = Gavel("max-min-fairness")  # solved cold: its vertex moved its JCT (module doc)
    assert simulate_gang(inst, agnostic, 360.0, 10.0).validation.valid
    assert "warm_fallbacks" not in agnostic.solver_stats()
