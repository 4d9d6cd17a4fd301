"""Gavel's round-based mechanism (OSDI'20, Sec. 5): realize an allocation X over rounds.

Before each round, job j's priority on type r is x_{j,r} divided by the share of rounds it has
received on r so far (infinite if it has none yet and x_{j,r} > 0; x_{j,r} = 0 never runs there).
Pairs (j, r) are taken by decreasing priority (ties: lower job index, then lower type index); a
job is placed on r if it has not been placed this round and s_j GPUs of type r are free. A job
keeps the GPUs it had in the previous round when it is placed on the same type and they are
free; otherwise it takes free GPUs nobody held in the previous round first, so others can keep theirs.
The mechanism of one round is :func:`priority_placement`; :meth:`RoundScheduler.next_round` applies it
to a fixed job set, and the simulator's ``gavel`` policy (:mod:`hetsched.sim.gang_policies.gavel`)
to the jobs active in each round.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hetsched.gavel.problem import AllocationView


@dataclass
class RoundScheduler:
    view: AllocationView
    x: np.ndarray
    gpus_by_type: dict[str, list[str]]
    received: np.ndarray = field(init=False)  # rounds job j ran on type r
    elapsed: int = field(init=False, default=0)
    previous: dict[int, tuple[int, tuple[str, ...]]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.received = np.zeros_like(self.x)

    def priorities(self) -> np.ndarray:
        share = self.received / max(1, self.elapsed)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(share > 0, self.x / np.where(share > 0, share, 1), np.inf)
        return np.where(self.x > 1e-12, p, -np.inf)

    def next_round(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        """Job id -> (GPU type, GPU ids) for the next round; updates the received shares."""
        v = self.view
        free = {t: list(ids) for t, ids in self.gpus_by_type.items()}
        previous = {j: (v.types[r], gs) for j, (r, gs) in self.previous.items()}
        placed = priority_placement(self.priorities(), v.scale, v.types, free, previous)
        self.elapsed += 1
        for j, (t, _) in placed.items():
            self.received[j, v.types.index(t)] += 1
        self.previous = {j: (v.types.index(t), gs) for j, (t, gs) in placed.items()}
        return {v.job_ids[j]: (t, gs) for j, (t, gs) in placed.items()}


def priority_placement(priority: np.ndarray, scale, types, free: dict, previous: dict) -> dict:
    """One round of Gavel's mechanism: (job j, type r) pairs by decreasing ``priority[j, r]``
    (ties: lower j, then lower r; -inf never runs); j takes ``scale[j]`` GPUs of type r if it has
    none yet and enough are free. ``free`` maps a type to its free GPUs (any labels, in preference
    order; consumed), ``previous`` maps a job to the (type, GPUs) it held last round: it keeps them
    when placed on that type and they are free, else it takes free GPUs nobody held first.
    Returns job -> (type, GPUs)."""
    held = {g for _, gs in previous.values() for g in gs}
    rank = {t: {g: i for i, g in enumerate(gs)} for t, gs in free.items()}
    priority = np.asarray(priority, dtype=float)
    jobs, kinds = np.nonzero(priority > -np.inf)
    order = np.lexsort((kinds, jobs, -priority[jobs, kinds]))  # by -priority, then j, then r
    left = sum(len(gs) for gs in free.values())
    placed: dict[int, tuple[str, tuple]] = {}
    for j, r in zip(jobs[order].tolist(), kinds[order].tolist()):
        if not left:
            break  # every GPU is taken
        t, need = types[r], int(scale[j])
        if j in placed or len(free[t]) < need:
            continue
        last = previous.get(j)
        if last is not None and last[0] == t and all(g in free[t] for g in last[1]):
            chosen = list(last[1])
        else:
            chosen = sorted(free[t], key=lambda g: (g in held, rank[t][g]))[:need]
        for g in chosen:
            free[t].remove(g)
        left -= len(chosen)
        placed[j] = (t, tuple(chosen))
    return placed
