"""Shortest remaining time first (clairvoyant): jobs ordered by remaining work, the number of
tasks left times the job's task time on the average GPU; a partly placed round goes first; each
task to its fastest idle GPU. Work-conserving: a GPU stays idle only if no waiting job can run
there (a job may not run on every type: Gavel's traces)."""

from __future__ import annotations

from hetsched.sim.engine import SimState
from hetsched.sim.policies.common import fill_fastest, mean_task_times
from hetsched.sim.policies.heaps import LazyHeap

#: waiting jobs up to which a decision sorts them instead of reading its heap
SHORT_QUEUE = 16


class Srtf:
    name, clairvoyant = "srtf", True

    def prepare(self, instance, view) -> None:
        self._heap = LazyHeap()
        self._width = view.tasks_per_round.tolist()
        self._rounds = view.rounds.tolist()  # |R_n|: the policy is clairvoyant
        # each job's task time on the average GPU
        self._task_time = mean_task_times(view)

    def remaining(self, state: SimState, n: int) -> float:
        left = (self._rounds[n] - state.rounds_done[n]) * self._width[n] - state.started[n]
        return left * self._task_time[n]

    def _key(self, state: SimState, n: int) -> tuple:
        """A partly placed round first, then least remaining work, then arrival."""
        return (
            not state.partially_scheduled(n),
            self.remaining(state, n),
            state.rank[n],
        )

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        self._heap.note(state.changed)
        if state.n_waiting == 1:  # the usual instant under a light load: one job, its fastest GPUs
            return fill_fastest(state, state.waiting_jobs())
        if state.n_waiting <= SHORT_QUEUE:  # few waiting jobs: sort them (no heap to keep)
            key = self._key
            jobs = iter(sorted((key(state, n), n) for n in state.waiting_jobs()))
            return self._fill(state, lambda: next(jobs, None))[0]
        heap = self._heap
        heap.catch_up(state, lambda n: self._key(state, n))  # the jobs changed since last read
        decided, taken = self._fill(state, lambda: heap.pop(state))
        placed = {n for n, _ in decided}
        for k, n in taken:  # a job that gets a task changes and comes back refreshed; the rest
            if n not in placed:  # are still valid
                heap.push(state, k, n)
        return decided

    def _fill(self, state: SimState, best) -> tuple[list[tuple[int, int]], list]:
        """Starts for the jobs ``best()`` gives in order ((key, job), None past the last), and the
        (key, job) pairs it took."""
        taken, seen, decided, free = [], set(), [], state.idle_gpus
        while free:  # the best jobs until their ready tasks cover the idle GPUs; where some of
            batch, tasks = [], 0  # them cannot run on a GPU left idle, the next best, and so on
            while tasks < len(free):
                top = best()
                if top is None:
                    break
                if top[1] not in seen:
                    seen.add(top[1])
                    batch.append(top)
                    tasks += state.ready[top[1]]
            if not batch:
                break
            got = fill_fastest(state, [n for _, n in batch], free)
            decided += got
            taken += batch
            if top is None or len(got) == len(free):
                break  # no job left, or no GPU
            if got:
                used = {m for _, m in got}
                free = [m for m in free if m not in used]
        return decided, taken
