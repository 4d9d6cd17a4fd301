"""Whether a job's tasks fit on the cluster at all: its W_n workers and P_n parameter servers,
each with its per-task demand (GPUs, CPU, bandwidth), on servers of the given capacities, with
nothing else placed (Harmony's capacity constraints, ToN'22 Sec. IV). A job that fits on no
empty cluster can never run, so a simulation refuses it up front instead of waiting for it.

This is vector bin packing of a handful of items: a depth-first search that places the largest
tasks first and tries, at each task, only one server of each distinct remaining capacity (the
servers are otherwise interchangeable). Jobs have a few tasks; ``budget`` bounds the search on
hostile input, and an answer it cannot reach within it is None (unknown).
"""

from __future__ import annotations

import numpy as np

EPS = 1e-9


def fits_on_empty_cluster(
    worker_demand: np.ndarray,
    workers: int,
    ps_demand: np.ndarray,
    parameter_servers: int,
    capacity: np.ndarray,
    budget: int = 100_000,
) -> bool | None:
    """True if ``workers`` tasks of demand ``worker_demand`` and ``parameter_servers`` tasks of
    ``ps_demand`` (vectors over the resources) fit on servers of ``capacity`` [server, resource]
    together; False if they cannot; None if the search passed ``budget`` nodes first."""
    items = [np.asarray(worker_demand, float)] * int(workers) + [
        np.asarray(ps_demand, float)
    ] * int(parameter_servers)
    items.sort(key=lambda d: tuple(-d))  # the largest first: dead ends show early
    free = np.array(capacity, dtype=float)
    nodes = 0

    def place(k: int) -> bool | None:
        nonlocal nodes
        if k == len(items):
            return True
        nodes += 1
        if nodes > budget:
            return None
        tried: set[tuple] = set()
        unknown = False
        for h in range(len(free)):
            key = tuple(free[h])
            if key in tried or np.any(items[k] > free[h] + EPS):
                continue
            tried.add(key)
            free[h] -= items[k]
            got = place(k + 1)
            free[h] += items[k]
            if got:
                return True
            unknown = unknown or got is None
        return None if unknown else False

    return place(0)
