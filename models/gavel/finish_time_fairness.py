"""Finish-time fairness (Themis, as Gavel OSDI'20 Sec. 4.2 uses it): minimize max_j rho_j(X),

    rho_j(X) = (t_j + R_j / thr_j(X)) / (t_j + R_j / thr_j(X^equal)),

t_j the time job j has been in the system, R_j its steps left, X^equal the equal share (the
job's "isolated" 1/n of the cluster). rho is quasi-convex, not linear, in X. For a fixed target
rho the question "is max_j rho_j(X) <= rho feasible?" is linear:

    thr_j(X) >= R_j / (rho D_j - t_j) =: need_j(rho)   (D_j the denominator; needs rho D_j > t_j)

This model is that test for one ``rho`` (an option): max z s.t. ``finish[j]``: thr_j(X) >=
need_j(rho) z; rho is feasible iff z* >= 1. :func:`hetsched.gavel.ftf.finish_time_fairness`
bisects on rho between max_j t_j / D_j (infeasible even with infinite speed) and 1 (X^equal
achieves it), so the result carries a proven lower bound and its gap. If every t_j = 0 the
problem is one LP (rho = 1 / z* of the test at rho = 1), and the bisection is skipped.

Options: ``convention="gavel"`` takes Gavel's denominator D_j = R_j / thr_j(X^iso) (its
``IsolatedPolicy`` share, no t_j; :mod:`hetsched.gavel.conventions`); ``agnostic=True``
is Gavel's agnostic ``finish_time_fairness`` (every type at the reference type's throughput).
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pe

from hetsched.core.errors import InputError
from hetsched.core.reports import ValidationReport
from hetsched.exact.spec import FormulationSpec
from hetsched.gavel.conventions import check_convention
from hetsched.gavel.policies import need, policy_view, waited
from hetsched.gavel.problem import AllocationView, allocation_view
from hetsched.gavel.validate import allocation_report
from hetsched.instance.model import Instance
from hetsched.models.gavel.common import base_model, extract_x


def _view(instance: Instance, agnostic: bool) -> AllocationView:
    view = allocation_view(instance)
    return policy_view(view, "finish-time-fairness-agnostic") if agnostic else view


def build(
    instance: Instance, rho: float = 1.0, convention: str = "hetsched", agnostic: bool = False
) -> pe.ConcreteModel:
    view = _view(instance, agnostic)
    req = need(view, waited(view, instance), rho, check_convention(convention))
    if not np.all(np.isfinite(req)):
        raise InputError(
            instance.name,
            "rho",
            f"rho = {rho} is below t_j / D_j for some job: infeasible at any speed",
        )
    m = base_model(view, f"finish_time_fairness[{instance.name}, rho={rho}]")
    m.z = pe.Var(doc="z >= 1 iff max_j rho_j(X) <= rho is feasible")
    m.finish = pe.Constraint(
        m.J,
        rule=lambda _, j: (
            sum(float(view.throughput[j, r]) * m.x[j, r] for r in m.R) >= float(req[j]) * m.z
        ),
    )
    m.objective = pe.Objective(
        expr=m.z, sense=pe.maximize
    )  # max z: rho is feasible iff z* >= 1 (Themis rho, Gavel Sec. 4.2)
    m.params = {"rho": rho, "convention": convention, "agnostic": agnostic}
    return m


def test_value(instance: Instance, alloc) -> ValidationReport:
    """z = min_j thr_j(X) / need_j(rho) for the allocation's rho, recomputed from the instance."""

    p = alloc.params

    def objective(_: AllocationView, x: np.ndarray) -> float:
        view = _view(instance, p.get("agnostic", False))
        req = need(view, waited(view, instance), p["rho"], p.get("convention", "hetsched"))
        return float(np.min(np.sum(view.throughput * x, axis=1) / req))

    return allocation_report(objective)(instance, alloc)


SPEC = FormulationSpec(
    name="gavel-finish-time-fairness-test",
    kind="pyomo",
    build=build,
    extract=extract_x("finish-time-fairness"),
    validator=test_value,
    sense="max",
    options=("rho", "convention", "agnostic"),
    summary="Themis/Gavel finish-time fairness: the LP test 'max rho_j <= rho?' (bisected by allocate)",
)
