"""Hadar's P2 (2)-(2c) as a Dantzig-Wolfe master for the one column-generation engine
(:mod:`hetsched.solvers.colgen`), without enumerating schedules.

A column is one job's schedule s (a gang in each slot it runs, finishing by T) with cost
-U_j(f_js); an empty column (the job not admitted, (2b) with "<= 1") costs 0:

    min  sum_{j,s} -U_js y_js
    s.t. sum_s y_js = 1                                  for every job j (the empty schedule included)  (2b)
         sum_{j,s} w^s_{jh}^r(t) y_js <= c_h^r            for every machine h, type r, slot t             (2a)
         y_js in {0, 1}                                                                                   (2c)

Pricing is Eq. (4) solved exactly (:func:`hetsched.hadar.pricing.best_schedule`, a label-setting
DP over slots): at capacity prices k >= 0 it returns max_s U_js - k . w^s, the least reduced cost
negated. Branching on a column's cost is a range of utilities, which the DP obeys. The LP of this
master is LP(P2) = P3, and its integer optimum is P2 = P1. Its Lagrangian bound at any prices is
D(k) (:func:`hetsched.hadar.pricing.dual_value`) negated.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from hetsched.hadar.arrays import HadarView
from hetsched.hadar.pricing import Gang, best_schedule
from hetsched.hadar.utility import utility
from hetsched.solvers.colgen import Column, DantzigWolfeProblem


def p2_problem(
    view: HadarView,
    utility_name: str | None = None,
    plans: dict[int, dict[int, Gang]] | None = None,
) -> DantzigWolfeProblem:
    """The master of P2 for ``view``. ``plans``: a feasible schedule per job (e.g. an online run's,
    :func:`plans_of`) to start from; jobs without one start not admitted (the empty column)."""
    v = view
    H, R, T = len(v.machines), len(v.types), v.horizon
    cells = [(h, r) for h in range(H) for r in range(R) if v.capacity[h, r] > 0]
    row = {
        (h, r, t): i
        for i, (h, r, t) in enumerate((h, r, t) for (h, r) in cells for t in range(1, T + 1))
    }
    capacity = np.array([float(v.capacity[h, r]) for (h, r, _) in row], dtype=float)
    index = np.array([(h, r, t) for (h, r, t) in row], dtype=np.int64).reshape(-1, 3)

    def prepare(pi: np.ndarray) -> np.ndarray:
        prices = np.zeros((H, R, T + 1))
        prices[index[:, 0], index[:, 1], index[:, 2]] = pi
        return prices

    def column(j: int, plan: dict[int, Gang], u: float) -> Column:
        rows = [row[h, r, t] for t, gang in plan.items() for h, r, _ in gang]
        amounts = [float(n) for gang in plan.values() for _, _, n in gang]
        return Column(j, -u, np.array(rows, dtype=np.int64), plan, np.array(amounts))

    def empty(j: int) -> Column:
        return Column(j, 0.0, np.zeros(0, dtype=np.int64), {})

    def price(j: int, prices: np.ndarray, cost_lo: float = -math.inf, cost_hi: float = math.inf):
        """min over job j's columns with cost_lo < cost <= cost_hi of cost + k . usage."""
        options = []
        if cost_lo < 0.0 <= cost_hi:
            options.append((0.0, empty(j)))
        # cost = -u: cost_lo < -u <= cost_hi  <=>  -cost_hi <= u < -cost_lo
        best = best_schedule(v, j, prices, utility_name, utilities=(-cost_hi, -cost_lo))
        if best is not None:
            options.append((-best.payoff, column(j, best.plan, best.utility)))
        if not options:
            return math.inf, []
        options.sort(key=lambda o: o[0])
        return options[0][0], [c for _, c in options]

    def start(j: int) -> Column:
        plan = (plans or {}).get(j)
        if not plan:
            return empty(j)
        f = max(plan)
        return column(j, plan, utility(v, utility_name, j, v.jct(j, f)))

    problem = DantzigWolfeProblem(
        n_blocks=v.n_jobs,
        capacity=capacity,
        price=price,
        initial=[start(j) for j in range(v.n_jobs)],
        prepare=prepare,
        negated=True,  # costs are minus the utilities (P2 maximizes)
    )
    problem.data["view"] = v
    return problem


def plans_of(view: HadarView, decisions: dict) -> dict[int, dict[int, Gang]]:
    """The schedules of the jobs a decision set (e.g. an online run) finishes, by job index."""
    mach = {m: h for h, m in enumerate(view.machines)}
    typ = {t: r for r, t in enumerate(view.types)}
    out: dict[int, dict[int, Gang]] = {}
    for j, jid in enumerate(view.job_ids):
        slots = {t: g for t, g in decisions.get(jid, {}).items() if g}
        if not slots:
            continue
        plan = {
            t: tuple((mach[m], typ[gt], int(n)) for (m, gt), n in g.items() if n)
            for t, g in slots.items()
        }
        done = sum(
            view.rate(j, sorted({r for _, r, _ in gang}), int(view.workers[j]))
            for gang in plan.values()
        )
        if done >= view.work[j] * (1 - 1e-12):
            out[j] = plan
    return out


def decisions_of(problem: DantzigWolfeProblem, columns: Iterable[Column]) -> dict:
    """The chosen columns as validator decisions {job_id: {slot: {(machine, type): count}}}."""
    v = problem.data["view"]
    out: dict = {jid: {} for jid in v.job_ids}
    for col in columns:
        if col.payload:
            out[v.job_ids[col.block]] = {
                t: {(v.machines[h], v.types[r]): n for h, r, n in gang}
                for t, gang in col.payload.items()
            }
    return out
