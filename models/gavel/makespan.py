"""Minimize makespan (Gavel OSDI'20, Sec. 4.2): min_X max_j R_j / thr_j(X), R_j the steps left.

Solved exactly as one LP by the change of variables z = 1 / makespan (no bisection on T):

    max  z   s.t.  finish[j]: thr_j(X) = sum_r T_{j,r} x_{j,r} >= R_j z,   base constraints.

z* = 1 / makespan*, so the reported objective and bound are 1/z (``objective_transform``); a
model bound z_ub >= z* gives the valid makespan bound 1/z_ub <= makespan*.

Scaling: with R_j ~ 10^7 steps, z ~ 10^-7 sits at the LP's feasibility tolerance and HiGHS
returned a wrong "optimal" makespan (19% too long on Gavel's msr trace). The model therefore uses
zeta = M z, with M = max_j R_j / thr_j(X^equal) the makespan of the equal share, so zeta is O(1)
(zeta >= 1 at the optimum) and the rows read sum_r T_{j,r} x_{j,r} >= (R_j / M) zeta;
makespan = M / zeta.

This is Gavel's ``min_total_duration_perf`` (the smallest T such that every job finishes by T),
solved exactly where Gavel bisects on T to within 5%. ``gavel-min-total-duration`` is Gavel's
agnostic ``min_total_duration``: the same LP with every type at the job's throughput on the
reference type (:func:`hetsched.gavel.conventions.agnostic_view`; Gavel uses v100).
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pe

from hetsched.core.errors import InputError
from hetsched.exact.spec import FormulationSpec
from hetsched.gavel.conventions import agnostic_view
from hetsched.gavel.policies import agnostic_makespan, makespan
from hetsched.gavel.problem import AllocationView, allocation_view, equal_share_makespan
from hetsched.gavel.validate import allocation_report
from hetsched.instance.model import Instance
from hetsched.models.gavel.common import base_model, extract_x, linear


def build(instance: Instance) -> pe.ConcreteModel:
    return build_view(instance, allocation_view(instance))


def build_agnostic(instance: Instance) -> pe.ConcreteModel:
    return build_view(instance, agnostic_view(allocation_view(instance)))


def build_view(instance: Instance, view: AllocationView) -> pe.ConcreteModel:
    missing = np.flatnonzero(np.isnan(view.steps))
    if missing.size:
        raise InputError(
            instance.name,
            f"$.jobs[{int(missing[0])}]",
            "makespan needs the steps left: set epochs and iterations_per_epoch",
        )
    m = base_model(view, f"makespan[{instance.name}]")
    m.makespan_scale = equal_share_makespan(view)
    m.z = pe.Var(
        domain=pe.NonNegativeReals, doc="zeta = M / makespan (M: the equal share's makespan)"
    )
    x, z, types = m.x, m.z, range(len(view.types))
    rows, need = view.throughput.tolist(), (view.steps / m.makespan_scale).tolist()
    m.finish = pe.Constraint(
        m.J, rule=lambda _, j: linear(rows[j], [x[j, r] for r in types]) >= need[j] * z
    )  # Gavel Sec. 4.2: sum_r T_{j,r} x_{j,r} >= (steps_j / M) zeta
    m.objective = pe.Objective(
        expr=m.z, sense=pe.maximize
    )  # max zeta = M / makespan (Gavel Sec. 4.2, change of variables)
    return m


def _makespan_of(zeta: float, m: pe.ConcreteModel) -> float:
    return m.makespan_scale / zeta if zeta > 0 else float("inf")


def _spec(name: str, build, policy: str, objective, summary: str) -> FormulationSpec:
    return FormulationSpec(
        name=name,
        kind="pyomo",
        build=build,
        extract=extract_x(policy),
        validator=allocation_report(objective),
        sense="min",
        objective_transform=_makespan_of,
        summary=summary,
    )


SPECS = [
    _spec(
        "gavel-makespan",
        build,
        "makespan",
        makespan,
        "Gavel minimize makespan (min_total_duration_perf): one exact LP in z = 1/makespan",
    ),
    _spec(
        "gavel-min-total-duration",
        build_agnostic,
        "min-total-duration",
        agnostic_makespan,
        "Gavel's agnostic min_total_duration: makespan at the reference type's throughputs",
    ),
]
