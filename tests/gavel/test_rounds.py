"""Gavel's round-based mechanism realizes the allocation and keeps jobs on their GPUs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import instance_path

from hetsched.exact.solve import solve
from hetsched.gavel import allocation_view
from hetsched.gavel.rounds import RoundScheduler, priority_placement
from hetsched.instance.io import load_instance


def scheduler(policy: str):
    inst = load_instance(instance_path("gavel_two_jobs.json"))
    alloc = solve(inst, policy, "highs").solution
    by_type: dict[str, list[str]] = {}
    for g in inst.gpus:
        by_type.setdefault(g.type, []).append(g.id)
    return RoundScheduler(allocation_view(inst), alloc.x, by_type), alloc


def test_time_shares_converge_to_the_allocation():
    rs, alloc = scheduler("gavel-makespan")  # x = [[.75 k80, .25 v100], [.25 k80, .75 v100]]
    for _ in range(400):
        placement = rs.next_round()
        used = [g for _, gs in placement.values() for g in gs]
        assert len(used) == len(set(used))  # no GPU twice in a round
    assert np.allclose(rs.received / rs.elapsed, alloc.x, atol=0.01)


def test_a_job_keeps_its_gpus_when_it_stays_on_a_type():
    rs, _ = scheduler("gavel-max-throughput")  # A always on the V100, B always on the K80
    first = rs.next_round()
    for _ in range(5):
        assert rs.next_round() == first
    assert first == {"A": ("v100", ("v100-0",)), "B": ("k80", ("k80-0",))}


def test_zero_share_never_runs():
    rs, alloc = scheduler("gavel-max-throughput-cost")  # only B, only on the K80
    for _ in range(10):
        assert rs.next_round() == {"B": ("k80", ("k80-0",))}
    assert alloc.x[0].sum() == pytest.approx(0.0)


def _placement_by_sorting(priority, scale, types, free, previous):
    """The mechanism as first written (before the compiled :func:`place_indexed`): the oracle."""
    held = {g for _, gs in previous.values() for g in gs}
    rank = {t: {g: i for i, g in enumerate(gs)} for t, gs in free.items()}
    jobs, kinds = np.nonzero(priority > -np.inf)
    order = np.lexsort((kinds, jobs, -priority[jobs, kinds]))
    left = sum(len(gs) for gs in free.values())
    placed = {}
    for j, r in zip(jobs[order].tolist(), kinds[order].tolist()):
        if not left:
            break
        t, need = types[r], int(scale[j])
        if j in placed or len(free[t]) < need:
            continue
        last = previous.get(j)
        if last is not None and last[0] == t and all(g in free[t] for g in last[1]):
            chosen = list(last[1])
        else:
            chosen = sorted(free[t], key=lambda g: (g in held, rank[t][g]))[:need]
        for g in chosen:
            free[t].remove(g)
        left -= len(chosen)
        placed[j] = (t, tuple(chosen))
    return placed


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(1, 12), ties=st.booleans())
def test_the_compiled_placement_is_the_sorting_one(seed, n, ties):
    rng = np.random.default_rng(seed)
    types = ("a", "b", "c")
    gpus = {t: [f"{t}{i}" for i in range(rng.integers(1, 6))] for t in types}
    priority = rng.choice([0.5, 1.0, 2.0], (n, 3)) if ties else rng.uniform(0, 3, (n, 3))
    priority[rng.random((n, 3)) < 0.2] = np.inf
    priority[rng.random((n, 3)) < 0.3] = -np.inf
    scale = rng.choice([1, 2, 4], n)
    previous = {}
    taken: set[str] = set()
    for j in range(n):  # last round's holdings: distinct GPUs of one type, some now busy
        t = types[rng.integers(0, 3)]
        pool = [g for g in gpus[t] if g not in taken]
        if rng.random() < 0.5 and len(pool) >= scale[j]:
            gs = tuple(rng.choice(pool, scale[j], replace=False).tolist())
            taken.update(gs)
            previous[j] = (t, gs)
    free = {t: [g for g in gs if rng.random() < 0.85] for t, gs in gpus.items()}
    expected = _placement_by_sorting(
        priority, scale, types, {t: list(g) for t, g in free.items()}, previous
    )
    got_free = {t: list(g) for t, g in free.items()}
    assert priority_placement(priority, scale, types, got_free, previous) == expected
    for t in types:  # the GPUs taken leave the free lists, the others stay in order
        taken_t = {g for tt, gs in expected.values() if tt == t for g in gs}
        assert got_free[t] == [g for g in free[t] if g not in taken_t]
