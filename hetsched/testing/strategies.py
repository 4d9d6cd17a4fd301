"""Hypothesis strategies that generate valid instances small enough to solve exactly.

    from hypothesis import given
    from hetsched.testing.strategies import hare_instances

    @given(hare_instances(max_tasks=8))
    def test_my_heuristic_is_feasible(inst):
        assert validate(inst, my_heuristic(inst)).valid

Times are whole seconds by default, so both exact methods (CP-SAT and the time-indexed MILP)
solve them without rounding.
"""

from __future__ import annotations

from hypothesis import strategies as st

from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server

GPU_TYPES = ("v100", "t4", "k80")


@st.composite
def hare_instances(
    draw,
    max_gpus: int = 3,
    max_types: int = 2,
    max_jobs: int = 3,
    max_rounds: int = 2,
    max_tasks_per_round: int = 2,
    max_tasks: int = 8,
    max_time: int = 6,
    max_arrival: int = 4,
    max_weight: int = 3,
    with_sync: bool = True,
) -> Instance:
    """A Hare_Sched instance with at most ``max_tasks`` tasks."""
    n_gpus = draw(st.integers(1, max_gpus))
    n_types = draw(st.integers(1, min(max_types, n_gpus)))
    types = GPU_TYPES[:n_types]
    gpu_types = [types[m % n_types] for m in range(n_gpus)]
    cluster = Cluster(
        {t: GpuType(t) for t in types},
        (Server("s0", tuple(Gpu(f"g{m}", gpu_types[m], "s0") for m in range(n_gpus))),),
    )
    n_jobs = draw(st.integers(1, max_jobs))
    jobs, budget = [], max_tasks
    for n in range(n_jobs):
        if budget < 1:
            break
        rounds = draw(st.integers(1, max(1, min(max_rounds, budget))))
        tasks = draw(st.integers(1, max(1, min(max_tasks_per_round, budget // rounds))))
        budget -= rounds * tasks
        train = {t: float(draw(st.integers(1, max_time))) for t in types}
        sync = {
            t: float(draw(st.integers(0, max(0, int(train[t]) - 1)))) if with_sync else 0.0
            for t in types
        }
        jobs.append(
            Job(
                id=f"J{n}",
                arrival=float(draw(st.integers(0, max_arrival))),
                weight=float(draw(st.integers(1, max_weight))),
                rounds=rounds,
                tasks_per_round=tasks,
                train_time=train,
                sync_time=sync,
            )
        )
    return Instance(name="hypothesis", cluster=cluster, jobs=tuple(jobs))
