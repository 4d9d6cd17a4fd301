"""Helpers shared by the task-level policies."""

from __future__ import annotations

import heapq

import numpy as np

from hetsched.allocation.gavel_data import NEVER
from hetsched.sim.engine import SimState


def task_time(state: SimState, n: int) -> np.ndarray:
    """T^c + T^s of job n's task on every GPU."""
    return state.view.train[n] + state.view.sync[n]


def fill_fastest(
    state: SimState, order: list[int], free: list[int] | None = None
) -> list[tuple[int, int]]:
    """Give idle GPUs to jobs in ``order``: each job takes, one task at a time, the idle GPU where
    its task is fastest, until its ready tasks or the idle GPUs it can run on run out."""
    free = state.idle_gpus if free is None else list(free)  # idle_gpus is a new list
    out = []
    every = state.task_times
    for n in order:
        left = state.ready[n]
        times = every[n]
        least = times.__getitem__
        while left and free:
            m = min(free, key=least)  # the first GPU (in index order) of least time
            if times[m] >= NEVER:
                break  # no idle GPU it can run on
            free.remove(m)
            out.append((n, m))
            left -= 1
        if not free:
            break
    return out


def fill_in_gpu_order(state: SimState, order: list[int]) -> list[tuple[int, int]]:
    """Heterogeneity-oblivious: idle GPUs in index order, jobs in ``order`` (a job skips the GPUs
    it cannot run on at all)."""
    free = state.idle_gpus
    out = []
    for n in order:
        mine = take_runnable(state, n, free, int(state.ready[n]))
        out += [(n, m) for m in mine]
        if not free:
            break
    return out


def take_runnable(state: SimState, n: int, free: list[int], k: int) -> list[int]:
    """Up to ``k`` GPUs of ``free`` (removed from it) that job n can run on, in list order."""
    times = state.task_times[n]
    mine = [m for m in free if times[m] < NEVER][:k] if k else []
    if len(mine) == len(free):
        free.clear()
    elif mine:
        taken = set(mine)
        free[:] = [m for m in free if m not in taken]
    return mine


def mean_task_time(state: SimState, n: int) -> float:
    """A job's task time on the average GPU: 1 / (mean speed), speed = 1 / (T^c + T^s)."""
    return float(1.0 / np.mean(1.0 / task_time(state, n)))


def gang_size(state: SimState, n: int) -> int:
    """GPUs a gang policy waits for before starting job n's round: all its tasks (at most the
    cluster's GPUs); a round already started takes any idle GPU."""
    if state.started[n] > 0:
        return 1
    return min(state.ready[n], state.view.n_gpus)


class LazyHeap:
    """Waiting jobs by a priority key, updated from :attr:`SimState.changed` only (a job's key may
    change only when its state does): entries carry the job's version and go stale when it moves.
    A policy whose keys also move for other reasons (HLAS-P's history) re-keys a job with
    :meth:`rekey`, which makes the job's older entries stale too."""

    def __init__(self):
        self.heap: list[tuple] = []
        self.stamp: dict[int, int] = {}  # job -> times re-keyed by the policy

    def refresh(self, state: SimState, key) -> None:
        for n in state.changed:
            if state.ready[n] > 0:
                self.push(state, key(n), n)

    def _current(self, state: SimState, n: int, v: int, s: int) -> bool:
        return v == state.version[n] and s == self.stamp.get(n, 0) and state.ready[n] > 0

    def pop(self, state: SimState):
        """The best current (key, job), or None (:meth:`_current`, inline: the hot path)."""
        heap, version, stamp, ready, pop = (
            self.heap,
            state.version,
            self.stamp,
            state.ready,
            heapq.heappop,
        )
        while heap:
            k, n, v, s = pop(heap)
            if v == version[n] and s == stamp.get(n, 0) and ready[n] > 0:
                return k, n
        return None

    def peek(self, state: SimState):
        """The best current (key, job) without removing it, or None."""
        while self.heap:
            k, n, v, s = self.heap[0]
            if self._current(state, n, v, s):
                return k, n
            heapq.heappop(self.heap)
        return None

    def push(self, state: SimState, k, n: int) -> None:
        heap = self.heap
        heapq.heappush(heap, (k, n, state.version[n], self.stamp.get(n, 0)))
        if len(heap) & 1023 == 0 and len(heap) > 4 * state.n_waiting + 4096:
            self._compact(state)  # looked at every 1,024 entries

    def _compact(self, state: SimState) -> None:
        """Drop the stale entries at once (a policy that re-keys often leaves many): the current
        entries, and so every later pop, are the same; the cost is paid for by the pushes that
        made the heap this large."""
        self.heap = [e for e in self.heap if self._current(state, *e[1:])]
        heapq.heapify(self.heap)

    def invalidate(self, n: int) -> None:
        """Job n's entries go stale (it waits elsewhere now)."""
        self.stamp[n] = self.stamp.get(n, 0) + 1

    def rekey(self, state: SimState, k, n: int) -> None:
        """Job n's key is now ``k``: its older entries go stale."""
        self.invalidate(n)
        self.push(state, k, n)
