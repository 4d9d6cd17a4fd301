"""A discrete-event simulator of Hare's execution model, driven by an online policy.

The model (Hare, Sec. 3; the TCC paper's HLAS uses the same): job n arrives at a_n and runs
|R_n| rounds of |D_r| parallel tasks; a task on GPU m trains for T^c_{n,m} (the GPU is busy) and
then synchronizes for T^s_{n,m} (the GPU is free again, (8)); tasks of one round may run on
different GPUs, and round r+1 becomes ready when every task of round r has trained and synced
(the barrier (7)). Tasks are not preempted (Hare, Sec. 3.2).

Events: job arrival, training end (a GPU turns idle), round end (the barrier; the job's next
round becomes ready or the job completes). After the events of one instant are applied, the
policy sees the :class:`SimState` and returns which job's ready task to start on which idle GPU.
The engine checks every decision (the GPU is idle, the job has a ready task) and records the
run as a :class:`~hetsched.schedule.model.TaskSchedule` plus an event log; the independent validator
(:func:`hetsched.schedule.validate.validate`) then checks the schedule and recomputes every completion
(:func:`simulate` fails loudly if it disagrees with the engine).

Non-clairvoyance: a policy learns a job's number of rounds only when it ends, unless the policy
declares ``clairvoyant = True`` (SRTF, Hare's offline plan).
"""

from __future__ import annotations

import heapq
import math
from array import array
from bisect import bisect_left, insort
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from sortedcontainers import SortedList

from hetsched.core.collector import collector_paused
from hetsched.core.errors import HetschedError
from hetsched.core.reports import ValidationReport
from hetsched.hare.view import HareView, hare_view
from hetsched.instance.gavel_table import NEVER
from hetsched.instance.io import instance_hash
from hetsched.instance.model import Instance
from hetsched.schedule.model import TaskSchedule, refuse_large
from hetsched.schedule.validate import validate

TRAIN_END, ROUND_END = 1, 2  # order of heap events at one instant (arrivals come first: a list)


class Waiting:
    """The jobs with a ready task, in arrival order, as a read-only sequence of job indices. It
    keeps their arrival ranks sorted: in a plain list while the backlog is short (a C-level
    insert or delete, the common case), in a ``sortedcontainers`` list once it passes
    :data:`SHORT` (logarithmic however long it grows), so reading the first few stays cheap."""

    __slots__ = ("ranks", "_job_at", "add", "remove")

    def __init__(self, rank: list[int]):
        self._job_at = [0] * len(rank)  # rank -> job
        for n, r in enumerate(rank):
            self._job_at[r] = n
        self.ranks: list[int] | SortedList = []
        self.add, self.remove = self._add_short, self._remove_short  # SortedList's past SHORT

    def _add_short(self, r: int) -> None:
        ranks = self.ranks
        insort(ranks, r)
        if len(ranks) > SHORT:
            self.ranks = SortedList(ranks)
            self.add, self.remove = self.ranks.add, self.ranks.remove

    def _remove_short(self, r: int) -> None:
        ranks = self.ranks
        del ranks[bisect_left(ranks, r)]

    def __len__(self) -> int:
        return len(self.ranks)

    def __iter__(self):
        return map(self._job_at.__getitem__, self.ranks)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._job_at[r] for r in self.ranks[i]]
        return self._job_at[self.ranks[i]]


#: the backlog past which :class:`Waiting` keeps its ranks in a sorted-list structure (a plain
#: list's insert moves the entries after it: about 1 us per 4,000 of them)
SHORT = 4096


class GpuOrders:
    """Each job's GPUs sorted by a table of times (``times[n][m]``), ties by index, made when
    first asked: one list per distinct row (a trace's jobs share a few dozen rows)."""

    __slots__ = ("times", "_of_job", "_of_row")

    def __init__(self, times: list[list[float]]):
        self.times = times
        self._of_job: list[list[int] | None] = [None] * len(times)
        self._of_row: dict[tuple[float, ...], list[int]] = {}

    def of(self, n: int) -> list[int]:
        order = self._of_job[n]
        if order is None:
            row = self.times[n]
            order = self._of_row.get(key := tuple(row))
            if order is None:
                order = self._of_row[key] = sorted(range(len(row)), key=row.__getitem__)
            self._of_job[n] = order
        return order


