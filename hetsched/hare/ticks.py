"""What the job-schedule masters of Hare_Sched build on: the instance in integer ticks, a
schedule of objective UB, and the windows every schedule of objective <= UB obeys
(``models/hare_sched_dw.py``, ``models/hare_sched_buckets.py``)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from hetsched.core.errors import HetschedError
from hetsched.core.scaling import exact_decimal_scale, instance_in_ticks, instance_times
from hetsched.hare.local_search import local_search_upper_bound
from hetsched.hare.upper_bound import better_with_hint
from hetsched.hare.view import HareView, hare_view
from hetsched.instance.io import instance_hash
from hetsched.instance.model import Instance
from hetsched.schedule.model import TaskSchedule, schedule_from_round_starts

SEARCH_EVALUATIONS = (
    500  # list schedules tried per round of a job for the upper bound that sets the windows
)
MAX_SEARCH_EVALUATIONS = 20_000
SEARCH_SEED = 0  # the local search is seeded: the same instance gives the same windows


@dataclass(frozen=True)
class TickedHorizon:
    """The instance with times x ``scale`` (integer ticks) and weights x ``weight_scale``
    (integers), its view, a validated schedule of objective ``ub`` (in ticks and scaled weights)
    and, per job, its round start windows [earliest, latest] and completion bound in ticks."""

    scale: int
    weight_scale: int
    ticked: Instance
    view: HareView
    ub: float
    schedule: TaskSchedule
    source: str  # where the schedule came from
    earliest: np.ndarray  # [n, r] (ticks, fractional)
    latest: np.ndarray  # [n, r]
    completion_hi: np.ndarray  # [n] C_n <= this (int ticks)
    weight: np.ndarray  # [n] w_n x weight_scale

    @property
    def horizon(self) -> int:
        return int(self.completion_hi.max())

    @property
    def per_job_bound(self) -> float:
        """sum_n w_n (a_n + |R_n| L_n) of (4), (6), (7), in ticks and scaled weights (integers:
        exact): the lower bound the job-schedule masters start from."""
        return float(np.dot(self.weight, self.view.completion_lower_bounds()))

    def round_tails(self, n: int) -> np.ndarray:
        """Job n's :meth:`HareView.round_tails` in ticks."""
        return self.view.round_tails()[n, : int(self.view.rounds[n])]

    def ready_lo(self, n: int) -> np.ndarray:
        """Job n's earliest start per round, in whole ticks (round 0: its arrival)."""
        lo = np.ceil(self.earliest[n, : int(self.view.rounds[n])] - 1e-6).astype(np.int64)
        lo[0] = int(self.view.arrival[n])
        return lo

    def ready_hi(self, n: int) -> np.ndarray:
        """Job n's latest start per round, in whole ticks."""
        return np.floor(self.latest[n, : int(self.view.rounds[n])] + 1e-6).astype(np.int64)


def ticked_horizon(
    instance: Instance, hint: TaskSchedule | None, method: str, evaluations: int | None = None
) -> TickedHorizon:
    """The ticks, a schedule (a seeded local search over ``evaluations`` list schedules, by
    default :data:`SEARCH_EVALUATIONS` a round up to :data:`MAX_SEARCH_EVALUATIONS`, or ``hint``
    where it is better) and the windows of its objective (:meth:`HareView.start_windows`);
    ``method`` names the caller in the errors."""
    s = exact_decimal_scale(instance_times(instance), max_digits=4)
    if s is None:
        raise HetschedError(
            f"{method} needs times with at most 4 decimal digits; use --solver cpsat"
        )
    ws = exact_decimal_scale([j.weight for j in instance.jobs], max_digits=6)
    if ws is None:
        raise HetschedError(
            f"{method} needs job weights with at most 6 decimal digits; use --solver highs"
        )
    ticked = instance_in_ticks(instance, s)
    v = hare_view(ticked)
    if evaluations is None:
        evaluations = min(MAX_SEARCH_EVALUATIONS, SEARCH_EVALUATIONS * int(np.sum(v.rounds)))
    ub, start = local_search_upper_bound(ticked, evaluations, SEARCH_SEED)
    ub, start, hinted = better_with_hint(ticked, ub, start, hint, s)
    earliest, latest = v.start_windows(ub)
    return TickedHorizon(
        scale=s,
        weight_scale=ws,
        ticked=ticked,
        view=v,
        ub=ub,
        schedule=start,
        source="the given schedule" if hinted else "local search of list schedules",
        earliest=earliest,
        latest=latest,
        completion_hi=np.floor(v.completion_upper_bounds(ub) + 1e-6).astype(np.int64),
        weight=np.rint(v.weight * ws),
    )


#: a job's schedule as its tasks (round, GPU index, start tick): the payload of a column
JobTasks = list[tuple[int, int, int]]


def job_tasks(view: HareView, schedule: TaskSchedule) -> list[tuple[JobTasks, int]]:
    """Per job, its tasks in ``schedule`` (in ticks) as (round, GPU index, start tick) and its
    completion C_n (its last round's end)."""
    job_index = {jid: n for n, jid in enumerate(view.job_ids)}
    gpu_index = {gid: g for g, gid in enumerate(view.gpu_ids)}
    per_job: dict[int, JobTasks] = defaultdict(list)
    for a in schedule.assignments:
        per_job[job_index[a.job]].append((a.round, gpu_index[a.gpu], int(round(a.start))))
    out = []
    for n in range(view.n_jobs):
        last = int(view.rounds[n]) - 1
        done = max(t + int(view.cycle[n, g]) for r, g, t in per_job[n] if r == last)
        out.append((per_job[n], done))
    return out


def schedule_of_jobs(
    view: HareView, scale: int, jobs: list[tuple[int, JobTasks]], instance: Instance
) -> TaskSchedule:
    """The schedule in seconds of ``instance`` from (job, its tasks in ticks) pairs."""
    starts: dict[tuple[int, int], list[tuple[float, int]]] = defaultdict(list)
    for n, tasks in jobs:
        for r, g, start in tasks:
            starts[n, r].append((start / scale, g))
    return schedule_from_round_starts(view, starts, instance.name, instance_hash(instance))


def extract_job_schedules(problem, instance: Instance, solution) -> TaskSchedule:
    """The schedule of a job-schedule master's chosen columns (each a job's tasks in ticks;
    ``problem.data``: the view and the ticks' scale): the ``extract`` of its formulation."""
    jobs = [(col.block, col.payload) for col in solution.columns]
    return schedule_of_jobs(problem.data["view"], problem.data["scale"], jobs, instance)
