"""Hadar's P3 (eqs. (3)-(3a)): the dual of LP(P2) over the same enumerated schedules.

    P3:  min sum_j mu_j + sum_{t,h,r} k_h^r(t) c_h^r                                               (3)
         payoff[j,s]: mu_j >= U_js - sum_{t,h,r} k_h^r(t) w^s_{jh}^r(t);  k, mu >= 0             (3a)

k_h^r(t) prices a type-r GPU on machine h in slot t, mu_j is job j's payoff. By LP duality its
optimum equals LP(P2) (checked in the tests), an upper bound on P1. The model has no schedule:
its value is the certificate. For instances too large to enumerate, ``hetsched.hadar.certificate.lp_p2``
reaches the same value by column generation.
"""

from __future__ import annotations

import pyomo.environ as pe

from hetsched.exact.spec import FormulationSpec
from hetsched.instance.model import Instance
from hetsched.models.hadar_p1 import HadarDecisions, check
from hetsched.models.hadar_p2 import enumerated


def build_p3(instance: Instance) -> pe.ConcreteModel:
    v, S = enumerated(instance)
    m = pe.ConcreteModel(name=f"hadar_p3[{instance.name}]")
    cells = [
        (h, r, t)
        for h in range(len(v.machines))
        for r in range(len(v.types))
        for t in range(1, v.horizon + 1)
        if v.capacity[h, r] > 0
    ]
    m.K = pe.Set(initialize=cells, dimen=3)
    m.k = pe.Var(
        m.K,
        domain=pe.NonNegativeReals,
        doc="k_h^r(t): price of a type-r GPU on machine h in slot t",
    )
    m.mu = pe.Var(range(v.n_jobs), domain=pe.NonNegativeReals, doc="mu_j: the job's payoff")
    m.objective = pe.Objective(
        expr=sum(m.mu[j] for j in range(v.n_jobs))
        + sum(int(v.capacity[h, r]) * m.k[h, r, t] for h, r, t in cells)
    )  # (3)
    m.payoff = pe.Constraint(
        range(len(S)),
        rule=lambda _, i: (
            m.mu[S[i][0]]
            >= float(S[i][3])
            - sum(n * m.k[h, r, t] for t, g in S[i][2].items() for (h, r), n in g.items())
        ),
    )  # (3a)
    m.schedules, m.view = S, v
    return m


def extract_p3(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> HadarDecisions:
    return HadarDecisions({})  # the dual has no schedule; its value is the certificate


SPEC = FormulationSpec(
    name="hadar-p3",
    kind="pyomo",
    build=build_p3,
    extract=extract_p3,
    validator=check,
    sense="min",
    objective_is_bound=True,
    bound_side="upper",
    summary="Hadar P3 (3)-(3a): the dual of LP(P2); its value bounds P1 from above",
)