class SimState:
    """What a policy may observe at a decision instant (indices: jobs n, GPUs m).

    The per-job and per-GPU fields are Python lists (a policy reads them one entry at a time;
    lists are several times faster to index than numpy arrays)."""

    def __init__(self, view: HareView, clairvoyant: bool):
        self.view = view
        self._clairvoyant = clairvoyant
        n = view.n_jobs
        self.now = 0.0
        self.arrived = [False] * n
        self.done = [False] * n
        self.rounds_done = [0] * n  # R_n^r(t): rounds completed
        self.ready = [0] * n  # tasks of the current round not started yet
        self.started = [0] * n  # tasks of the current round started
        self.service = [0.0] * n  # attained task-GPU training time
        self.first_start = [math.nan] * n
        self.n_gpus = view.n_gpus  # a plain int: policies read it at every decision
        self.gpu_free_at = [0.0] * view.n_gpus
        self.idle = [True] * view.n_gpus
        self._idle = list(range(view.n_gpus))  # the idle GPUs, in index order
        self.rank = [0] * n  # position in arrival order (ties by index)
        for i, j in enumerate(np.argsort(view.arrival, kind="stable").tolist()):
            self.rank[j] = i
        # the jobs with a ready task: how many, and (once a policy asks for them) in arrival order,
        # their ranks kept sorted as they come and go; a policy that keeps its own order (HLAS,
        # SRTF) never pays for the sorted list
        self.n_waiting = 0
        self._waiting: Waiting | None = None
        self.version = [0] * n  # bumped whenever a job's observable state changes
        # jobs whose state changed since the policy's last decision (the engine clears it after
        # each decision: a policy reads it during ``assign`` and keeps no reference)
        self.changed: set[int] = set()
        self._task_times: list[list[float]] | None = None
        self._anywhere: list[bool] | None = None
        self._fastest: GpuOrders | None = None  # fastest_first's lists, made when first asked
        self._rounds: list[int] = view.rounds.tolist()

    @property
    def n_idle(self) -> int:
        """How many GPUs are idle."""
        return len(self._idle)

    @property
    def idle_gpus(self) -> list[int]:
        """The idle GPUs in index order (a new list each time: the caller may consume it)."""
        return list(self._idle)

    def can_run(self, n: int, m: int) -> bool:
        """Job n's task can train on GPU m (its train time there is not ``NEVER``: Hare's mark
        of a type the job cannot use, e.g. a model that does not fit the GPU's memory)."""
        return self.task_times[n][m] < NEVER

    @property
    def task_times(self) -> list[list[float]]:
        """T^c + T^s of every job's task on every GPU, as lists (``task_times[n][m]``)."""
        if self._task_times is None:
            self._task_times = (self.view.train + self.view.sync).tolist()
        return self._task_times

    def fastest_first(self, n: int) -> list[int]:
        """Job n's GPUs by task time T^c + T^s, ties by index: the order in which it takes idle
        GPUs when it wants the fastest (:class:`GpuOrders`)."""
        if self._fastest is None:
            self._fastest = GpuOrders(self.task_times)
        return self._fastest.of(n)

    @property
    def runs_anywhere(self) -> list[bool]:
        """Job n's task can train on every GPU (no ``NEVER`` in its row)."""
        if self._anywhere is None:
            self._anywhere = (self.view.train < NEVER).all(axis=1).tolist()
        return self._anywhere

    def waiting_jobs(self) -> Waiting:
        """Arrived, unfinished jobs with a ready task, in arrival order: the engine's own
        sequence, not a copy (a policy reads it and stops where it likes). Built at the first
        call, kept up to date from then on."""
        if self._waiting is None:
            self._waiting = Waiting(self.rank)
            for r in sorted(r for n, r in enumerate(self.rank) if self.ready[n] > 0):
                self._waiting.add(r)
        return self._waiting

    def partially_scheduled(self, n: int) -> bool:
        """Some tasks of the job's current round run (or ran), the rest are still waiting."""
        return self.started[n] > 0 and self.ready[n] > 0

    def total_rounds(self, n: int) -> int:
        """|R_n|: only for clairvoyant policies (others learn it when the job ends)."""
        if not self._clairvoyant and not self.done[n]:
            raise HetschedError("a non-clairvoyant policy asked for a job's number of rounds")
        return self._rounds[n]


