"""The independent check of an allocation: the base constraints, recomputed from the instance,
and the policy's objective recomputed by plain numpy (not read from the solver's model)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from hetsched.core.reports import ValidationReport, Violation
from hetsched.gavel.problem import Allocation, AllocationView, allocation_view
from hetsched.instance.model import Instance

TOL = 1e-7


def check_allocation(view: AllocationView, x: np.ndarray) -> list[Violation]:
    """The base constraints (module :mod:`hetsched.gavel.problem`) recomputed from ``x``: every
    violation named, none for a valid allocation."""
    from hetsched.gavel.excess import excess  # numba: when it is used

    if x.shape != view.throughput.shape:
        finite = False
    else:
        finite, violations, negative, over_time, over_capacity, used = excess(
            np.ascontiguousarray(x, dtype=float), view.scale, view.count, TOL
        )
    if not finite:
        return [
            Violation(
                "bad_allocation", f"allocation must be {view.throughput.shape} finite numbers"
            )
        ]
    if violations == 0:
        return []  # the common case
    bad = []
    for j, r in zip(*np.nonzero(negative)):
        bad.append(
            Violation("negative", f"x[{view.job_ids[j]}, {view.types[r]}] = {x[j, r]:.6g} < 0")
        )
    for j in np.flatnonzero(over_time):
        bad.append(
            Violation("time", f"job {view.job_ids[j]} gets {x[j].sum():.6g} > 1 of the time")
        )
    for r in np.flatnonzero(over_capacity):
        bad.append(
            Violation(
                "capacity",
                f"type {view.types[r]}: {used[r]:.6g} GPUs allocated > {view.count[r]:g}",
            )
        )
    return bad


def allocation_report(objective: Callable[[AllocationView, np.ndarray], float]):
    """A validator for FormulationSpec: base constraints plus ``objective`` recomputed."""

    def report(instance: Instance, alloc: Allocation) -> ValidationReport:
        view = allocation_view(instance)
        bad = check_allocation(view, alloc.x)
        value = None if bad else float(objective(view, np.clip(alloc.x, 0, None)))
        if value is not None and not np.isfinite(
            value
        ):  # e.g. a job left without throughput never finishes
            bad.append(
                Violation(
                    "objective",
                    f"the allocation's objective is {value} (a job gets no throughput, "
                    "or the numbers span more than the solver resolves)",
                )
            )
            value = None
        return ValidationReport(not bad, value, {}, bad)

    return report


def convention_report(make: Callable[[str], Callable[[AllocationView, np.ndarray], float]]):
    """A validator whose objective depends on the convention the allocation was made under
    (``alloc.params["convention"]``, default ``hetsched``): ``make(convention)`` gives it."""

    def report(instance: Instance, alloc: Allocation) -> ValidationReport:
        convention = alloc.params.get("convention", "hetsched")
        return allocation_report(make(convention))(instance, alloc)

    return report
