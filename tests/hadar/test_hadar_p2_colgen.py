"""Hadar's P2 by branch-and-price (``--model hadar-p2 --solver colgen``, what ``auto`` picks): the
Fig. 1 optimum of P1, agreement with the enumerated ILP, and Eq. (4)'s pricing under the
utility ranges branching imposes."""

from __future__ import annotations

import numpy as np
import pytest
from support import INSTANCES, hadar_tiny_variant

from hetsched.exact.solve import solve
from hetsched.hadar.pricing import best_schedule
from hetsched.hadar.view import hadar_view
from hetsched.instance.io import load_instance
from hetsched.models.hadar_p2 import schedules
from hetsched.solvers import Status

TINY = INSTANCES / "hadar" / "hadar_tiny.json"
FIG1 = INSTANCES / "paper" / "hadar_fig1.json"


_variant = hadar_tiny_variant


def test_fig1_is_proven_optimal_and_equals_p1():
    inst = load_instance(FIG1)
    p2 = solve(inst, "hadar-p2", "auto", time_limit=120)
    p1 = solve(inst, "hadar-p1", "highs", time_limit=120)
    assert p2.solver == "colgen" and p2.status == Status.OPTIMAL and p1.status == Status.OPTIMAL
    assert p2.validation.valid
    assert p2.objective == pytest.approx(48.80952381, abs=1e-6)
    assert p2.objective == pytest.approx(p1.objective, rel=1e-9)


def test_the_log_shows_p2s_own_values_not_the_engines_negated_ones():
    """The engine minimizes minus the utilities; its log speaks in P2's sense (a maximum): the
    LP value is LP(P2) >= P2, and the bound after branching is the optimum."""
    import re

    res = solve(load_instance(TINY), "hadar-p2", "colgen", time_limit=60)
    assert res.status == Status.OPTIMAL
    lp = float(re.search(r"LP (-?[\d.]+)", res.log).group(1))
    bound = float(re.search(r"Lagrangian bound (-?[\d.]+)", res.log).group(1))
    assert lp >= bound - 1e-6 > 0
    assert bound == pytest.approx(res.objective, rel=1e-5)


@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_the_enumerated_ilp(seed):
    inst = _variant(seed)
    bp = solve(inst, "hadar-p2", "colgen", time_limit=120)
    ilp = solve(inst, "hadar-p2", "highs", time_limit=120)
    assert bp.status == ilp.status == Status.OPTIMAL and bp.validation.valid
    assert bp.objective == pytest.approx(ilp.objective, rel=1e-9, abs=1e-9)
    assert bp.bound >= bp.objective - 1e-9  # a maximization: the bound is above


@pytest.mark.parametrize("seed", range(4))
def test_pricing_obeys_a_utility_range(seed):
    """max payoff over the schedules whose utility lies in [lo, hi), against enumeration."""
    inst = _variant(seed)
    v = hadar_view(inst)
    rng = np.random.default_rng(200 + seed)
    for j in range(v.n_jobs):
        all_s = schedules(v, j)
        us = sorted({u for _, u in all_s})
        for _ in range(4):
            k = rng.uniform(0, 4, size=(*v.capacity.shape, v.horizon + 1))
            lo, hi = sorted(rng.choice(us + [max(us) + 1.0], size=2)) if us else (0.0, 1.0)
            inside = [
                u - sum(k[h, r, t] * n for t, g in plan.items() for (h, r), n in g.items())
                for plan, u in all_s
                if lo <= u < hi
            ]
            s = best_schedule(v, j, k, utilities=(lo, hi))
            assert (s is None) == (not inside)
            if s is not None:
                assert lo <= s.utility < hi
                assert s.payoff == pytest.approx(max(inside), abs=1e-9)
