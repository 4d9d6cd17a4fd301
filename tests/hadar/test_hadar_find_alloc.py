"""The compiled FIND_ALLOC of the searches (:mod:`hetsched.hadar.find_kernel`) returns exactly the
literal one's candidate on every state of whole searches (several utilities, select rules and a
communication cost); the compiled DP and branch and bound reach the literal DP's optimum, and
the DP's states are counted exactly without evaluating them; and
Hadar's online policy makes the same decisions with the literal DP as with the compiled one."""

from functools import lru_cache

import numpy as np
import pytest

from hetsched.hadar import dp_kernel, find_kernel
from hetsched.hadar.branch_and_bound import dp_allocation_bnb
from hetsched.hadar.dp_allocation import canonical_order, dp_allocation, find_alloc
from hetsched.hadar.price import price_function
from hetsched.hadar.slot import Candidate, Slot
from hetsched.hadar.slot_arrays import SlotArrays
from hetsched.hadar.view import hadar_view
from hetsched.instance.generators import hadar_cluster
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.registry import make_policy
from hetsched.sim.workloads import gavel_poisson, load_workload


def literal_dp(slot: Slot, check: bool = False, **opts) -> tuple[float, dict[int, Candidate], int]:
    """DP_allocation as printed (lines 1-21, on payoffs), memoized on (index, free GPUs), with the
    literal FIND_ALLOC: (value, job -> candidate, states). ``check``: at every state, the
    compiled FIND_ALLOC must return the literal candidate. The memo's key is the free GPUs with
    identical machines in FIND_ALLOC's order (:func:`canonical_order`): the vectors that differ
    by a relabelling of identical machines have the same value; the chosen jobs' candidates are
    then found again at the GPUs the ones before them leave."""
    view, queue = slot.view, slot.queue
    cap = view.capacity

    def canonical(free: np.ndarray) -> tuple:
        return tuple(free[canonical_order(free, view.machine_class)].ravel().tolist())

    arrays = SlotArrays.of(slot, **opts)
    calls = [0]

    def literal(j: int, free: np.ndarray) -> Candidate | None:
        return find_alloc(
            view, j, free, cap - free, slot.prices, float(slot.remaining[j]), slot.t, **opts
        )

    @lru_cache(maxsize=None)
    def best(idx: int, key: tuple) -> tuple[float, tuple]:
        free = np.array(key, dtype=np.int64).reshape(cap.shape)
        if idx >= len(queue) or not free.any():
            return 0.0, ()
        skip = best(idx + 1, key)
        cand = literal(queue[idx], free)
        if check:
            assert arrays.find(idx, free) == cand, (idx, key)
            calls[0] += 1
        if cand is None:
            return skip
        after = free.copy()
        for h, r, n in cand.alloc:
            after[h, r] -= n
        rest = best(idx + 1, canonical(after))
        value = cand.payoff + rest[0]
        return (value, (idx, rest[1])) if value > skip[0] else skip

    value, chain = best(0, canonical(slot.free_gpus()))
    states = best.cache_info().currsize
    best.cache_clear()
    chosen = {}
    free = slot.free_gpus()
    while chain:
        idx, chain = chain
        cand = literal(queue[idx], free)
        chosen[queue[idx]] = cand
        for h, r, n in cand.alloc:
            free[h, r] -= n
    assert not check or calls[0] > len(queue)
    return value, chosen, states


OPTIONS = [
    {},
    {"select": "max-payoff"},
    {"comm_cost": 0.05},
    {"utility_name": "reciprocal-jct"},
    {"utility_name": "finish-time-fairness"},
]


