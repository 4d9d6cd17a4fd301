"""Shortest remaining time first (clairvoyant): jobs ordered by remaining work, the number of
tasks left times the job's task time on the average GPU; a partly placed round goes first; each
task to its fastest idle GPU. Work-conserving: a GPU stays idle only if no waiting job can run
there (a job may not run on every type: Gavel's traces)."""

from __future__ import annotations

from hetsched.sim.engine import SimState
from hetsched.sim.policies.common import fill_fastest, mean_task_time
from hetsched.sim.policies.heaps import LazyHeap


class Srtf:
    name, clairvoyant = "srtf", True

    def prepare(self, instance, view) -> None:
        self._task_time: dict[int, float] = {}
        self._heap = LazyHeap()
        self._width = view.tasks_per_round.tolist()

    def remaining(self, state: SimState, n: int) -> float:
        t = self._task_time.get(n)
        if t is None:
            t = self._task_time[n] = mean_task_time(state, n)
        left = (state.total_rounds(n) - state.rounds_done[n]) * self._width[n] - state.started[n]
        return left * t

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        self._heap.refresh(
            state,
            lambda n: (
                not state.partially_scheduled(n),
                self.remaining(state, n),
                state.rank[n],
            ),
        )
        taken, seen, decided, free = [], set(), [], state.idle_gpus
        while free:  # the best jobs until their ready tasks cover the idle GPUs; where some of
            batch, tasks = [], 0  # them cannot run on a GPU left idle, the next best, and so on
            while tasks < len(free):
                top = self._heap.pop(state)
                if top is None:
                    break
                if top[1] not in seen:
                    seen.add(top[1])
                    batch.append(top)
                    tasks += state.ready[top[1]]
            if not batch:
                break
            got = fill_fastest(state, [n for _, n in batch], free)
            used = {m for _, m in got}
            free = [m for m in free if m not in used]
            decided += got
            taken += batch
        placed = {n for n, _ in decided}
        for k, n in taken:  # a job that gets a task changes and comes back refreshed; the rest
            if n not in placed:  # are still valid
                self._heap.push(state, k, n)
        return decided
