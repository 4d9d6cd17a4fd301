"""The finish-time fairness bisection's proven ends (:mod:`hetsched.gavel.ftf`): a feasible
test's allocation attains its max rho (:func:`attained_rho`); a failed test's z proves
:func:`infeasible_below`; and the bisection that jumps to them ends where plain halving ends."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_allocation import random_instance

from hetsched.gavel import allocation_view
from hetsched.gavel.ftf import bisect_rho, fast_test, infeasible_below
from hetsched.gavel.policies import attained_rho, denominators, need, policy_view, waited
from hetsched.gavel.validate import check_allocation
from hetsched.solvers import Status


def _waiting(seed: int, n: int, now: float = 400.0):
    inst = dataclasses.replace(random_instance(seed, n), metadata={"now": now})
    rng = np.random.default_rng(seed)
    arrivals = np.sort(rng.uniform(0.0, now, n))
    jobs = tuple(dataclasses.replace(j, arrival=float(a)) for j, a in zip(inst.jobs, arrivals))
    inst = dataclasses.replace(inst, jobs=jobs)
    view = policy_view(allocation_view(inst), "finish-time-fairness")
    return inst, view, waited(view, inst)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 9),
    convention=st.sampled_from(["hetsched", "gavel"]),
)
def test_a_feasible_tests_allocation_attains_at_most_its_rho(seed, n, convention):
    inst, view, t = _waiting(seed, n)
    d = denominators(view, t, convention)
    rho = 1.5 * float(np.max(t / d)) + 1.0  # loose: feasible
    status, z, x = fast_test(view, t, convention, d=d)(rho)
    assert status == Status.OPTIMAL and z >= 1.0
    got = attained_rho(view, t, d, x)
    assert got <= rho * (1 + 1e-9)
    by_hand = max(  # rho_j = (t_j + R_j / thr_j(x)) / D_j, job by job
        (t[j] + view.steps[j] / sum(view.throughput[j, r] * x[j, r] for r in range(x.shape[1])))
        / d[j]
        for j in range(n)
    )
    assert got == pytest.approx(by_hand, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 9), frac=st.floats(0.05, 0.95))
def test_below_what_a_failed_test_proves_every_test_fails(seed, n, frac):
    _, view, t = _waiting(seed, n)
    d = denominators(view, t)
    test = fast_test(view, t, "hetsched", method="simplex", d=d)
    best = bisect_rho(view, t, test, tol=1e-10).hi  # the optimum, to 1e-10
    lo = float(np.max(t / d))
    rho = lo + frac * (best - lo)
    status, z, _ = test(rho)
    assert status == Status.OPTIMAL and z < 1.0
    proven = infeasible_below(t, d, rho, z)
    assert rho <= proven <= best * (1 + 1e-9)
    below = proven - 1e-7 * proven
    if below > rho:
        assert test(below)[1] < 1.0


@pytest.mark.parametrize("seed", range(6))
def test_the_jumps_end_where_plain_halving_ends_in_fewer_tests(seed):
    _, view, t = _waiting(seed, 8)
    d = denominators(view, t)
    calls = []

    def counted(rho):
        calls.append(rho)
        return fast_test(view, t, "hetsched", method="simplex", d=d)(rho)

    jumped = bisect_rho(view, t, counted, tol=1e-9)
    hi, lo, halving = 1.0, float(np.max(t / d)), 0  # plain halving, the same tests
    while hi - lo > 1e-9 * hi:
        mid = (lo + hi) / 2
        status, z, _ = fast_test(view, t, "hetsched", method="simplex", d=d)(mid)
        hi, lo = (mid, lo) if status == Status.OPTIMAL and z >= 1.0 else (hi, mid)
        halving += 1
    assert jumped.hi == pytest.approx(hi, rel=2e-9) and jumped.lo <= jumped.hi
    assert attained_rho(view, t, d, jumped.x) <= jumped.hi * (1 + 1e-12)
    assert len(calls) - 1 < halving  # the first call is the start's test at rho = 1


@pytest.mark.parametrize("seed", range(4))
def test_finish_time_fairness_by_the_dense_simplex_bisects_to_highs_rho_and_the_tiebreak_keeps_it(
    seed,
):
    """The simulated finish-time fairness under our convention: the bisection's tests by the
    dense simplex reach HiGHS's rho; the allocation kept, picked among the last feasible
    test's optima by the tie-break, still meets every job's need at that rho and gives at
    least the plain optimum's total."""
    _, view, t = _waiting(seed, 6)
    highs = bisect_rho(view, t, fast_test(view, t, "hetsched", method="ipm"), tol=1e-9)
    dense = fast_test(view, t, "hetsched", method="dense", merge=False)
    plain = bisect_rho(view, t, dense, tol=1e-9)
    tied = fast_test(view, t, "hetsched", method="dense", merge=False, tiebreak=True)
    chosen = bisect_rho(view, t, dense, tol=1e-9, choose=tied)
    assert plain.hi == pytest.approx(highs.hi, rel=1e-7)
    assert (chosen.lo, chosen.hi) == (plain.lo, plain.hi)
    a = view.throughput / need(view, t, chosen.hi)[:, None]
    assert float((a * chosen.x).sum(axis=1).min()) >= 1.0 - 1e-7
    assert float((a * chosen.x).sum()) >= float((a * plain.x).sum()) - 1e-7
    assert check_allocation(view, chosen.x) == []


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 12))
def test_the_compiled_bisection_is_the_python_loop_with_dense_tests(seed, n):
    from hetsched.gavel import ftf_kernel

    inst, view, t = _waiting(seed, n)
    d = denominators(view, t, "hetsched")

    def dense(tiebreak):
        return fast_test(view, t, "hetsched", method="dense", merge=False, tiebreak=tiebreak, d=d)

    found = bisect_rho(view, t, dense(False), tol=1e-6, choose=dense(True), d=d)
    arrays = [np.ascontiguousarray(v, dtype=float) for v in (view.throughput, view.scale)]
    arrays += [np.ascontiguousarray(v, dtype=float) for v in (view.count, view.steps, d, t)]
    solved, lo, hi, x, tests = ftf_kernel.bisect_dense(*arrays, 1e-6, 100)
    assert solved and tests >= 0
    assert (lo, hi) == (found.lo, found.hi)  # the same floats, step by step
    assert np.array_equal(x, found.x)
    assert not check_allocation(view, x)
