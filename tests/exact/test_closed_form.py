"""Special cases of Hare_Sched whose optimum classical scheduling theory gives in closed form.

Each is solved by both exact methods (CP-SAT and the time-indexed MILP on HiGHS) and compared
with the theorem's value, computed here independently of the package.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from hetsched.exact.solve import solve
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server
from hetsched.solvers import Status

EXACT = (("hare-sched", "cpsat"), ("hare-sched-ti", "highs"))


def make(gpu_types: list[str], jobs: list[dict]) -> Instance:
    types = sorted(set(gpu_types))
    cluster = Cluster(
        {t: GpuType(t) for t in types},
        (Server("s", tuple(Gpu(f"g{m}", t, "s") for m, t in enumerate(gpu_types))),),
    )
    js = []
    for n, j in enumerate(jobs):
        js.append(
            Job(
                id=f"J{n}",
                arrival=float(j.get("arrival", 0)),
                weight=float(j.get("weight", 1)),
                rounds=j.get("rounds", 1),
                tasks_per_round=j.get("tasks", 1),
                train_time={t: float(j["train"][t]) for t in types},
                sync_time={t: float(j.get("sync", {}).get(t, 0)) for t in types},
                train_time_per_gpu={k: float(v) for k, v in j.get("per_gpu", {}).items()},
            )
        )
    return Instance("closed-form", cluster, tuple(js))


def assert_exact_optimum(inst: Instance, expected: float) -> None:
    for model, solver in EXACT:
        r = solve(inst, model, solver, time_limit=60)
        assert r.status == Status.OPTIMAL, (model, solver, r.status, r.notes)
        assert abs(r.objective - expected) < 1e-6, (model, solver, r.objective, expected)
        assert r.validation.valid


@given(
    st.lists(
        st.tuples(st.integers(1, 9), st.integers(1, 4), st.integers(0, 3)), min_size=1, max_size=6
    )
)
def test_smith_wspt_single_gpu(jobs):
    """1 || sum w_j C_j: Smith's rule (1956), order by T^c/w. With sync s_j after each task the
    objective is sum w_j (C_j + s_j): the sync does not hold the GPU, so WSPT stays optimal."""
    inst = make(
        ["v100"], [{"train": {"v100": p}, "weight": w, "sync": {"v100": s}} for p, w, s in jobs]
    )
    t, total = 0, 0
    for p, w, s in sorted(jobs, key=lambda j: j[0] / j[1]):
        t += p
        total += w * (t + s)
    assert_exact_optimum(inst, total)


@given(
    st.integers(1, 3),
    st.lists(st.lists(st.integers(1, 9), min_size=3, max_size=3), min_size=1, max_size=5),
)
def test_horn_assignment_unrelated_gpus(n_gpus, times):
    """R || sum C_j is the assignment problem of Horn (1973) and Bruno, Coffman & Sethi (1974):
    job j in the k-th last position on machine m contributes k * p_{j,m}."""
    gpus = [f"g{m}" for m in range(n_gpus)]
    inst = make(
        ["x"] * n_gpus,
        [{"train": {"x": 1}, "per_gpu": {g: p[m] for m, g in enumerate(gpus)}} for p in times],
    )
    n = len(times)
    cost = np.array(
        [[k * times[j][m] for m in range(n_gpus) for k in range(1, n + 1)] for j in range(n)]
    )
    rows, cols = linear_sum_assignment(cost)
    assert_exact_optimum(inst, float(cost[rows, cols].sum()))


@given(st.integers(1, 3), st.lists(st.integers(1, 9), min_size=1, max_size=6))
def test_spt_identical_gpus(n_gpus, times):
    """P || sum C_j: SPT with list assignment is optimal (Conway, Maxwell & Miller 1967)."""
    inst = make(["x"] * n_gpus, [{"train": {"x": p}} for p in times])
    loads = [0] * n_gpus
    total = 0
    for p in sorted(times):
        m = loads.index(min(loads))
        loads[m] += p
        total += loads[m]
    assert_exact_optimum(inst, total)


@given(
    st.lists(st.tuples(st.integers(1, 6), st.integers(0, 3)), min_size=1, max_size=3),
    st.integers(1, 3),
    st.integers(1, 4),
    st.integers(0, 5),
)
def test_single_job_rounds_of_identical_tasks(gpus, rounds, tasks, arrival):
    """One job alone: each round is Q | p_j = p | C_max with a per-GPU sync, and by the barrier
    C = a + |R| * L, with L = min over splits (k_m) of max k_m T^c_m + T^s_m (enumerated here)."""
    types = [f"t{m}" for m in range(len(gpus))]
    inst = make(
        types,
        [
            {
                "train": dict(zip(types, (g[0] for g in gpus))),
                "sync": dict(zip(types, (g[1] for g in gpus))),
                "rounds": rounds,
                "tasks": tasks,
                "arrival": arrival,
            }
        ],
    )
    best = min(
        max(k * c + s for k, (c, s) in zip(split, gpus) if k)
        for split in itertools.product(range(tasks + 1), repeat=len(gpus))
        if sum(split) == tasks
    )
    assert_exact_optimum(inst, arrival + rounds * best)


def partition_instance(numbers: list[int]) -> Instance:
    """proofs/hare_theorem1.md: PARTITION -> Hare_Sched on two identical GPUs, w_j = p_j."""
    return make(["gpu", "gpu"], [{"train": {"gpu": p}, "weight": p} for p in numbers])


def partition_threshold(numbers: list[int]) -> float:
    total = sum(numbers)
    return total**2 / 4 + sum(p * p for p in numbers) / 2


def test_partition_reduction_yes_instance_reaches_the_threshold():
    numbers = [3, 1, 1, 2, 2, 1]  # 3+2 = 1+1+2+1 = 5
    assert_exact_optimum(partition_instance(numbers), partition_threshold(numbers))


@pytest.mark.parametrize("numbers", [[2, 2, 2, 5], [1, 1, 4]])
def test_partition_reduction_no_instance_exceeds_the_threshold(numbers):
    inst = partition_instance(numbers)
    best = min(  # the closed form over all two-way splits (order on a GPU does not matter)
        (sum(s) ** 2 + (sum(numbers) - sum(s)) ** 2) / 2 + sum(p * p for p in numbers) / 2
        for k in range(len(numbers) + 1)
        for s in itertools.combinations(numbers, k)
    )
    assert best > partition_threshold(numbers)
    assert_exact_optimum(inst, best)
