"""Eq. (4) solved exactly: a job's best schedule at given GPU prices (the pricing problem of P3).

Given prices k_h^r(t) >= 0 on every machine, type and slot, the payoff of schedule s of job j is
phi_j(s) = U_j(f_js - a_j) - sum_t sum_h sum_r k_h^r(t) w^s_{jh}^r(t), and (3a) with mu_j >= 0
makes mu_j = max(0, max_s phi_j(s)) the cheapest feasible dual for those prices. So for *any*
k >= 0,

    D(k) = sum_j max(0, max_s phi_j(s)) + sum_{t,h,r} k_h^r(t) c_h^r   >=   LP(P2) >= P2 = P1,

a certificate (an upper bound on the offline optimum) whenever max_s phi_j(s) is computed exactly.

How (:func:`best_schedule`). In one slot a gang of W_j GPUs whose slowest type has throughput X
runs at ``view.rate``; among gangs with bottleneck >= X the cheapest is the W_j cheapest GPUs over
the types with X_j^r >= X (prices are linear in the GPU count). That gang is at least as fast and
no dearer than any gang with bottleneck X, so per slot it suffices to consider one gang per
distinct throughput level (at most R) or idling. With utilities non-increasing in the JCT,
max_s phi = max_f [U_j(f) - g(f)], g(f) the least cost of completing the work within slots
a_j..f -- a covering knapsack over slots, solved by a label-setting DP on (progress, cost) with
Pareto pruning (exact; refuses more than ``MAX_LABELS`` live labels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetsched.core.errors import HetschedError
from hetsched.hadar.arrays import Gang, HadarView, cheapest_gangs
from hetsched.hadar.utility import utility

MAX_LABELS = 200_000


@dataclass(frozen=True)
class PricedSchedule:
    job: int
    payoff: float  # phi_j(s) = U_j - cost
    utility: float  # U_j(f_js - a_j)
    cost: float  # sum_t sum_h sum_r k w
    finish: int  # f_js
    plan: dict[int, Gang]  # slot -> gang


def best_schedule(
    view: HadarView,
    j: int,
    prices: np.ndarray,
    utility_name: str | None = None,
    utilities: tuple[float, float] = (-np.inf, np.inf),
) -> PricedSchedule | None:
    """max_s phi_j(s) over every schedule of job j finishing by T, at ``prices[h, r, t]`` (t = 1..T,
    index 0 unused), among schedules whose utility u has ``utilities[0] <= u < utilities[1]`` (a
    branching decision of branch-and-price); None if no such schedule exists."""
    work = float(view.work[j])
    a = int(view.arrival[j])
    # a label: (progress, cost, parent label, slot, gang) -- parents give the plan back
    labels: list[tuple[float, float, object]] = [(0.0, 0.0, None)]
    best: PricedSchedule | None = None
    best_done_cost = np.inf
    # A utility below utilities[1] is a finish no earlier than slot t_min (U is non-increasing in
    # the JCT). Before it, more progress for less cost does not dominate: it may force a finish
    # too early; then only labels of equal progress compare.
    t_min = a
    while (
        t_min <= view.horizon and utility(view, utility_name, j, view.jct(j, t_min)) >= utilities[1]
    ):
        t_min += 1
    for t in range(a, view.horizon + 1):
        options = cheapest_gangs(view, j, prices[:, :, t], exact_levels=t < t_min)
        grown = list(labels)  # idle in slot t
        done: list[tuple[float, object]] = []
        for prog, cost, node in labels:
            for gang, rate, c in options:
                p, total = prog + rate, cost + c
                if p >= work * (1 - 1e-12):
                    done.append((total, (node, t, gang)))
                else:
                    grown.append((p, total, (node, t, gang)))
        if done:
            total, node = min(done, key=lambda d: d[0])
            if (
                total < best_done_cost - 1e-12
            ):  # g(t) falls: a later finish can pay off only if cheaper
                u = utility(view, utility_name, j, view.jct(j, t))
                if (
                    utilities[0] <= u < utilities[1]
                ):  # a finish not allowed here prunes nothing either
                    best_done_cost = total
                    if best is None or u - total > best.payoff:
                        best = PricedSchedule(j, u - total, u, total, t, _plan(node))
        labels = (
            _pareto(grown, best_done_cost)
            if t + 1 >= t_min
            else _same_progress(grown, best_done_cost)
        )
        if len(labels) > MAX_LABELS:
            raise HetschedError(
                f"pricing job {view.job_ids[j]}: more than {MAX_LABELS} Pareto labels"
            )
    return best


def _pareto(
    labels: list[tuple[float, float, object]], ceiling: float
) -> list[tuple[float, float, object]]:
    """Labels not dominated (more progress for no more cost) and cheaper than a finished schedule."""
    labels.sort(key=lambda lab: (-lab[0], lab[1]))
    out, cheapest = [], np.inf
    for lab in labels:
        if lab[1] < cheapest - 1e-12 and lab[1] < ceiling:
            out.append(lab)
            cheapest = lab[1]
    return out


def _same_progress(
    labels: list[tuple[float, float, object]], ceiling: float
) -> list[tuple[float, float, object]]:
    """The cheapest label of each progress, cheaper than a finished schedule."""
    labels.sort(key=lambda lab: (lab[0], lab[1]))
    out: list[tuple[float, float, object]] = []
    for lab in labels:
        if lab[1] < ceiling and (not out or lab[0] > out[-1][0] + 1e-12):
            out.append(lab)
    return out


def _plan(node: object) -> dict[int, Gang]:
    plan: dict[int, Gang] = {}
    while node is not None:
        node, t, gang = node  # type: ignore[misc]
        plan[t] = gang
    return plan


def dual_value(
    view: HadarView, prices: np.ndarray, utility_name: str | None = None
) -> tuple[float, np.ndarray]:
    """D(k) of the module docstring: (value, mu) -- a valid upper bound on LP(P2) and P1 for any k >= 0."""
    if (prices < 0).any():
        raise ValueError("prices must be >= 0")
    mu = np.zeros(view.n_jobs)
    for j in range(view.n_jobs):
        s = best_schedule(view, j, prices, utility_name)
        mu[j] = max(0.0, s.payoff) if s is not None else 0.0
    capacity_value = float((prices[:, :, 1 : view.horizon + 1] * view.capacity[:, :, None]).sum())
    return float(mu.sum()) + capacity_value, mu
