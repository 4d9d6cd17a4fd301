"""Placement helpers shared by the job-level policies."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

import numpy as np

from hetsched.sim.gang_engine import GangState


def oblivious_gpus(
    state: GangState,
    j: int,
    free: set[int],
    held_by_any: set[int],
    server_rank: np.ndarray,
) -> tuple[int, ...] | None:
    """A gang for job j chosen without looking at GPU speed (YARN-CS, Tiresias): the GPUs it held
    last round if they are all free; else free GPUs it can run on, GPUs nobody else held last
    round first (``held_by_any``: every GPU held last round), filling the servers with the most
    such GPUs first (locality; ties in ``server_rank`` order, a seeded permutation so that no
    GPU type is favoured). None if too few are free."""
    data = state.jobs
    need = data.gang_sizes[j]
    prev = state.held.get(j)
    if prev is not None and free.issuperset(prev):
        return prev
    row, type_of = data.rows[j], data.type_of
    usable = [g for g in free if row[type_of[g]] > 0]
    if len(usable) < need:
        return None
    mine = set(prev) if prev is not None else ()
    server_of = data.server_of
    chosen: list[int] = []
    for tier in (False, True):  # GPUs nobody else held, then the rest
        by_server: dict[int, list[int]] = defaultdict(list)
        for g in usable:
            if (g in held_by_any and g not in mine) == tier:
                by_server[server_of[g]].append(g)
        for h in sorted(by_server, key=lambda h: (-len(by_server[h]), server_rank[h])):
            for g in sorted(by_server[h]):
                if len(chosen) < need:
                    chosen.append(g)
    return tuple(chosen) if len(chosen) == need else None


def place_in_order(
    state: GangState,
    order: Iterable[int],
    server_rank: np.ndarray,
    keep: list[int] | None = None,
    backfill: bool = True,
) -> dict[int, tuple[int, ...]]:
    """Jobs in ``order`` take a gang each while GPUs last (a job that does not fit is skipped, the
    next may still fit: backfilling; ``backfill=False`` stops at the first job that does not fit,
    strict FIFO). Jobs in ``keep`` are placed first on the GPUs they hold. ``order`` is read only
    until the GPUs are filled (an iterator may produce it lazily)."""
    free = set(range(state.jobs.n_gpus))
    plan: dict[int, tuple[int, ...]] = {}
    for j in keep or []:
        plan[j] = state.held[j]
        free -= set(state.held[j])
    held_by_any = {g for gs in state.held.values() for g in gs}
    gang = state.jobs.gang_sizes
    for j in order:
        if not free:
            break  # nobody fits any more (every gang has at least one GPU)
        if j in plan:
            continue
        if gang[j] > len(free):  # too few free GPUs: oblivious_gpus would find no gang
            if not backfill:
                break
            continue
        gpus = oblivious_gpus(state, j, free, held_by_any, server_rank)
        if gpus is not None:
            plan[j] = gpus
            free -= set(gpus)
        elif not backfill:
            break
    return plan
