"""The slot search's type bound (hetsched.hadar.type_bound): at or above the DP's optimum from
every state it is asked at, the searches with it end at the memoized DP's optimum, and it is
the LP relaxation's value at the slot's start."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.hadar import bnb_kernel
from hetsched.hadar.branch_and_bound import _search, dp_allocation_bnb
from hetsched.hadar.dp_allocation import dp_allocation
from hetsched.hadar.price import price_function
from hetsched.hadar.slot import Slot
from hetsched.hadar.slot_arrays import SlotArrays
from hetsched.hadar.view import hadar_view
from hetsched.instance.generators import hadar_cluster


def _slot(seed: int, n: int, keep: float = 1.0) -> Slot:
    """A slot of ``n`` jobs on hadar-cluster with about ``keep`` of each cell's GPUs free."""
    v = hadar_view(hadar_cluster(seed, n_jobs=n))
    queue = list(range(n))
    free = np.floor(v.capacity * keep).astype(np.int64)
    return Slot(v, queue, price_function(v, queue), v.work.astype(float), 1, free)


def _type_part(arrays: SlotArrays, idx: int, free: np.ndarray) -> float:
    """L(idx, F) alone: the knapsack of net payoffs plus lambda . f."""
    H, R = arrays.cap.shape
    f = free.reshape(H, R).sum(axis=0)
    return float(arrays.suffix_net[idx, int(f.sum())] + arrays.lam @ f)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 9), st.sampled_from([1.0, 0.5, 0.25]))
def test_the_type_bound_is_above_the_dps_optimum_from_every_state(seed, n, keep):
    """From queue position idx and free GPUs F <= the slot's (any: a search meets only some),
    the DP over the rest of the queue earns at most L(idx, F) and the search's combined bound."""
    slot = _slot(seed, n, keep)
    arrays = SlotArrays.of(slot).with_type_bound()
    assert (arrays.lam >= 0).all()
    rng = np.random.default_rng(seed)
    for _ in range(4):
        idx = int(rng.integers(0, n))
        free = rng.integers(0, arrays.free0 + 1)
        rest = Slot(slot.view, slot.queue[idx:], slot.prices, slot.remaining, slot.t, None)
        rest = Slot(
            rest.view,
            rest.queue,
            rest.prices,
            rest.remaining,
            rest.t,
            free.reshape(arrays.cap.shape),
        )
        best, _ = dp_allocation(rest)
        assert _type_part(arrays, idx, free) >= best - 1e-9
        combined = bnb_kernel.node_bound(
            idx,
            n,
            free,
            arrays.cap,
            arrays.price_rank,
            arrays.price_sorted,
            int(arrays.need.max()),
            arrays.suffix_value,
            arrays.lam,
            arrays.suffix_net,
            np.zeros(arrays.price_sorted.shape[0], np.int64),
        )
        assert combined >= best - 1e-9


@pytest.mark.parametrize("seed,n,keep", [(2, 12, 1.0), (4, 14, 1.0), (5, 20, 0.5), (6, 12, 0.25)])
def test_searches_with_the_type_bound_end_at_the_dps_optimum(seed, n, keep):
    slot = _slot(seed, n, keep)
    dp_value, _ = dp_allocation(slot)
    plain = SlotArrays.of(slot)
    typed = plain.with_type_bound()
    for arrays in (plain, typed):
        value, _, upper, proven, _ = _search(arrays, 10**7, np.inf)
        assert proven and value == pytest.approx(dp_value, rel=1e-12) and upper == value
    res = dp_allocation_bnb(slot)  # the demand decides whether it takes the type bound
    assert res.proven and res.value == pytest.approx(dp_value, rel=1e-12)


def test_at_the_slots_start_the_type_bound_is_the_lp_relaxation():
    """L(0, F0) is the optimum of the LP over speed levels (x_jq: job j at the rate of its q-th
    fastest type; z_jqr: its GPUs of type r among its q fastest; scipy, another formulation than
    the transportation LP whose duals are lambda): the two agree where utility falls with a
    gang's slowest type, as it does here."""
    from scipy.optimize import linprog

    slot = _slot(4, 14)
    a = SlotArrays.of(slot).with_type_bound()
    H, R = a.cap.shape
    free = a.free0.reshape(H, R)
    level = a.cap - free
    at = np.take_along_axis(a.price, level[:, :, None], axis=2)[:, :, 0]
    least = np.where((a.cap > 0) & (free > 0), at, np.inf).min(axis=0)
    # variables: x_jq, then z_jqr for each type r among job j's q fastest
    xs = [(j, q) for j in range(len(a.need)) for q in range(int(a.n_order[j]))]
    zs = [(k, int(a.order[j, qq])) for k, (j, q) in enumerate(xs) for qq in range(q + 1)]
    zs = [(k, r) for k, r in zs if np.isfinite(least[r])]
    nx, nz = len(xs), len(zs)
    cost = np.concatenate([[-a.util[j, a.order[j, q]] for j, q in xs], [least[r] for _, r in zs]])
    a_ub = np.zeros((R + len(a.need), nx + nz))
    a_eq = np.zeros((nx, nx + nz))
    for k, (j, q) in enumerate(xs):
        a_ub[R + j, k] = 1.0
        a_eq[k, k] = -a.need[j]
    for i, (k, r) in enumerate(zs):
        a_ub[r, nx + i] = 1.0
        a_eq[k, nx + i] = 1.0
    b_ub = np.concatenate([free.sum(axis=0), np.ones(len(a.need))])
    bounds = [(0, 1)] * nx + [(0, None)] * nz
    lp = linprog(cost, a_ub, b_ub, a_eq, np.zeros(nx), bounds, method="highs")
    assert lp.status == 0
    assert _type_part(a, 0, a.free0) == pytest.approx(-lp.fun, rel=1e-7, abs=1e-7)


def test_the_type_bounds_lp_is_left_free_of_its_reference_cycle(monkeypatch):
    """Each slot's LP (a highspy.Highs, whose callbacks refer to it) has its cycle broken, so
    reference counting frees it: the simulators pause the collector, and a run on the
    multi-GPU Philly window kept every slot's LP until it ended (2.3 GB)."""
    import gc
    import weakref

    import highspy

    from hetsched.hadar import type_bound
    from hetsched.solvers.highs_run import release

    made = []
    run = type_bound.run_highs

    def tracked(lp, *args):
        h, seconds = run(lp, *args)
        made.append(h)
        return h, seconds

    monkeypatch.setattr(type_bound, "run_highs", tracked)
    slot = _slot(3, 12, 0.25)
    for _ in range(3):
        SlotArrays.of(slot).with_type_bound()
    assert len(made) == 3 and all(len(h.callbacks) == 0 for h in made)
    was = gc.isenabled()
    gc.disable()
    try:
        h = highspy.Highs()
        kept = weakref.ref(h)
        del h
        h = highspy.Highs()
        freed = weakref.ref(h)
        release(h)
        del h
        assert kept() is not None and freed() is None  # the cycle, and release breaking it
    finally:
        if was:
            gc.enable()
