"""AlloX (Le et al., EuroSys'20) as Hare uses it as a baseline: at each decision instant, a
min-cost bipartite matching of waiting jobs to (idle GPU, position) slots, where putting job n
k-th on GPU m costs k p_{n,m} (its remaining work there delays itself and the k-1 jobs behind;
the sum is the total completion time of that single-GPU sequence). Jobs matched to position 1
start one task on their GPU. Clairvoyant: p_{n,m} = tasks left x T^c_{n,m}. Solved with
scipy's ``linear_sum_assignment``.

Scale: the matching is restricted to the ``CANDIDATES`` x |idle GPUs| waiting jobs with the
least remaining work on their best idle GPU (with long queues the full matching is cubic in the
queue and took minutes on the 480-job Philly window); the rest wait for a later instant. With
fewer waiting jobs than that, the matching is the full one. Those jobs come from one lazy heap
per class of GPUs with the same task times, merged over the idle classes, so a decision does not
read the whole backlog.
"""

from __future__ import annotations

import heapq

import numpy as np
from scipy.optimize import linear_sum_assignment

from hetsched.sim.engine import Policy, SimState
from hetsched.sim.policies.heaps import LazyHeap

CANDIDATES = 4


class AlloX(Policy):
    name, clairvoyant = "allox", True

    def prepare(self, instance, view) -> None:
        # GPUs whose task times are the same column (one type, no per-GPU override) are one
        # class: a job's least remaining work over the idle GPUs is its least over their classes
        columns: dict[bytes, int] = {}
        self.class_of = [
            columns.setdefault(np.ascontiguousarray(view.train[:, m]).tobytes(), len(columns))
            for m in range(view.n_gpus)
        ]
        self.member = [self.class_of.index(c) for c in range(len(columns))]  # a GPU of each
        self.heaps = [LazyHeap() for _ in columns]

    def _left(self, state: SimState, n: int) -> int:
        v = state.view
        return (state.total_rounds(n) - int(state.rounds_done[n])) * int(
            v.tasks_per_round[n]
        ) - int(state.started[n])

    def _least_work(self, state: SimState, gpus: list[int], k: int) -> list[int]:
        """The ``k`` waiting jobs of least remaining work on their best idle GPU (ties by
        arrival), in arrival order: a merge of the idle classes' heaps, keyed (tasks left x
        T^c of the class, arrival rank), so a decision costs k, not the whole backlog."""
        idle = sorted({self.class_of[m] for m in gpus})
        front: list = []
        popped: list = []
        for c in idle:
            top = self.heaps[c].pop(state)
            if top is not None:
                heapq.heappush(front, (top[0], top[1], c))
        chosen: dict[int, None] = {}
        while front and len(chosen) < k:
            key, n, c = heapq.heappop(front)
            popped.append((c, key, n))
            chosen.setdefault(n)  # a job's first entry is at its least value
            top = self.heaps[c].pop(state)
            if top is not None:
                heapq.heappush(front, (top[0], top[1], c))
        for key, n, c in front:
            popped.append((c, key, n))
        for c, key, n in popped:  # they all still wait
            self.heaps[c].push(state, key, n)
        return sorted(chosen, key=state.rank.__getitem__)

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        v = state.view
        for c, heap in enumerate(self.heaps):  # the jobs that changed since the last decision
            m = self.member[c]
            heap.refresh(
                state, lambda n: (self._left(state, n) * float(v.train[n, m]), state.rank[n])
            )
        gpus = state.idle_gpus
        waiting = state.waiting_jobs()  # AlloX weighs every waiting job
        if len(waiting) > CANDIDATES * len(gpus):
            jobs = self._least_work(state, gpus, CANDIDATES * len(gpus))
        else:
            jobs = list(waiting)
        positions = -(-len(jobs) // len(gpus))  # enough slots for every job
        left = np.array([self._left(state, n) for n in jobs], dtype=float)
        p = left[:, None] * v.train[np.ix_(jobs, gpus)]  # p_{n,m}
        cost = np.concatenate(
            [(k + 1) * p for k in range(positions)], axis=1
        )  # columns: (position, GPU)
        rows, cols = linear_sum_assignment(cost)
        # a job matched to a GPU it cannot run on (train time NEVER) waits
        return [
            (jobs[i], gpus[c])
            for i, c in zip(rows, cols)
            if c < len(gpus) and state.can_run(jobs[i], gpus[c])
        ]
