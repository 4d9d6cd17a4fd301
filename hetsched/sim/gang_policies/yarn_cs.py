"""YARN-CS, the capacity scheduler Hadar (and Gavel) compare against: non-preemptive and
heterogeneity-oblivious. Running jobs keep their GPUs until they finish; at each round boundary
the waiting jobs, in arrival order (one queue: FIFO), start when a gang fits in the free GPUs; a
job that does not fit lets later, smaller ones start (YARN's capacity scheduler assigns resources
to any application whose request fits). ``yarn-cs:strict`` does not backfill: the head of the
queue blocks everything behind it (strict FIFO), the reading under which a scheduler shows
head-of-line blocking. GPUs are chosen without regard to speed
(:func:`~hetsched.sim.gang_policies.common.oblivious_gpus`)."""

from __future__ import annotations

import numpy as np

from hetsched.core.errors import HetschedError
from hetsched.sim.gang_engine import GangState
from hetsched.sim.gang_policies.common import place_in_order


class YarnCs:
    name, clairvoyant = "yarn-cs", False

    def __init__(self, mode: str = "backfill", seed: int = 0):
        if mode not in ("backfill", "strict"):
            raise HetschedError(
                f"policy 'yarn-cs' takes 'backfill' (default) or 'strict' (got '{mode}')"
            )
        self.seed, self.backfill = seed, mode == "backfill"
        if mode == "strict":
            self.name = "yarn-cs:strict"

    def prepare(self, instance, jobs) -> None:
        self.server_rank = np.random.default_rng([self.seed, 11]).permutation(len(jobs.servers))

    def allocate(self, state: GangState) -> dict[int, tuple[int, ...]]:
        return place_in_order(
            state,
            state.active_in_order(),
            self.server_rank,
            keep=list(state.held),
            backfill=self.backfill,
        )
