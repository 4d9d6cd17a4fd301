"""DP_allocation over a plan kept across slots (hetsched.hadar.dp_allocation.DpPlan): the
literal DP's optimum and choice on every slot, whether the plan is new or kept, a superset of
the literal DP's states, a slot over its budget left unsolved; and ``hadar``, which falls back
on it where its branch and bound stops, proves every slot."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsched.hadar import dp_kernel
from hetsched.hadar.dp_allocation import DpPlan, dp_allocation
from hetsched.hadar.price import price_function
from hetsched.hadar.slot import Slot
from hetsched.hadar.slot_arrays import SlotArrays
from hetsched.testing.hadar_slots import queue_slots


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 12), st.sampled_from([1.0, 0.5, 0.25]))
def test_a_plan_gives_the_literal_dps_optimum_and_choice_on_every_slot(seed, n, keep):
    plan = DpPlan(10**9)
    slots = queue_slots(seed, n, keep, 3)
    for slot in slots:
        stats: dict = {}
        assert plan.solve(slot) == dp_allocation(slot, stats=stats)
        assert plan.states >= stats["states"]  # every literal state, and maybe more
    assert len(plan.reaches) == 1  # one queue, one plan
    # another queue: a new plan, again the literal optimum
    other = queue_slots(seed + 1, n, keep, 1)[0]
    assert plan.solve(other) == dp_allocation(other)
    assert plan.solve(slots[0]) == dp_allocation(slots[0])
    assert len(plan.reaches) == 3


def test_a_plan_over_its_budget_solves_nothing_and_says_so():
    slot = queue_slots(3, 10, 1.0, 1)[0]
    full = DpPlan(10**9)
    assert full.solve(slot) is not None
    small = DpPlan(full.states - 1)
    assert small.solve(slot) is None and small.solve(slot) is None
    assert small.reaches == [full.states]  # counted up to the budget, once


def test_jobs_with_tied_throughputs_form_their_own_class():
    """A gang's slowest type is the first of the least throughput, so two jobs with one type
    order but different ties between its types may take different slowest types: two classes."""
    slot = queue_slots(0, 6, 1.0, 1)[0]
    v = slot.view
    v.throughput[0] = [3.0, 3.0, 1.0]
    v.throughput[1] = [3.0, 2.0, 1.0]
    v.workers[1] = v.workers[0]
    arrays = SlotArrays.of(slot)
    assert (arrays.order[0] == arrays.order[1]).all() and arrays.need[0] == arrays.need[1]
    classes = arrays.classes()
    assert classes[0] != classes[1]
    assert DpPlan(10**9).solve(slot) == dp_allocation(slot)


def test_the_superset_reach_counts_at_least_the_literal_states():
    slot = queue_slots(5, 12, 1.0, 1)[0]
    arrays = SlotArrays.of(slot)
    args = (arrays.free0, arrays.find_args(), *arrays.key_args(), arrays.classes())
    literal = dp_kernel.count_states(*args, -1)
    superset = dp_kernel.reach(*args, -1, False)[0]
    assert superset >= literal > 0


def test_hadar_proves_every_slot_where_its_node_budget_does_not():
    """50 nodes a slot prove not every slot of a 12-job Philly window; with the plan behind them
    hadar proves all, each slot at the literal DP's optimum."""
    from hetsched.sim.gang_engine import simulate_gang
    from hetsched.sim.registry import make_policy
    from hetsched.sim.workloads import philly_window

    inst = philly_window(0, n_jobs=12, per_type=2)
    alone = make_policy("hadar", node_limit=50, plan_budget=0)
    simulate_gang(inst, alone, restore_seconds=10.0)
    a = alone.solver_stats()
    assert a["proven_slots"] < a["slots"] and a["dp_over_budget"] == a["slots"]

    policy = make_policy("hadar", node_limit=50)
    values: list[tuple[float, float]] = []

    def checked(solve):
        def run(arrays):
            got = solve(arrays)
            if got is not None:
                chosen = arrays.chosen(got[1])
                best = dp_allocation(arrays.slot)[0]
                values.append((sum(c.payoff for c in chosen.values()), best))
            return got

        return run

    # every slot the plan solves goes through its value loop: a slot of a new queue (from
    # solve_arrays) and a later slot of the same queue (the policy calls it directly)
    policy.plan.solve_again = checked(policy.plan.solve_again)
    simulate_gang(inst, policy, restore_seconds=10.0)
    s = policy.solver_stats()
    assert s["proven_slots"] == s["slots"] > 0 and s["dp_over_budget"] == 0
    assert s["proven_by_dp"] == len(values) > 0 and s["dp_plans"] >= 1
    assert all(got == pytest.approx(best, rel=1e-12) for got, best in values)


