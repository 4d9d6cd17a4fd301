"""The fast FIND_ALLOC (issue 19, item 5) returns exactly the literal one's candidate on every
call of whole searches (DP and branch and bound, several utilities, select rules and a
communication cost), and Hadar's online policy makes the same decisions with either."""

import numpy as np
import pytest

from hetsched.hadar import alloc_finder
from hetsched.hadar.alloc_finder import AllocFinder, Slot
from hetsched.hadar.branch_and_bound import dp_allocation_bnb
from hetsched.hadar.dp_allocation import dp_allocation, find_alloc
from hetsched.hadar.price import price_function
from hetsched.hadar.view import hadar_view
from hetsched.instance.generators import hadar_cluster
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.registry import make_policy
from hetsched.sim.workloads import gavel_poisson, load_workload


def _literal(finder: AllocFinder, j: int, free_key: tuple[int, ...]):
    """The literal FIND_ALLOC with the finder's slot and options."""
    free = np.array(free_key, dtype=np.int64).reshape(finder.view.capacity.shape)
    return find_alloc(
        finder.view,
        j,
        free,
        finder.view.capacity - free,
        finder.prices,
        float(finder.remaining[j]),
        finder.t,
        utility_name=finder.utility_name,
        comm_cost=finder.comm_cost,
        select=finder.select,
    )


class _Checked(AllocFinder):
    """Every answer compared with the literal FIND_ALLOC on the same state."""

    calls = 0

    def find(self, j, free_key):
        fast = super().find(j, free_key)
        assert fast == _literal(self, j, free_key), (j, free_key)
        _Checked.calls += 1
        return fast


@pytest.fixture
def checked(monkeypatch):
    for module in ("hetsched.hadar.dp_allocation", "hetsched.hadar.branch_and_bound"):
        monkeypatch.setattr(f"{module}.AllocFinder", _Checked)
    _Checked.calls = 0
    return _Checked


@pytest.mark.parametrize("seed,n", [(0, 8), (1, 10), (2, 12), (5, 14)])
@pytest.mark.parametrize(
    "opts",
    [
        {},
        {"select": "max-payoff"},
        {"comm_cost": 0.05},
        {"utility_name": "reciprocal-jct"},
        {"utility_name": "finish-time-fairness"},
    ],
)
def test_every_call_of_a_search_matches_the_literal_find_alloc(checked, seed, n, opts):
    inst = hadar_cluster(seed, n_jobs=n)
    v = hadar_view(inst)
    queue = list(range(n))
    prices = price_function(v, queue)
    remaining = v.work.astype(float) * np.linspace(0.3, 1.0, n)
    dp_value, _ = dp_allocation(Slot(v, queue, prices, remaining, 2), **opts)
    res = dp_allocation_bnb(Slot(v, queue, prices, remaining, 2), **opts)
    assert checked.calls > n
    assert res.value == pytest.approx(dp_value, rel=1e-12)


@pytest.mark.parametrize("workload", ["philly-static:0e4a51", "gavel-poisson"])
def test_the_online_policy_decides_the_same_with_either(monkeypatch, workload):
    """hadar:dp with the fast finder and with the literal one: the same completions and GPUs, to
    the bit, on a multi-GPU Philly window (12 jobs at time 0) and on 30 Poisson arrivals (gangs
    of 1-8 GPUs on 12 GPUs)."""
    if workload == "gavel-poisson":
        inst = gavel_poisson(1, n_jobs=30, rate_per_hour=60.0, per_type=4)
    else:
        inst = load_workload(workload, n_jobs=12)
    fast = simulate_gang(inst, make_policy("hadar:dp"))

    monkeypatch.setattr(alloc_finder.AllocFinder, "find", _literal)
    slow = simulate_gang(inst, make_policy("hadar:dp"))
    assert fast.completion == slow.completion
    assert [s.gpus for s in fast.segments] == [s.gpus for s in slow.segments]
