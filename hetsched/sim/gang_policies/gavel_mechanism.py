"""Gavel's round mechanism as Gavel's own simulator runs it (``scheduler.py`` of its repository,
read for this module; no code copied), for the ``gavel`` policy under the Gavel convention.

State, per active job j and GPU type r:

* ``alloc[j]``: the allocation x_j of the last reset (a job that arrived since has none);
* ``job_time[j, r]``: seconds j ran on r since the last reset, starting at L/2 (Gavel's
  ``_job_time_so_far``, initialised to half a round so that a fresh job is not infinitely urgent);
  ``worker_time[r]``: the sum over jobs at the reset plus everything run on r since;
* ``deficit[j, r]``: at each reset, += x_{j,r} x (time since the last reset) - time received.

Reset (``_reset_time_run_so_far`` then the allocation LP): when the job set has changed and
either ``reset_seconds`` (Gavel's ``minimum_time_between_allocation_resets``, 1920 s) have passed
since the last reset or no reset has happened at a time > 0. Between resets a new job has no
allocation: its priority is 0, and although it may be chosen for a type, it is given no GPUs
(Gavel's ``_schedule_jobs_on_workers`` skips jobs missing from the allocation; the GPUs it was
counted on stay idle for the round).

Priority of (j, r) (``_update_priorities``): 0 without an allocation, if x_{j,r} = 0 or if j
cannot run on r; x_{j,r} / (job_time / worker_time) otherwise (x_{j,r} 1e9 if that share is 0).

Selection (``_schedule_jobs_on_workers_helper``): the types in Gavel's order (v100, p100, k80,
then any other type by name; shuffled by a seeded generator for policies that are not
heterogeneity-aware), each type's jobs sorted by (priority, deficit, x_{j,r}) descending, stable
in arrival order; walking that list, a job not yet chosen, with positive throughput on r and a
gang no larger than the type's GPUs left, is chosen for r. So leftover GPUs go to jobs with
x_{j,r} = 0 too.

Placement: jobs of a type by decreasing gang size; a job keeps the GPUs it held if they are of
that type and still free, else it takes the lowest-numbered free GPUs of the type (Gavel strides
over servers to use as few as possible; with the same type the rate is the same, so only the GPU
names differ).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

GAVEL_TYPE_ORDER = ("v100", "p100", "k80")
RESET_SECONDS = 1920.0  # Gavel's minimum_time_between_allocation_resets


def type_order(types: tuple[str, ...], shuffle_seed: int | None) -> list[int]:
    """Type indices in Gavel's order; shuffled with ``shuffle_seed`` when given (Gavel shuffles
    for the policies that are not heterogeneity-aware)."""
    known = [types.index(t) for t in GAVEL_TYPE_ORDER if t in types]
    rest = sorted(
        (r for r, t in enumerate(types) if t not in GAVEL_TYPE_ORDER), key=types.__getitem__
    )
    order = known + rest
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(order)
    return order


@dataclass
class GavelMechanism:
    n_types: int
    round_seconds: float
    reset_seconds: float = RESET_SECONDS
    alloc: dict[int, np.ndarray] = field(default_factory=dict)
    job_time: dict[int, np.ndarray] = field(default_factory=dict)
    deficit: dict[int, np.ndarray] = field(default_factory=dict)
    worker_time: np.ndarray = field(init=False)
    last_reset: float = 0.0
    need_update: bool = False

    def __post_init__(self) -> None:
        self.worker_time = np.zeros(self.n_types)

    def admit(self, j: int) -> None:
        """``add_job``: half a round on every type, no deficit, the allocation to be updated."""
        self.job_time[j] = np.full(self.n_types, self.round_seconds / 2)
        self.deficit[j] = np.zeros(self.n_types)
        self.need_update = True

    def remove(self, j: int) -> None:
        """``_remove_job``."""
        self.job_time.pop(j, None)
        self.deficit.pop(j, None)
        self.alloc.pop(j, None)
        self.need_update = True

    def account(self, j: int, r: int, seconds: float) -> None:
        """``_done_callback``: j ran ``seconds`` on type r in the round that just ended."""
        if j in self.job_time:
            self.job_time[j][r] += seconds
            self.worker_time[r] += seconds

    def due(self, now: float) -> bool:
        """Whether the allocation is recomputed now (module doc, "Reset")."""
        return self.need_update and (
            now - self.last_reset >= self.reset_seconds or self.last_reset == 0
        )

    def reset(self, now: float, new_alloc: dict[int, np.ndarray]) -> None:
        """``_reset_time_run_so_far`` with the old allocation, then the new one."""
        elapsed = now - self.last_reset
        half = self.round_seconds / 2
        self.worker_time[:] = 0.0
        for j, spent in self.job_time.items():
            received = spent - half
            owed = self.alloc[j] * elapsed if j in self.alloc else 0.0
            self.deficit[j] += owed - received
            spent[:] = half
            self.worker_time += half
        self.last_reset = now
        self.alloc = dict(new_alloc)
        self.need_update = False

    def priorities(self, jobs: list[int], throughput: np.ndarray) -> np.ndarray:
        """Priority of (job, type) for ``jobs`` (rows); ``throughput`` rows are theirs."""
        p = np.zeros((len(jobs), self.n_types))
        for i, j in enumerate(jobs):
            x = self.alloc.get(j)
            if x is None:
                continue
            for r in range(self.n_types):
                if x[r] == 0.0 or throughput[i, r] == 0.0:
                    continue
                share = self.job_time[j][r] / self.worker_time[r] if self.worker_time[r] else 0.0
                p[i, r] = x[r] / share if share > 0 else x[r] * 1e9
        return p

    def choose(
        self,
        jobs: list[int],
        throughput: np.ndarray,
        gang: np.ndarray,
        count: np.ndarray,
        order: list[int],
    ) -> dict[int, int]:
        """Job -> type for the next round (module doc, "Selection"); jobs without an
        allocation are chosen (they use up GPUs) but left out of the result."""
        p = self.priorities(jobs, throughput)
        left = count.astype(int).copy()
        chosen: dict[int, int] = {}
        for r in order:
            keys = [
                (
                    p[i, r],
                    float(self.deficit[j][r]),
                    float(self.alloc[j][r]) if j in self.alloc else 0.0,
                )
                for i, j in enumerate(jobs)
            ]
            for i in sorted(range(len(jobs)), key=keys.__getitem__, reverse=True):
                j = jobs[i]
                if left[r] == 0:
                    break
                if j in chosen or throughput[i, r] <= 0 or gang[i] > left[r]:
                    continue
                left[r] -= gang[i]
                chosen[j] = r
        return {j: r for j, r in chosen.items() if j in self.alloc}