def test_a_plan_is_kept_only_for_the_same_free_gpus_and_prices():
    slot = queue_slots(2, 10, 1.0, 1)[0]
    half = Slot(slot.view, slot.queue, slot.prices, slot.remaining, slot.t, slot.view.capacity // 2)
    cheaper = Slot(
        slot.view, slot.queue, price_function(slot.view, slot.queue[:5]), slot.remaining, slot.t
    )
    plan = DpPlan(10**9)
    for s in (slot, half, cheaper, slot):
        assert plan.solve(s) == dp_allocation(s)
    assert len(plan.reaches) == 4


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 12), st.sampled_from([1.0, 0.5]))
def test_a_plan_serves_its_queue_with_jobs_removed(seed, n, keep):
    """The jobs that end leave a queue the plan still serves (the same prices): the literal
    optimum with no new reach; a job that arrives extends the plan."""
    full = queue_slots(seed, n, keep, 1)[0]
    slot = Slot(full.view, full.queue[:-1], full.prices, full.remaining, 1, full.free)
    rng = np.random.default_rng(seed)
    plan = DpPlan(10**9, keep=0.0)  # kept for any shorter queue
    assert plan.solve(slot) == dp_allocation(slot)
    queue = list(slot.queue)
    while len(queue) > 1:
        queue.pop(int(rng.integers(0, len(queue))))
        shorter = Slot(slot.view, queue, slot.prices, slot.remaining * 0.9, slot.t, slot.free)
        assert plan.solve(shorter) == dp_allocation(shorter)
    assert len(plan.reaches) == 1
    back = Slot(slot.view, queue + full.queue[-1:], slot.prices, slot.remaining, 2, slot.free)
    assert plan.solve(back) == dp_allocation(back)  # kept if its classes fit the plan's
    assert plan.solve(full) == dp_allocation(full)  # longer than the plan's queue: extended
    assert len(plan.reaches) == 1 and plan.extensions in (1, 2)


def test_a_plan_is_compacted_for_a_queue_much_shorter_than_its_own():
    """Under keep (0.9) of the plan's queue, the plan is compacted from its takes to the one a
    new sweep of the shorter queue reaches: the same states, the literal DP's optimum."""
    slot = queue_slots(4, 12, 1.0, 1)[0]
    plan = DpPlan(10**9)  # keep = 0.9
    plan.solve(slot)
    for size, compactions in ((11, 0), (10, 1), (9, 1), (8, 2)):
        shorter = Slot(slot.view, slot.queue[:size], slot.prices, slot.remaining, 1, slot.free)
        assert plan.solve(shorter) == dp_allocation(shorter)
        assert len(plan.reaches) == 1 and plan.compactions == compactions
        if compactions and size != 9:  # just compacted: the states of a new reach
            fresh = DpPlan(10**9)
            fresh.solve(shorter)
            assert plan.states == fresh.states


def test_a_compacted_plan_extended_by_jobs_that_arrive_is_the_literal_dp():
    """A queue that lost many jobs and gained some: compacted to the part it kept, then
    extended; every slot at the literal DP's optimum."""
    slot = queue_slots(6, 14, 1.0, 1)[0]
    plan = DpPlan(10**9)
    base = Slot(slot.view, slot.queue[:10], slot.prices, slot.remaining, 1, slot.free)
    plan.solve(base)
    mixed = Slot(
        slot.view, slot.queue[:5] + slot.queue[10:], slot.prices, slot.remaining, 1, slot.free
    )
    assert plan.solve(mixed) == dp_allocation(mixed)
    assert len(plan.reaches) == 1 and plan.compactions == 1 and plan.extensions == 1


