"""Minimize makespan (Gavel OSDI'20, Sec. 4.2): min_X max_j R_j / thr_j(X), R_j the steps left.

Solved exactly as one LP by the change of variables z = 1 / makespan (no bisection on T):

    max  z   s.t.  finish[j]: thr_j(X) = sum_r T_{j,r} x_{j,r} >= R_j z,   base constraints.

z* = 1 / makespan*, so the reported objective and bound are 1/z (``objective_transform``); a
model bound z_ub >= z* gives the valid makespan bound 1/z_ub <= makespan*.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pe

from hetsched.allocation.problem import AllocationView, allocation_view
from hetsched.allocation.validate import allocation_report
from hetsched.errors import InputError
from hetsched.formulation import FormulationSpec
from hetsched.instance.model import Instance
from hetsched.models.gavel.common import base_model, extract_x


def build(instance: Instance) -> pe.ConcreteModel:
    view = allocation_view(instance)
    missing = np.flatnonzero(np.isnan(view.steps))
    if missing.size:
        raise InputError(instance.name, f"$.jobs[{int(missing[0])}]",
                         "makespan needs the steps left: set epochs and iterations_per_epoch")
    m = base_model(view, f"makespan[{instance.name}]")
    m.z = pe.Var(domain=pe.NonNegativeReals, doc="z = 1 / makespan")
    m.finish = pe.Constraint(m.J, rule=lambda _, j: sum(float(view.throughput[j, r]) * m.x[j, r] for r in m.R)
                             >= float(view.steps[j]) * m.z)
    m.objective = pe.Objective(expr=m.z, sense=pe.maximize)
    return m


def makespan(view: AllocationView, x: np.ndarray) -> float:
    thr = np.sum(view.throughput * x, axis=1)
    return float(np.max(np.where(thr > 0, view.steps / np.where(thr > 0, thr, 1), np.inf)))


SPEC = FormulationSpec(
    name="gavel-makespan", kind="pyomo", build=build, extract=extract_x("makespan"),
    validator=allocation_report(makespan), sense="min", objective_transform=lambda z: 1.0 / z if z > 0 else float("inf"),
    summary="Gavel minimize makespan: one exact LP in z = 1/makespan",
)
