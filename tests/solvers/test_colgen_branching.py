"""Branch-and-price's choice of a cost split (``DantzigWolfeProblem.strong_branching``): comparing
the most balanced splits by their children's LPs over the master's columns changes which tree
is searched, never what is proven."""

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_colgen import _gap_data, _gap_problem, close
from test_colgen_purge import _brute_force

from hetsched.core.errors import HetschedError
from hetsched.exact.solve import solve
from hetsched.instance.generators import ladder
from hetsched.solvers import SolverOptions, Status
from hetsched.solvers.colgen import solve_colgen


def _strong_lps(log: str) -> int:
    return int(re.search(r"(\d+) strong branching LPs", log).group(1))


@given(st.integers(0, 10_000), st.sampled_from([1, 2, 8]), st.booleans())
def test_every_split_rule_brackets_the_enumerated_optimum(seed, strong, shrink):
    """Generalized assignment, enumerated: whichever number of splits is compared, with or
    without the nodes shedding columns, the result is feasible, its bound is below the optimum
    and a proof is the optimum."""
    cost, size, cap = _gap_data(np.random.default_rng(seed))
    problem = dataclasses.replace(
        _gap_problem(cost, size, cap), strong_branching=strong, shrink_nodes=shrink
    )
    raw = solve_colgen(problem, SolverOptions(time_limit=30))
    best = _brute_force(cost, size, cap)
    assert close(sum(c.cost for c in raw.solution.columns), raw.objective)
    assert raw.bound <= best + 1e-9 <= raw.objective + 2e-9
    if raw.status == Status.OPTIMAL:
        assert close(raw.objective, best)
    if strong == 1:
        assert _strong_lps(raw.log) == 0  # the most balanced split, no LP solved to pick it


@pytest.mark.parametrize("seed", [10, 18])
def test_strong_branching_solves_two_lps_per_compared_split(seed):
    """Seeds whose search branches on several candidate splits: two LPs each, counted in the
    log, and the result is the one enumeration gives (or brackets it, unproven)."""
    cost, size, cap = _gap_data(np.random.default_rng(seed))
    problem = dataclasses.replace(_gap_problem(cost, size, cap), strong_branching=8)
    raw = solve_colgen(problem, SolverOptions(time_limit=30))
    lps = _strong_lps(raw.log)
    assert lps > 0 and lps % 2 == 0
    best = _brute_force(cost, size, cap)
    assert raw.bound <= best + 1e-9 <= raw.objective + 2e-9


def test_hare_branch_and_price_with_and_without_strong_branching_agrees_with_cpsat():
    """ladder(8, 2), seed 0 (its root bound is below the optimum): both split rules prove
    CP-SAT's optimum with a valid schedule."""
    inst = ladder(8, 2, seed=0)
    a = solve(inst, "hare-sched", "cpsat", time_limit=60)
    for strong in (1, 8):
        b = solve(inst, "hare-sched", "colgen", time_limit=60, options={"strong_branching": strong})
        assert a.status == b.status == Status.OPTIMAL
        assert close(a.objective, b.objective) and b.validation.valid
        assert (_strong_lps(b.log) > 0) == (strong > 1)  # it branched on costs


def test_strong_branching_option_is_checked():
    with pytest.raises(HetschedError, match="strong_branching: a whole number >= 1"):
        solve(ladder(8, 2, seed=0), "hare-sched", "colgen", options={"strong_branching": 0})