def test_over_the_plans_budget_hadar_takes_the_branch_and_bounds_full_search():
    """With no state allowed, every slot takes the choice of the branch and bound with the whole
    node budget: the run of hadar:dp over its budget."""
    from hetsched.sim.gang_engine import simulate_gang
    from hetsched.sim.registry import make_policy
    from hetsched.sim.workloads import philly_window

    inst = philly_window(0, n_jobs=24, per_type=2)
    hadar = make_policy("hadar", plan_budget=0)
    literal = make_policy("hadar:dp", state_budget=1)
    runs = [simulate_gang(inst, p, restore_seconds=10.0) for p in (hadar, literal)]
    assert runs[0].segments == runs[1].segments
    s = hadar.solver_stats()
    assert s["proven_by_dp"] == 0 and s["dp_over_budget"] == s["slots"] > 0
    assert s["proven_slots"] == literal.solver_stats()["proven_slots"]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 14), st.sampled_from([1.0, 0.5]))
def test_a_plan_extended_by_arrivals_gives_the_literal_dps_optimum(seed, n, keep):
    """Jobs leave and arrive (at the queue's end, as arrivals do) under one price function: each
    slot at the literal DP's optimum and choice, the plan extended rather than reached anew, its
    states a superset of the literal DP's."""
    full = queue_slots(seed, n, keep, 1)[0]
    rng = np.random.default_rng(seed)
    plan = DpPlan(10**9, keep=0.0)
    queue = list(full.queue[: max(1, n // 2)])
    waiting = list(full.queue[len(queue) :])
    remaining = full.remaining.copy()
    for t in range(1, 10):
        if waiting and rng.random() < 0.6:
            queue.append(waiting.pop(0))
        if len(queue) > 1 and rng.random() < 0.4:
            queue.pop(int(rng.integers(0, len(queue))))
        remaining = remaining * rng.uniform(0.5, 1.0, n)
        slot = Slot(full.view, list(queue), full.prices, remaining.copy(), t, full.free)
        stats: dict = {}
        assert plan.solve(slot) == dp_allocation(slot, stats=stats)
        assert plan.states >= stats["states"]
    assert len(plan.reaches) == 1  # never reached anew: kept or extended


def test_an_extension_over_the_budget_reaches_the_queue_anew():
    full = queue_slots(6, 12, 1.0, 1)[0]
    head = Slot(full.view, full.queue[:6], full.prices, full.remaining, 1, full.free)
    whole = DpPlan(10**9)
    assert whole.solve(full) is not None
    plan = DpPlan(whole.states - 1, keep=0.0)  # the whole queue does not fit, its half does
    assert plan.solve(head) == dp_allocation(head)
    assert plan.solve(full) is None  # extended past the budget, then reached anew: over
    assert plan.extensions == 1 and len(plan.reaches) == 2
    assert plan.solve(head) == dp_allocation(head)  # a shorter queue is reached again


def test_a_plan_asked_not_to_reach_anew_solves_only_what_it_serves():
    full = queue_slots(7, 10, 1.0, 1)[0]
    head = Slot(full.view, full.queue[:8], full.prices, full.remaining, 1, full.free)
    plan = DpPlan(10**9, keep=0.5)
    assert plan.solve_arrays(SlotArrays.of(head), new=False) is None  # no plan yet
    assert plan.reaches == [] and plan.found is None
    assert plan.solve(head) == dp_allocation(head)
    # a plan serves the arrays of the table its classes come from (DpPlan.solve's own)
    table = plan.job_table
    shorter = Slot(full.view, full.queue[1:8], full.prices, full.remaining, 2, full.free)
    longer = Slot(full.view, full.queue[1:], full.prices, full.remaining, 3, full.free)
    for slot in (shorter, longer):  # kept, then extended
        value, taken = plan.solve_arrays(SlotArrays.of(slot, table=table), new=False)
        best, chosen = dp_allocation(slot)
        assert value == best and SlotArrays.of(slot).chosen(taken) == chosen
    assert len(plan.reaches) == 1 and plan.extensions == 1
    other = Slot(full.view, full.queue[:3], full.prices, full.remaining, 4, full.free)
    assert (
        plan.solve_arrays(SlotArrays.of(other, table=table), new=False) is None
    )  # under keep: not served
    assert len(plan.reaches) == 1 and plan.found is not None  # and the plan is left as it was
