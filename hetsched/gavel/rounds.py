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

from hetsched.core.compiled import kernel
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
        elapsed = np.full(len(self.x), float(self.elapsed))
        return priorities(self.x, self.x > 1e-12, self.received, elapsed)

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


@kernel
def priorities(x, usable, received, elapsed):  # pragma: no cover - compiled
    """x_{j,r} over the share of job j's ``elapsed[j]`` rounds it received on r (inf where it
    received none); -inf where ``usable`` is False: the pair never runs."""
    n, k = x.shape
    p = np.empty((n, k))
    for j in range(n):
        rounds = max(1.0, elapsed[j])
        for r in range(k):
            share = received[j, r] / rounds
            if not usable[j, r]:
                p[j, r] = -np.inf
            elif share > 0:
                p[j, r] = x[j, r] / share
            else:
                p[j, r] = np.inf
    return p


def priority_placement(priority: np.ndarray, scale, types, free: dict, previous: dict) -> dict:
    """One round of Gavel's mechanism: (job j, type r) pairs by decreasing ``priority[j, r]``
    (ties: lower j, then lower r; -inf never runs); j takes ``scale[j]`` GPUs of type r if it has
    none yet and enough are free. ``free`` maps a type to its free GPUs (any labels, in preference
    order; consumed), ``previous`` maps a job to the (type, GPUs) it held last round: it keeps them
    when placed on that type and they are free, else it takes free GPUs nobody held first.
    Returns job -> (type, GPUs). The labels are numbered and the round is
    :func:`place_indexed`'s."""
    labels = list(
        dict.fromkeys(
            [g for gs in free.values() for g in gs] + [g for _, gs in previous.values() for g in gs]
        )
    )
    number = {g: i for i, g in enumerate(labels)}
    kinds = {t: r for r, t in enumerate(types)}
    n = len(priority)
    widest = max([len(gs) for gs in free.values()] + [1])
    type_gpus = np.full((len(types), widest), -1, dtype=np.int64)
    for t, gs in free.items():
        type_gpus[kinds[t], : len(gs)] = [number[g] for g in gs]
    prev_type, prev_gpus = previous_arrays(
        n, {j: (kinds[t], [number[g] for g in gs]) for j, (t, gs) in previous.items()}
    )
    placed_type, placed_gpus = place_indexed(
        np.asarray(priority, dtype=float),
        np.asarray(scale, dtype=np.int64),
        type_gpus,
        prev_type,
        prev_gpus,
        len(labels),
    )
    out = {}
    for j, (r, gs) in enumerate(zip(placed_type.tolist(), placed_gpus.tolist())):
        if r >= 0:
            out[j] = (types[r], tuple([labels[g] for g in gs if g >= 0]))
            for g in out[j][1]:
                free[types[r]].remove(g)
    return out


def previous_arrays(n: int, previous: dict) -> tuple[np.ndarray, np.ndarray]:
    """job -> (type index, GPU indices) as arrays: the type (-1: none) and the GPUs (-1 padded)."""
    widest = max([len(gs) for _, gs in previous.values()] + [1])
    prev_type = np.full(n, -1, dtype=np.int64)
    prev_gpus = np.full((n, widest), -1, dtype=np.int64)
    for j, (r, gs) in previous.items():
        prev_type[j] = r
        prev_gpus[j, : len(gs)] = gs
    return prev_type, prev_gpus


@kernel
def place_indexed(priority, scale, type_gpus, prev_type, prev_gpus, n_gpus):  # pragma: no cover
    """:func:`priority_placement` on numbered GPUs: ``type_gpus[r]`` the free GPUs of type r in
    preference order (-1 padded), ``prev_type[j]`` / ``prev_gpus[j]`` what job j held last
    round (-1: nothing). Returns each job's type (-1: not placed) and GPUs (-1 padded)."""
    n, k = priority.shape
    keys = np.empty(n * k)
    pairs = np.empty(n * k, dtype=np.int64)
    count = 0
    for j in range(n):
        for r in range(k):
            if priority[j, r] > -np.inf:
                keys[count] = -priority[j, r]
                pairs[count] = j * k + r
                count += 1
    order = np.argsort(keys[:count], kind="mergesort")  # stable: ties stay in (j, r) order
    is_free = np.zeros(n_gpus, dtype=np.bool_)
    held = np.zeros(n_gpus, dtype=np.bool_)
    n_free = np.zeros(k, dtype=np.int64)
    for r in range(k):
        for g in type_gpus[r]:
            if g >= 0:
                is_free[g] = True
                n_free[r] += 1
    for j in range(n):
        for g in prev_gpus[j]:
            if g >= 0:
                held[g] = True
    left = n_free.sum()
    width = max(prev_gpus.shape[1], scale.max() if n else 1)
    placed_type = np.full(n, -1, dtype=np.int64)
    placed_gpus = np.full((n, width), -1, dtype=np.int64)
    for o in order:
        if left == 0:
            break  # every GPU is taken
        j, r = pairs[o] // k, pairs[o] % k
        need = scale[j]
        if placed_type[j] >= 0 or n_free[r] < need:
            continue
        got = 0
        if prev_type[j] == r:
            keep = True
            for g in prev_gpus[j]:
                if g >= 0 and not is_free[g]:
                    keep = False
            if keep:
                for g in prev_gpus[j]:
                    if g >= 0:
                        placed_gpus[j, got] = g
                        got += 1
        if got == 0:  # the free GPUs nobody held first, each part in preference order
            for pass_held in (False, True):
                for g in type_gpus[r]:
                    if got < need and g >= 0 and is_free[g] and held[g] == pass_held:
                        placed_gpus[j, got] = g
                        got += 1
        for i in range(got):
            is_free[placed_gpus[j, i]] = False
        n_free[r] -= got
        left -= got
        placed_type[j] = r
    return placed_type, placed_gpus