class Policy(Protocol):
    """What the task engine asks of an online policy. A policy may subclass this to inherit the
    empty ``prepare``."""

    name: str
    clairvoyant: bool

    def prepare(self, instance: Instance, view: HareView) -> None:
        """Once, before time 0 (e.g. GPU grouping, an offline plan)."""

    def assign(self, state: SimState) -> list[tuple[int, int]]:
        """(job, idle GPU) pairs: start one ready task of the job on the GPU, in this order."""


@dataclass
class SimResult:
    policy: str
    schedule: TaskSchedule
    completion: dict[str, float]  # C_n as the engine saw it
    first_start: dict[str, float]
    events: list[tuple[float, str, str, int, int, str]] = field(
        default_factory=list
    )  # (t, kind, job, round, task, gpu)
    validation: ValidationReport | None = None
    decisions: int = 0


def _rounds_and_tasks(job: np.ndarray, view: HareView) -> tuple[np.ndarray, np.ndarray]:
    """Round and task of every start, in the order the engine made them: job n's i-th start is
    task i mod |D_r| of round i div |D_r| (the engine numbers a round's tasks as they start, and
    starts no task of round r + 1 before every task of round r)."""
    order = np.argsort(job, kind="stable")
    counts = np.bincount(job, minlength=view.n_jobs)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    index = np.empty(len(job), dtype=np.int64)
    index[order] = np.arange(len(job)) - np.repeat(first, counts)
    width = view.tasks_per_round[job]
    return index // width, index % width


def simulate(
    instance: Instance, policy: Policy, record_events: bool = True, check: bool = True
) -> SimResult:
    """Run ``policy`` on ``instance`` until every job completes; validate the run (see module doc).
    Refuses, before anything is built, more tasks than a schedule can hold (``refuse_large``)."""
    refuse_large(instance, "the task engine")
    with collector_paused():  # the loop's tuples and lists make no cycle
        return _simulate(instance, policy, record_events, check)


