"""YARN-CS, the capacity scheduler Hadar (and Gavel) compare against: non-preemptive and
heterogeneity-oblivious. Running jobs keep their GPUs until they finish; at each round boundary
the waiting jobs, in arrival order (one queue: FIFO), start when a gang fits in the free GPUs; a
job that does not fit lets later, smaller ones start (YARN's capacity scheduler assigns resources
to any application whose request fits). GPUs are chosen without regard to speed
(:func:`~hetsched.sim.gang_policies.common.oblivious_gpus`)."""

from __future__ import annotations

import numpy as np

from hetsched.sim.gang_engine import GangState
from hetsched.sim.gang_policies.common import place_in_order


class YarnCs:
    name, clairvoyant = "yarn-cs", False

    def __init__(self, seed: int = 0):
        self.seed = seed

    def prepare(self, instance, jobs) -> None:
        self.server_rank = np.random.default_rng([self.seed, 11]).permutation(len(jobs.servers))

    def allocate(self, state: GangState) -> dict[int, tuple[int, ...]]:
        return place_in_order(state, state.active(), self.server_rank, keep=list(state.held))
