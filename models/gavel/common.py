"""What every Gavel policy shares: x_{j,r} and the base constraints (Gavel OSDI'20, Sec. 3.1)."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pe

from hetsched.exact.spec import FormulationSpec
from hetsched.gavel.problem import Allocation, AllocationView, allocation_view
from hetsched.gavel.validate import convention_report
from hetsched.instance.model import Instance


def base_model(view: AllocationView, name: str) -> pe.ConcreteModel:
    """x_{j,r} >= 0; job_time: sum_r x_{j,r} <= 1; type_capacity: sum_j s_j x_{j,r} <= N_r."""
    m = pe.ConcreteModel(name=name)
    m.J = pe.Set(initialize=range(view.n_jobs), doc="jobs")
    m.R = pe.Set(initialize=range(len(view.types)), doc="GPU types")
    m.x = pe.Var(
        m.J, m.R, domain=pe.NonNegativeReals, doc="x_{j,r}: share of time job j runs on type r"
    )
    m.job_time = pe.Constraint(
        m.J, rule=lambda _, j: sum(m.x[j, r] for r in m.R) <= 1
    )  # Gavel Sec. 3.1: sum_r x_{j,r} <= 1
    m.type_capacity = pe.Constraint(
        m.R,
        rule=lambda _, r: (
            sum(float(view.scale[j]) * m.x[j, r] for j in m.J)  # Gavel 3.1
            <= float(view.count[r])
        ),
    )
    m.view = view
    return m


def extract_x(policy: str):
    """An ``extract`` for FormulationSpec that reads x (or x = y / t after a Charnes-Cooper change)."""

    def extract(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> Allocation:
        view = allocation_view(instance)
        x = np.array([[value(m.x[j, r]) for r in m.R] for j in m.J], dtype=float)
        if hasattr(m, "t"):
            x = x / value(m.t)
        return Allocation(
            policy, view, np.clip(x, 0.0, None), instance.name, dict(getattr(m, "params", {}))
        )

    return extract


def convention_spec(policy: str, build, objective, summary: str) -> FormulationSpec:
    """The spec of a Gavel policy maximized under either convention (the ``convention`` option):
    ``objective(convention)`` is what the validator recomputes."""
    return FormulationSpec(
        name=f"gavel-{policy}",
        kind="pyomo",
        build=build,
        extract=extract_x(policy),
        validator=convention_report(objective),
        sense="max",
        options=("convention",),
        summary=summary,
    )
