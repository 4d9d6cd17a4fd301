"""HLAS's preparation stage (TCC'24, Sec. IV, eqs. (4)-(6)): split the GPUs into U groups of
similar speed for every job, then schedule tasks on *groups* instead of GPUs.

The machine a grouped policy runs on is an :class:`~hetsched.instance.model.Instance` whose GPUs
are the groups, so the task engine, its validator and the metrics need no change:

* A task placed on group u is split over the group's GPUs in proportion to their speeds
  s_{n,m} = 1 / (T^c_{n,m} + T^s_{n,m}) (the paper's group speed is sum_{m in u} z_{m,u} s_{n,m}),
  so every GPU of the group finishes it at the same instant and the group's cycle time is
  1 / sum_{m in u} s_{n,m}.
* That cycle is split into training and synchronization in the group's speed-weighted share of
  synchronization, T^s_{n,u} = cycle_u * (1/|u|) sum_m s_{n,m} T^s_{n,m} (a task of one GPU keeps
  its own T^c and T^s exactly). The paper does not say how a group synchronizes; this choice
  keeps the group's speed equal to the paper's s.

Choosing the groups: the exact MILP (``models/gpu_grouping.py``, solved to optimality with
HiGHS) when the cluster has at most ``exact_max_gpus`` GPUs, else the deterministic *serpentine*
deal (GPUs sorted by their mean speed over the jobs, dealt 0..U-1, U-1..0, ...), which balances
groups of few GPU types well. The chosen grouping's spread max_n (p_n^max - p_n^min) is reported
either way (:class:`GroupedCluster`), so a heuristic grouping is never mistaken for an optimum.
"""

from __future__ import annotations

from dataclasses import dataclass

from hetsched.core.errors import InputError
from hetsched.hare.view import hare_view
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server


@dataclass(frozen=True)
class GroupedCluster:
    """The groups (GPU indices of the original instance), how they were chosen, and the machine."""

    groups: tuple[tuple[int, ...], ...]
    method: str  # "milp-optimal" | "serpentine"
    spread: float  # max_n (p_n^max - p_n^min), eq. (4)'s objective, recomputed from the times
    machine: Instance


def serpentine_groups(instance: Instance, groups: int) -> list[list[int]]:
    """GPUs by mean speed (fastest first, ties by index), dealt to groups 0..U-1, U-1..0, ..."""
    speed = (1.0 / hare_view(instance).cycle).mean(axis=0)
    order = sorted(range(len(speed)), key=lambda m: (-speed[m], m))
    out: list[list[int]] = [[] for _ in range(groups)]
    for k, m in enumerate(order):
        lap, pos = divmod(k, groups)
        out[pos if lap % 2 == 0 else groups - 1 - pos].append(m)
    return [sorted(g) for g in out]


def optimal_groups(instance: Instance, groups: int) -> list[list[int]]:
    """The GPU_Grouping MILP (4)-(6) solved to proven optimality (HiGHS)."""
    from hetsched.exact.solve import solve
    from hetsched.solvers import Status

    result = solve(instance, "gpu-grouping", "highs", options={"groups": groups})
    if result.status != Status.OPTIMAL:
        raise InputError(
            instance.name, "--groups", f"GPU grouping not solved to optimality ({result.status})"
        )
    index = {g.id: k for k, g in enumerate(instance.gpus)}
    return [sorted(index[g] for g in grp) for grp in result.solution.groups]


def grouped_cluster(instance: Instance, groups: int, exact_max_gpus: int = 12) -> GroupedCluster:
    """The U-group machine of ``instance`` (see the module docstring for the group times)."""
    n_gpus = len(instance.gpus)
    if not 1 <= groups <= n_gpus:
        raise InputError(
            instance.name, "groups", f"need 1 <= groups <= {n_gpus} GPUs (got {groups})"
        )
    if n_gpus <= exact_max_gpus:
        members, method = optimal_groups(instance, groups), "milp-optimal"
    else:
        members, method = serpentine_groups(instance, groups), "serpentine"
    from hetsched.models.gpu_grouping import spread

    return GroupedCluster(
        tuple(tuple(g) for g in members),
        method,
        spread(instance, members),
        group_machine(instance, members),
    )


def group_machine(instance: Instance, members: list[list[int]]) -> Instance:
    """An instance with one GPU (of its own type ``group<u>``) per group and the group times."""
    view = hare_view(instance)
    speed = 1.0 / view.cycle  # s_{n,m}
    types = {f"group{u}": GpuType(f"group{u}") for u in range(len(members))}
    server = Server(
        "groups", tuple(Gpu(f"group{u}", f"group{u}", "groups") for u in range(len(members)))
    )
    jobs = []
    for n, job in enumerate(instance.jobs):
        train, sync = {}, {}
        for u, grp in enumerate(members):
            s = speed[n, grp]
            cycle = 1.0 / float(s.sum())
            share = float((s * view.sync[n, grp]).sum()) / len(grp)
            sync[f"group{u}"] = cycle * share
            train[f"group{u}"] = cycle - cycle * share
        jobs.append(
            Job(
                id=job.id,
                arrival=job.arrival,
                weight=job.weight,
                rounds=job.rounds,
                tasks_per_round=job.tasks_per_round,
                train_time=train,
                sync_time=sync,
                model=job.model,
            )
        )
    ids = [[instance.gpus[m].id for m in grp] for grp in members]
    meta = dict(instance.metadata or {})
    meta["gpu_groups"] = ids
    return Instance(
        name=f"{instance.name}[groups={len(members)}]",
        cluster=Cluster(types, (server,)),
        jobs=tuple(jobs),
        description=f"GPU groups of {instance.name}: {ids}",
        metadata=meta,
    )
