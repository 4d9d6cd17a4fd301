"""Hadar's P2 (eqs. (2)-(2c)) by branch-and-price, without enumerating schedules.

A column is one job's schedule s (a gang in each slot it runs, finishing by T) with cost
-U_j(f_js); an empty column (the job not admitted, (2b) with "<= 1") costs 0. In the form of
:class:`hetsched.solvers.colgen.DantzigWolfeProblem`:

    min  sum_{j,s} -U_js y_js
    s.t. sum_s y_js = 1                                  for every job j (the empty schedule included)  (2b)
         sum_{j,s} w^s_{jh}^r(t) y_js <= c_h^r            for every machine h, type r, slot t             (2a)
         y_js in {0, 1}                                                                                   (2c)

Pricing is Eq. (4) solved exactly (:func:`hetsched.hadar.pricing.best_schedule`, a label-setting
DP over slots): at capacity prices k >= 0 it returns max_s U_js - k . w^s, which is the least
reduced cost negated. Branching on a column's cost is a range of utilities, which the DP obeys.
The LP of this master is LP(P2) = P3 (``models/hadar_p3.py``), and its integer optimum is P2 = P1.
"""

from __future__ import annotations

import math

import numpy as np
from hetsched.models.hadar_p1 import HadarDecisions, check

from hetsched.solvers.colgen import Column, DantzigWolfeProblem
from hetsched.spec import FormulationSpec
from hetsched.hadar.pricing import best_schedule
from hetsched.hadar.view import hadar_view
from hetsched.instance.model import Instance


def build(instance: Instance) -> DantzigWolfeProblem:
    v = hadar_view(instance)
    H, R, T = len(v.machines), len(v.types), v.horizon
    cells = [(h, r) for h in range(H) for r in range(R) if v.capacity[h, r] > 0]
    row = {(h, r, t): i for i, (h, r, t) in enumerate((h, r, t) for (h, r) in cells for t in range(1, T + 1))}
    capacity = np.array([float(v.capacity[h, r]) for (h, r, _) in row], dtype=float)
    index = np.array([(h, r, t) for (h, r, t) in row], dtype=np.int64).reshape(-1, 3)

    def prepare(pi: np.ndarray) -> np.ndarray:
        prices = np.zeros((H, R, T + 1))
        prices[index[:, 0], index[:, 1], index[:, 2]] = pi
        return prices

    def empty(j: int) -> Column:
        return Column(j, 0.0, np.zeros(0, dtype=np.int64), {})

    def price(j: int, prices: np.ndarray, cost_lo: float = -math.inf, cost_hi: float = math.inf):
        """min over job j's columns with cost_lo < cost <= cost_hi of cost + k . usage."""
        options = []
        if cost_lo < 0.0 <= cost_hi:
            options.append((0.0, empty(j)))
        # cost = -u: cost_lo < -u <= cost_hi  <=>  -cost_hi <= u < -cost_lo
        best = best_schedule(v, j, prices, utilities=(-cost_hi, -cost_lo))
        if best is not None:
            rows, amounts = [], []
            for t, gang in best.plan.items():
                for h, r, n in gang:
                    rows.append(row[h, r, t])
                    amounts.append(float(n))
            options.append((-best.payoff, Column(j, -best.utility, np.array(rows, dtype=np.int64), best.plan,
                                                 np.array(amounts))))
        if not options:
            return math.inf, []
        options.sort(key=lambda o: o[0])
        return options[0][0], [c for _, c in options]

    problem = DantzigWolfeProblem(n_blocks=v.n_jobs, capacity=capacity, price=price,
                                  initial=[empty(j) for j in range(v.n_jobs)], prepare=prepare)
    problem.data["view"] = v
    return problem


def extract(problem: DantzigWolfeProblem, instance: Instance, value) -> HadarDecisions:
    v = problem.data["view"]
    out: dict = {jid: {} for jid in v.job_ids}
    for i, col in enumerate(problem.columns):
        if not col.artificial and value(i) > 0.5 and col.payload:
            out[v.job_ids[col.block]] = {t: {(v.machines[h], v.types[r]): n for h, r, n in gang}
                                        for t, gang in col.payload.items()}
    return HadarDecisions(out)


SPEC = FormulationSpec(
    name="hadar-p2", kind="colgen", build=build, extract=extract, validator=check, sense="max",
    objective_transform=lambda value, _: -value,
    summary="Hadar P2 (2)-(2c) by branch-and-price: schedules priced by Eq. (4), no enumeration",
)
