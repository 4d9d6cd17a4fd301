"""Hare's Algorithm 1 (HPDC'22, Sec. 5.2, lines 1-18): H_i-ordered greedy list scheduling.

Line 3 obtains x^_i from a relaxation, H_{i,m} = x^_i + T^c_{i,m}/2 and H_i = max_m H_{i,m};
line 4 sorts D into pi by H; lines 5-17 take the tasks in that order:

    t_i = a_n (round 0)  or  max_{j in D_{r-1}} (x~_j + T~^c_j + T~^s_j)      (lines 7-10)
    m*  = argmin_m phi_m                                                   (line 12)
    x~_i = max(t_i, phi_{m*});  phi_{m*} = x~_i + T^c_{i,m*}               (lines 13, 16)

phi is advanced by training time only: synchronization overlaps the next task on the GPU.

The ordering is pluggable: any function that gives H per task (:mod:`hetsched.hare.orderings`).
The machine rule has a named variant, ``earliest_finish`` (the GPU on which the task ends its
training + sync first); ``earliest_available`` is the paper's and the default.

Line 10 reads the finish times of *every* task of round r-1, so pi must put all of them before
any task of round r. The relaxation's H does (x^ obeys (7), and a job's tasks share T^c), but an
arbitrary H may not; the sort therefore uses H'_{n,r} = max_{r' <= r} H_{n,r'} with ties broken by
round, which leaves a precedence-consistent order unchanged (documented deviation, needed for
line 10 to be well defined).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetsched.hare.list_scheduling import (
    MachineRule,
    arrays_objective,
    completion_times,
    schedule_arrays,
    schedule_in_order,
)
from hetsched.hare.view import HareView
from hetsched.schedule.model import TaskSchedule


@dataclass(frozen=True)
class Alg1Run:
    """Algorithm 1's output in D order (:attr:`HareView.task_arrays`): x~_i, the GPU index of
    each task, the order pi (task indices) and the priorities H that produced it."""

    view: HareView
    start: np.ndarray
    gpu: np.ndarray
    order: np.ndarray
    priority: np.ndarray
    rule: str = "earliest_available"

    def to_schedule(self, instance_name: str = "", instance_hash: str = "") -> TaskSchedule:
        return schedule_arrays(self.view, self.start, self.gpu, instance_name, instance_hash)

    def completion(self) -> np.ndarray:
        """C_n = max over the job's tasks of x~_i + T^c + T^s (eq. (6) with equality)."""
        return completion_times(self.view, self.start, self.gpu)

    def objective(self) -> float:
        return arrays_objective(self.view, self.start, self.gpu)


def task_priorities(view: HareView, x_hat: np.ndarray) -> np.ndarray:
    """H_i = max_m (x^_i + T^c_{i,m} / 2) for every task in D order (Sec. 5.2, Step 2)."""
    n, _, _ = view.task_arrays
    return np.asarray(x_hat, dtype=float) + 0.5 * view.train.max(axis=1)[n]


def precedence_order(view: HareView, priority: np.ndarray) -> np.ndarray:
    """pi: task indices sorted by H (line 4), made consistent with the rounds of each job.

    Sort key (max(H_i, max H over earlier rounds of the job), r, index): the key is H_i itself
    whenever H already respects the rounds; ties go to the earlier round, then the lower index.
    """
    n, r, _ = view.task_arrays
    h = np.asarray(priority, dtype=float)
    if h.shape != n.shape or not np.all(np.isfinite(h)):
        raise ValueError(f"priorities must be {n.shape[0]} finite numbers, one per task")
    # key_i = max(H_i, max H over the job's earlier rounds): the task's own H when the order is
    # already consistent; tasks are stored in (n, r, k) order, so rounds are contiguous blocks
    round_id = np.repeat(
        np.arange(int(np.sum(view.rounds)), dtype=np.int32),
        np.repeat(view.tasks_per_round, view.rounds),
    )
    round_max = np.full(int(np.sum(view.rounds)), -np.inf)
    np.maximum.at(round_max, round_id, h)
    first_round = np.concatenate(([0], np.cumsum(view.rounds)[:-1]))
    earlier = np.full_like(round_max, -np.inf)
    for job in np.flatnonzero(view.rounds > 1):
        a, b = first_round[job], first_round[job] + view.rounds[job]
        earlier[a + 1 : b] = np.maximum.accumulate(round_max[a : b - 1])
    key = np.maximum(h, earlier[round_id])
    return np.lexsort((r, key))  # stable: equal (key, r) keep the index order


def hare_alg1(
    view: HareView, priority: np.ndarray, rule: MachineRule = "earliest_available"
) -> Alg1Run:
    """Algorithm 1, lines 4-18, for priorities H (one per task in D order)."""
    order = precedence_order(view, priority)
    start, gpu = schedule_in_order(view, order, rule)
    return Alg1Run(view, start, gpu, order, np.asarray(priority, dtype=float), rule)


def alpha(view: HareView) -> float:
    """alpha = max_i max(T^c_max / T^c_min, T^s_max / T^s_min) over tasks (Lemma 3).

    T^s = 0 convention: a ratio 0/0 (no sync time on any GPU) counts as 1, since the sync times
    are then all equal; T^s_max > 0 = T^s_min makes alpha infinite (the bound says nothing).
    """
    tc = view.train.max(axis=1) / view.train.min(axis=1)
    smax, smin = view.sync.max(axis=1), view.sync.min(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ts = np.where(
            smax == 0, 1.0, np.where(smin == 0, np.inf, smax / np.where(smin == 0, 1, smin))
        )
    return float(max(np.max(tc), np.max(ts)))
