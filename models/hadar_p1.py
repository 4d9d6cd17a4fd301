"""Hadar's P1 (Hadar 2024, Sec. III.A, eqs. (1)-(1e)) as a time-indexed MILP over slots 1..T.

    max  sum_j sum_t z_{j,t} U_j((t - a_j + 1) L)                      (1)  utility of finishing in slot t
    s.t. progress[j]:  sum_t prog_{j,t} >= E_j N_j sum_t z_{j,t}        (1a)
         prog_{j,t} = L x_{j,t} (x W_j under per-worker progress)       (1a)
         bottleneck[j,r,t]: x_{j,t} <= X_j^r + Xmax_j (1 - u_{j,r,t})   (1b) x = min over used types
         rate_off[j,t]:     x_{j,t} <= Xmax_j run_{j,t}
         type_used[j,h,r,t]: w_{j,h,r,t} <= W_j u_{j,r,t}
         finish[j,t]:  run_{j,t} <= sum_{t' >= t} z_{j,t'}             (1c) nothing runs after f_j
         one_finish[j]: sum_t z_{j,t} <= 1                              (2b) a job may be left out
         capacity[h,r,t]: sum_j w_{j,h,r,t} <= c_h^r                     (1d)
         gang[j,t]:   sum_{h,r} w_{j,h,r,t} = W_j run_{j,t}               (1e)
         w, run, z = 0 before a_j                                        (1e)

z_{j,t} = 1 iff job j finishes in slot t: (1c) defines f_j as the last slot with an allocation;
with positive utility the optimum never runs a job after it finished, so "runs only up to the
finish slot" loses nothing. U_j is evaluated at the JCT of that slot, so any utility of
:mod:`hetsched.hadar.price` is a constant per (j, t). The horizon T is the view's
(``metadata.hadar.horizon_slots``); small horizons only. The solution is a set of decisions checked
by :func:`hetsched.hadar.validate.validate_decisions`, which recomputes the utility.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyomo.environ as pe

from hetsched.formulation import FormulationSpec
from hetsched.hadar.price import utility
from hetsched.hadar.validate import validate_decisions
from hetsched.hadar.view import hadar_view
from hetsched.instance.model import Instance
from hetsched.validate import ValidationReport


@dataclass(frozen=True)
class HadarDecisions:
    decisions: dict

    def to_dict(self) -> dict:
        return {"format": "hetsched.hadar_decisions/1",
                "decisions": {j: {str(t): [{"machine": m, "type": r, "gpus": n} for (m, r), n in a.items()]
                                  for t, a in slots.items()} for j, slots in self.decisions.items()}}


def build(instance: Instance, utility_name: str = "effective-throughput") -> pe.ConcreteModel:
    v = hadar_view(instance)
    J, H, R = range(v.n_jobs), range(len(v.machines)), range(len(v.types))
    T = range(1, v.horizon + 1)
    live = [(j, t) for j in J for t in T if t >= v.arrival[j]]
    xmax = v.throughput.max(axis=1)
    per_worker = v.progress == "per-worker"

    m = pe.ConcreteModel(name=f"hadar_p1[{instance.name}]")
    m.JT = pe.Set(initialize=live, dimen=2, doc="(job, slot) with slot >= a_j")
    m.w = pe.Var(m.JT, H, R, domain=pe.NonNegativeIntegers, doc="w_{jh}^r(t)")
    m.run = pe.Var(m.JT, domain=pe.Binary, doc="job j holds its gang in slot t")
    m.u = pe.Var(m.JT, R, domain=pe.Binary, doc="job j uses type r in slot t")
    m.x = pe.Var(m.JT, domain=pe.NonNegativeReals, doc="x_j(t): bottleneck iterations/s (1b)")
    m.z = pe.Var(m.JT, domain=pe.Binary, doc="z_{j,t}: job j finishes in slot t")

    def value(j, t):
        return utility(v, utility_name, j, (t - v.arrival[j] + 1) * v.slot_seconds)

    m.objective = pe.Objective(expr=sum(float(value(j, t)) * m.z[j, t] for j, t in live), sense=pe.maximize)
    m.progress = pe.Constraint(J, rule=lambda _, j: sum(
        float(v.slot_seconds * (v.workers[j] if per_worker else 1)) * m.x[j, t] for jj, t in live if jj == j)
        >= float(v.work[j]) * sum(m.z[j, t] for jj, t in live if jj == j))
    m.bottleneck = pe.Constraint(m.JT, R, rule=lambda _, j, t, r: m.x[j, t] <= float(v.throughput[j, r])
                                 + float(xmax[j]) * (1 - m.u[j, t, r]))
    m.rate_off = pe.Constraint(m.JT, rule=lambda _, j, t: m.x[j, t] <= float(xmax[j]) * m.run[j, t])
    m.type_used = pe.Constraint(m.JT, H, R, rule=lambda _, j, t, h, r: m.w[j, t, h, r] <= int(v.workers[j]) * m.u[j, t, r])
    m.finish = pe.Constraint(m.JT, rule=lambda _, j, t: m.run[j, t] <= sum(m.z[j, s] for jj, s in live if jj == j and s >= t))
    m.one_finish = pe.Constraint(J, rule=lambda _, j: sum(m.z[j, t] for jj, t in live if jj == j) <= 1)
    m.capacity = pe.Constraint(H, R, T, rule=lambda _, h, r, t: sum(m.w[j, t, h, r] for j in J if (j, t) in m.JT)
                               <= int(v.capacity[h, r]) if any((j, t) in m.JT for j in J) else pe.Constraint.Skip)
    m.gang = pe.Constraint(m.JT, rule=lambda _, j, t: sum(m.w[j, t, h, r] for h in H for r in R)
                           == int(v.workers[j]) * m.run[j, t])
    m.view, m.utility_name = v, utility_name
    return m


def extract(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> HadarDecisions:
    v = m.view
    out: dict = {jid: {} for jid in v.job_ids}
    for j, t in m.JT:
        alloc = {(v.machines[h], v.types[r]): int(round(value(m.w[j, t, h, r])))
                 for h in range(len(v.machines)) for r in range(len(v.types)) if round(value(m.w[j, t, h, r])) > 0}
        if alloc:
            out[v.job_ids[j]][t] = alloc
    return HadarDecisions(out)


def check(instance: Instance, sol: HadarDecisions) -> ValidationReport:
    r = validate_decisions(instance, sol.decisions)
    return ValidationReport(r.valid, r.utility if r.valid else None, {}, r.violations)


SPEC = FormulationSpec(
    name="hadar-p1", kind="pyomo", build=build, extract=extract, validator=check, sense="max",
    summary="Hadar P1 (1)-(1e): time-indexed MILP, gang and bottleneck throughput linearized (small horizons)",
)