@pytest.mark.parametrize("seed,n", [(0, 8), (1, 10), (2, 12), (5, 14)])
@pytest.mark.parametrize("opts", OPTIONS)
def test_every_state_of_a_search_gets_the_literal_candidate(seed, n, opts):
    inst = hadar_cluster(seed, n_jobs=n)
    v = hadar_view(inst)
    queue = list(range(n))
    prices = price_function(v, queue)
    remaining = v.work.astype(float) * np.linspace(0.3, 1.0, n)
    slot = Slot(v, queue, prices, remaining, 2)
    value, chosen, states = literal_dp(slot, check=True, **opts)
    stats: dict = {}
    dp_value, dp_chosen = dp_allocation(slot, stats=stats, **opts)
    assert (dp_value, dp_chosen, stats["states"]) == (value, chosen, states)
    arrays = SlotArrays.of(slot, **opts)
    args = (arrays.free0, arrays.find_args(), *arrays.key_args(), arrays.classes())
    assert dp_kernel.count_states(*args, -1) == states  # counted without evaluating them
    assert dp_kernel.count_states(*args, states // 2) > states // 2
    res = dp_allocation_bnb(slot, **opts)
    assert res.proven and res.value == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize("opts", OPTIONS)
def test_a_memo_of_consolidated_gangs_changes_no_candidate(opts):
    """FIND_ALLOC with the sweep's memo (a row per class of jobs, kept over every call) returns
    what it returns without, at the free GPUs of random partial allocations, each met several
    times."""
    inst = hadar_cluster(3, n_jobs=12)
    v = hadar_view(inst)
    queue = list(range(12))
    slot = Slot(v, queue, price_function(v, queue), v.work.astype(float), 2)
    arrays = SlotArrays.of(slot, **opts)
    job, (H, R), classes = arrays.find_args(), arrays.cap.shape, arrays.classes()
    codes = find_kernel.memo_codes(arrays.mclass, arrays.base, R, int(classes.max()) + 1)
    assert codes > 0
    memo, plain = find_kernel.scratch(H, R, classes, codes), find_kernel.scratch(H, R)
    assert memo[8].shape == (codes, int(classes.max()) + 1) and plain[8].size == 0
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(300):
        free = (arrays.free0 * rng.uniform(0, 1, arrays.free0.shape)).round().astype(np.int64)
        for i in rng.permutation(len(queue))[:4].tolist():
            known = int((memo[8] >= 0).sum())
            got = find_kernel.find(i, free, job, memo)
            assert got == find_kernel.find(i, free, job, plain)
            hits += int((memo[8] >= 0).sum()) == known
    assert hits > 100  # the memo answered from what it knew


@pytest.mark.parametrize("workload", ["philly-static:0e4a51", "gavel-poisson"])
def test_the_online_policy_decides_the_same_with_the_literal_dp(monkeypatch, workload):
    """hadar:dp with the compiled DP and with the literal one: the same completions and GPUs, to
    the bit, on a multi-GPU Philly window (12 jobs at time 0) and on 30 Poisson arrivals (gangs
    of 1-8 GPUs on 12 GPUs)."""
    if workload == "gavel-poisson":
        inst = gavel_poisson(1, n_jobs=30, rate_per_hour=60.0, per_type=4)
    else:
        inst = load_workload(workload, n_jobs=12)
    fast = simulate_gang(inst, make_policy("hadar:dp"))

    def literal(slot, state_budget=None):
        value, chosen, _ = literal_dp(slot)
        return value, chosen

    monkeypatch.setattr("hetsched.sim.gang_policies.hadar.dp_allocation", literal)
    slow = simulate_gang(inst, make_policy("hadar:dp"))
    assert fast.completion == slow.completion
    assert [s.gpus for s in fast.segments] == [s.gpus for s in slow.segments]


@pytest.mark.parametrize("seed", [0, 3])
def test_identical_machines_relabelled_change_nothing_but_their_names(seed):
    """FIND_ALLOC visits identical machines most free first (:func:`canonical_order`), so at
    free GPUs whose identical machines are relabelled it returns the same gang relabelled (up to
    machines in the same state), and the DP the same value; the DP keeps one vector per relabelling class, fewer than the vectors it
    meets (on this cluster of 5 identical machines per type)."""
    inst = hadar_cluster(seed, n_jobs=10)
    v = hadar_view(inst)
    queue = list(range(10))
    slot = Slot(v, queue, price_function(v, queue), v.work.astype(float) * 0.5, 2)
    rng = np.random.default_rng(seed)
    cls = v.machine_class
    assert len(np.unique(cls)) < len(cls)  # identical machines to relabel
    for _ in range(50):
        free = (v.capacity * rng.uniform(0, 1, v.capacity.shape)).round().astype(np.int64)
        sigma = np.arange(len(cls))  # a random relabelling within each class
        for c in np.unique(cls):
            members = np.flatnonzero(cls == c)
            sigma[members] = rng.permutation(members)
        moved = np.empty_like(free)
        moved[sigma] = free  # machine h's GPUs are now machine sigma[h]'s
        order = canonical_order(free, cls)
        assert np.array_equal(free[order], moved[canonical_order(moved, cls)])
        for j in queue[:4]:
            args = (float(slot.remaining[j]), slot.t)
            a = find_alloc(v, j, free, v.capacity - free, slot.prices, *args)
            b = find_alloc(v, j, moved, v.capacity - moved, slot.prices, *args)
            assert (a is None) == (b is None)
            if a is not None:  # the same gang up to machines of equal rows: the same rest
                left_a, left_b = free.copy(), moved.copy()
                for h, r, n in a.alloc:
                    left_a[h, r] -= n
                for h, r, n in b.alloc:
                    left_b[h, r] -= n
                canon_a = left_a[canonical_order(left_a, cls)]
                assert np.array_equal(canon_a, left_b[canonical_order(left_b, cls)])
                assert (b.cost, b.payoff) == (a.cost, a.payoff)
    value, _, states = literal_dp(slot)
    stats: dict = {}
    assert dp_allocation(slot, stats=stats)[0] == value and stats["states"] == states
    # the same DP keyed on the vectors as met: more states, the same value
    seen: set = set()

    def met(idx: int, free: np.ndarray) -> None:
        key = (idx, free.tobytes())
        if key in seen:
            return
        seen.add(key)
        if idx >= len(queue) or not free.any():
            return
        met(idx + 1, free)
        args = (float(slot.remaining[queue[idx]]), slot.t)
        cand = find_alloc(v, queue[idx], free, v.capacity - free, slot.prices, *args)
        if cand is not None:
            after = free.copy()
            for h, r, n in cand.alloc:
                after[h, r] -= n
            met(idx + 1, after)

    met(0, slot.free_gpus())
    assert len(seen) > states
