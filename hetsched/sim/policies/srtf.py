"""Shortest remaining time first (clairvoyant): jobs ordered by remaining work, the number of
tasks left times the job's task time on the average GPU; a partly placed round goes first; each
task to its fastest idle GPU."""

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
        taken, seen, tasks, want = [], set(), 0, state.n_idle
        while tasks < want:  # the best jobs until their ready tasks cover the idle GPUs
            top = self._heap.pop(state)
            if top is None:
                break
            if top[1] not in seen:
                seen.add(top[1])
                taken.append(top)
                tasks += state.ready[top[1]]
        decided = fill_fastest(state, [n for _, n in taken])
        placed = {n for n, _ in decided}
        for k, n in taken:  # a job that gets a task changes and comes back refreshed; the rest
            if n not in placed:  # are still valid
                self._heap.push(state, k, n)
        return decided
