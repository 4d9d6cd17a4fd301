"""One rule set that turns what a method found into a :class:`SolveResult`: the independent
validator's report decides the objective, and the claim, the bound and the status are checked
against it. Every method (``solve``, the heuristic, the allocation fast path and bisection) ends here."""

from __future__ import annotations

from typing import Any

from hetsched.solvers.result import SolveResult, Status, relative_gap

CLAIM_TOL = 1e-6  # relative: a claim or a bound this far beyond the validated objective is a bug


def _beyond(a: float, b: float, sense: str) -> bool:
    """a is strictly better than b by more than the tolerance (smaller when minimizing)."""
    tol = CLAIM_TOL * max(1.0, abs(b))
    return a < b - tol if sense == "min" else a > b + tol


def _meets(objective: float, bound: float, sense: str) -> bool:
    """The objective is as good as the bound (within float noise): proven optimal."""
    slack = 1e-9 * max(1.0, abs(objective))
    return objective <= bound + slack if sense == "min" else objective >= bound - slack


def finalize(
    result: SolveResult,
    report: Any,
    exact: bool = True,
    optimal_on_bound: bool = False,
) -> SolveResult:
    """Fill ``result`` (its status, bound, sense and ``solver_objective``, the method's own claim,
    set by the method) from the validator's ``report`` of ``result.solution`` (None: no solution):

    * a relaxation (``result.objective_is_bound``): its objective is its claim, its own optimum;
    * an invalid solution, or a method error, is an error, never a result;
    * else the objective is the validated one; an ``exact`` method that ``claimed`` better than its
      solution achieves, or another value at a proven optimum, is an error (model and validator
      disagree); so is a bound beyond the objective;
    * a claimed optimum whose bound is further from the objective than the tolerance (a method
      stopped at a gap limit) is only feasible; a proven optimum's bound is tightened to the
      objective; with ``optimal_on_bound`` a solution that meets the bound is optimal (a
      heuristic meeting its relaxation's bound);
    * the gap from the objective and the bound.
    """
    result.validation = report
    sense = result.sense
    claimed = result.solver_objective if report is not None else None
    if result.objective_is_bound:
        result.objective = claimed
    elif report is not None and result.status != Status.ERROR:
        if not report.valid:
            result.status = Status.ERROR
            result.notes.append(
                f"solution failed validation: {len(report.violations)} violation(s), first: "
                f"{report.violations[0].message}"
            )
        else:
            result.objective = report.objective
            if (
                exact
                and claimed is not None
                and (
                    _beyond(claimed, report.objective, sense)
                    or (
                        result.status == Status.OPTIMAL
                        and abs(claimed - report.objective)
                        > CLAIM_TOL * max(1.0, abs(report.objective))
                    )
                )
            ):
                result.status = Status.ERROR
                result.notes.append(
                    f"the method claims objective {claimed} but the solution's value is "
                    f"{report.objective}: the model and the validator disagree"
                )
            if result.bound is not None and _beyond(report.objective, result.bound, sense):
                result.status = Status.ERROR
                result.notes.append(
                    f"bound {result.bound} is beyond the validated objective {report.objective}"
                )
    if (
        result.status == Status.OPTIMAL
        and result.objective is not None
        and result.bound is not None
        and abs(result.objective - result.bound) > CLAIM_TOL * max(1.0, abs(result.objective))
    ):  # the method stopped at a gap limit (``gap`` > 0): a solution, not a proof
        result.status = Status.FEASIBLE
        result.notes.append(
            f"stopped at the gap limit: objective {result.objective:.10g}, bound "
            f"{result.bound:.10g}; not proven optimal"
        )
    if result.status == Status.ERROR and not result.objective_is_bound:
        result.objective = None
    elif result.objective is not None and not result.objective_is_bound:
        if (
            optimal_on_bound
            and result.bound is not None
            and _meets(result.objective, result.bound, sense)
        ):
            result.status = Status.OPTIMAL
        if result.status == Status.OPTIMAL:
            pick = min if sense == "min" else max
            result.bound = (
                result.objective if result.bound is None else pick(result.bound, result.objective)
            )
    result.gap = relative_gap(result.objective, result.bound, sense)
    return result
