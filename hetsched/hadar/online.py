"""Hadar's online Algorithm 1: every slot t the queued jobs (arrived, unfinished) are
re-allocated from scratch by Algorithm 2 (:mod:`hetsched.hadar.dp_allocation`, or its exact
branch and bound, :mod:`hetsched.hadar.branch_and_bound`) at the prices of (5)-(7)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hetsched.hadar.branch_and_bound import dp_allocation_bnb
from hetsched.hadar.dp_allocation import dp_allocation
from hetsched.hadar.price import price_function
from hetsched.hadar.slot import Slot
from hetsched.hadar.view import hadar_view
from hetsched.instance.model import Instance


@dataclass
class OnlineRun:
    decisions: dict[str, dict[int, dict[tuple[str, str], int]]] = field(default_factory=dict)
    finish: dict[str, int] = field(default_factory=dict)
    rounds: list[dict] = field(default_factory=list)
    round_prices: dict[int, np.ndarray] = field(
        default_factory=dict
    )  # slot -> k_h^r(t) [h, r] after its round
    idle_price: float = (
        0.0  # k of a slot without a round: an idle cluster's price under all jobs' (6)-(7)
    )

    def prices(self, horizon: int) -> np.ndarray:
        """k_h^r(t) over slots 1..T as an [h, r, t] array (index 0 unused), for the dual certificate."""
        shape = next(iter(self.round_prices.values())).shape if self.round_prices else (0, 0)
        out = np.full((*shape, horizon + 1), self.idle_price)
        for t, k in self.round_prices.items():
            if t <= horizon:
                out[:, :, t] = k
        return out


def hadar_online(
    instance: Instance,
    utility_name: str | None = None,
    eta: float = 1.0,
    comm_cost: float = 0.0,
    select: str = "min-cost",
    max_slots: int | None = None,
    round_solver: str = "dp",
    round_time_limit: float = 1.0,
) -> OnlineRun:
    """Algorithm 1: each slot, DP_allocation over the queue; run the chosen gangs for one slot.

    ``round_solver``: ``"dp"``, the memoized DP (exact; exponential in the cluster's state), or
    ``"bnb"``, branch and bound on the same choice (:mod:`hetsched.hadar.branch_and_bound`),
    stopped after ``round_time_limit`` seconds with its gap recorded in ``rounds``."""
    if round_solver not in ("dp", "bnb"):
        raise ValueError(f"round_solver must be 'dp' or 'bnb', not {round_solver!r}")
    v = hadar_view(instance)
    remaining = v.work.astype(float).copy()
    run = OnlineRun({jid: {} for jid in v.job_ids})
    horizon = v.horizon if max_slots is None else max_slots
    run.idle_price = price_function(v, None, utility_name, eta).u_min
    for t in range(1, horizon + 1):
        queue = [
            j
            for j in np.argsort(v.arrival, kind="stable")
            if v.arrival[j] <= t and remaining[j] > 1e-9
        ]
        if not queue:
            if all(remaining <= 1e-9):
                break
            continue
        prices = price_function(
            v, queue, utility_name, eta
        )  # U_max, U_min from the current workload
        info: dict = {}
        slot = Slot(v, [int(j) for j in queue], prices, remaining, t)
        common = dict(utility_name=utility_name, comm_cost=comm_cost, select=select)
        if round_solver == "dp":
            value, chosen = dp_allocation(slot, **common)
        else:
            res = dp_allocation_bnb(slot, time_limit=round_time_limit, **common)
            value, chosen = res.value, res.chosen
            info = {
                "proven": res.proven,
                "bound": res.bound,
                "nodes": res.nodes,
                "seconds": res.seconds,
            }
        used = np.zeros_like(v.capacity)
        for j, cand in chosen.items():
            for h, r, n in cand.alloc:
                used[h, r] += n
            run.decisions[v.job_ids[j]][t] = {
                (v.machines[h], v.types[r]): n for h, r, n in cand.alloc
            }
            remaining[j] -= cand.rate
            if remaining[j] <= 1e-9:
                run.finish[v.job_ids[j]] = t
        run.round_prices[t] = np.array(
            [
                [
                    prices.price(used[h, r], v.capacity[h, r]) if v.capacity[h, r] else 0.0
                    for r in range(len(v.types))
                ]
                for h in range(len(v.machines))
            ]
        )
        run.rounds.append(
            {
                "slot": t,
                "queue": len(queue),
                "scheduled": [v.job_ids[j] for j in chosen],
                "payoff": value,
                **info,
            }
        )
    return run
