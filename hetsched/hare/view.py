"""Hare's view of an instance (HPDC'22, Sec. 5.1): the task set D and T^c_{i,m}, T^s_{i,m}.

All tasks of a job share their times, so times are stored per job and GPU
(``train[n, m]``, ``sync[n, m]``); task i = (n, r, k) is the k-th task of round r of job n,
and :meth:`HareView.tasks` enumerates D. This keeps the view small at 10^6 tasks.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from functools import cached_property
from typing import Iterator

import numpy as np

from hetsched.core.indexed import GpusIndexed, JobsIndexed
from hetsched.instance.model import Instance


@dataclass(frozen=True)
class HareTask:
    """Task i in D: index ``k`` of round ``r`` of job number ``n`` (all 0-based)."""

    n: int
    r: int
    k: int


@dataclass(frozen=True)
class HareView(JobsIndexed, GpusIndexed):
    job_ids: tuple[str, ...]
    gpu_ids: tuple[str, ...]
    gpu_types: tuple[str, ...]
    arrival: np.ndarray  # a_n
    weight: np.ndarray  # w_n
    rounds: np.ndarray  # |R_n|
    tasks_per_round: np.ndarray  # |D_r|
    train: np.ndarray  # T^c[n, m]
    sync: np.ndarray  # T^s[n, m]

    @property
    def n_tasks(self) -> int:
        return int(np.sum(self.rounds * self.tasks_per_round))

    def pair_times(self) -> tuple[dict[tuple[int, int], float], dict[tuple[int, int], float]]:
        """T^c and T^s as ``{(n, m): seconds}``, the form a Pyomo parameter or rule reads."""
        pairs = [(n, m) for n in range(self.n_jobs) for m in range(self.n_gpus)]
        return (
            {(n, m): float(self.train[n, m]) for n, m in pairs},
            {(n, m): float(self.sync[n, m]) for n, m in pairs},
        )

    def tasks(self) -> Iterator[HareTask]:
        """D in job, round, task order."""
        for n in range(self.n_jobs):
            for r in range(int(self.rounds[n])):
                for k in range(int(self.tasks_per_round[n])):
                    yield HareTask(n, r, k)

    @cached_property
    def task_offset(self) -> np.ndarray:
        """Index in D of the first task of each job: task (n, r, k) is ``offset[n] + r |D_r| + k``."""
        sizes = self.rounds * self.tasks_per_round
        return np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)

    @cached_property
    def task_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(n, r, k) of every task of D in :meth:`tasks` order, as three int arrays."""
        sizes = self.rounds * self.tasks_per_round
        n = np.repeat(np.arange(self.n_jobs), sizes)
        local = np.arange(int(sizes.sum())) - np.repeat(self.task_offset, sizes)
        per = self.tasks_per_round[n]
        return n, local // per, local % per

    def task_index(self, n: int, r: int, k: int) -> int:
        return int(self.task_offset[n] + r * self.tasks_per_round[n] + k)

    @cached_property
    def cycle(self) -> np.ndarray:
        """T^c + T^s per job and GPU: how long a task holds up its round."""
        return self.train + self.sync

    @cached_property
    def min_cycle(self) -> np.ndarray:
        """min_m (T^c_{n,m} + T^s_{n,m}): the least time one round of job n can take."""
        return self.cycle.min(axis=1)

    @cached_property
    def round_length(self) -> np.ndarray:
        """L_n: the least time from a round's start (its barrier) to its end, alone on the cluster.

        min over splits (k_m), sum k_m = |D_r|, of max_{m: k_m > 0} k_m T^c_{n,m} + T^s_{n,m}: a GPU
        running k_m tasks of the round trains them one after another and then syncs the last.
        As f_m(k) = k T^c_{n,m} + T^s_{n,m} increases in k, the optimum is the |D_r|-th smallest
        value over all f_m(1), f_m(2), ..., which the greedy below picks.
        """
        out = np.empty(self.n_jobs)
        for n in range(self.n_jobs):
            heap = [(self.train[n, m] + self.sync[n, m], m, 1) for m in range(self.n_gpus)]
            heapq.heapify(heap)
            value = 0.0
            for _ in range(int(self.tasks_per_round[n])):
                value, m, k = heapq.heappop(heap)
                heapq.heappush(heap, ((k + 1) * self.train[n, m] + self.sync[n, m], m, k + 1))
            out[n] = value
        return out

    def gpu_classes(self) -> list[list[int]]:
        """GPUs grouped by identical (T^c, T^s) columns, in order of first appearance: GPUs of
        a class are interchangeable for every job."""
        groups: dict[bytes, list[int]] = {}
        for m in range(self.n_gpus):
            key = np.concatenate((self.train[:, m], self.sync[:, m])).tobytes()
            groups.setdefault(key, []).append(m)
        return list(groups.values())

    def completion_lower_bounds(self, relaxed: bool = False) -> np.ndarray:
        """C_n >= a_n + |R_n| L_n, by (4), (6), (7) and :attr:`round_length`.

        With ``relaxed=True`` the bound uses only (4), (6), (7) -- one round takes at least
        min_m (T^c + T^s) -- so it also holds for relaxations that drop (8), such as Hare_Sched_RL.
        """
        return self.arrival + self.rounds * (self.min_cycle if relaxed else self.round_length)

    def completion_upper_bounds(self, objective_ub: float, relaxed: bool = False) -> np.ndarray:
        """Bounds on C_n that every solution with objective <= ``objective_ub`` satisfies.

        w_n C_n <= UB - sum_{k != n} w_k C_k <= UB - sum_{k != n} w_k LB_k, with w > 0.
        """
        lb = self.completion_lower_bounds(relaxed)
        rest = float(np.dot(self.weight, lb)) - self.weight * lb
        return (objective_ub - rest) / self.weight

    def round_tails(self, relaxed: bool = False) -> np.ndarray:
        """Per job and round r, the least time from the start of its tasks to C_n: the round's
        own cycle (a task ends its round no earlier than its start + min_m (T^c + T^s)) and a
        round length L_n per later round (min cycle with ``relaxed``). Shape (n_jobs,
        max_rounds); entries past |R_n| are unused."""
        r = np.arange(int(self.rounds.max()))[None, :]
        L = (self.min_cycle if relaxed else self.round_length)[:, None]
        return self.min_cycle[:, None] + (self.rounds[:, None] - r - 1) * L

    def start_windows(
        self, objective_ub: float, relaxed: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per job and round, [earliest, latest] start of its tasks in any schedule whose
        objective is <= ``objective_ub`` (so every optimal schedule fits in them).

        ``relaxed=True`` gives windows valid for every solution of (4)-(7) alone (any relaxation
        that keeps them, e.g. Hare_Sched_RL) with objective <= ``objective_ub``: each round then
        takes at least min_m (T^c + T^s) instead of L_n.
        Returns two arrays of shape (n_jobs, max_rounds); entries past |R_n| are unused.
        """
        r = np.arange(int(self.rounds.max()))[None, :]
        L = (self.min_cycle if relaxed else self.round_length)[:, None]
        earliest = self.arrival[:, None] + r * L
        c_ub = self.completion_upper_bounds(objective_ub, relaxed)
        return earliest, c_ub[:, None] - self.round_tails(relaxed)


def hare_view(instance: Instance) -> HareView:
    """Build the view; GPU m is the m-th GPU of the cluster in file order."""
    gpus = instance.gpus
    jobs = instance.jobs
    return HareView(
        job_ids=tuple(j.id for j in jobs),
        gpu_ids=tuple(g.id for g in gpus),
        gpu_types=tuple(g.type for g in gpus),
        arrival=np.array([j.arrival for j in jobs], dtype=float),
        weight=np.array([j.weight for j in jobs], dtype=float),
        rounds=np.array([j.rounds for j in jobs], dtype=np.int64),
        tasks_per_round=np.array([j.tasks_per_round for j in jobs], dtype=np.int64),
        train=_times(instance, "train_time"),
        sync=_times(instance, "sync_time"),
    )


def _times(instance: Instance, field: str) -> np.ndarray:
    """T^c or T^s as a (jobs x GPUs) matrix: each job's time of the GPU's type, then its
    per-GPU overrides (what :meth:`Instance.train_time` / ``sync_time`` give, pair by pair)."""
    gpus = instance.gpus
    types = sorted({g.type for g in gpus})
    column = np.array([types.index(g.type) for g in gpus], dtype=np.int64)
    by_type = np.array([[getattr(j, field)[t] for t in types] for j in instance.jobs], dtype=float)
    out = by_type[:, column]
    index = {g.id: m for m, g in enumerate(gpus)}
    for n, j in enumerate(instance.jobs):
        for gid, value in getattr(j, f"{field}_per_gpu").items():
            out[n, index[gid]] = value
    return out
