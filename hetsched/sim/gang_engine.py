"""A round-based simulator of gang-scheduled jobs (Gavel's and Hadar's model, Sec. 5 of Gavel;
Sec. III of Hadar); the data model is :mod:`hetsched.sim.gang_model`.

Time runs in scheduling rounds of ``round_seconds`` (Gavel's and Hadar's 6 minutes by default).
At each round boundary the engine admits the jobs that have arrived, and the policy returns the
GPUs every job holds during the next round (a gang of exactly s_j GPUs, or nothing: the job
waits or is preempted). A job that resumes -- it ran before, and its previous round ran on other
GPUs or it was paused -- first spends ``restore_seconds`` restoring its checkpoint (Hadar: 10 s);
a job that keeps its GPUs runs on. A job whose work ends inside a round frees its GPUs then;
they stay idle until the next boundary (reallocation happens at boundaries only, as in Gavel's
simulator). When no job is active the engine jumps to the first boundary after the next arrival.

Events recorded: arrival, start/resume (with the restore delay), preemption, completion. The run
is a list of :class:`~hetsched.sim.gang_validate.Segment`; the independent validator
(:func:`~hetsched.sim.gang_validate.validate_gang`) checks it and recomputes every completion,
and :func:`simulate_gang` fails loudly if they disagree with the engine's.

Two conventions (``convention``):

* ``"hetsched"`` (default): round k spans [kL, (k+1)L]; a job progresses continuously.
* ``"gavel"``: the timing of Gavel's own simulator (``Scheduler.simulate`` in its ``scheduler.py``). A job
  placed in a round runs floor(X L) whole steps (at least one, at most what it has left) and
  stops after steps / X seconds; the next round starts when the round's last job stops, and the
  jobs that arrived by then join it. An empty cluster jumps to the next arrival, not to a
  multiple of L. There is no checkpoint-restore delay (``restore_seconds`` must be 0).
  Policies see the convention in ``GangState.convention``; the ``gavel``
  policy then follows Gavel's mechanism (:mod:`hetsched.sim.gang_policies.gavel_mechanism`).

Packing: a plan may give two jobs the same gang when the pair may share it
(:meth:`~hetsched.sim.gang_model.GangJobs.pair_rate`); both then progress at their pair rates
while both hold it, and the survivor at its own rate once the other completes (its GPUs are
then its alone until the boundary; :mod:`hetsched.sim.gang_packing`). Under the ``hetsched``
convention only.

Resized runs (another GPU count or batch size, where ``metadata.gang.resize`` allows it): a plan
entry may be a :class:`~hetsched.sim.gang_model.Run` naming the row; a change of row is a move
(restore). Harmony's workloads (``metadata.placement``): each round's parameter servers,
per-server CPU and bandwidth and the interference and communication factors come from
:func:`~hetsched.sim.gang_interference.round_speeds`; a move of parameter servers is a move too.

Non-clairvoyance: a policy learns a job's remaining work only if it declares ``clairvoyant``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterator, Protocol

import numpy as np

from hetsched.core.collector import collector_paused
from hetsched.core.errors import HetschedError, InputError
from hetsched.gavel.conventions import CONVENTIONS as ALLOCATION_CONVENTIONS
from hetsched.instance.model import Instance
from hetsched.sim.gang_checks import check_moved, check_plan
from hetsched.sim.gang_interference import interference_of, round_speeds
from hetsched.sim.gang_model import GangJobs, Run, gang_jobs, plan_runs
from hetsched.sim.gang_packing import PairRates, packed_round
from hetsched.sim.gang_validate import GangReport, Segment, validate_gang

IDLE_LIMIT = (
    1000  # consecutive rounds in which a policy runs nothing while jobs wait: a stuck policy
)
# the engine's timing conventions carry the allocation conventions' names (module doc)
CONVENTIONS = ALLOCATION_CONVENTIONS


class GangState:
    """What a policy observes at a round boundary (jobs j and GPUs g by index)."""

    def __init__(
        self, jobs: GangJobs, clairvoyant: bool, round_seconds: float, restore_seconds: float
    ):
        self.jobs = jobs
        self._clairvoyant = clairvoyant
        self.round_seconds = round_seconds
        self.restore_seconds = restore_seconds
        self.now = 0.0
        self.round = 0
        n = jobs.n_jobs
        # per job, as Python lists (read and written one job at a time, each round)
        self.arrived = [False] * n
        self.done = [False] * n
        self.attained = [0.0] * n  # GPU-seconds held so far (Tiresias' attained service)
        self.executed = [0.0] * n  # seconds the job has held its gang
        self.rounds_run = [0] * n
        self.held: dict[
            int, tuple[int, ...]
        ] = {}  # GPUs of the previous round, for jobs that run on
        self.held_rows: dict[int, str] = {}  # the rows of those that ran resized (a Run's row)
        self.held_ps: dict[int, tuple[int, ...]] = {}  # their parameter servers (Harmony's model)
        self.order = np.argsort(jobs.arrival, kind="stable")
        self.arrivals_pending = True  # some job has not arrived yet (Gavel's trace queue)
        self.convention = "hetsched"  # the engine's timing (module doc)
        self._remaining: list[float] = jobs.work.astype(float).tolist()
        # arrived, unfinished jobs in arrival order: an insertion-ordered dict, so that a round
        # costs the active jobs, not every job of the trace
        self._active: dict[int, None] = {}

    def active(self) -> list[int]:
        """Arrived, unfinished jobs in arrival order (ties by index)."""
        return list(self._active)

    def active_in_order(self) -> Iterator[int]:
        """The same jobs, read lazily (no copy of a long backlog): for a policy that stops early.
        Valid during ``allocate`` (the engine admits and finishes jobs between rounds)."""
        return iter(self._active)

    def n_active(self) -> int:
        """How many jobs are active (arrived, unfinished)."""
        return len(self._active)

    def _admit(self, j: int) -> None:  # the engine admits jobs in ``order``
        self.arrived[j] = True
        self._active[j] = None

    def _finish(self, j: int) -> None:
        self.done[j] = True
        del self._active[j]

    def remaining(self, j: int) -> float:
        """Units of work left: only for clairvoyant policies."""
        if not self._clairvoyant:
            raise HetschedError("a non-clairvoyant policy asked for a job's remaining work")
        return float(self._remaining[j])

    def remaining_of(self, jobs: list[int]) -> list[float]:
        """:meth:`remaining` of each of ``jobs``, in one call (a policy reading its whole queue
        every round)."""
        if not self._clairvoyant:
            raise HetschedError("a non-clairvoyant policy asked for a job's remaining work")
        left = self._remaining
        return [left[j] for j in jobs]


class GangPolicy(Protocol):
    name: str
    clairvoyant: bool

    def prepare(self, instance: Instance, jobs: GangJobs) -> None:
        """Once, before time 0."""

    def allocate(self, state: GangState) -> dict[int, tuple[int, ...] | Run]:
        """Job -> the GPUs it holds during the next round (jobs left out wait), or a
        :class:`~hetsched.sim.gang_model.Run` where the workload lets it run resized."""


@dataclass
class GangSimResult:
    policy: str
    segments: list[Segment]
    completion: dict[str, float]
    first_start: dict[str, float]
    events: list[tuple[float, str, str, str]] = field(
        default_factory=list
    )  # (t, kind, job, detail)
    validation: GangReport | None = None
    rounds: int = 0
    preemptions: int = 0
    round_seconds: float = 360.0
    restore_seconds: float = 10.0


def simulate_gang(
    instance: Instance,
    policy: GangPolicy,
    round_seconds: float = 360.0,
    restore_seconds: float = 10.0,
    record_events: bool = True,
    check: bool = True,
    convention: str = "hetsched",
) -> GangSimResult:
    """Run ``policy`` round by round until every job completes; validate the run (module doc)."""
    with collector_paused():  # the rounds' dicts, tuples and lists make no cycle
        return _simulate_gang(
            instance, policy, round_seconds, restore_seconds, record_events, check, convention
        )


def _simulate_gang(
    instance: Instance,
    policy: GangPolicy,
    round_seconds: float,
    restore_seconds: float,
    record_events: bool,
    check: bool,
    convention: str,
) -> GangSimResult:
    if convention not in CONVENTIONS:
        raise InputError(
            "simulate", "convention", f"one of {', '.join(CONVENTIONS)}, not {convention!r}"
        )
    if convention == "gavel" and restore_seconds:
        raise InputError(
            "simulate",
            "restore_seconds",
            "Gavel's convention has no checkpoint-restore delay (its simulator has none); use 0",
        )
    if not (round_seconds > 0 and math.isfinite(round_seconds)):
        raise InputError(
            "simulate", "round_seconds", f"must be a positive number (got {round_seconds})"
        )
    if not (0 <= restore_seconds < round_seconds):
        raise InputError(
            "simulate",
            "restore_seconds",
            f"must be >= 0 and < the round ({round_seconds} s), got {restore_seconds}",
        )
    harmony = interference_of(instance)  # Harmony's speed model, where the workload has it
    data = gang_jobs(instance)
    if convention == "gavel" and harmony is not None:
        raise InputError(
            instance.name,
            "$.metadata.placement",
            "Harmony's interference model runs under the hetsched convention only (fixed rounds)",
        )
    policy.prepare(instance, data)
    state = GangState(data, getattr(policy, "clairvoyant", False), round_seconds, restore_seconds)
    L = round_seconds
    open_seg: dict[int, int] = {}  # job -> index of its run that ends at the current boundary
    events: list[tuple[float, str, str, str]] = []
    completion: dict[str, float] = {}
    first_start: dict[str, float] = {}
    ran_before = [False] * data.n_jobs
    # each job's runs of consecutive rounds on the same GPUs, extended round by round and made
    # Segments at the end, in columns: job, start, end, GPU ids, row, parameter-server servers
    # (a list per field, not one per run: a long trace has a million runs, and fewer objects keep
    # the garbage collector's passes short); the ids of a gang's GPUs are one shared tuple
    run_job: list[str] = []
    run_start: list[float] = []
    run_end: list[float] = []
    run_gpus: list[tuple[str, ...]] = []
    run_row: list[str | None] = []
    run_ps: list[tuple[str, ...]] = []
    ids_of: dict[tuple[int, ...], tuple[str, ...]] = {}
    # job -> (GPUs, row, rate) of its last run: the rate is worked out again only when they change
    rate_of: dict[int, tuple[tuple[int, ...], str | None, float]] = {}
    pair_rates = PairRates(data)  # the packed pairs' rates, kept while a pair runs on
    pending = [int(j) for j in state.order]
    nxt = 0
    left = data.n_jobs
    k = 0
    gavel = convention == "gavel"
    state.convention = convention
    t = float(data.arrival[pending[0]]) if gavel and pending else 0.0
    preemptions = 0
    idle_rounds = 0
    while left:
        if not gavel:
            t = k * L
        state.now, state.round = t, k
        while nxt < len(pending) and data.arrival[pending[nxt]] <= t + 1e-9:
            j = pending[nxt]
            state._admit(j)
            nxt += 1
            if record_events:
                events.append((float(data.arrival[j]), "arrival", data.job_ids[j], ""))
        state.arrivals_pending = nxt < len(pending)
        if not state._active:
            if nxt >= len(pending):
                raise HetschedError("no active job and no arrival left, yet jobs are unfinished")
            if gavel:
                t, k = float(data.arrival[pending[nxt]]), k + 1
            else:
                k = max(k + 1, int(math.ceil(data.arrival[pending[nxt]] / L - 1e-12)))
            state.held, state.held_rows, state.held_ps = {}, {}, {}
            open_seg = {}
            continue
        plan, rows, given = plan_runs(policy.allocate(state), data)
        checked: dict[int, float] = {}  # the rates of the runs the check worked out
        # the short path (run_on below) where every rate is the job's own and nothing is shared
        plain = not gavel and harmony is None and not rows and not state.held_rows
        if plain and check_moved(plan, state, data, policy, pair_rates, checked):
            pairs = {}
        else:
            plain, pairs = False, check_plan(plan, rows, state, data, policy, pair_rates, checked)
        factor, ps = round_speeds(plan, given, data, harmony, policy.name, t)
        idle_rounds = idle_rounds + 1 if not plan else 0
        if idle_rounds > IDLE_LIMIT:
            raise HetschedError(
                f"policy {policy.name} left every GPU idle for {IDLE_LIMIT} rounds with "
                f"{left} job(s) waiting (t={t})"
            )
        for j in list(state.held):
            if j not in plan:
                preemptions += 1
                if record_events:
                    events.append((t, "preempt", data.job_ids[j], ""))
        held: dict[int, tuple[int, ...]] = {}
        new_open: dict[int, int] = {}
        stops: dict[int, float] = {}  # Gavel's convention: when each job of the round stops
        held_before, rows_before, ps_before = state.held, state.held_rows, state.held_ps
        same_gpus: dict[int, bool] = {}  # the job runs on as it ran: no restore
        delays: dict[int, float] = {}
        if plain:  # the jobs that run on and do not complete, advanced in one short loop
            slow = run_on(plan, state, open_seg, rate_of, run_end, held, new_open, t, L)
        else:
            slow = sorted(plan)
        for j in slow:
            g = plan[j]
            was = held_before.get(j)
            same = (
                j in open_seg
                and was is not None
                and (was == g or set(was) == set(g))
                and rows.get(j) == rows_before.get(j)
                and ps.get(j) == ps_before.get(j)
            )
            same_gpus[j] = same
            delays[j] = restore_seconds if ran_before[j] and not same else 0.0
        finish: dict[int, tuple[float, float, bool]] = {}  # packed: (end, progress, completes)
        remaining, job_ids = state._remaining, data.job_ids
        attained, executed, rounds_run = state.attained, state.executed, state.rounds_run
        for pair, rates in pairs.items():
            finish.update(packed_round(remaining, data, plan, rows, delays, t, L, pair, rates))
        for j in slow:
            gpus = plan[j]
            same, delay, row = same_gpus[j], delays[j], rows.get(j)
            known = rate_of.get(j)
            if known is not None and known[0] == gpus and known[1] == row:
                gpus, base = known[0], known[2]  # the run the rate was worked out for
            else:
                gpus = tuple(int(g) for g in gpus)
                base = checked.get(j)
                if base is None:
                    base = data.run_rate(j, gpus, row)
                rate_of[j] = (gpus, row, base)
            rate = base * factor.get(j, 1.0)
            progress = rate * (L - delay)
            if gavel:  # whole steps, as Gavel's simulator counts them
                progress = max(1.0, math.floor(progress * (1 + 1e-12)))
            if not ran_before[j]:
                first_start[job_ids[j]] = t
            if not same:
                ids = ids_of.get(gpus)
                if ids is None:
                    ids = ids_of[gpus] = tuple(data.gpu_ids[g] for g in sorted(gpus))
                if record_events:
                    events.append(
                        (
                            t,
                            "resume" if ran_before[j] else "start",
                            job_ids[j],
                            f"{','.join(ids)} restore {delay:g}s" if delay else ",".join(ids),
                        )
                    )
            if same and j in open_seg:  # the job runs on: extend its run
                idx = open_seg[j]
            else:
                idx = len(run_job)
                run_job.append(job_ids[j])
                run_start.append(t)
                run_end.append(t)
                run_gpus.append(ids)
                run_row.append(row)
                run_ps.append(tuple(data.servers[h] for h in ps.get(j, ())))
            packed = finish.get(j)  # worked out with its partner
            if packed is not None:
                end, progress, done_now = packed
            if packed is not None and not done_now:
                remaining[j] -= progress
                held[j] = gpus
                new_open[j] = idx
            elif packed is not None or remaining[j] <= progress * (1 + 1e-12):
                end = end if packed is not None else t + delay + remaining[j] / rate
                remaining[j] = 0.0
                state._finish(j)
                del rate_of[j]  # done: its rate is not asked again
                left -= 1
                completion[job_ids[j]] = end
                if record_events:
                    events.append((end, "complete", job_ids[j], ""))
            else:
                end = t + delay + progress / rate if gavel else t + L
                remaining[j] -= progress
                held[j] = gpus
                new_open[j] = idx
            if gavel:
                stops[j] = end
            run_end[idx] = end
            ran_before[j] = True
            attained[j] += len(gpus) * (end - t)
            executed[j] += end - t
            rounds_run[j] += 1
        if plain and slow:  # the jobs of the short loop came first: the round's order is by job
            held = dict(sorted(held.items()))
        state.held = held
        state.held_rows = {j: rows[j] for j in held if j in rows} if rows else {}
        state.held_ps = {j: ps[j] for j in held if j in ps} if ps else {}
        open_seg = new_open
        k += 1
        if gavel:
            if stops:
                t = max(stops.values())
                # a job runs on in the same segment only if it ran up to the round's end
                open_seg = {j: i for j, i in new_open.items() if stops[j] >= t - 1e-9}
            elif nxt < len(pending):
                t = float(data.arrival[pending[nxt]])
    segments = list(map(Segment, run_job, run_start, run_end, run_gpus, run_row, run_ps))
    result = GangSimResult(
        policy.name,
        segments,
        completion,
        first_start,
        events,
        rounds=k,
        preemptions=preemptions,
        round_seconds=L,
        restore_seconds=restore_seconds,
    )
    if check:
        report = validate_gang(instance, segments, restore_seconds, round_seconds)
        result.validation = report
        if not report.valid:
            raise HetschedError(
                f"policy {policy.name}: the gang validator rejects the run: "
                + "; ".join(v.message for v in report.violations[:5])
            )
        for jid, c in completion.items():
            if abs(report.completion[jid] - c) > 1e-6 * max(1.0, c):
                raise HetschedError(
                    f"engine and validator disagree on {jid}'s completion: {c} vs {report.completion[jid]}"
                )
    return result


def run_on(
    plan: dict[int, tuple[int, ...]],
    state: GangState,
    open_seg: dict[int, int],
    rate_of: dict[int, tuple[tuple[int, ...], str | None, float]],
    run_end: list[float],
    held: dict[int, tuple[int, ...]],
    new_open: dict[int, int],
    t: float,
    L: float,
) -> list[int]:
    """The round of every job of ``plan`` that runs on as it ran (the same GPUs in the same
    order, its own rate, no restore) and does not complete in it: the same arithmetic as the
    round's loop, in one short loop. Fills ``held`` and ``new_open`` for them and returns the
    other jobs, by index, for the round's loop."""
    slow = []
    held_before = state.held
    remaining, attained, executed, rounds_run = (
        state._remaining,
        state.attained,
        state.executed,
        state.rounds_run,
    )
    end = t + L
    span = end - t
    for j in sorted(plan):
        was = held_before.get(j)
        known = rate_of.get(j)
        if was is None or known is None or known[0] is not was or plan[j] != was:
            slow.append(j)
            continue
        progress = known[2] * L  # the loop's rate * factor * (L - delay): factor 1, delay 0
        if remaining[j] <= progress * (1 + 1e-12):
            slow.append(j)  # completes: the loop records it
            continue
        remaining[j] -= progress
        held[j] = was
        idx = new_open[j] = open_seg[j]
        run_end[idx] = end
        attained[j] += len(was) * span
        executed[j] += span
        rounds_run[j] += 1
    return slow
