"""Harmony's interval-driven setting (ToN'22, Secs. IV and VII.B) simulated: time is divided
into scheduling intervals (20 minutes); at each boundary the jobs that arrived and still wait
are placed next to the running ones, which never move; a placed job trains at the speed of
the speed model (:mod:`hetsched.placement.problem`) until its epochs are done.

Assumptions (stated because the paper's testbed answers them by measurement): speeds are
recomputed at each boundary and constant inside an interval; a job that finishes inside an
interval completes at that moment (linear progress) but its resources are given back at the
next boundary, when the scheduler runs. Every interval's placement goes through the
independent check; a policy that returns an invalid one stops the run with an error.

Metrics, as the papers use them: average and median job completion time, makespan, waiting
time (arrival to placement) and GPU utilization (GPU-time held by placed jobs over
GPUs x makespan), in intervals and minutes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from hetsched.errors import HetschedError
from hetsched.instance.model import Instance
from hetsched.placement import data
from hetsched.placement.generate import make_instance, random_jobs
from hetsched.placement.methods import HEURISTICS, METHODS, heuristic
from hetsched.placement.problem import Placement, PlacementView, check_placement, placement_view

INTERVAL_MINUTES = 20.0  # Sec. VII.B
POLICIES = METHODS  # every placement method is a policy of the interval simulator


@dataclass(frozen=True)
class Workload:
    """Jobs (dicts of :func:`hetsched.placement.generate.random_jobs` with ``arrival`` in
    intervals) on ``n_servers`` testbed servers."""

    name: str
    n_servers: int
    jobs: tuple[dict, ...]


def harmony_workload(
    seed: int,
    n_jobs: int = 60,
    n_servers: int = 6,
    arrivals: str = "uniform",
    rate: float | None = None,
) -> Workload:
    """Sec. VII.B: jobs from Table I, 1-3 workers, half parameter-server jobs; arrivals
    ``uniform`` (3 per interval on average: uniform times) or ``poisson`` (rate 2 per interval)."""
    rng = np.random.default_rng([seed, 11])
    jobs = random_jobs(rng, n_jobs)
    if arrivals == "uniform":
        rate = rate or 3.0
        times = np.sort(rng.uniform(0.0, n_jobs / rate, n_jobs))
    elif arrivals == "poisson":
        rate = rate or 2.0
        times = np.cumsum(rng.exponential(1.0 / rate, n_jobs))
    else:
        raise HetschedError(f"unknown arrival pattern '{arrivals}' (known: uniform, poisson)")
    for j, t in zip(jobs, times):
        j["arrival"] = float(t)
    return Workload(f"harmony-{arrivals}-{n_jobs}-s{seed}", n_servers, tuple(jobs))


def _policy(name: str, time_limit: float) -> Callable[[Instance, PlacementView], Placement]:
    if name in HEURISTICS:
        place = heuristic(name)
        return lambda inst, view: place(view)
    if name == "exact":
        from hetsched.solve import solve

        def exact(inst: Instance, view: PlacementView) -> Placement:
            res = solve(inst, "harmony-placement", "highs", time_limit=time_limit, threads=1)
            if res.solution is None:
                raise HetschedError(
                    f"exact placement found no solution in interval '{inst.name}' ({res.status.value})"
                )
            return res.solution

        return exact
    raise HetschedError(f"unknown placement policy '{name}' (known: {', '.join(METHODS)})")


@dataclass
class JobRecord:
    id: str
    model: str
    arrival: float
    start: float | None = None
    completion: float | None = None
    remaining: float = 0.0
    placed: dict = field(default_factory=dict)  # server id -> {workers, parameter_servers}


ORDERS = ("arrival", "reward")


def simulate_placement(
    workload: Workload,
    policy: str,
    time_limit: float = 10.0,
    order: str = "arrival",
    max_intervals: int = 100_000,
) -> dict:
    """Run ``policy`` (one of :data:`POLICIES`) on the workload; returns metrics and per-job rows.
    ``order``: the waiting jobs are offered in arrival order (Harmony) or by largest reward
    weight b_n / e_n first (``reward``: the order the per-interval reward itself favours, which
    makes the rules comparable with ``exact``, free to choose which jobs wait)."""
    if order not in ORDERS:
        raise HetschedError(f"unknown job order '{order}' (known: {', '.join(ORDERS)})")
    place = _policy(policy, time_limit)
    jobs = {j["id"]: j for j in workload.jobs}
    rec = {
        j["id"]: JobRecord(j["id"], j["model"], float(j["arrival"]), remaining=float(j["epochs"]))
        for j in workload.jobs
    }
    gpu_time, rewards, t = 0.0, [], 0
    while any(r.completion is None for r in rec.values()):
        if t > max_intervals:
            raise HetschedError(
                f"{policy}: jobs still unfinished after {max_intervals} intervals (a job that never fits?)"
            )
        running = [r for r in rec.values() if r.start is not None and r.completion is None]
        waiting = [r for r in rec.values() if r.start is None and r.arrival <= t]
        if order == "reward":
            waiting.sort(key=lambda r: -data.STANDALONE_SPEED[r.model] / jobs[r.id]["epochs"])
        if not running and not waiting:
            t = max(t + 1, math.ceil(min(r.arrival for r in rec.values() if r.start is None)))
            continue
        batch = [dict(jobs[r.id], epochs=jobs[r.id]["epochs"]) for r in running + waiting]
        inst = make_instance(
            f"{workload.name}-t{t}", workload.n_servers, batch, {r.id: r.placed for r in running}
        )
        view = placement_view(inst)
        plan = place(inst, view) if waiting else Placement({})
        report = check_placement(inst, plan)
        if not report.valid:
            raise HetschedError(
                f"{policy}: invalid placement at interval {t}: {report.violations[0].message}"
            )
        for jid, on in plan.jobs.items():
            r = rec[jid]
            r.start, r.placed = (
                float(t),
                {s: {"workers": w, "parameter_servers": p} for s, (w, p) in on.items()},
            )
        rewards.append(float(report.objective))
        for r in rec.values():
            if r.start is None or r.completion is not None:
                continue
            speed = report.completion[r.id]
            gpus = sum(c["workers"] for c in r.placed.values()) * float(
                view.worker_demand[view.job_ids.index(r.id), 0]
            )
            if speed * 1.0 >= r.remaining - 1e-12:
                r.completion = t + r.remaining / speed
                gpu_time += gpus * (r.completion - t)
                r.remaining = 0.0
            else:
                r.remaining -= speed
                gpu_time += gpus
        t += 1
    out = _metrics(workload, policy, rec, gpu_time, rewards)
    out["order"] = order
    return out


def _metrics(
    workload: Workload,
    policy: str,
    rec: dict[str, JobRecord],
    gpu_time: float,
    rewards: list[float],
) -> dict:
    jct = np.array([r.completion - r.arrival for r in rec.values()])
    wait = np.array([r.start - r.arrival for r in rec.values()])
    first = min(r.arrival for r in rec.values())
    makespan = max(r.completion for r in rec.values()) - first
    gpus = workload.n_servers * data.SERVER["gpu"]
    m = {
        "avg_jct": float(jct.mean()),
        "median_jct": float(np.median(jct)),
        "makespan": float(makespan),
        "waiting_time": float(wait.mean()),
        "utilization": float(gpu_time / (gpus * makespan)) if makespan > 0 else 0.0,
        "mean_interval_reward": float(np.mean(rewards)) if rewards else 0.0,
    }
    return {
        "workload": workload.name,
        "policy": policy,
        "unit": f"intervals of {INTERVAL_MINUTES:g} minutes",
        "metrics": m,
        "metrics_minutes": {
            k: v * INTERVAL_MINUTES
            for k, v in m.items()
            if k in ("avg_jct", "median_jct", "makespan", "waiting_time")
        },
        "jobs": [
            {
                "id": r.id,
                "model": r.model,
                "arrival": r.arrival,
                "start": r.start,
                "completion": r.completion,
                "jct": r.completion - r.arrival,
                "placement": r.placed,
            }
            for r in rec.values()
        ],
    }
