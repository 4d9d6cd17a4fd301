"""Tiresias (Gu et al., NSDI'19), discretized two-dimensional LAS, as Hadar's baseline: preemptive
and heterogeneity-oblivious. A job's attained service is the GPU-seconds it has held (GPUs x time,
the "2D" of 2D-LAS); K queues split by thresholds on it (a job is demoted when it crosses one);
queues are served in order, FIFO by arrival inside a queue. Each round the jobs are placed in
that priority order while GPUs last (a job that does not fit is skipped); a running job that is
not placed is preempted and pays the restore delay when it resumes. Jobs keep their GPUs when they
can (:func:`~hetsched.sim.gang_policies.common.oblivious_gpus`).

Defaults and omissions: thresholds (3600,) GPU-seconds, i.e. two queues split at one GPU-hour
(``tiresias:T1,T2,...`` sets others); Tiresias' starvation guard (promoting a job that waited
longer than a multiple of its run time) is not modelled."""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

from hetsched.errors import InputError
from hetsched.sim.gang_engine import GangState
from hetsched.sim.gang_policies.common import place_in_order


class Tiresias:
    name, clairvoyant = "tiresias", False

    def __init__(self, thresholds: tuple[float, ...] | str = (3600.0,), seed: int = 0):
        if isinstance(thresholds, str):
            try:
                thresholds = tuple(float(x) for x in thresholds.split(","))
            except ValueError:
                raise InputError(
                    "policy",
                    "tiresias:THRESHOLDS",
                    f"comma-separated GPU-seconds, got {thresholds!r}",
                ) from None
        if any(not t > 0 for t in thresholds) or list(thresholds) != sorted(thresholds):
            raise InputError(
                "policy", "tiresias:THRESHOLDS", f"positive and increasing, got {thresholds}"
            )
        self.thresholds = tuple(thresholds)
        self.seed = seed

    def prepare(self, instance, jobs) -> None:
        self.server_rank = np.random.default_rng([self.seed, 11]).permutation(len(jobs.servers))

    def queue(self, state: GangState, j: int) -> int:
        return bisect_right(self.thresholds, float(state.attained[j]))

    def allocate(self, state: GangState) -> dict[int, tuple[int, ...]]:
        active = state.active()  # arrival order
        order = sorted(active, key=lambda j: self.queue(state, j))  # stable: FIFO inside a queue
        return place_in_order(state, order, self.server_rank)
