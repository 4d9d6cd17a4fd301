"""Least-attained-service policies with K priority queues (the TCC paper, Sec. 4; Tiresias).

* ``hlas`` (Algorithms 1-3): job size H_n(t) = R_n^r(t) T-bar_n, R^r the rounds already run and
  T-bar_n the job's round time at the cluster's average speed (what GPU grouping equalizes:
  K_n tasks at the mean speed 1/(T^c + T^s) over GPUs, spread over |M| GPUs). A new job enters
  Q_1; a job sits in the queue whose thresholds hold its size. For each idle GPU, the highest
  non-empty queue serves a *partially scheduled* job first, else its first job in FIFO order.
* ``hlas-p`` (Sec. 5.B), HLAS with predicted sizes: :mod:`hetsched.sim.policies.hlas_p`.
* ``las2d`` (Tiresias' 2D-LAS as the TCC paper describes it): attained service = task-GPU time
  (sum of T^c of the tasks run), the same queues, FIFO inside a queue, and a round starts only
  when as many GPUs as it has tasks are idle (no relaxed synchronization; at most all GPUs), on
  idle GPUs in index order (heterogeneity-oblivious). A job that does not fit is skipped for this
  instant.

GPU groups (``hlas:U``, ``hlas-p:U``): the preparation stage of HLAS, eqs. (4)-(6). The policy
then runs on a machine whose GPUs are U groups of similar speed (:mod:`hetsched.sim.gpu_groups`;
``machine`` below); without U every GPU is its own group, as in the TCC paper's toy examples.

Thresholds E_1 < E_2 < ... (a job of size H is in queue 1 + #{k : E_k <= H}): the policy's
option, else the instance's ``metadata.hlas.thresholds``, else 2, 8 and 32 times the median
T-bar_n (HLAS) or the median one-round task-GPU time (2D-LAS).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from bisect import bisect_right

import numpy as np

from hetsched.instance.gavel_table import NEVER
from hetsched.sim.engine import SimState
from hetsched.sim.policies.common import gang_size, mean_task_time, take_runnable
from hetsched.sim.policies.heaps import KeyedHeap, LazyHeap


class _Queues(ABC):
    name = ""
    clairvoyant = False

    def __init__(self, thresholds: list[float] | None = None):
        self.thresholds = None if thresholds is None else sorted(float(x) for x in thresholds)

    @abstractmethod
    def unit(self, state: SimState, n: int) -> float:
        """The job's size scale: thresholds default to multiples of its median."""

    def prepare(self, instance, view) -> None:
        self._units = None
        hlas = instance.extensions.hlas
        if self.thresholds is None and hlas is not None and hlas.thresholds:
            self.thresholds = list(hlas.thresholds)

    def _setup(self, state: SimState) -> None:
        if self._units is None:
            units = [float(self.unit(state, n)) for n in range(state.view.n_jobs)]
            if self.thresholds is None:
                base = float(np.median(units))
                self.thresholds = [2 * base, 8 * base, 32 * base]
            self._units = units  # Python floats: the same IEEE arithmetic as numpy's, faster

    def queue_of(self, size: float) -> int:
        return bisect_right(self.thresholds, size * (1 + 1e-12))


