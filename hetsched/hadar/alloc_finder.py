"""FIND_ALLOC (Hadar's Algorithm 2, lines 22-34) for the many calls of one slot's search.

:func:`hetsched.hadar.dp_allocation.find_alloc` is the literal reading: for every q (the q fastest
types) it builds the consolidated gang on every machine and the spread gang, and prices each.
Two facts make most of that work repeat itself:

* **A gang does not depend on q past the first q that fills it.** The fill takes types in
  order and stops when W_j GPUs are found, so the gang for q is the gang for the smallest q whose
  types hold W_j free GPUs (on the machine, or over all machines for the spread gang); for
  smaller q there is none. Each machine and the spread therefore yield one distinct gang, and
  the literal list is that gang repeated. Keeping only the first occurrence of each, in the
  literal order, leaves the min-cost (or max-payoff) choice unchanged, ties included (``min``
  and ``max`` return the first of equal keys).
* **The gangs and their costs depend on the job only through its type order and gang size**
  (with the slot's prices fixed), so within one slot they are computed once per (type order,
  gang size, free GPUs) and shared by every job and search state that asks again; a job's
  payoff then needs only its rate on the gang's types, computed once per (job, types). Under
  the min-cost rule only the cheapest gangs are turned into candidates.
* **Machines in the same state give the same price.** Two machines with the same capacity and
  the same free GPUs of every type yield gangs that differ only in the machine's name, at equal
  cost and payoff; the literal list has the lower-numbered one first, and the choice keeps it.
  Only the first machine of each state is priced.

:class:`AllocFinder` does both; it returns the same candidate as ``find_alloc`` (the tests
compare the two on every call of whole searches).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from hetsched.hadar.arrays import HadarView
from hetsched.hadar.utility import utility

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


class AllocFinder:
    """FIND_ALLOC at one slot's prices (module doc): ``finder(j, free)`` equals
    ``find_alloc(view, j, free, capacity - free, prices, remaining[j], t, ...)``."""

    def __init__(
        self,
        view: HadarView,
        prices: Prices,
        remaining: np.ndarray,
        t: int,
        utility_name: str | None = None,
        comm_cost: float = 0.0,
        select: str = "min-cost",
    ):
        self.view, self.prices, self.remaining, self.t = view, prices, remaining, t
        self.utility_name, self.comm_cost, self.select = utility_name, comm_cost, select
        self._jobs: dict[int, tuple[tuple[int, ...], int]] = {}
        self._gang_table: dict[tuple, list] = {}
        self._values: dict[tuple[int, tuple[int, ...]], tuple[float, float]] = {}
        self._cap_rows = [tuple(row) for row in view.capacity.tolist()]

    def job(self, j: int) -> tuple[tuple[int, ...], int]:
        """Job j's usable types, fastest first (line 23), and its gang size W_j."""
        hit = self._jobs.get(j)
        if hit is None:
            x = self.view.throughput[j]
            order = tuple(int(r) for r in np.argsort(-x, kind="stable") if x[r] > 0)
            hit = self._jobs[j] = (order, int(self.view.workers[j]))
        return hit

    def __call__(self, j: int, free: np.ndarray) -> Candidate | None:
        """FIND_ALLOC for job j with ``free`` [h, r] GPUs."""
        return self.find(j, tuple(free.ravel().tolist()))

    def find(self, j: int, free_key: tuple[int, ...]) -> Candidate | None:
        """The same, with the free GPUs as the flat tuple of the [h, r] counts."""
        order, need = self.job(j)
        gangs, cheapest = self._gangs(order, need, free_key)
        if not gangs:
            return None
        # min-cost: min by (cost, -payoff), the first best payoff among the cheapest gangs;
        # max-payoff: the first best payoff (min and max return the first of equal keys)
        best, best_payoff = None, -math.inf
        values = self._values
        for gang in cheapest if self.select == "min-cost" else gangs:
            alloc, cost, kinds = gang
            value = values.get((j, kinds)) or self._value(j, kinds, need)
            payoff = value[1] - cost
            if best is None or payoff > best_payoff:
                best, best_payoff = gang, payoff
        if best_payoff <= 0:
            return None
        alloc, cost, kinds = best
        return Candidate(alloc, values[(j, kinds)][0], cost, best_payoff)

    def _gangs(self, order: tuple[int, ...], need: int, free_key: tuple[int, ...]) -> tuple:
        """The distinct gangs in the literal order as (gang, cost, types), and the cheapest of
        them in the same order (module doc); they depend on the job only through its type order
        and gang size, so jobs share them."""
        key = (order, need, free_key)
        hit = self._gang_table.get(key)
        if hit is not None:
            return hit
        n_types = self.view.capacity.shape[1]
        rows = [free_key[i : i + n_types] for i in range(0, len(free_key), n_types)]
        machines = range(len(rows))
        by_q: dict[int, list[tuple[Alloc, float]]] = {}
        states = set()
        for h in machines:
            state = (rows[h], self._cap_rows[h])
            if state in states:  # an earlier machine in the same state wins every tie
                continue
            states.add(state)
            q, alloc = _fill([h], order, rows, need)
            if alloc is not None:
                by_q.setdefault(q, []).append((alloc, 0.0))
        q_spread, spread = _fill(list(machines), order, rows, need)
        if spread is not None:
            by_q.setdefault(q_spread, [])
        gangs: list[tuple[Alloc, float]] = []
        for q in sorted(by_q):  # the literal order: q ascending, machines, then the spread
            gangs += by_q[q]
            if spread is not None and q == q_spread:
                gangs.append((spread, self._comm(spread, need)))
        cap = self.view.capacity
        priced = [
            (
                alloc,
                sum(self.prices.price(cap[h, r] - rows[h][r], cap[h, r]) * n for h, r, n in alloc)
                + extra,
                tuple(sorted({r for _, r, _ in alloc})),
            )
            for alloc, extra in gangs
        ]
        least = min((cost for _, cost, _ in priced), default=None)
        entry = (priced, [g for g in priced if g[1] == least])
        self._gang_table[key] = entry
        return entry

    def _comm(self, alloc: Alloc, need: int) -> float:
        return self.comm_cost * (len({h for h, _, _ in alloc}) - 1) * need

    def _value(self, j: int, kinds: tuple[int, ...], need: int) -> tuple[float, float]:
        """Job j's rate on GPUs of ``kinds`` and its utility at the JCT that rate gives."""
        key = (j, kinds)
        hit = self._values.get(key)
        if hit is None:
            v = self.view
            rate = v.rate(j, list(kinds), need)
            slots = math.ceil(float(self.remaining[j]) / rate - 1e-12)
            jct = v.jct(j, self.t + slots - 1)
            hit = self._values[key] = (rate, utility(v, self.utility_name, j, jct))
        return hit


def _fill(
    machines: list[int], order: tuple[int, ...], rows: list, need: int
) -> tuple[int, Alloc | None]:
    """The gang of ``need`` GPUs taken type by type (fastest first), machine by machine, and the
    number of types it needed; (0, None) if the machines do not hold ``need`` usable GPUs."""
    left, out = need, []
    for q, r in enumerate(order, start=1):
        for h in machines:
            n = min(left, rows[h][r])
            if n > 0:
                out.append((h, r, n))
                left -= n
            if left == 0:
                return q, tuple(out)
    return 0, None
