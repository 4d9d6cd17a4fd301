"""A feasible Hare schedule and its validated objective from a few cheap list schedules: the
horizon bound and the hint of the exact models."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from hetsched.core.errors import HetschedError
from hetsched.hare.list_scheduling import (
    MACHINE_RULES,
    arrays_objective,
    arrival_order,
    schedule_arrays,
    schedule_in_order,
    wspt_order,
)
from hetsched.hare.serial import arrival_jobs, serial_schedule, smith_order
from hetsched.hare.view import HareView, hare_view
from hetsched.schedule.model import TaskSchedule
from hetsched.schedule.validate import validate


def quick_upper_bound(instance, view: HareView | None = None) -> tuple[float, TaskSchedule]:
    """A feasible schedule and its objective from a few cheap list schedules (``view``: the
    instance's view, if the caller has it).

    Exact models use it to bound the horizon (:meth:`HareView.start_windows`) and as a hint.
    Two serial schedules (:mod:`hetsched.hare.serial`: jobs by Smith's ratio and by arrival,
    each task in the earliest gap) join them: on Hare's job mix they are the better ones (20
    jobs x 16 GPUs: 4,874 against 6,339). The schedules are compared on arrays; the best one's objective is recomputed by the
    independent validator, and that is what is returned.
    """
    view = hare_view(instance) if view is None else view
    runs = [
        schedule_in_order(view, order, rule)
        for order in (arrival_order(view), wspt_order(view))
        for rule in MACHINE_RULES
    ]
    runs += [serial_schedule(view, order) for order in (smith_order(view), arrival_jobs(view))]
    start, gpu = min(runs, key=lambda run: arrays_objective(view, *run))
    sched = schedule_arrays(view, start, gpu)
    report = validate(instance, sched)
    if not report.valid or report.objective is None:  # pragma: no cover - a bug in the loop
        raise AssertionError(f"list schedule failed validation: {report.violations[:3]}")
    return report.objective, sched


def hint_in_ticks(ticked, hint: TaskSchedule, scale: int) -> tuple[float, TaskSchedule] | None:
    """A schedule of the instance in seconds (``hint``, e.g. the portfolio's best) on ``ticked``,
    the instance with its times multiplied by ``scale``: starts scaled, then every task started as
    early as its GPU order allows (:func:`~hetsched.schedule.retime.retime`: semi-active, so on
    the integer ticks), and validated there. (objective on ``ticked``, schedule), or None if the
    hint is not a valid schedule of it."""
    from dataclasses import replace

    from hetsched.schedule.retime import retime

    if not isinstance(hint, TaskSchedule):  # a model option given on the command line
        raise HetschedError("option hint takes a task schedule (from Python), not a string")
    scaled = replace(hint, start=np.asarray(hint.start) * scale, instance_hash="")
    moved = retime(ticked, scaled)
    report = validate(ticked, moved)
    if not report.valid or report.objective is None:
        return None
    return report.objective, moved


def better_with_hint(
    ticked, ub: float, schedule: TaskSchedule, hint: TaskSchedule | None, scale: int
) -> tuple[float, TaskSchedule, bool]:
    """(ub, schedule, False), or the hint on ``ticked`` (:func:`hint_in_ticks`) and True where it
    is valid and better: what an exact model's windows and first incumbent start from."""
    given = None if hint is None else hint_in_ticks(ticked, hint, scale)
    if given is not None and given[0] < ub:
        return given[0], given[1], True
    return ub, schedule, False


@dataclass(frozen=True)
class Horizon:
    """What the exact Hare models build on: the view, a validated schedule of objective ``ub``,
    and what every schedule of objective <= ``ub`` (so every optimal one) meets: each job's
    completion bound (:meth:`HareView.completion_upper_bounds`) and each round's start window
    [earliest, latest] (:meth:`HareView.start_windows`, worked out when first read: the interval
    LP needs only the completion bounds). ``relaxed``: bounds and windows that hold for every
    solution of (4)-(7) alone (relaxations that drop (8))."""

    view: HareView
    ub: float
    schedule: TaskSchedule
    relaxed: bool = False

    @cached_property
    def completion(self) -> np.ndarray:  # [n]: C_n <= completion[n]
        return self.view.completion_upper_bounds(self.ub, relaxed=self.relaxed)

    @cached_property
    def _windows(self) -> tuple[np.ndarray, np.ndarray]:
        return self.view.start_windows(self.ub, relaxed=self.relaxed)

    @property
    def earliest(self) -> np.ndarray:  # [n, r]
        return self._windows[0]

    @property
    def latest(self) -> np.ndarray:  # [n, r]
        return self._windows[1]


def horizon(
    instance, relaxed: bool = False, hint: TaskSchedule | None = None, scale: int = 1
) -> Horizon:
    """The :class:`Horizon` of :func:`quick_upper_bound`'s schedule (one view for both), or of
    ``hint`` where that is better: a schedule in seconds of the instance ``instance`` is made of
    by multiplying its times by ``scale`` (:func:`hint_in_ticks`)."""
    view = hare_view(instance)
    ub, schedule, _ = better_with_hint(instance, *quick_upper_bound(instance, view), hint, scale)
    return Horizon(view, ub, schedule, relaxed)
