"""Gavel's round-based mechanism realizes the allocation and keeps jobs on their GPUs."""

import numpy as np
import pytest
from conftest import instance_path

from hetsched.exact.solve import solve
from hetsched.gavel import allocation_view
from hetsched.gavel.rounds import RoundScheduler
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
