"""Whole schedules from machine columns: a list-scheduling start, and the interval colouring that
turns a node's LP into a schedule when every job has one class and one end tick in it
(van den Akker et al. 1999, Theorem 2: at any tick the LP runs at most m_k jobs on class k, so
the intervals fit on m_k GPUs)."""

from __future__ import annotations

import heapq

import numpy as np

from hetsched.solvers.colgen.machines.data import MachineProblem
from hetsched.solvers.colgen.machines.master import MachineColumn


def column(
    prob: MachineProblem, k: int, jobs: list[int] | np.ndarray, ends: list[int] | np.ndarray
) -> MachineColumn:
    jobs = np.asarray(jobs, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    return MachineColumn(k, jobs, ends, prob.cost(k, jobs, ends))


def smith_columns(
    prob: MachineProblem, assignment: list[tuple[int, list[int]]]
) -> list[MachineColumn]:
    """One column per GPU: (class, its jobs) run in Smith's order without idle time."""
    out = []
    for k, jobs in assignment:
        mine = set(jobs)
        jobs = [j for j in prob.smith_order(k).tolist() if j in mine]
        ends = np.cumsum([int(prob.p[j, k]) for j in jobs]).tolist()
        out.append(column(prob, k, jobs, ends))
    return out


def list_schedule(prob: MachineProblem) -> list[MachineColumn]:
    """Jobs by non-increasing w_j / min_k p_{j,k}, each to the GPU where it would finish first;
    then every GPU in Smith's order. A feasible start, not a good one."""
    gpus = [(k, i) for k in range(prob.n_classes) for i in range(int(prob.machines[k]))]
    load = [0] * len(gpus)
    on: list[list[int]] = [[] for _ in gpus]
    order = sorted(range(prob.n_jobs), key=lambda j: (-prob.w[j] / prob.p[j].min(), j))
    for j in order:
        g = min(
            range(len(gpus)),
            key=lambda g: (load[g] + prob.p[j, gpus[g][0]] + prob.s[j, gpus[g][0]], g),
        )
        load[g] += int(prob.p[j, gpus[g][0]])
        on[g].append(j)
    return [
        c for c in smith_columns(prob, [(gpus[g][0], on[g]) for g in range(len(gpus)) if on[g]])
    ]


def colour_intervals(
    prob: MachineProblem, klass: np.ndarray, end: np.ndarray
) -> list[MachineColumn] | None:
    """Jobs with class ``klass[j]`` ending at ``end[j]`` on GPUs: per class, intervals by start,
    each to a free GPU; None if some class would need more than m_k GPUs."""
    out = []
    for k in range(prob.n_classes):
        jobs = [j for j in range(prob.n_jobs) if klass[j] == k]
        jobs.sort(key=lambda j: (end[j] - prob.p[j, k], j))
        free = [(0, g) for g in range(int(prob.machines[k]))]  # (busy until, GPU)
        heapq.heapify(free)
        runs: dict[int, list[int]] = {}
        for j in jobs:
            until, g = heapq.heappop(free)
            if until > end[j] - prob.p[j, k]:
                return None
            runs.setdefault(g, []).append(j)
            heapq.heappush(free, (int(end[j]), g))
        out += [column(prob, k, js, [int(end[j]) for j in js]) for _, js in sorted(runs.items())]
    return out
