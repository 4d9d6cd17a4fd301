"""A feasible Hare schedule and its validated objective from a few cheap list schedules: the
horizon bound and the hint of the exact models."""

from __future__ import annotations

from hetsched.heuristics.list_scheduling import (
    MACHINE_RULES,
    arrays_objective,
    arrival_order,
    schedule_arrays,
    schedule_in_order,
    wspt_order,
)
from hetsched.instance.hare_view import hare_view
from hetsched.schedule import TaskSchedule
from hetsched.validate import validate


def quick_upper_bound(instance) -> tuple[float, TaskSchedule]:
    """A feasible schedule and its objective from a few cheap list schedules.

    Exact models use it to bound the horizon (:meth:`HareView.start_windows`) and as a hint.
    The schedules are compared on arrays; the best one's objective is recomputed by the
    independent validator, and that is what is returned.
    """
    view = hare_view(instance)
    runs = [
        schedule_in_order(view, order, rule)
        for order in (arrival_order(view), wspt_order(view))
        for rule in MACHINE_RULES
    ]
    start, gpu = min(runs, key=lambda run: arrays_objective(view, *run))
    sched = schedule_arrays(view, start, gpu)
    report = validate(instance, sched)
    if not report.valid or report.objective is None:  # pragma: no cover - a bug in the loop
        raise AssertionError(f"list schedule failed validation: {report.violations[:3]}")
    return report.objective, sched
