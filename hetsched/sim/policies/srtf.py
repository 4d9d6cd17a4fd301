"""Shortest remaining time first (clairvoyant): jobs ordered by remaining work, the number of
tasks left times the job's task time on the average GPU; a partly placed round goes first; each
task to its fastest idle GPU."""

from __future__ import annotations

from hetsched.sim.engine import SimState
from hetsched.sim.policies.common import fill_fastest, mean_task_time


class Srtf:
    name, clairvoyant = "srtf", True

    def prepare(self, instance, view) -> None:
        pass

    def remaining(self, state: SimState, n: int) -> float:
        v = state.view
        left = (state.total_rounds(n) - int(state.rounds_done[n])) * int(v.tasks_per_round[n]) - int(state.started[n])
        return left * mean_task_time(state, n)

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        order = sorted(state.waiting_jobs(), key=lambda n: (not state.partially_scheduled(n), self.remaining(state, n)))
        return fill_fastest(state, order)
