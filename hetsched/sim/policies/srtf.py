"""Shortest remaining time first (clairvoyant): jobs ordered by remaining work, the number of
tasks left times the job's task time on the average GPU; a partly placed round goes first; each
task to its fastest idle GPU."""

from __future__ import annotations

from hetsched.sim.engine import SimState
from hetsched.sim.policies.common import LazyHeap, fill_fastest, mean_task_time


class Srtf:
    name, clairvoyant = "srtf", True

    def prepare(self, instance, view) -> None:
        self._task_time: dict[int, float] = {}
        self._heap = LazyHeap()

    def remaining(self, state: SimState, n: int) -> float:
        v = state.view
        if n not in self._task_time:
            self._task_time[n] = mean_task_time(state, n)
        left = (state.total_rounds(n) - int(state.rounds_done[n])) * int(
            v.tasks_per_round[n]
        ) - int(state.started[n])
        return left * self._task_time[n]

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        self._heap.refresh(
            state,
            lambda n: (
                not state.partially_scheduled(n),
                self.remaining(state, n),
                int(state.rank[n]),
            ),
        )
        taken, seen, tasks, want = [], set(), 0, len(state.idle_gpus)
        while tasks < want:  # the best jobs until their ready tasks cover the idle GPUs
            top = self._heap.pop(state)
            if top is None:
                break
            if top[1] not in seen:
                seen.add(top[1])
                taken.append(top)
                tasks += int(state.ready[top[1]])
        for k, n in taken:  # still valid: a job that gets a task changes, and comes back refreshed
            self._heap.push(state, k, n)
        return fill_fastest(state, [n for _, n in taken])
