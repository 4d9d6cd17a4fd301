"""Hadar's P1 (Hadar 2024, Sec. III.A, eqs. (1)-(1e)) as a time-indexed MILP over slots 1..T.

    max  sum_j sum_t z_{j,t} U_j((t - a_j + 1) L)                      (1)  utility of finishing in slot t
         (``hadar-p1-makespan`` / ``hadar-p1-ftf``: min max_j of f_j L / JCT_j / t_j^iso instead,
          every job finishing: "Expressing other scheduling policies")
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

from hetsched.core.reports import ValidationReport
from hetsched.exact.spec import FormulationSpec
from hetsched.hadar.utility import isolated_jct, utility
from hetsched.hadar.validate import validate_decisions
from hetsched.hadar.view import hadar_view
from hetsched.instance.model import Instance


@dataclass(frozen=True)
class HadarDecisions:
    decisions: dict

    def to_dict(self) -> dict:
        return {
            "format": "hetsched.hadar_decisions/1",
            "decisions": {
                j: {
                    str(t): [{"machine": m, "type": r, "gpus": n} for (m, r), n in a.items()]
                    for t, a in slots.items()
                }
                for j, slots in self.decisions.items()
            },
        }


def _core(instance: Instance) -> pe.ConcreteModel:
    """Variables and constraints (1a)-(1e) shared by every objective; z_{j,t} marks the finish slot."""
    v = hadar_view(instance)
    J, H, R = range(v.n_jobs), range(len(v.machines)), range(len(v.types))
    T = range(1, v.horizon + 1)
    live = [(j, t) for j in J for t in T if t >= v.arrival[j]]
    xmax = v.throughput.max(axis=1)
    per_worker = v.progress == "per-worker"

    m = pe.ConcreteModel(name=f"hadar_p1[{instance.name}]")
    m.J = pe.Set(initialize=J, doc="jobs")
    m.JT = pe.Set(initialize=live, dimen=2, doc="(job, slot) with slot >= a_j")
    m.w = pe.Var(m.JT, H, R, domain=pe.NonNegativeIntegers, doc="w_{jh}^r(t)")
    m.run = pe.Var(m.JT, domain=pe.Binary, doc="job j holds its gang in slot t")
    m.u = pe.Var(m.JT, R, domain=pe.Binary, doc="job j uses type r in slot t")
    m.x = pe.Var(m.JT, domain=pe.NonNegativeReals, doc="x_j(t): bottleneck iterations/s (1b)")
    m.z = pe.Var(m.JT, domain=pe.Binary, doc="z_{j,t}: job j finishes in slot t")
    for j, t in live:
        if v.jct(j, t) <= 0:  # the reading jct=f-a: no finish in the arrival slot (JCT 0)
            m.z[j, t].fix(0)

    m.progress = pe.Constraint(
        J,
        rule=lambda _, j: (
            sum(
                float(v.slot_seconds * (v.workers[j] if per_worker else 1)) * m.x[j, t]
                for jj, t in live
                if jj == j
            )
            >= float(v.work[j]) * sum(m.z[j, t] for jj, t in live if jj == j)
        ),
    )
    m.bottleneck = pe.Constraint(
        m.JT,
        R,
        rule=lambda _, j, t, r: (
            m.x[j, t] <= float(v.throughput[j, r]) + float(xmax[j]) * (1 - m.u[j, t, r])
        ),
    )
    m.rate_off = pe.Constraint(m.JT, rule=lambda _, j, t: m.x[j, t] <= float(xmax[j]) * m.run[j, t])
    m.type_used = pe.Constraint(
        m.JT, H, R, rule=lambda _, j, t, h, r: m.w[j, t, h, r] <= int(v.workers[j]) * m.u[j, t, r]
    )
    m.finish = pe.Constraint(
        m.JT,
        rule=lambda _, j, t: m.run[j, t] <= sum(m.z[j, s] for jj, s in live if jj == j and s >= t),
    )
    m.capacity = pe.Constraint(
        H,
        R,
        T,
        rule=lambda _, h, r, t: (
            sum(m.w[j, t, h, r] for j in J if (j, t) in m.JT) <= int(v.capacity[h, r])
            if any((j, t) in m.JT for j in J)
            else pe.Constraint.Skip
        ),
    )
    m.gang = pe.Constraint(
        m.JT,
        rule=lambda _, j, t: (
            sum(m.w[j, t, h, r] for h in H for r in R) == int(v.workers[j]) * m.run[j, t]
        ),
    )
    m.view = v
    return m


def build(instance: Instance) -> pe.ConcreteModel:
    """P1: max sum_j U_j(f_j - a_j) (1), a job may be left out (its utility is then 0)."""
    m = _core(instance)
    v = m.view
    m.objective = pe.Objective(
        expr=sum(utility(v, None, j, v.jct(j, t)) * m.z[j, t] for j, t in m.JT if v.jct(j, t) > 0),
        sense=pe.maximize,
    )  # (1)
    m.one_finish = pe.Constraint(
        m.J, rule=lambda _, j: sum(m.z[jj, t] for jj, t in m.JT if jj == j) <= 1
    )  # (2b)
    return m


def _min_max(instance: Instance, cost) -> pe.ConcreteModel:
    """min max_j cost(j, f_j) with every job finishing by T ("Expressing other scheduling policies")."""
    m = _core(instance)
    m.one_finish = pe.Constraint(
        m.J, rule=lambda _, j: sum(m.z[jj, t] for jj, t in m.JT if jj == j) == 1
    )
    m.worst = pe.Var(domain=pe.NonNegativeReals, doc="max_j cost of job j")
    m.bounds_worst = pe.Constraint(
        m.J,
        rule=lambda _, j: (
            m.worst >= sum(cost(m.view, j, t) * m.z[jj, t] for jj, t in m.JT if jj == j)
        ),
    )  # epigraph of max_j cost (Sec. III, other policies)
    m.objective = pe.Objective(
        expr=m.worst, sense=pe.minimize
    )  # min max_j cost_j (Sec. III, other policies)
    return m


def makespan_cost(v, j: int, t: int) -> float:
    """Finishing in slot t ends at t L seconds."""
    return float(t * v.slot_seconds)


def ftf_cost(v, j: int, t: int) -> float:
    """Finish-time fairness rho_j = JCT_j / t_j^iso (Themis), t^iso the JCT with 1/J of the cluster."""
    return float(v.jct(j, t) / isolated_jct(v, j))


def extract(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> HadarDecisions:
    v = m.view
    out: dict = {jid: {} for jid in v.job_ids}
    for j, t in m.JT:
        alloc = {
            (v.machines[h], v.types[r]): int(round(value(m.w[j, t, h, r])))
            for h in range(len(v.machines))
            for r in range(len(v.types))
            if round(value(m.w[j, t, h, r])) > 0
        }
        if alloc:
            out[v.job_ids[j]][t] = alloc
    return HadarDecisions(out)


def check(instance: Instance, sol: HadarDecisions) -> ValidationReport:
    r = validate_decisions(instance, sol.decisions)
    return ValidationReport(r.valid, r.utility if r.valid else None, {}, r.violations)


def _check_min_max(cost):
    def check_all(instance: Instance, sol: HadarDecisions) -> ValidationReport:
        """Every job must finish (1a); the objective max_j cost(j, f_j) recomputed from the finish slots."""
        r = validate_decisions(instance, sol.decisions, require_all=True)
        v = hadar_view(instance)
        value = (
            max(cost(v, j, r.finish[jid]) for j, jid in enumerate(v.job_ids)) if r.valid else None
        )
        return ValidationReport(r.valid, value, {}, r.violations)

    return check_all


SPECS = [
    FormulationSpec(
        name="hadar-p1",
        kind="pyomo",
        build=build,
        extract=extract,
        validator=check,
        sense="max",
        summary="Hadar P1 (1)-(1e): time-indexed MILP, gang and bottleneck throughput linearized "
        "(small horizons)",
    ),
    FormulationSpec(
        name="hadar-p1-makespan",
        kind="pyomo",
        build=lambda inst: _min_max(inst, makespan_cost),
        extract=extract,
        validator=_check_min_max(makespan_cost),
        sense="min",
        summary="Hadar P1's constraints, min max_j f_j (seconds): every job finishes by T",
    ),
    FormulationSpec(
        name="hadar-p1-ftf",
        kind="pyomo",
        build=lambda inst: _min_max(inst, ftf_cost),
        extract=extract,
        validator=_check_min_max(ftf_cost),
        sense="min",
        summary="Hadar P1's constraints, min max_j JCT_j / t_j^iso (finish-time fairness)",
    ),
]
