"""Hare's offline Algorithm 1 (HPDC'22) executed by the simulator (clairvoyant: the plan is made
at time 0 from every job's arrival, rounds and times).

The plan comes from :func:`hetsched.hare.algorithm1.hare_alg1` with priorities H from an
ordering of :mod:`hetsched.hare.orderings` (default ``hare-interval-lp``, which scales to the
paper's size; ``hare-sched-rl`` is the paper's). The simulator then runs, on each GPU, its planned
tasks in planned order, each as soon as the GPU is idle and the task's round is ready -- so the
simulated schedule is the plan itself when the plan was built on the same model (checked in the
tests), and never starts a task earlier than the plan allows. ``hare`` uses the paper's GPU rule
(earliest available GPU, lines 9-12); ``hare-earliest-finish`` the named variant that picks the GPU
where the task finishes first.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from hetsched.hare.algorithm1 import hare_alg1
from hetsched.hare.orderings import ordering
from hetsched.sim.engine import SimState


class HareOffline:
    name, clairvoyant = "hare", True

    def __init__(
        self, order: str = "hare-interval-lp", rule: str = "earliest_available", name: str = "hare"
    ):
        self.order, self.rule, self.name = order, rule, name

    def prepare(self, instance, view) -> None:
        priorities = ordering(self.order, instance).priority
        run = hare_alg1(view, priorities, self.rule)  # type: ignore[arg-type]
        n, r, _ = view.task_arrays
        self.plan: list[deque] = [deque() for _ in range(view.n_gpus)]
        for i in np.lexsort((np.arange(len(run.start)), run.start)):  # by planned start
            self.plan[int(run.gpu[i])].append((int(n[i]), int(r[i])))

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        out = []
        for m in state.idle_gpus:
            if self.plan[m]:
                n, r = self.plan[m][0]
                placed = sum(1 for job, _ in out if job == n)
                if state.rounds_done[n] == r and state.ready[n] - placed > 0 and state.arrived[n]:
                    self.plan[m].popleft()
                    out.append((n, m))
        return out
