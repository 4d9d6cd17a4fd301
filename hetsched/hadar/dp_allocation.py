"""Hadar's Algorithm 2: DP_allocation over the queued jobs of one slot, and FIND_ALLOC (one job's
candidate gangs at the current prices).

FIND_ALLOC(j, free GPUs, prices): candidate gangs of W_j GPUs; types are taken in descending
order of X_j^r (line 23), so a candidate using the q fastest types has bottleneck X of the q-th.
* consolidated (line 24): all W_j GPUs on one machine, for every machine and every q;
* spread (line 25): W_j GPUs over all machines, for every q, plus a communication cost
  ``comm_cost`` x (machines used - 1) x W_j (line 27; the paper gives no number: default 0).
Each candidate's cost is sum_h sum_r k_h^r(gamma) w_h^r at the current prices (line 26), and its
payoff is phi = U_j(estimated JCT) - cost, the JCT estimated as if the job kept the candidate's
rate from slot t on (Eq. (4)'s f_js). Line 28 keeps the *cheapest* candidate (``select="min-cost"``,
the printed rule; ``"max-payoff"`` keeps the best phi, Eq. (4) itself); line 29-33: mu_j = phi,
and the job is allocated only if mu_j > 0.

DP_allocation (lines 1-21) decides, job by job in queue order, to allocate (updating gamma, the
prices (5) and the free GPUs) or to skip, and compares the two branches. **As printed it compares
costs** (cost_Q vs cost_{Q/j}), which always prefers skipping every job (cost 0). We compare the
sum of payoffs instead -- the dual quantity the primal-dual argument maximizes -- and say so in
proofs/hadar_theorem1.md. Results are memoized on (job index, free GPUs), as the paper says.
"""

from __future__ import annotations

import math

import numpy as np

from hetsched.core.deadline import signals_held
from hetsched.hadar import dp_kernel
from hetsched.hadar.arrays import HadarView
from hetsched.hadar.slot import Alloc, Candidate, Prices, Slot
from hetsched.hadar.slot_arrays import SlotArrays
from hetsched.hadar.utility import utility

__all__ = ["Alloc", "Candidate", "dp_allocation", "find_alloc"]


def find_alloc(
    view: HadarView,
    j: int,
    free: np.ndarray,
    allocated: np.ndarray,
    prices: Prices,
    remaining: float,
    t: int,
    utility_name: str | None = None,
    comm_cost: float = 0.0,
    select: str = "min-cost",
) -> Candidate | None:
    """FIND_ALLOC (lines 22-34), as printed; ``free`` and ``allocated`` are [h, r] GPU counts.
    The searches run a compiled one (:func:`hetsched.hadar.bnb_kernel.find`) that returns the
    same candidate; this literal version is its reference in the tests."""
    need = int(view.workers[j])
    order = [r for r in np.argsort(-view.throughput[j], kind="stable") if view.throughput[j, r] > 0]
    cands: list[Candidate] = []

    def take(machines: list[int], types: list[int]) -> Alloc | None:
        left, out = need, []
        for r in types:  # fastest type first
            for h in machines:
                n = min(left, int(free[h, r]))
                if n > 0:
                    out.append((h, r, n))
                    left -= n
                if left == 0:
                    return tuple(out)
        return None

    def candidate(alloc: Alloc | None, extra: float) -> None:
        if alloc is None:
            return
        kinds = sorted({r for _, r, _ in alloc})
        rate = view.rate(j, kinds, need)
        cost = (
            sum(prices.price(allocated[h, r], view.capacity[h, r]) * n for h, r, n in alloc) + extra
        )
        slots = math.ceil(remaining / rate - 1e-12)
        jct = view.jct(j, t + slots - 1)
        cands.append(Candidate(alloc, rate, cost, utility(view, utility_name, j, jct) - cost))

    for q in range(1, len(order) + 1):
        types = order[:q]
        for h in range(len(view.machines)):  # consolidated
            candidate(take([h], types), 0.0)
        spread = take(list(range(len(view.machines))), types)
        if spread is not None:
            machines_used = len({h for h, _, _ in spread})
            candidate(spread, comm_cost * (machines_used - 1) * need)
    if not cands:
        return None
    best = (
        min(cands, key=lambda c: (c.cost, -c.payoff))
        if select == "min-cost"
        else max(cands, key=lambda c: c.payoff)
    )
    return best if best.payoff > 0 else None


class OverBudget(Exception):
    """The DP met more than its state budget of memoized states (:func:`dp_allocation`)."""

    def __init__(self, budget: int):
        self.budget = budget
        super().__init__(f"DP_allocation needs more than {budget:,} states")


def dp_allocation(
    slot: Slot,
    stats: dict | None = None,
    state_budget: int | None = None,
    utility_name: str | None = None,
    comm_cost: float = 0.0,
    select: str = "min-cost",
) -> tuple[float, dict[int, Candidate]]:
    """DP_allocation (lines 1-21): the subset of ``queue`` and their gangs with the largest total
    payoff over the states (index, free GPUs), compiled (:func:`hetsched.hadar.dp_kernel.dp`).
    Returns (total payoff, job -> candidate); ``stats`` receives the number of memoized states.
    With ``state_budget``, raises :class:`OverBudget` if the DP would meet more states than
    that (it may need up to n(Q) x prod_{h,r}(c_h^r + 1); proofs/hadar_theorem1.md), known before
    their values are computed (:func:`hetsched.hadar.dp_kernel.reach`)."""
    arrays = SlotArrays.of(slot, utility_name, comm_cost, select)
    budget = -1 if state_budget is None else int(state_budget)
    with signals_held():
        value, taken, states, over = dp_kernel.dp(
            arrays.free0, arrays.find_args(), *arrays.key_args(), arrays.classes(), budget
        )
    if over:
        raise OverBudget(budget)
    if stats is not None:
        stats["states"] = int(states)
    return float(value), arrays.chosen(taken)
