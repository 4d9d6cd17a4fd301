"""Maximize total effective throughput (Gavel OSDI'20, Sec. 4.2). Under the ``hetsched``
convention each job's throughput is normalized by its equal-share throughput so that different
models' steps can be added; under ``gavel`` (Gavel's ``max_sum_throughput_perf``) it is raw:

    ``gavel-max-throughput``:       max  sum_{j,r} a_{j,r} x_{j,r},  a = T / thr(X^equal) or T

Throughput per dollar (c_r = ``cost_per_hour`` of type r). Under ``hetsched`` a ratio,

    ``gavel-max-throughput-cost``:  max  [sum_j thr_j(X) / thr_j(X^equal)] / [sum_{j,r} c_r s_j x_{j,r}]

a linear-fractional program solved exactly as one LP by the Charnes-Cooper change of variables
y = t x, t = 1 / cost >= 0: max sum a y s.t. ``unit_cost``: sum c s y = 1, ``job_time``:
sum_r y_{j,r} <= t, ``type_capacity``: sum_j s_j y_{j,r} <= N_r t; then x = y / t. Under
``gavel`` (``ThroughputNormalizedByCostSumWithPerf``) it is linear: max sum_{j,r} T_{j,r} x_{j,r} / c_r.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pe

from hetsched.core.errors import InputError
from hetsched.gavel.conventions import check_convention
from hetsched.gavel.policies import (
    throughput_coefficients,
    throughput_per_dollar,
    total_throughput,
)
from hetsched.gavel.problem import allocation_view
from hetsched.instance.model import Instance
from hetsched.models.gavel.common import all_x, base_model, convention_spec, linear


def build(instance: Instance, convention: str = "hetsched") -> pe.ConcreteModel:
    view = allocation_view(instance)
    a = throughput_coefficients(view, check_convention(convention))
    m = base_model(view, f"max_throughput[{instance.name}]")
    m.objective = pe.Objective(expr=linear(a.ravel(), all_x(m)), sense=pe.maximize)  # Gavel 4.2
    m.params = {"convention": convention}
    return m


def build_cost(instance: Instance, convention: str = "hetsched") -> pe.ConcreteModel:
    view = allocation_view(instance)
    if np.any(np.isnan(view.cost)):
        raise InputError(
            instance.name,
            "$.cluster.gpu_types",
            "cost-normalized throughput needs cost_per_hour on every type",
        )
    if check_convention(convention) == "gavel":  # linear: sum T / c x
        a = view.throughput / view.cost[None, :]
        m = base_model(view, f"max_throughput_cost[{instance.name}]")
        m.objective = pe.Objective(
            expr=linear(a.ravel(), all_x(m)), sense=pe.maximize
        )  # Gavel 4.2, Gavel's code: throughput / cost summed
        m.params = {"convention": convention}
        return m
    a = throughput_coefficients(view)
    m = pe.ConcreteModel(name=f"max_throughput_cost[{instance.name}]")
    m.J = pe.Set(initialize=range(view.n_jobs))
    m.R = pe.Set(initialize=range(len(view.types)))
    m.x = pe.Var(m.J, m.R, domain=pe.NonNegativeReals, doc="y_{j,r} = t x_{j,r} (Charnes-Cooper)")
    m.t = pe.Var(domain=pe.NonNegativeReals, doc="t = 1 / cost")
    m.unit_cost = pe.Constraint(
        expr=sum(float(view.cost[r] * view.scale[j]) * m.x[j, r] for j in m.J for r in m.R) == 1
    )
    m.job_time = pe.Constraint(m.J, rule=lambda _, j: sum(m.x[j, r] for r in m.R) <= m.t)
    m.type_capacity = pe.Constraint(
        m.R,
        rule=lambda _, r: (
            sum(float(view.scale[j]) * m.x[j, r] for j in m.J) <= float(view.count[r]) * m.t
        ),
    )
    m.objective = pe.Objective(
        expr=sum(float(a[j, r]) * m.x[j, r] for j in m.J for r in m.R), sense=pe.maximize
    )  # Gavel 4.2
    m.params = {"convention": convention}
    return m


SPECS = [
    convention_spec(
        "max-throughput",
        build,
        total_throughput,
        "Gavel max total effective throughput (normalized by equal share, or raw), LP",
    ),
    convention_spec(
        "max-throughput-cost",
        build_cost,
        throughput_per_dollar,
        "Gavel throughput per dollar: linear-fractional (Charnes-Cooper LP) or Gavel's linear sum",
    ),
]