class Hlas(_Queues):
    name = "hlas"

    def __init__(self, thresholds: list[float] | None = None, groups: int | None = None):
        super().__init__(thresholds)
        self.groups = groups
        self.grouping = None

    def prepare(self, instance, view) -> None:
        super().prepare(instance, view)
        self._heap = KeyedHeap()  # every waiting job, re-keyed as it changes

    def machine(self, instance):
        """The cluster this policy schedules on: U GPU groups (eqs. (4)-(6)), or the GPUs as they are."""
        if self.groups is None:
            return instance
        from hetsched.sim.gpu_groups import grouped_cluster

        self.grouping = grouped_cluster(instance, self.groups)
        self.name = f"{type(self).name}:{self.groups}"
        return self.grouping.machine

    def unit(self, state: SimState, n: int) -> float:
        v = state.view
        return mean_task_time(state, n) * int(v.tasks_per_round[n]) / v.n_gpus  # T-bar_n

    def size(self, state: SimState, n: int) -> float:
        return state.rounds_done[n] * self._units[n]  # H_n(t)

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        if self._units is None:
            self._setup(state)
        self._learn_and_rekey(state)
        self._heap.refresh(
            state, lambda n: self._key(state, n, state.rank[n], state.started[n] > 0)
        )
        heap = self._heap
        if state.n_waiting == 1:  # one job (most instants of a light load): the first idle GPUs
            top = heap.peek(state)  # it can run on, as the loop below gives them (its entry
            if top is None:  # goes stale as its tasks start, or stays where it is)
                return []
            n = top[1]
            return [(n, m) for m in take_runnable(state, n, state.idle_gpus, state.ready[n])]
        ready: dict[int, int] = {}
        out = []
        times = state.task_times
        for m in state.idle_gpus:  # Algorithm 1, lines 6-10: each idle GPU in turn
            top, passed = heap.peek(state), []
            while top is not None and (
                ready.get(top[1], 1) == 0  # a job placed in full now
                or times[top[1]][m] >= NEVER  # the job cannot use this GPU: the next one
            ):
                heap.drop_top()
                if ready.get(top[1], 1):
                    passed.append(top)
                top = heap.peek(state)
            if top is None and not passed:
                break  # no waiting job left for this GPU or any after it
            if top is not None:
                k, n = top
                left = ready[n] = ready.get(n, state.ready[n]) - 1
                out.append((n, m))
                if left > 0:  # now partially scheduled (its size and queue do not change now)
                    partial = self._key(state, n, state.rank[n], True)
                    if partial != k:  # its entry moves (else it stays where it is)
                        heap.drop_top()
                        heap.push(state, partial, n)
            for k, p in passed:  # they keep their place for the next GPU (after the top's move:
                heap.push(state, k, p)  # one of them may come out on top)
        return out

    def _learn_and_rekey(self, state: SimState) -> None:
        """Before a decision, re-key the waiting jobs whose key moved for a reason other than their
        own state (none here; HLAS-P's history)."""

    def _key(self, state: SimState, n: int, position: int, partial: bool) -> tuple:
        """Queue, then partially scheduled first, then FIFO (Algorithm 3): (2 queue + [not
        partial], position), which orders as (queue, not partial, position) and compares faster
        in the heap."""
        return (2 * self.queue_of(self.size(state, n)) + (not partial), position)


class Las2d(_Queues):
    name = "las2d"

    def unit(self, state: SimState, n: int) -> float:
        v = state.view
        return float(np.mean(v.train[n])) * int(v.tasks_per_round[n])  # one round's task-GPU time

    def prepare(self, instance, view) -> None:
        super().prepare(instance, view)
        self._by_gang: dict[
            int, LazyHeap
        ] = {}  # one heap per gang size: the first job that fits is a peek away

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        self._setup(state)
        fresh = []
        for n in state.changed:
            if state.ready[n] > 0:
                size = gang_size(state, n)
                heap = self._by_gang.setdefault(size, LazyHeap())
                heap.push(state, (self.queue_of(state.service[n]), state.rank[n]), n)
                fresh.append((size, n))
        if state.n_waiting == 1 and len(fresh) == 1:  # the one waiting job just changed: it
            size, n = fresh[0]  # takes its GPUs if its gang fits, as the loop below gives them
            if size > state.n_idle:  # (its entry goes stale as its tasks start, or stays)
                return []
            return [(n, m) for m in take_runnable(state, n, state.idle_gpus, state.ready[n])]
        free = state.idle_gpus
        out: list[tuple[int, int]] = []
        placed: set[int] = set()
        blocked: list = []
        while free and len(placed) < state.n_waiting:  # the highest-priority job whose gang
            tops = [  # fits in the idle GPUs (each waiting job is looked at once)
                (top, heap)
                for size, heap in self._by_gang.items()
                if size <= len(free)
                for top in [heap.peek(state)]
                if top is not None
            ]
            if not tops:
                break
            (k, n), heap = min(tops, key=lambda th: th[0])
            heap.pop(state)
            if n in placed:
                continue
            placed.add(n)
            mine = take_runnable(state, n, free, state.ready[n])
            if mine:
                out += [(n, m) for m in mine]
            else:  # none of the idle GPUs can run it: it keeps its place for a later instant
                blocked.append((heap, k, n))
        for heap, k, n in blocked:
            heap.push(state, k, n)
        return out
