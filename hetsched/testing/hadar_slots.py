"""Slots of DP_allocation (Hadar's Algorithm 2) for tests of its searches: one queue on a
generated Hadar cluster over several slots, as the online algorithm meets it."""

from __future__ import annotations

import numpy as np

from hetsched.hadar.price import price_function
from hetsched.hadar.slot import Slot
from hetsched.hadar.view import hadar_view
from hetsched.instance.generators import hadar_cluster


def queue_slots(seed: int, n: int, keep: float, steps: int) -> list[Slot]:
    """``steps`` slots of one queue of ``n`` jobs on ``hadar_cluster(seed)``, with ``keep`` of
    each cell's GPUs free, the jobs' remaining work shrinking from slot to slot (by a factor
    drawn in [0.2, 1] from a generator seeded with ``seed``): the prices (6)-(7) stay (they
    depend on the queue's jobs), the utilities move."""
    v = hadar_view(hadar_cluster(seed, n_jobs=n))
    queue = list(range(n))
    free = np.floor(v.capacity * keep).astype(np.int64)
    prices = price_function(v, queue)
    rng = np.random.default_rng(seed)
    remaining = v.work.astype(float)
    out = []
    for t in range(1, steps + 1):
        out.append(Slot(v, queue, prices, remaining.copy(), t, free))
        remaining = remaining * rng.uniform(0.2, 1.0, n)
    return out
