"""Deleting columns from the master as it grows (``RestrictedMaster.purge`` and ``shrink``; at
the root always, in the nodes with ``shrink_nodes``): the LP keeps its optimum and its basis, and
a search that shrinks the master at every round proves what one that never does proves."""

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_colgen import _gap_data, _gap_problem, close

from hetsched.exact.solve import solve
from hetsched.instance.generators import ladder
from hetsched.solvers import SolverOptions, Status
from hetsched.solvers.colgen import restricted, solve_colgen
from hetsched.solvers.colgen.master import _root


@given(st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_a_purge_keeps_the_basis_the_lp_optimum_and_the_order_of_the_columns(seed, share):
    """Whatever is asked to go, the basic columns stay: the next solve starts from the same
    basis (no simplex iteration) at the same optimum, and the kept columns keep their order."""
    cost, size, cap = _gap_data(np.random.default_rng(seed))
    master, run = _root(_gap_problem(cost, size, cap), math.inf, 0, 0.8)
    value = master.solve_lp()[0]
    before = list(master.columns)
    drop = np.flatnonzero(np.random.default_rng(seed).random(len(before)) < share)
    where = master.purge(drop)
    kept = np.flatnonzero(where >= 0)
    assert master.columns == [before[i] for i in kept]
    assert np.array_equal(where[kept], np.arange(len(kept)))
    assert set(kept) >= set(range(len(before))) - set(drop.tolist())
    assert close(master.solve_lp()[0], value)
    if len(kept) < len(before):  # re-solved (else the last solve stands): from the same basis
        assert master.h.getInfo().simplex_iteration_count == 0


def _brute_force(cost, size, cap) -> float:
    n_items, n_bins = cost.shape
    return min(
        sum(cost[i, b] for i, b in enumerate(a))
        for a in itertools.product(range(n_bins), repeat=n_items)
        if all(sum(size[i, b] for i, b in enumerate(a) if b == k) <= cap[k] for k in range(n_bins))
    )


def _shrinking_everywhere(seed: int):
    """(cost, size, capacity, enumerated optimum, the engine's result) of a generalized
    assignment instance solved with the master shrunk wherever it passes its rows."""
    cost, size, cap = _gap_data(np.random.default_rng(seed))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(restricted, "PURGE_MIN", 0)
        problem = dataclasses.replace(_gap_problem(cost, size, cap), shrink_nodes=True)
        raw = solve_colgen(problem, SolverOptions(time_limit=30))
    return cost, size, cap, _brute_force(cost, size, cap), raw


@given(st.integers(0, 10_000))
def test_branch_and_price_purging_at_every_node_still_proves_the_optimum(seed):
    """With the threshold at its least (the master's rows), columns go in nearly every round of
    the root and the nodes; the search still returns a feasible solution and brackets (or
    proves) the enumerated optimum."""
    cost, size, cap, best, raw = _shrinking_everywhere(seed)
    chosen = raw.solution.columns
    assert sorted(c.block for c in chosen) == list(range(cost.shape[0]))
    used = np.zeros(cost.shape[1])
    for c in chosen:
        used[c.payload] += size[c.block, c.payload]
    assert np.all(used <= cap)
    assert close(sum(c.cost for c in chosen), raw.objective)
    assert raw.bound <= best + 1e-9 <= raw.objective + 2e-9
    if raw.status == Status.OPTIMAL:
        assert close(raw.objective, best)


@pytest.mark.parametrize("seed", [0, 3])
def test_purging_hare_branch_and_price_agrees_with_cpsat(seed):
    """ladder(8, 2) with seeds whose root bound is below the optimum, so only branching closes
    it: shrinking the master wherever it passes its rows proves CP-SAT's optimum with a valid
    schedule."""
    inst = ladder(8, 2, seed=seed)
    a = solve(inst, "hare-sched", "cpsat", time_limit=60)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(restricted, "PURGE_MIN", 0)
        b = solve(inst, "hare-sched", "colgen", time_limit=60, options={"shrink_nodes": True})
    assert a.status == b.status == Status.OPTIMAL
    assert close(a.objective, b.objective) and b.validation.valid
    assert "; 0 columns purged" not in b.log and "columns purged" in b.log


@pytest.mark.parametrize("seed", [66, 71, 135, 233, 292])
def test_bins_two_items_share_are_not_branched_on_and_no_node_is_cut_off_by_the_artificials(seed):
    """Seeds whose search, shrinking the master, once claimed a wrong optimum: a bin holds
    several items, so banning an item from a bin and the others from it is not a partition
    (the engine branches on costs only there, ``exclusive_rows``), and a node whose LP
    duals were inflated by the artificial columns was cut off as if it had no column."""
    *_, best, raw = _shrinking_everywhere(seed)
    assert raw.bound <= best + 1e-9 <= raw.objective + 2e-9
    if raw.status == Status.OPTIMAL:
        assert close(raw.objective, best)