def _simulate(instance: Instance, policy: Policy, record_events: bool, check: bool) -> SimResult:
    view = hare_view(instance)
    policy.prepare(instance, view)
    state = SimState(view, getattr(policy, "clairvoyant", False))
    # the arrivals in order (ties by index), read with a cursor: the heap holds only the pending
    # train and round ends (a few per GPU and job in flight), not every job not yet arrived
    arrivals = np.argsort(view.arrival, kind="stable").tolist()
    arrival_times = [float(view.arrival[n]) for n in arrivals] + [math.inf]
    next_arrival = 0  # index into arrivals
    heap: list[tuple[float, int, int, int]] = []
    seq = 0  # insertion order: the last tie-break of events at one instant
    train, sync = view.train.tolist(), view.sync.tolist()
    width, rounds = view.tasks_per_round.tolist(), view.rounds.tolist()
    # latest train+sync end among the current round's started tasks
    round_end = [0.0] * view.n_jobs
    # the schedule's columns: job, GPU, start (4 + 4 + 8 bytes a task); a job's round and task
    # follow from the order of its starts (a round's tasks start 0, 1, ... before the next round)
    columns = (array("i"), array("i"), array("d"))
    put_job, put_gpu, put_start = (c.append for c in columns)
    events: list[tuple[float, str, str, int, int, str]] = []
    completion: dict[str, float] = {}
    decisions = 0
    jid, gid = view.job_ids, view.gpu_ids
    remaining_jobs = view.n_jobs
    ready, started, idle = state.ready, state.started, state.idle
    idle_list, arrived, rounds_done = state._idle, state.arrived, state.rounds_done
    free_at, service, first_start = state.gpu_free_at, state.service, state.first_start
    version, changed, rank = state.version, state.changed, state.rank
    n_waiting = 0  # jobs with a ready task (SimState.n_waiting, written before each decision)
    pop, push = heapq.heappop, heapq.heappush
    while heap or next_arrival < len(arrivals):
        now = arrival_times[next_arrival]
        if heap and heap[0][0] < now:
            now = heap[0][0]
        state.now = now
        waiting = state._waiting  # None until a policy reads the arrival order
        while arrival_times[next_arrival] == now:  # every event of this instant, arrivals first
            x = arrivals[next_arrival]
            next_arrival += 1
            arrived[x] = True
            ready[x] = width[x]
            n_waiting += 1
            if waiting is not None:
                waiting.add(rank[x])
            version[x] += 1  # the job's observable state changed
            changed.add(x)
            if record_events:
                events.append((now, "arrival", jid[x], 0, 0, ""))
        while heap and heap[0][0] == now:  # then train ends, then round ends
            _, kind, _, x = pop(heap)
            if kind == TRAIN_END:
                idle[x] = True
                insort(idle_list, x)
            else:  # ROUND_END
                n = x
                done = rounds_done[n] = rounds_done[n] + 1
                started[n] = 0
                version[n] += 1
                changed.add(n)
                if record_events:
                    events.append((now, "round_end", jid[n], done - 1, 0, ""))
                if done == rounds[n]:
                    state.done[n] = True
                    completion[jid[n]] = now
                    remaining_jobs -= 1
                    if record_events:
                        events.append((now, "complete", jid[n], done, 0, ""))
                else:
                    ready[n] = width[n]
                    n_waiting += 1
                    if waiting is not None:
                        waiting.add(rank[n])
        if not n_waiting or not idle_list:
            continue
        state.n_waiting = n_waiting
        decided = policy.assign(state)
        changed.clear()
        waiting = state._waiting
        for n, m in decided:
            n, m = int(n), int(m)
            if not idle[m]:
                raise HetschedError(
                    f"policy {policy.name} started a task on busy GPU {gid[m]} at t={now}"
                )
            if ready[n] <= 0:  # (a job has ready tasks only once it arrived)
                raise HetschedError(
                    f"policy {policy.name} picked job {jid[n]} with no ready task at t={now}"
                )
            tc = train[n][m]
            if tc >= NEVER:
                raise HetschedError(
                    f"policy {policy.name} put a task of {jid[n]} on GPU {gid[m]}, where it cannot "
                    f"run (train time NEVER), at t={now}"
                )
            idle[m] = False
            idle_list.remove(m)
            free_at[m] = end = now + tc
            task = started[n]
            started[n] = task + 1
            left = ready[n] = ready[n] - 1
            service[n] += tc
            version[n] += 1
            changed.add(n)
            if not task and first_start[n] != first_start[n]:  # NaN: the job's first task
                first_start[n] = now
            finish = end + sync[n][m]
            if not task or finish > round_end[n]:
                round_end[n] = finish
            put_job(n)
            put_gpu(m)
            put_start(now)
            if record_events:
                events.append((now, "start", jid[n], rounds_done[n], task, gid[m]))
            push(heap, (end, TRAIN_END, seq, m))
            seq += 1
            if not left:  # the whole round is placed: its barrier time is known
                n_waiting -= 1
                if waiting is not None:
                    waiting.remove(rank[n])
                push(heap, (round_end[n], ROUND_END, seq, n))
                seq += 1
            decisions += 1
    if remaining_jobs:
        raise HetschedError(
            f"policy {policy.name} left {remaining_jobs} job(s) unfinished with no event pending"
        )
    job, gpu, start = (np.frombuffer(c, dtype=c.typecode) for c in columns)
    schedule = TaskSchedule(
        jid,
        gid,
        job,
        *_rounds_and_tasks(job, view),
        gpu,
        start,
        instance.name,
        instance_hash(instance),
    )
    result = SimResult(
        policy.name,
        schedule,
        completion,
        {jid[n]: state.first_start[n] for n in range(view.n_jobs)},
        events,
        None,
        decisions,
    )
    if check:
        report = validate(instance, schedule)
        result.validation = report
        if not report.valid:
            raise HetschedError(
                f"simulated run of {policy.name} is invalid: {report.violations[:3]}"
            )
        for j, c in completion.items():
            if abs(report.completion[j] - c) > 1e-6 * max(1.0, c):
                raise HetschedError(
                    f"engine and validator disagree on C({j}): {c} vs {report.completion[j]}"
                )
    return result
