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
* **A gang's price depends only on the free GPUs of its own cells** (with the slot's prices,
  the job's remaining work and the slot fixed), so within one slot it is computed once per
  (job, gang, free counts of its cells) and then looked up.
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

import numpy as np

from hetsched.hadar.price import PriceFunction
from hetsched.hadar.utility import utility
from hetsched.hadar.view import HadarView

Alloc = tuple[tuple[int, int, int], ...]  # ((h, r, count), ...)


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
        prices: PriceFunction,
        remaining: np.ndarray,
        t: int,
        utility_name: str | None = None,
        comm_cost: float = 0.0,
        select: str = "min-cost",
    ):
        self.view, self.prices, self.remaining, self.t = view, prices, remaining, t
        self.utility_name, self.comm_cost, self.select = utility_name, comm_cost, select
        self._order: dict[int, list[int]] = {}
        self._priced: dict[tuple, Candidate] = {}
        self._cap_rows = [tuple(row) for row in view.capacity.tolist()]

    def order(self, j: int) -> list[int]:
        """Job j's usable types, fastest first (line 23)."""
        if j not in self._order:
            x = self.view.throughput[j]
            self._order[j] = [int(r) for r in np.argsort(-x, kind="stable") if x[r] > 0]
        return self._order[j]

    def __call__(self, j: int, free: np.ndarray) -> Candidate | None:
        need = int(self.view.workers[j])
        order = self.order(j)
        rows = free.tolist()
        machines = range(len(rows))
        by_q: dict[int, list[tuple[Alloc, float]]] = {}
        states = set()
        for h in machines:
            state = (tuple(rows[h]), self._cap_rows[h])
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
        if not gangs:
            return None
        cands = [self._price(j, alloc, extra, rows, need) for alloc, extra in gangs]
        best = (
            min(cands, key=lambda c: (c.cost, -c.payoff))
            if self.select == "min-cost"
            else max(cands, key=lambda c: c.payoff)
        )
        return best if best.payoff > 0 else None

    def _comm(self, alloc: Alloc, need: int) -> float:
        return self.comm_cost * (len({h for h, _, _ in alloc}) - 1) * need

    def _price(self, j: int, alloc: Alloc, extra: float, rows: list, need: int) -> Candidate:
        key = (j, alloc, extra, tuple(rows[h][r] for h, r, _ in alloc))
        hit = self._priced.get(key)
        if hit is not None:
            return hit
        v = self.view
        kinds = sorted({r for _, r, _ in alloc})
        rate = v.rate(j, kinds, need)
        cost = (
            sum(
                self.prices.price(v.capacity[h, r] - rows[h][r], v.capacity[h, r]) * n
                for h, r, n in alloc
            )
            + extra
        )
        slots = math.ceil(float(self.remaining[j]) / rate - 1e-12)
        jct = (self.t + slots - 1 - v.arrival[j] + 1) * v.slot_seconds
        cand = Candidate(alloc, rate, cost, utility(v, self.utility_name, j, jct) - cost)
        self._priced[key] = cand
        return cand


def _fill(machines: list[int], order: list[int], rows: list, need: int) -> tuple[int, Alloc | None]:
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
