"""Max-min fairness (Gavel OSDI'20, Sec. 4.1; LAS in Tiresias is its single-type special case).

Heterogeneity-agnostic (``gavel-max-min-fairness``): equalize weighted time shares,

    max  min_j  (s_j / w_j) sum_r x_{j,r}                                  (T_{j,r} = 1 for all r)

Heterogeneity-aware (``gavel-max-min-fairness-perf``): equalize effective throughput normalized
by the job's throughput under the equal share X^equal (:func:`hetsched.gavel.equal_share`),

    max  min_j  (s_j / w_j) thr_j(X) / thr_j(X^equal),   thr_j(X) = sum_r T_{j,r} x_{j,r}

Both are LPs with an epigraph variable z: ``fair[j]``: z <= coefficient_j * (...). The factor
s_j follows Gavel: with equal throughputs a 1-GPU job gets s_j times the time of an s_j-GPU job.
Option ``convention="gavel"`` normalizes by Gavel's proportional share thr_j(X^prop) instead of
thr_j(X^equal) (:mod:`hetsched.gavel.conventions`): the same allocations, the objective
scaled by min(1, sum N / sum s).
"""

from __future__ import annotations

import pyomo.environ as pe

from hetsched.gavel.conventions import check_convention
from hetsched.gavel.policies import max_min_coefficients as coefficients
from hetsched.gavel.policies import max_min_objective
from hetsched.gavel.problem import allocation_view
from hetsched.instance.model import Instance
from hetsched.models.gavel.common import base_model, convention_spec, linear, x_rows


def build_for(aware: bool):
    def build(instance: Instance, convention: str = "hetsched") -> pe.ConcreteModel:
        view = allocation_view(instance)
        a = coefficients(view, aware, check_convention(convention))
        m = base_model(view, f"max_min_fairness{'_perf' if aware else ''}[{instance.name}]")
        m.z = pe.Var(doc="min over jobs of the normalized share (epigraph)")
        x, z, rows = x_rows(m), m.z, a.tolist()
        m.fair = pe.Constraint(
            m.J, rule=lambda _, j: z <= linear(rows[j], x[j])
        )  # Gavel 4.1: z <= sum_r a_{j,r} x_{j,r}
        m.objective = pe.Objective(expr=m.z, sense=pe.maximize)  # Gavel Sec. 4.1: max min_j
        m.params = {"convention": convention}
        return m

    return build


SPECS = [
    convention_spec(
        "max-min-fairness",
        build_for(False),
        lambda c: max_min_objective(False, c),
        "Gavel max-min fairness, heterogeneity-agnostic: weighted time shares (LP)",
    ),
    convention_spec(
        "max-min-fairness-perf",
        build_for(True),
        lambda c: max_min_objective(True, c),
        "Gavel max-min fairness, heterogeneity-aware: throughput / equal-share throughput (LP)",
    ),
]
