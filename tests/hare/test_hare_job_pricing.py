"""Hare's job pricing (:class:`hetsched.hare.pricing.JobPricer`), the column generation's
pricing of one job's schedule at given GPU-tick prices, against enumeration of the job's
schedules."""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from hetsched.hare.pricing import JobPricer


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


@st.composite
def priced_jobs(draw):
    G = draw(st.integers(1, 3))
    K = draw(st.integers(1, 2))
    R = draw(st.integers(1, 2))
    H = draw(st.integers(6, 12))
    train = np.array([draw(st.integers(1, 3)) for _ in range(G)], dtype=np.int64)
    sync = np.array([draw(st.integers(0, 2)) for _ in range(G)], dtype=np.int64)
    arrival = draw(st.integers(0, 2))
    weight = float(draw(st.integers(1, 3)))
    prices = np.array([[draw(st.integers(0, 4)) for _ in range(H)] for _ in range(G)], dtype=float)
    return G, K, R, H, train, sync, arrival, weight, prices


def _enumerate_min(G, K, R, H, train, sync, arrival, weight, prices, done_by=None):
    """min over a job's schedules (those with C <= ``done_by`` if given) of w C + the price of
    its training ticks, by enumeration."""
    cycle = train + sync
    slots = [(g, t) for g in range(G) for t in range(H) if t + train[g] <= H]

    def task_price(g, t):
        return float(prices[g, t : t + train[g]].sum())

    @lru_cache(maxsize=None)
    def best(r, ready):
        out = np.inf
        for combo in itertools.combinations_with_replacement(slots, K):
            if any(t < ready for _, t in combo):
                continue
            ok = all(
                not (a[0] == b[0] and abs(a[1] - b[1]) < train[a[0]])
                for a, b in itertools.combinations(combo, 2)
            )  # (8) on the job's own GPUs
            if not ok:
                continue
            end = max(t + cycle[g] for g, t in combo)
            if end > H:
                continue
            if r < R - 1:
                rest = best(r + 1, end)
            else:
                rest = weight * end if done_by is None or end <= done_by else np.inf
            out = min(out, sum(task_price(g, t) for g, t in combo) + rest)
        return out

    return best(0, arrival)


def _pricer_and_prefix_sums(job):
    """The job's pricer with windows as wide as the horizon, and the prefix sums of its prices."""
    G, K, R, H, train, sync, arrival, weight, prices = job
    pricer = JobPricer(
        train=train,
        cycle=train + sync,
        tasks_per_round=K,
        rounds=R,
        weight=weight,
        arrival=arrival,
        ready_lo=np.full(R, arrival, dtype=np.int64),
        ready_hi=np.full(R, H, dtype=np.int64),
        completion_hi=H,
        horizon=H,
    )
    P = np.zeros((G, H + 1))
    P[:, 1:] = np.cumsum(prices, axis=1)
    return pricer, P


@given(priced_jobs())
def test_job_pricing_equals_enumeration(job):
    G, K, R, H, train, sync, arrival, weight, prices = job
    pricer, P = _pricer_and_prefix_sums(job)
    value, tasks, completion = pricer.price(P)
    expected = _enumerate_min(G, K, R, H, train, sync, arrival, weight, prices)
    if not np.isfinite(expected):
        assert value >= 1e299
        return
    assert close(value, expected)
    # the column returned is a schedule of the job and costs what the pricing says
    assert len(tasks) == K * R
    ends = {}
    for r in range(R):
        mine = [(g, t) for rr, g, t in tasks if rr == r]
        ready = arrival if r == 0 else ends[r - 1]
        assert all(t >= ready for _, t in mine)
        for a, b in itertools.combinations(mine, 2):
            assert a[0] != b[0] or abs(a[1] - b[1]) >= train[a[0]]
        ends[r] = max(t + train[g] + sync[g] for g, t in mine)
    assert completion == ends[R - 1]
    paid = sum(prices[g, t : t + train[g]].sum() for _, g, t in tasks)
    assert close(weight * completion + paid, value)


@given(priced_jobs(), st.integers(0, 12), st.integers(0, 12))
def test_job_pricing_by_completion_gives_the_least_price_of_each_completion_time(job, c_lo, c_hi):
    G, K, R, H, train, sync, arrival, weight, prices = job
    pricer, P = _pricer_and_prefix_sums(job)
    priced = pricer.price_by_completion(P, c_lo, c_hi, count=4)
    # by enumeration: the least price of a schedule done by e, and w e on top
    paid_by = {
        e: _enumerate_min(G, K, R, H, train, sync, arrival, 0.0, prices, done_by=e)
        for e in range(max(c_lo, arrival), min(c_hi, H) + 1)
    }
    by = {e: v + weight * e for e, v in paid_by.items() if np.isfinite(v)}
    if not by:
        assert priced == []
        return
    # the first entry is the least priced column of the range (what the Lagrangian bound needs)
    assert close(priced[0][0], min(by.values()))
    assert close(priced[0][0], pricer.price(P, c_lo, c_hi)[0])
    assert len({e for _, _, e in priced}) == len(priced)
    assert [v for v, _, _ in priced] == sorted(v for v, _, _ in priced)
    first = min(by)
    for value, tasks, e in priced:
        assert close(value, by[e])
        assert len(tasks) == K * R
        ends = max(t + train[g] + sync[g] for r, g, t in tasks if r == R - 1)
        assert ends == e or (e == first and ends < e)  # a column is charged its own completion
        paid = sum(prices[g, t : t + train[g]].sum() for _, g, t in tasks)
        assert close(weight * e + paid, value)
    # every completion time a schedule ends at exactly (its price drops there) and that was
    # left out is no cheaper than the last one returned
    if len(priced) == 4:
        returned = {e for _, _, e in priced}
        exact = [e for e in by if e > first and paid_by[e] < paid_by.get(e - 1, np.inf) - 1e-9]
        assert all(by[e] >= priced[-1][0] - 1e-6 for e in exact if e not in returned)
