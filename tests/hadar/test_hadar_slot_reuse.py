"""What ``hadar`` carries from one slot to the next (hetsched.sim.gang_policies.hadar): the
arrays of a later slot of the same queue (SlotArrays.with_progress), price tables taken from
another slot's arrays (SlotArrays.of(like=...)), the plan's value loop alone
(DpPlan.solve_again), the gangs replayed compiled (SlotArrays.chosen), the price function over
arrays (price.price_function); each against what it replaces, and a whole run against one
that rebuilds every slot."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.hadar.dp_allocation import DpPlan, dp_allocation
from hetsched.hadar.job_table import JobTable
from hetsched.hadar.price import durations, price_function, prices_of_terms
from hetsched.hadar.slot import Slot
from hetsched.hadar.slot_arrays import SlotArrays
from hetsched.hadar.utility import utility
from hetsched.hadar.view import hadar_view
from hetsched.instance.generators import hadar_cluster
from hetsched.testing.hadar_slots import queue_slots


def _same_arrays(a: SlotArrays, b: SlotArrays) -> bool:
    for name in a.__dataclass_fields__:
        x, y = getattr(a, name), getattr(b, name)
        # where the arrays were read from, not what they are; the replay's scratch
        if name in ("slot", "table", "at", "work"):
            continue
        if isinstance(x, np.ndarray):
            if x.shape != y.shape or not np.array_equal(x, y):
                return False
        elif x != y:
            return False
    return True


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 12), st.sampled_from([1.0, 0.5]))
def test_a_later_slot_of_the_same_queue_gets_the_arrays_built_from_scratch(seed, n, keep):
    first, *later = queue_slots(seed, max(n, 1), keep, 4)
    arrays = SlotArrays.of(first)
    for slot in later:
        again = arrays.with_progress(slot)
        assert _same_arrays(again, SlotArrays.of(slot))
        # the type bound is built on the new utilities, as from scratch
        assert _same_arrays(again.with_type_bound(), SlotArrays.of(slot).with_type_bound())
        arrays = again


def test_progress_is_refused_for_another_queue():
    a, b = queue_slots(1, 6, 1.0, 2)
    other = Slot(b.view, b.queue[:-1], b.prices, b.remaining, b.t, b.free)
    with pytest.raises(ValueError, match="same view and queue"):
        SlotArrays.of(a).with_progress(other)


def test_price_tables_are_taken_from_like_arrays_only_for_the_same_prices():
    slot = queue_slots(2, 10, 1.0, 1)[0]
    shorter = Slot(slot.view, slot.queue[:6], slot.prices, slot.remaining, slot.t)
    like = SlotArrays.of(slot)
    taken = SlotArrays.of(shorter, like=like)
    assert taken.price is like.price  # the same tables, not built again
    assert _same_arrays(taken, SlotArrays.of(shorter))
    cheaper = Slot(
        slot.view, slot.queue[:6], price_function(slot.view, slot.queue[:3]), slot.remaining, 1
    )
    rebuilt = SlotArrays.of(cheaper, like=like)
    assert rebuilt.price is not like.price and not np.array_equal(rebuilt.price, like.price)
    assert _same_arrays(rebuilt, SlotArrays.of(cheaper))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 12), st.sampled_from([1.0, 0.5]))
def test_the_chosen_gangs_are_find_alloc_job_by_job(seed, n, keep):
    slot = queue_slots(seed, n, keep, 1)[0]
    arrays = SlotArrays.of(slot)
    _, chosen = dp_allocation(slot)
    position = {j: i for i, j in enumerate(slot.queue)}
    taken = np.array(sorted(position[j] for j in chosen), dtype=np.int64)
    free = slot.free_gpus()
    one_by_one = {}
    for i in taken.tolist():
        cand = arrays.find(i, free)
        for h, r, k in cand.alloc:
            free[h, r] -= k
        one_by_one[slot.queue[i]] = cand
    assert arrays.chosen(taken) == one_by_one == chosen
    jobs, count, rows = arrays.gangs(taken)  # the same gangs as arrays, in queue order
    assert jobs.tolist() == list(chosen) and count.tolist() == [
        len(c.alloc) for c in chosen.values()
    ]
    assert [tuple(r) for r in rows.tolist()] == [t for c in chosen.values() for t in c.alloc]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 12), st.sampled_from([1.0, 0.5]))
def test_the_plans_value_loop_alone_solves_a_later_slot_of_the_same_queue(seed, n, keep):
    first, *later = queue_slots(seed, n, keep, 4)
    plan = DpPlan(10**9)
    arrays = SlotArrays.of(first)
    assert plan.solve_arrays(arrays) is not None
    for slot in later:
        arrays = arrays.with_progress(slot)
        value, taken = plan.solve_again(arrays)
        best, chosen = dp_allocation(slot)
        assert value == best and arrays.chosen(taken) == chosen
    assert len(plan.reaches) == 1
    assert DpPlan(0).solve_again(arrays) is None  # nothing solved yet: nothing to repeat


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 30))
def test_the_price_function_is_the_per_job_formula(seed, n):
    v = hadar_view(hadar_cluster(seed, n_jobs=n))
    rng = np.random.default_rng(seed)
    queue = sorted(rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False).tolist())
    for name in ("effective-throughput", "reciprocal-jct", "finish-time-fairness"):
        t_min, t_max = durations(v, queue)
        u_max = max(utility(v, name, j, t) / v.workers[j] for j, t in zip(queue, t_min))
        u_min = min(
            utility(v, name, j, v.jct(j, v.horizon)) / (t * v.workers[j])
            for j, t in zip(queue, t_max)
        ) / (4 * 1.5)
        got = price_function(v, queue, name, eta=1.5)
        assert (got.u_max, got.u_min) == (u_max, u_min)  # the same floats


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 30))
def test_a_table_of_every_job_gives_the_arrays_and_prices_of_the_queue_alone(seed, n):
    """What an online run reads from one table of the whole trace (JobTable) is what a slot
    works out over its queue: the arrays, the class keys and classes, the prices (6)-(7)."""
    v = hadar_view(hadar_cluster(seed, n_jobs=n))
    rng = np.random.default_rng(seed)
    queue = rng.permutation(n)[: int(rng.integers(1, n + 1))].tolist()  # a subset, any order
    for name in ("effective-throughput", "reciprocal-jct", "finish-time-fairness"):
        table = JobTable.of(v, name)
        at = np.asarray(queue)
        prices = prices_of_terms(table.u_max_term[at], table.u_min_term[at], 1.5)
        assert prices == price_function(v, queue, name, eta=1.5)  # the same floats
        slot = Slot(v, queue, prices, v.work.astype(float), 2)
        alone, shared = SlotArrays.of(slot, name), SlotArrays.of(slot, name, table=table)
        assert _same_arrays(alone, shared)
        assert np.array_equal(alone.classes(), shared.classes())
        # a table of another utility is not taken for this one
        assert SlotArrays.of(slot, "reciprocal-jct", table=table).table.utility_name == (
            "reciprocal-jct"
        )


def test_a_run_that_carries_the_last_slot_equals_one_that_rebuilds_every_slot():
    """The same decisions, slot for slot, and every slot proven, on a Philly window and on the
    stable load: what the last slot leaves (arrays, plan, gangs, GPUs) changes no choice."""
    from hetsched.sim.gang_engine import simulate_gang
    from hetsched.sim.gang_policies.hadar import Hadar
    from hetsched.sim.workloads import load_workload, philly_window

    class Rebuilding(Hadar):
        def allocate(self, state):
            self.last = None
            return super().allocate(state)

    stable = load_workload("gavel-poisson:stable", n_jobs=60, seed=0)
    for inst in (philly_window(0, n_jobs=24, per_type=2), stable):
        carried, rebuilt = Hadar(), Rebuilding()
        runs = [simulate_gang(inst, p, restore_seconds=10.0) for p in (carried, rebuilt)]
        assert runs[0].segments == runs[1].segments
        a, b = carried.solver_stats(), rebuilt.solver_stats()
        assert a["proven_slots"] == a["slots"] == b["slots"] == b["proven_slots"]
        assert a["proven_by_dp"] > 0
