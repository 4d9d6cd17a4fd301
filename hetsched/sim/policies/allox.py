"""AlloX (Le et al., EuroSys'20) as Hare uses it as a baseline: at each decision instant, a
min-cost bipartite matching of waiting jobs to (idle GPU, position) slots, where putting job n
k-th from the end on GPU m costs k p_{n,m} (its remaining work there delays itself and the k-1
jobs after it; the sum is the total completion time of the GPUs' sequences: Bruno, Coffman and
Sethi's exact model of R||sum C_j). Each GPU starts one task of the job it runs first: the one
matched to its highest position. Clairvoyant: p_{n,m} = tasks left x T^c_{n,m}. Solved by
the shortest augmenting path method (scipy's), with as many positions per GPU as jobs (a fast
GPU may take them all).

One idle GPU: the matching on one GPU is Smith's shortest-processing-time order, so the job it
runs first is the one of least p_{n,m} (ties: arrival), the top of that GPU's heap below; no
matching is built. One waiting job (most instants of a lightly loaded cluster): the matching
puts it first on its GPU of least p_{n,m}, i.e. of least T^c (ties: the lowest index).

Scale: the matching is restricted to the ``CANDIDATES`` x |idle GPUs| waiting jobs with the
least remaining work on their best idle GPU (with long queues the full matching is cubic in the
queue and took minutes on the 480-job Philly window); the rest wait for a later instant. With
no more waiting jobs than that, the matching is the full one over the engine's waiting jobs.
Otherwise the candidates come from one lazy heap per class of GPUs with the same task times,
merged over the idle classes, so a decision does not read the whole backlog.
"""

from __future__ import annotations

import heapq

import numpy as np

from hetsched.sim.engine import GpuOrders, Policy, SimState
from hetsched.sim.policies.allox_matching import first_jobs
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
        member = [self.class_of.index(c) for c in range(len(columns))]  # a GPU of each
        self._column = [view.train[:, m].tolist() for m in member]  # T^c of each class
        self._width = view.tasks_per_round.tolist()
        self._train = view.train.tolist()
        self._train_array = np.ascontiguousarray(view.train, dtype=float)
        self._by_train = GpuOrders(self._train)  # each job's GPUs by T^c, ties by index
        # one heap per class, brought up to date only when a decision reads it (LazyHeap.note)
        self.heaps = [LazyHeap() for _ in columns]

    def _heap(self, state: SimState, c: int) -> LazyHeap:
        """Class c's heap, with a current entry for every waiting job."""
        heap, column, rank = self.heaps[c], self._column[c], state.rank
        heap.catch_up(state, lambda n: (self._left(state, n) * column[n], rank[n]))
        return heap

    def _left(self, state: SimState, n: int) -> int:
        """Tasks job n has still to start."""
        done = state.rounds_done[n]
        return (state.total_rounds(n) - done) * self._width[n] - state.started[n]

    def _least_work(self, state: SimState, gpus: list[int], k: int) -> list[int]:
        """The ``k`` waiting jobs of least remaining work on their best idle GPU (ties by
        arrival), in arrival order: a merge of the idle classes' heaps, keyed (tasks left x
        T^c of the class, arrival rank), so a decision costs k, not the whole backlog."""
        idle = sorted({self.class_of[m] for m in gpus})
        front: list = []
        popped: list = []
        for c in idle:
            top = self._heap(state, c).pop(state)
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

    def _first_on(self, state: SimState, m: int) -> int | None:
        """The waiting job of least p_{n,m} (ties: arrival), or None: the top of GPU m's heap."""
        top = self._heap(state, self.class_of[m]).peek(state)
        return None if top is None else top[1]

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        for heap in self.heaps:  # the jobs that changed since the last decision
            heap.note(state.changed)
        if state.n_idle == 1:  # Smith's rule on that GPU (module doc)
            (m,) = state.idle_gpus
            n = self._first_on(state, m)
            return [(n, m)] if n is not None and state.can_run(n, m) else []
        if state.n_waiting == 1:  # the matching puts it first on the GPU of least p_{n,m}:
            n = state.waiting_jobs()[0]  # least T^c (ties: the lowest index)
            idle = state.idle
            m = next(m for m in self._by_train.of(n) if idle[m])
            return [(n, m)] if state.can_run(n, m) else []
        # AlloX weighs every waiting job: all of them when they are few (in arrival order)
        gpus = state.idle_gpus
        k = CANDIDATES * len(gpus)
        if state.n_waiting <= k:
            jobs = list(state.waiting_jobs())
        else:
            jobs = self._least_work(state, gpus, k)
        left = np.array([self._left(state, n) for n in jobs], dtype=float)
        first = first_jobs(self._train_array, np.array(jobs), np.array(gpus), left)
        # a job first on a GPU it cannot run on (train time NEVER) waits
        return [
            (jobs[i], m)
            for m, i in zip(gpus, first.tolist())
            if i >= 0 and state.can_run(jobs[i], m)
        ]
