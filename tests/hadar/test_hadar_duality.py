"""Eq. (4)'s pricing problem, the dual certificate D(k) and column generation for LP(P2) = P3."""

import numpy as np
import pytest
from support import INSTANCES, hadar_tiny_variant

from hetsched.hadar.certificate import lp_p2
from hetsched.hadar.online import hadar_online
from hetsched.hadar.p2_master import plans_of
from hetsched.hadar.pricing import best_schedule, dual_value
from hetsched.hadar.validate import validate_decisions
from hetsched.hadar.view import hadar_view
from hetsched.instance.io import load_instance
from hetsched.models.hadar_p2 import schedules

TINY = INSTANCES / "hadar" / "hadar_tiny.json"
FIG1 = INSTANCES / "paper" / "hadar_fig1.json"


_variant = hadar_tiny_variant


@pytest.mark.parametrize("seed", range(5))
def test_best_schedule_equals_enumeration(seed):
    """The label-setting DP finds max_s phi_j(s) over every schedule P2 enumerates, at random prices."""
    inst = _variant(seed)
    v = hadar_view(inst)
    rng = np.random.default_rng(100 + seed)
    for _ in range(5):
        k = rng.uniform(0, 4, size=(*v.capacity.shape, v.horizon + 1))
        for j in range(v.n_jobs):
            enumerated = [
                u - sum(k[h, r, t] * n for t, g in plan.items() for (h, r), n in g.items())
                for plan, u in schedules(v, j)
            ]
            s = best_schedule(v, j, k)
            assert (s is None) == (not enumerated)
            if s is not None:
                assert s.payoff == pytest.approx(max(enumerated), abs=1e-9)
                # the plan it returns has the payoff it claims
                cost = sum(k[h, r, t] * n for t, g in s.plan.items() for h, r, n in g)
                assert s.payoff == pytest.approx(s.utility - cost) and s.finish == max(s.plan)


def test_any_prices_bound_lp_p2_from_above():
    v = hadar_view(load_instance(TINY))
    rng = np.random.default_rng(0)
    for _ in range(20):
        k = rng.uniform(0, 3, size=(*v.capacity.shape, v.horizon + 1))
        assert dual_value(v, k)[0] >= 79 / 3 - 1e-9  # LP(P2) = P3 = 79/3 on hadar_tiny
    with pytest.raises(ValueError):
        dual_value(v, -np.ones((*v.capacity.shape, v.horizon + 1)))


def test_column_generation_reaches_lp_p2_and_its_pool_is_feasible():
    inst = load_instance(TINY)
    v = hadar_view(inst)
    cg = lp_p2(v)
    assert (
        cg.converged and cg.bound == pytest.approx(79 / 3) and cg.lp_value == pytest.approx(79 / 3)
    )
    assert dual_value(v, cg.prices)[0] == pytest.approx(
        79 / 3
    )  # the prices of the best bound certify it
    report = validate_decisions(inst, cg.decisions)
    assert report.valid and report.utility == pytest.approx(cg.value) and cg.value <= 74 / 3 + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_column_generation_matches_the_enumerated_lp(seed):
    from hetsched.exact.solve import solve

    inst = _variant(seed)
    v = hadar_view(inst)
    cg = lp_p2(v, plans=plans_of(v, hadar_online(inst).decisions))
    assert cg.converged and cg.bound == pytest.approx(
        solve(inst, "hadar-p2-lp", "highs").objective, rel=1e-7
    )


def test_iteration_limit_still_returns_a_valid_bound():
    inst = load_instance(FIG1)
    v = hadar_view(inst)
    cg = lp_p2(v, max_iterations=1)
    assert (
        not cg.converged and cg.bound >= 80 / 3 + 15 + 50 / 7
    )  # P1's optimum (test_hadar_foundation)


def test_online_certificate_on_fig1(capsys):
    import json

    from hetsched.cli import main

    assert main(["online", str(FIG1), "--json", "--tight-dual"]) == 0
    out = json.loads(capsys.readouterr().out)
    opt = 80 / 3 + 15 + 50 / 7
    d = out["dual"]
    assert d["primal"] == pytest.approx(out["primal_utility"]) and d["dual_at_online_prices"] >= opt
    assert d["lp_converged"] and opt <= d["lp_bound"] <= d["dual_at_online_prices"]
    assert d["upper_bound_on_opt"] == d["lp_bound"]
    assert d["online_over_opt_at_least"] == pytest.approx(out["primal_utility"] / d["lp_bound"])
    assert out["utility"] == pytest.approx({"J1": 80 / 3, "J2": 15, "J3": 50 / 8})
