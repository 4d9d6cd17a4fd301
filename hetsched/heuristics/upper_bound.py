"""A feasible Hare schedule and its validated objective from a few cheap list schedules: the
horizon bound and the hint of the exact models."""

from __future__ import annotations

from hetsched.heuristics.list_scheduling import (
    MACHINE_RULES,
    arrival_order,
    list_schedule,
    wspt_order,
)
from hetsched.instance.hare_view import hare_view
from hetsched.schedule import TaskSchedule
from hetsched.validate import validate


def quick_upper_bound(instance) -> tuple[float, TaskSchedule]:
    """A feasible schedule and its objective from a few cheap list schedules.

    Exact models use it to bound the horizon (:meth:`HareView.start_windows`) and as a hint.
    The objective is recomputed by the independent validator.
    """
    view = hare_view(instance)
    best: tuple[float, TaskSchedule] | None = None
    for order in (arrival_order(view), wspt_order(view)):
        for rule in MACHINE_RULES:
            sched = list_schedule(view, order, rule)  # type: ignore[arg-type]
            report = validate(instance, sched)
            if (
                not report.valid or report.objective is None
            ):  # pragma: no cover - a bug in list_schedule
                raise AssertionError(f"list schedule failed validation: {report.violations[:3]}")
            if best is None or report.objective < best[0]:
                best = (report.objective, sched)
    assert best is not None
    return best
