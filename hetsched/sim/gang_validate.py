"""The independent validator of a job-level (gang) run: a list of segments (job, start, end,
GPUs), each a stretch of time during which the job held exactly those GPUs.

From the instance's gang data (:func:`hetsched.sim.gang_model.gang_jobs`) alone it checks

* ``unknown``: the job and GPUs exist; ``bad_interval``: start < end, finite;
* ``arrival``: no segment starts before the job arrives;
* ``gang``: the segment holds exactly s_j distinct GPUs, on types the job can run on (X > 0),
  or, where the workload lets jobs run resized, a run it allows (:meth:`GangJobs.run_rate` > 0:
  one type, a GPU count and row the table measured);
* ``overlap``: no GPU is held by two segments at once (double booking), unless the two jobs are
  *packed*: they hold the same GPUs, and the pair may share them (:meth:`GangJobs.pair_rate` > 0
  both ways, one GPU type); never three at once;
* ``progress`` (work conservation): a segment that *resumes* the job -- it ran before and its
  previous segment ended earlier or on other GPUs -- first spends the checkpoint-restore delay;
  then the job progresses at min_r X_j^r of its GPUs (its resized rate for a resized run), or
  at its pair rate while a packed partner holds the same GPUs. A change of row is a resume too. The job completes exactly when its work
  W_j is done: its last segment must end there, and no earlier segment may already finish it;
* ``incomplete``: every job completes;
* on Harmony's workloads (``metadata.placement``, :mod:`hetsched.sim.gang_interference`), which
  need the round length: ``interference``, each round's parameter servers (their number) and
  every server's CPU and bandwidth; the speed of every job in a round is recomputed from the
  servers the round's segments hold tasks on (``slow``, ``comm``, ``f_min``) and applied to the
  progress above.

It recomputes every completion time C_j and the GPU-seconds held (a GPU two packed jobs share
counts once), and returns every violation.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from hetsched.core.collector import collector_paused
from hetsched.core.errors import InputError
from hetsched.core.reports import Violation
from hetsched.instance.model import Instance
from hetsched.sim.gang_interference import interference_of
from hetsched.sim.gang_model import gang_jobs


class Segment(NamedTuple):
    """A stretch of time [start, end) during which ``job`` held exactly ``gpus`` (a tuple: a run
    makes one per job per move, hundreds of thousands on a long trace)."""

    job: str
    start: float
    end: float
    gpus: tuple[str, ...]
    row: str | None = None  # the table row of a resized run (None: the job's own)
    ps: tuple[str, ...] = ()  # the servers of its parameter servers (Harmony's workloads)


@dataclass
class GangReport:
    valid: bool
    completion: dict[str, float] = field(default_factory=dict)
    first_start: dict[str, float] = field(default_factory=dict)
    busy_gpu_seconds: float = 0.0
    restores: int = 0
    violations: list[Violation] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "valid": self.valid,
            "completion": self.completion,
            "busy_gpu_seconds": self.busy_gpu_seconds,
            "restores": self.restores,
            "violations": [{"kind": v.kind, "message": v.message} for v in self.violations],
        }


def validate_gang(
    instance: Instance,
    segments: list[Segment],
    restore_seconds: float,
    round_seconds: float | None = None,
) -> GangReport:
    """Check a gang run and recompute the completions (module docstring)."""
    with collector_paused():  # a few objects per segment, none in a cycle
        return _validate(instance, segments, restore_seconds, round_seconds)


def _validate(
    instance: Instance,
    segments: list[Segment],
    restore_seconds: float,
    round_seconds: float | None,
) -> GangReport:
    data = gang_jobs(instance)
    harmony = interference_of(instance)
    if harmony is not None and round_seconds is None:
        raise InputError(
            instance.name, "$.metadata.placement", "Harmony's speed model needs the round length"
        )
    jobs = {jid: j for j, jid in enumerate(data.job_ids)}
    gpus = {gid: g for g, gid in enumerate(data.gpu_ids)}
    rows, type_of = data.rows, data.type_of  # throughput[j][type], type of each GPU
    bad: list[Violation] = []
    by_job: dict[int, list[tuple[int, Segment, list[int]]]] = defaultdict(list)  # (i, s, GPUs)
    by_gpu: dict[int, list[tuple[float, float, int]]] = defaultdict(list)
    shares: dict[int, list[tuple]] = defaultdict(
        list
    )  # segment -> (from, to, partner, its segment)
    busy = 0.0
    arrival, gang = data.arrival.tolist(), data.gang_sizes  # read segment by segment
    for i, s in enumerate(segments):
        if s.job not in jobs or any(g not in gpus for g in s.gpus):
            bad.append(Violation("unknown", f"segment {s}: unknown job or GPU"))
            continue
        if not (math.isfinite(s.start) and math.isfinite(s.end) and s.start < s.end):
            bad.append(
                Violation(
                    "bad_interval", f"{s.job}: segment [{s.start}, {s.end}) is empty or not finite"
                )
            )
            continue
        j = jobs[s.job]
        if s.start < arrival[j] - _slack(arrival[j]):
            bad.append(
                Violation("arrival", f"{s.job} runs at {s.start} before it arrives at {arrival[j]}")
            )
        idx = [gpus[g] for g in s.gpus]
        distinct = set(idx)
        resized = s.row is not None or len(idx) != gang[j]
        if len(distinct) != len(idx) or (resized and data.resize == "none"):
            bad.append(
                Violation(
                    "gang",
                    f"{s.job} holds {len(distinct)} distinct GPUs at {s.start}, its gang is {gang[j]}",
                )
            )
        elif not idx or any(rows[j][type_of[g]] <= 0 for g in idx):
            bad.append(
                Violation("gang", f"{s.job} holds a GPU of a type it cannot run on at {s.start}")
            )
        elif resized and data.run_rate(j, idx, s.row) <= 0:
            bad.append(
                Violation(
                    "gang",
                    f"{s.job} runs as {len(idx)} GPUs of row {s.row or data.models[j]!r} at "
                    f"{s.start}, which the workload does not allow or the table did not measure",
                )
            )
        by_job[j].append((i, s, idx))
        for g in distinct:
            by_gpu[g].append((s.start, s.end, i))
        busy += len(distinct) * (s.end - s.start)
    for g, spans in by_gpu.items():
        spans.sort()
        earlier = [0] * len(spans)  # how many earlier spans still hold the GPU as each starts
        for k, (a0, a1, ia) in enumerate(spans):
            ends = a1 - _slack(a1)
            for b in range(k + 1, len(spans)):  # the spans that start before a ends (no copy)
                b0, b1, ib = spans[b]
                if b0 >= ends:
                    break
                earlier[b] += 1
                sa, sb = segments[ia], segments[ib]
                if not _may_share(data, jobs, gpus, sa, sb):
                    bad.append(
                        Violation(
                            "overlap",
                            f"GPU {data.gpu_ids[g]} held by {sa.job} until {a1} and by {sb.job} "
                            f"from {b0}",
                        )
                    )
                elif g == min(gpus[x] for x in sa.gpus):  # once per pair of segments
                    lo, hi = b0, min(a1, b1)
                    shares[ia].append((lo, hi, jobs[sb.job], sb))
                    shares[ib].append((lo, hi, jobs[sa.job], sa))
                    busy -= len(sa.gpus) * (hi - lo)  # a shared GPU is busy once
        # three at once: a span that starts while two earlier ones hold the GPU (the first)
        third = next((b for b, n in enumerate(earlier) if n > 1), None)
        if third is not None:
            t = spans[third][0]
            bad.append(Violation("overlap", f"GPU {data.gpu_ids[g]} held by three jobs at {t}"))
    speed = (
        _harmony_speeds(data, harmony, jobs, gpus, segments, round_seconds, bad)
        if harmony is not None
        else None
    )
    completion: dict[str, float] = {}
    first: dict[str, float] = {}
    restores = 0
    for j, jid in enumerate(data.job_ids):
        segs = sorted(by_job.get(j, []), key=lambda e: e[1].start)
        if not segs:
            bad.append(Violation("incomplete", f"{jid} never runs"))
            continue
        first[jid] = segs[0][1].start
        done, work = 0.0, float(data.work[j])
        for k, (i, s, idx) in enumerate(segs):
            before = segs[k - 1][1] if k else None
            resumed = before is not None and (
                abs(before.end - s.start) > _slack(s.start)
                or (before.gpus != s.gpus and set(before.gpus) != set(s.gpus))
                or before.row != s.row
                or (before.ps != s.ps and sorted(before.ps) != sorted(s.ps))
            )
            delay = restore_seconds if resumed else 0.0
            restores += resumed
            rate = data.run_rate(j, idx, s.row) if idx else 0.0
            if done >= work * (1 - 1e-9):
                bad.append(
                    Violation("progress", f"{jid} holds GPUs from {s.start} after its work is done")
                )
                break
            r = type_of[idx[0]] if idx else 0
            pieces = _pieces(
                s.start + delay,
                s.end,
                rate,
                [
                    (lo, hi, data.pair_rate(j, p, r, len(idx), (s.row, mate.row)))
                    for lo, hi, p, mate in shares.get(i, [])
                ],
            )
            if speed is not None:  # Harmony's model: the round's factor on every piece
                pieces = [
                    (max(a, k * round_seconds), min(b, (k + 1) * round_seconds), v * f)
                    for a, b, v in pieces
                    for k, f in speed.get(i, [])
                    if min(b, (k + 1) * round_seconds) > max(a, k * round_seconds)
                ]
            finish = None
            for a, b, v in pieces:
                if v > 0 and done + v * (b - a) >= work * (1 - 1e-9):
                    finish, done = a + (work - done) / v, work
                    break
                done += v * (b - a)
            if finish is not None:
                if k < len(segs) - 1 or abs(finish - s.end) > _slack(s.end):
                    bad.append(
                        Violation(
                            "progress",
                            f"{jid} finishes its work at {finish:.9g} but holds GPUs until "
                            f"{s.end:.9g}" + (" and runs again later" if k < len(segs) - 1 else ""),
                        )
                    )
                completion[jid] = finish
        if jid not in completion and done < work * (1 - 1e-9):
            bad.append(
                Violation("incomplete", f"{jid} does {done:.6g} of its {work:.6g} units of work")
            )
    return GangReport(not bad, completion, first, busy, restores, bad)


def _slack(time: float) -> float:
    """How far two float times may differ and still be the same instant: 1e-9 relative to the
    time compared. Relative to that time, not to the run's horizon: similarity:pack on 100,000
    jobs ends at 4.5e7 s, and 1e-7 of that (the old slack, 4.5 s) hid a packed partner that
    joined 1.9 s before a job completed."""
    return 1e-9 * max(1.0, abs(time))


def _may_share(data, jobs: dict, gpus: dict, a: Segment, b: Segment) -> bool:
    """Two segments overlapping on a GPU are a legal packed pair (module docstring)."""
    ja, jb = jobs[a.job], jobs[b.job]
    if ja == jb or (a.gpus != b.gpus and set(a.gpus) != set(b.gpus)):
        return False
    type_of = data.type_of
    r, n = type_of[gpus[a.gpus[0]]], len(a.gpus)
    if n > 1 and any(type_of[gpus[g]] != r for g in a.gpus):
        return False
    return (
        data.pair_rate(ja, jb, r, n, (a.row, b.row)) > 0
        and data.pair_rate(jb, ja, r, n, (b.row, a.row)) > 0
    )


def _pieces(
    start: float, end: float, solo: float, shared: list[tuple[float, float, float]]
) -> list[tuple[float, float, float]]:
    """[start, end) cut into (from, to, rate): ``solo`` except inside the shared spans (disjoint:
    at most one partner at a time), which carry their own rate."""
    if not shared:  # the common case: alone throughout
        return [(start, end, solo)] if end > start else []
    out, t = [], start
    for lo, hi, v in sorted(shared):
        lo, hi = max(lo, start), min(hi, end)
        if hi <= lo:
            continue
        if lo > t:
            out.append((t, lo, solo))
        out.append((max(lo, t), hi, v))
        t = max(t, hi)
    if end > t:
        out.append((t, end, solo))
    return out


def _harmony_speeds(data, model, jobs, gpus, segments, L: float, bad: list) -> dict[int, list]:
    """Segment -> [(round k, the job's speed factor in k)] on Harmony's workloads, recomputed
    from the segments that hold the start of each round (module docstring); capacity and
    parameter-server violations go to ``bad``."""
    servers = {sid: h for h, sid in enumerate(data.servers)}
    rounds: dict[int, list[int]] = defaultdict(list)  # round -> segments that hold its start
    for i, s in enumerate(segments):
        if s.job not in jobs or not (math.isfinite(s.start) and s.start < s.end):
            continue
        k0 = round(s.start / L)
        if abs(s.start - k0 * L) > 1e-7 * max(1.0, s.start) or any(h not in servers for h in s.ps):
            bad.append(
                Violation(
                    "interference",
                    f"{s.job}: a segment off the round grid at {s.start}"
                    " or a parameter server on an unknown server",
                )
            )
            continue
        for k in range(k0, max(k0 + 1, math.ceil(s.end / L - 1e-9))):
            rounds[k].append(i)
    out: dict[int, list] = defaultdict(list)
    for k, held in sorted(rounds.items()):
        on: dict[int, set[int]] = {}
        used = np.zeros_like(model.capacity)
        for i in held:
            s, j = segments[i], jobs[segments[i].job]
            workers = [int(data.gpu_server[gpus[g]]) for g in s.gpus if g in gpus]
            ps = [servers[h] for h in s.ps]
            if len(ps) != model.parameter_servers[j]:
                bad.append(
                    Violation(
                        "interference",
                        f"{s.job} runs with {len(ps)} parameter "
                        f"servers in round {k}; it has {model.parameter_servers[j]}",
                    )
                )
            for h in workers:
                used[h] += model.worker_demand[j]
            for h in ps:
                used[h] += model.ps_demand[j]
            on[i] = set(workers) | set(ps)
        for h, r in zip(*np.nonzero(used > model.capacity + 1e-9)):
            bad.append(
                Violation(
                    "interference",
                    f"round {k}: server {data.servers[h]} uses "
                    f"{used[h, r]:g} {model.resources[r]} of {model.capacity[h, r]:g}",
                )
            )
        by_server: dict[int, list[int]] = defaultdict(list)  # server -> the round's jobs on it
        for i in held:
            for h in on[i]:
                by_server[h].append(jobs[segments[i].job])
        for i in held:
            j = jobs[segments[i].job]
            row = model.table[model.model_of[j]]
            slow = max(
                (sum(row[model.model_of[o]] for o in by_server[h] if o != j) for h in on[i]),
                default=0.0,
            )
            comm = model.communication[j] * (len(on[i]) - 1)
            out[i].append((k, max(model.min_speed_fraction, 1.0 - slow - comm)))
    return out
