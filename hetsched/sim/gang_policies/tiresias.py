"""Tiresias (Gu et al., NSDI'19), discretized two-dimensional LAS, as Hadar's baseline: preemptive
and heterogeneity-oblivious. A job's attained service is the GPU-seconds it has held (GPUs x time,
the "2D" of 2D-LAS); K queues split by thresholds on it (a job is demoted when it crosses one);
queues are served in order, FIFO by arrival inside a queue. Each round the jobs are placed in
that priority order while GPUs last (a job that does not fit is skipped); a running job that is
not placed is preempted and pays the restore delay when it resumes. Jobs keep their GPUs when they
can (:func:`~hetsched.sim.gang_policies.common.oblivious_gpus`).

Cost per round: the priority order is a heap of (queue, arrival rank) that changes only where
jobs arrive, run (and may be demoted) or complete, and a round reads it only until the GPUs are
filled, so a round costs the jobs it looks at, not the whole backlog (the same order as sorting
every active job by queue, stably in arrival order).

Defaults and omissions: thresholds (3600,) GPU-seconds, i.e. two queues split at one GPU-hour
(``tiresias:T1,T2,...`` sets others); Tiresias' starvation guard (promoting a job that waited
longer than a multiple of its run time) is not modelled."""

from __future__ import annotations

import heapq
from bisect import bisect_right
from typing import Iterator

import numpy as np

from hetsched.core.errors import InputError
from hetsched.sim.gang_engine import GangState
from hetsched.sim.gang_policies.common import place_in_order


class Tiresias:
    name, clairvoyant = "tiresias", False

    def __init__(self, thresholds: tuple[float, ...] | str = (3600.0,), seed: int = 0):
        if isinstance(thresholds, str):
            try:
                thresholds = tuple(float(x) for x in thresholds.split(","))
            except ValueError:
                raise InputError(
                    "policy",
                    "tiresias:THRESHOLDS",
                    f"comma-separated GPU-seconds, got {thresholds!r}",
                ) from None
        if any(not t > 0 for t in thresholds) or list(thresholds) != sorted(thresholds):
            raise InputError(
                "policy", "tiresias:THRESHOLDS", f"positive and increasing, got {thresholds}"
            )
        self.thresholds = tuple(thresholds)
        self.seed = seed

    def prepare(self, instance, jobs) -> None:
        self.server_rank = np.random.default_rng([self.seed, 11]).permutation(len(jobs.servers))
        order = np.argsort(jobs.arrival, kind="stable")  # the engine admits jobs in this order
        self._rank = np.empty(jobs.n_jobs, dtype=np.int64)
        self._rank[order] = np.arange(jobs.n_jobs)
        self._queue = [0] * jobs.n_jobs  # every job starts in the first queue (thresholds > 0)
        self._heap: list[tuple[int, int, int]] = []  # (queue, arrival rank, job); lazily stale
        self._admitted = 0  # jobs of the engine's arrival order already in the heap
        self._ran: tuple[int, ...] = ()  # the last plan's jobs: their attained service moved

    def queue(self, state: GangState, j: int) -> int:
        return bisect_right(self.thresholds, float(state.attained[j]))

    def allocate(self, state: GangState) -> dict[int, tuple[int, ...]]:
        order, heap = state.order, self._heap
        while self._admitted < len(order) and state.arrived[order[self._admitted]]:
            j = int(order[self._admitted])
            heapq.heappush(heap, (0, int(self._rank[j]), j))
            self._admitted += 1
        for j in self._ran:  # demotions: only jobs that ran gained service
            q = self.queue(state, j)
            if not state.done[j] and q != self._queue[j]:
                self._queue[j] = q
                heapq.heappush(heap, (q, int(self._rank[j]), j))
        looked: list[tuple[int, int, int]] = []
        plan = place_in_order(state, self._by_priority(state, looked), self.server_rank)
        for entry in looked:  # still active: back in the heap for the next round
            heapq.heappush(heap, entry)
        self._ran = tuple(plan)
        return plan

    def _by_priority(self, state: GangState, looked: list) -> Iterator[int]:
        """Active jobs by (queue, arrival rank), popped as the placement asks for them; stale
        entries (a job finished, or demoted since) are dropped on the way."""
        heap = self._heap
        while heap:
            entry = heapq.heappop(heap)
            q, _, j = entry
            if state.done[j] or q != self._queue[j]:
                continue
            looked.append(entry)
            yield j
