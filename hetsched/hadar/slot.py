"""One slot of Hadar's DP_allocation (Algorithm 1, line 6) and what FIND_ALLOC returns: the data
every Hadar search shares. The searches themselves run compiled on the slot's arrays
(:mod:`hetsched.hadar.slot_arrays`, :mod:`hetsched.hadar.bnb_kernel`,
:mod:`hetsched.hadar.dp_kernel`); :func:`hetsched.hadar.dp_allocation.find_alloc` is FIND_ALLOC as
printed, their reference in the tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from hetsched.hadar.arrays import HadarView

Alloc = tuple[tuple[int, int, int], ...]  # ((h, r, count), ...)


class Prices(Protocol):
    """What the searches need of the price function (5): k(gamma) of a cell of c GPUs
    (:class:`hetsched.hadar.price.PriceFunction`)."""

    def price(self, allocated: float, capacity: float) -> float: ...


@dataclass(frozen=True)
class Slot:
    """DP_allocation's problem at slot t (Algorithm 1, line 6): the queue in order (job
    indices), the slot's price function, each job's remaining work, and the free GPUs per
    (machine, type), by default the whole cluster."""

    view: HadarView
    queue: list[int]
    prices: Prices
    remaining: np.ndarray
    t: int
    free: np.ndarray | None = None

    def free_gpus(self) -> np.ndarray:
        return self.view.capacity.copy() if self.free is None else self.free.copy()


@dataclass(frozen=True)
class Candidate:
    alloc: Alloc
    rate: float  # iterations per slot
    cost: float
    payoff: float
