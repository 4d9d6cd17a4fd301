"""Maximize total effective throughput (Gavel OSDI'20, Sec. 4.2), each job's throughput
normalized by its equal-share throughput so that different models' steps can be added:

    ``gavel-max-throughput``:       max  sum_j thr_j(X) / thr_j(X^equal)

and its cost-normalized form, throughput per dollar (c_r = ``cost_per_hour`` of type r):

    ``gavel-max-throughput-cost``:  max  [sum_j thr_j(X) / thr_j(X^equal)] / [sum_{j,r} c_r s_j x_{j,r}]

The ratio is a linear-fractional program, solved exactly as one LP by the Charnes-Cooper change
of variables y = t x, t = 1 / cost >= 0: max sum a y s.t. ``unit_cost``: sum c s y = 1,
``job_time``: sum_r y_{j,r} <= t, ``type_capacity``: sum_j s_j y_{j,r} <= N_r t. Then x = y / t.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pe

from hetsched.allocation.problem import AllocationView, allocation_view, equal_share_throughput
from hetsched.allocation.validate import allocation_report
from hetsched.errors import InputError
from hetsched.instance.model import Instance
from hetsched.models.gavel.common import base_model, extract_x
from hetsched.spec import FormulationSpec


def normalized(view: AllocationView) -> np.ndarray:
    return view.throughput / equal_share_throughput(view)[:, None]


def build(instance: Instance) -> pe.ConcreteModel:
    view = allocation_view(instance)
    a = normalized(view)
    m = base_model(view, f"max_throughput[{instance.name}]")
    m.objective = pe.Objective(
        expr=sum(float(a[j, r]) * m.x[j, r] for j in m.J for r in m.R), sense=pe.maximize
    )  # Gavel 4.2
    return m


def build_cost(instance: Instance) -> pe.ConcreteModel:
    view = allocation_view(instance)
    if np.any(np.isnan(view.cost)):
        raise InputError(
            instance.name,
            "$.cluster.gpu_types",
            "cost-normalized throughput needs cost_per_hour on every type",
        )
    a = normalized(view)
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
    return m


def total(view: AllocationView, x: np.ndarray) -> float:
    return float(np.sum(normalized(view) * x))


def per_dollar(view: AllocationView, x: np.ndarray) -> float:
    spend = float(np.sum(view.cost[None, :] * view.scale[:, None] * x))
    return total(view, x) / spend if spend > 0 else 0.0


SPECS = [
    FormulationSpec(
        name="gavel-max-throughput",
        kind="pyomo",
        build=build,
        extract=extract_x("max-throughput"),
        validator=allocation_report(total),
        sense="max",
        summary="Gavel max total effective throughput (normalized by equal share), LP",
    ),
    FormulationSpec(
        name="gavel-max-throughput-cost",
        kind="pyomo",
        build=build_cost,
        extract=extract_x("max-throughput-cost"),
        validator=allocation_report(per_dollar),
        sense="max",
        summary="Gavel throughput per dollar: linear-fractional, one LP by Charnes-Cooper",
    ),
]
