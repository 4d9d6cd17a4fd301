"""Column generation for Hadar's P2 (2)-(2c): LP(P2) = P3 without enumerating every schedule.

The restricted master is LP(P2) over a pool of schedules; its duals of (2a) and (2b) are prices
k_h^r(t) and payoffs mu_j of P3 (3)-(3a). The pricing problem -- the schedule of job j with the
largest phi_j(s) at prices k, Eq. (4) -- is solved exactly by :func:`best_schedule`. A schedule
with phi_j(s) > mu_j is a violated constraint (3a): it joins the pool. When none is left, the
master's value is LP(P2) = P3 (strong duality). At every iteration the Lagrangian bound D(k)
(:func:`hetsched.hadar.pricing.dual_value`) is a valid upper bound on P1, so a run stopped by its
iteration or time limit still returns a proven bound, and says it did not converge.

Finally the master is solved with y binary over the pool (scipy's ``milp``, HiGHS): a feasible P2
solution, returned as decisions for the independent validator -- the "price and branch" heuristic,
whose gap to the bound is reported, never called optimal unless the two meet.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import LinearConstraint, linprog, milp
from scipy.sparse import csc_matrix

from hetsched.hadar.pricing import Gang, best_schedule
from hetsched.hadar.view import HadarView

TOL = 1e-9


@dataclass(frozen=True)
class Column:
    job: int
    plan: dict[int, Gang]
    utility: float


@dataclass
class ColumnGeneration:
    bound: float  # min over iterations of D(k): an upper bound on LP(P2) and P1
    lp_value: float  # the last restricted master's LP value (a lower bound on LP(P2))
    converged: bool  # no column priced out: lp_value = LP(P2) = P3 = bound
    iterations: int
    columns: list[Column]
    integer_value: float  # the master with y binary over the pool: a feasible P2 value
    chosen: list[Column] = field(default_factory=list)
    prices: np.ndarray | None = None  # the k of the best bound
    history: list[dict] = field(default_factory=list)


def _master(view: HadarView, cols: list[Column]):
    cells = [(h, r) for h in range(len(view.machines)) for r in range(len(view.types)) if view.capacity[h, r] > 0]
    row = {(h, r, t): i for i, (h, r, t) in enumerate((h, r, t) for (h, r) in cells for t in range(1, view.horizon + 1))}
    n_cap = len(row)
    data, rows, idx = [], [], []
    for c, col in enumerate(cols):
        for t, gang in col.plan.items():
            for h, r, n in gang:
                data.append(float(n)); rows.append(row[h, r, t]); idx.append(c)
        data.append(1.0); rows.append(n_cap + col.job); idx.append(c)
    A = csc_matrix((data, (rows, idx)), shape=(n_cap + view.n_jobs, len(cols)))
    b = np.concatenate([[float(view.capacity[h, r]) for (h, r, _t) in row], np.ones(view.n_jobs)])
    return A, b, row, n_cap


def column_generation(view: HadarView, initial: list[Column] = (), utility_name: str | None = None,
                      max_iterations: int = 200, time_limit: float = 60.0) -> ColumnGeneration:
    """LP(P2) by column generation, then the integer master; see the module docstring."""
    start = time.perf_counter()
    cols: list[Column] = list(initial)
    seen = {(c.job, tuple(sorted(c.plan.items()))) for c in cols}
    k = np.zeros((*view.capacity.shape, view.horizon + 1))
    best_bound, best_k, lp_value, converged, it = np.inf, k, 0.0, False, 0
    history: list[dict] = []
    while it < max_iterations:
        it += 1
        added, lagrangian = 0, float((k[:, :, 1:] * view.capacity[:, :, None]).sum())
        mu = np.zeros(view.n_jobs)
        if cols:
            A, b, row, n_cap = _master(view, cols)
            res = linprog(-np.array([c.utility for c in cols]), A_ub=A, b_ub=b, bounds=(0, 1), method="highs")
            lp_value = -float(res.fun)
            duals = -np.asarray(res.ineqlin.marginals)
            k = np.zeros_like(k)
            for (h, r, t), i in row.items():
                k[h, r, t] = max(0.0, duals[i])
            mu = np.maximum(0.0, duals[n_cap:])
            lagrangian = float((k[:, :, 1:] * view.capacity[:, :, None]).sum())
        for j in range(view.n_jobs):
            s = best_schedule(view, j, k, utility_name)
            if s is None:
                continue
            lagrangian += max(0.0, s.payoff)
            key = (j, tuple(sorted(s.plan.items())))
            if s.payoff > mu[j] + TOL * max(1.0, abs(s.utility)) and key not in seen:
                cols.append(Column(j, s.plan, s.utility))
                seen.add(key)
                added += 1
        if lagrangian < best_bound:
            best_bound, best_k = lagrangian, k.copy()
        history.append({"iteration": it, "lp": lp_value, "bound": lagrangian, "columns": len(cols), "added": added})
        if added == 0:
            converged = True
            best_bound = min(best_bound, lp_value) if cols else 0.0
            break
        if time.perf_counter() - start > time_limit:
            break
    integer_value, chosen = 0.0, []
    if cols:
        A, b, _, _ = _master(view, cols)
        u = np.array([c.utility for c in cols])
        res = milp(-u, constraints=LinearConstraint(A, -np.inf, b), integrality=np.ones(len(cols)), bounds=(0, 1))
        if res.x is not None:
            chosen = [c for c, y in zip(cols, res.x) if y > 0.5]
            integer_value = float(sum(c.utility for c in chosen))
    return ColumnGeneration(best_bound, lp_value, converged, it, cols, integer_value, chosen, best_k, history)


def columns_from_decisions(view: HadarView, decisions: dict, utility_name: str | None = None) -> list[Column]:
    """The finished jobs of a decision set (e.g. an online run) as initial columns."""
    from hetsched.hadar.utility import utility

    mach = {m: h for h, m in enumerate(view.machines)}
    typ = {t: r for r, t in enumerate(view.types)}
    out = []
    for j, jid in enumerate(view.job_ids):
        slots = {t: g for t, g in decisions.get(jid, {}).items() if g}
        if not slots:
            continue
        plan = {t: tuple((mach[m], typ[gt], int(n)) for (m, gt), n in g.items() if n) for t, g in slots.items()}
        done = sum(view.rate(j, sorted({r for _, r, _ in gang}), int(view.workers[j])) for gang in plan.values())
        if done >= view.work[j] * (1 - 1e-12):
            f = max(plan)
            out.append(Column(j, plan, utility(view, utility_name, j, (f - view.arrival[j] + 1) * view.slot_seconds)))
    return out


def decisions_of(view: HadarView, cols: list[Column]) -> dict:
    """Columns as validator decisions {job_id: {slot: {(machine, type): count}}}."""
    out: dict = {jid: {} for jid in view.job_ids}
    for c in cols:
        out[view.job_ids[c.job]] = {t: {(view.machines[h], view.types[r]): n for h, r, n in g} for t, g in c.plan.items()}
    return out
