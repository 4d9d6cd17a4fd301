"""What every Gavel policy shares: x_{j,r} and the base constraints (Gavel OSDI'20, Sec. 3.1)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyomo.environ as pe
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression

from hetsched.exact.spec import FormulationSpec
from hetsched.gavel.problem import Allocation, AllocationView, allocation_view
from hetsched.gavel.validate import convention_report
from hetsched.instance.model import Instance


def linear(coefs: Sequence[float], variables: Sequence) -> LinearExpression:
    """sum_k coefs[k] variables[k] as one Pyomo linear expression, built in one step from plain
    floats (Pyomo's advice for large models: no sum grown term by term, no numpy scalars in an
    expression; it halves the build of a 16,384-job model). A unit coefficient's term is the
    variable itself, a term object fewer (2,048 rows sum_r x_{j,r}: 1.5 instead of 10 ms)."""
    return LinearExpression(
        [v if c == 1 else MonomialTermExpression((c, v)) for c, v in zip(coefs, variables)]
    )


def all_x(m: pe.ConcreteModel) -> list:
    """x_{j,r} for every job and type, job by job: the order of ``a.ravel()`` for a (J, R) array."""
    return list(m.x.values())  # the index set J x R's order


def x_rows(m: pe.ConcreteModel) -> list[list]:
    """[x_{j,0}, ..., x_{j,R-1}] for each job j (one lookup a variable, not one a use)."""
    xs, k = all_x(m), len(m.R)
    return [xs[j * k : (j + 1) * k] for j in range(len(m.J))]


def base_model(view: AllocationView, name: str) -> pe.ConcreteModel:
    """x_{j,r} >= 0; job_time: sum_r x_{j,r} <= 1; type_capacity: sum_j s_j x_{j,r} <= N_r."""
    m = pe.ConcreteModel(name=name)
    m.J = pe.Set(initialize=range(view.n_jobs), doc="jobs")
    m.R = pe.Set(initialize=range(len(view.types)), doc="GPU types")
    m.x = pe.Var(
        m.J, m.R, domain=pe.NonNegativeReals, doc="x_{j,r}: share of time job j runs on type r"
    )
    x, types = x_rows(m), range(len(view.types))
    ones, scale = [1.0] * len(types), view.scale.astype(float).tolist()
    m.job_time = pe.Constraint(
        m.J, rule=lambda _, j: linear(ones, x[j]) <= 1
    )  # Gavel Sec. 3.1: sum_r x_{j,r} <= 1
    m.type_capacity = pe.Constraint(
        m.R,
        rule=lambda _, r: linear(scale, [row[r] for row in x]) <= float(view.count[r]),
    )  # Gavel Sec. 3.1: sum_j s_j x_{j,r} <= N_r
    m.view = view
    return m


def extract_x(policy: str):
    """An ``extract`` for FormulationSpec that reads x (or x = y / t after a Charnes-Cooper change)."""

    def extract(m: pe.ConcreteModel, instance: Instance, value=pe.value) -> Allocation:
        view = getattr(m, "view", None) or allocation_view(instance)  # the build's view
        x = np.array([value(v) for v in all_x(m)], dtype=float).reshape(view.n_jobs, -1)
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
