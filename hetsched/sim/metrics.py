"""Metrics of a simulated run, computed from the validator's completion times (never the
engine's own bookkeeping): total weighted completion (Hare's objective sum w_n C_n), total
weighted JCT, average and median JCT, makespan, finish-time fairness, GPU utilization and
queueing delay; per job as CSV rows.

Finish-time fairness (Themis, as Gavel and Hadar use it): rho_n = JCT_n / t_n^iso with
t_n^iso = N x the job's JCT alone on the whole cluster (each round's tasks list-scheduled on the
GPU that finishes them first), N the number of jobs; ``ftf`` is max_n rho_n, ``ftf_mean`` the mean.
Job-level runs (:mod:`hetsched.sim.gang_engine`) use the same rows, with t_n^iso = N x the job
alone on its fastest gang, and the gang validator's completions.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hetsched.core.files import atomic_path
from hetsched.hare.view import HareView, hare_view
from hetsched.instance.model import Instance
from hetsched.sim.engine import SimResult


def alone_round_time(view: HareView, n: int) -> float:
    """One round of job n alone on every GPU: each task to the GPU where it trains+syncs first."""
    free = np.zeros(view.n_gpus)
    end = 0.0
    for _ in range(int(view.tasks_per_round[n])):
        m = int(np.argmin(free + view.train[n]))
        end = max(end, free[m] + view.train[n, m] + view.sync[n, m])
        free[m] += view.train[n, m]
    return end


@dataclass(frozen=True)
class JobRow:
    job: str
    arrival: float
    weight: float
    first_start: float
    completion: float
    jct: float
    queueing_delay: float
    ftf_rho: float


def job_rows(instance: Instance, result: SimResult) -> list[JobRow]:
    view = hare_view(instance)
    return _rows(
        result,
        view.job_ids,
        view.arrival,
        view.weight,
        [
            view.n_jobs * float(view.rounds[n]) * alone_round_time(view, n)
            for n in range(view.n_jobs)
        ],
    )


def _rows(result, job_ids, arrival, weight, isolated) -> list[JobRow]:
    """One row per job from the validated completions (the run's own when it was not validated);
    ``isolated``: t^iso, the finish-time-fairness denominator."""
    completion = result.validation.completion if result.validation else result.completion
    rows = []
    for n, jid in enumerate(job_ids):
        c, a, start = completion[jid], float(arrival[n]), result.first_start[jid]
        rows.append(
            JobRow(jid, a, float(weight[n]), start, c, c - a, start - a, (c - a) / isolated[n])
        )
    return rows


def metrics(instance: Instance, result: SimResult) -> dict[str, float]:
    """The summary metrics of a task-level run (module docstring)."""
    view = hare_view(instance)
    return summarize(job_rows(instance, result), _busy(view, result), view.n_gpus)


def summarize(rows: list[JobRow], busy_gpu_seconds: float, n_gpus: int) -> dict[str, float]:
    """Summary metrics from per-job rows and the GPU-seconds the jobs held (both engines)."""
    jct = np.array([r.jct for r in rows])
    w = np.array([r.weight for r in rows])
    start, end = min(r.arrival for r in rows), max(r.completion for r in rows)
    return {
        "jobs": len(rows),
        "weighted_completion": float(sum(r.weight * r.completion for r in rows)),
        "weighted_jct": float((w * jct).sum()),
        "avg_jct": float(jct.mean()),
        "median_jct": float(np.median(jct)),
        "makespan": float(end - start),
        "ftf": float(max(r.ftf_rho for r in rows)),
        "ftf_mean": float(np.mean([r.ftf_rho for r in rows])),
        "utilization": float(busy_gpu_seconds / (n_gpus * (end - start))) if end > start else 0.0,
        "queueing_delay": float(np.mean([r.queueing_delay for r in rows])),
    }


def gang_job_rows(instance: Instance, result) -> list[JobRow]:
    """Per-job rows of a job-level run (:class:`~hetsched.sim.gang_engine.GangSimResult`), from the
    gang validator's completions; t^iso = N x the job alone on its fastest gang."""
    from hetsched.sim.gang_model import gang_jobs

    data = gang_jobs(instance)
    iso = [data.n_jobs * data.alone_seconds(j) for j in range(data.n_jobs)]
    return _rows(result, data.job_ids, data.arrival, data.weight, iso)


def gang_metrics(instance: Instance, result) -> dict[str, float]:
    """The summary metrics of a job-level run; utilization counts the GPU-seconds jobs held
    (restores included), as the gang validator recomputes them."""
    from hetsched.sim.gang_validate import validate_gang

    report = result.validation or validate_gang(
        instance, result.segments, result.restore_seconds, result.round_seconds
    )
    out = summarize(gang_job_rows(instance, result), report.busy_gpu_seconds, len(instance.gpus))
    out["restores"] = float(report.restores)
    return out


def _busy(view: HareView, result: SimResult) -> float:
    sched = result.schedule
    job_at = {j: n for n, j in enumerate(view.job_ids)}
    gpu_at = {g: m for m, g in enumerate(view.gpu_ids)}
    jobs = np.array([job_at[j] for j in sched.job_ids], dtype=np.int64)
    gpus = np.array([gpu_at[g] for g in sched.gpu_ids], dtype=np.int64)
    # added in schedule order, one by one, as before the columns (numpy's pairwise sum differs
    # in the last bits, and the utilization it feeds is reported to 10 digits)
    return float(sum(view.train[jobs[sched.job], gpus[sched.gpu]].tolist()))


def write_job_csv(instance: Instance, result, path: str | Path) -> None:
    """One row per job (either engine's result)."""
    rows = (
        gang_job_rows(instance, result)
        if hasattr(result, "segments")
        else job_rows(instance, result)
    )
    with atomic_path(path) as tmp, tmp.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(list(JobRow.__dataclass_fields__))
        for r in rows:
            out.writerow(
                [
                    r.job,
                    r.arrival,
                    r.weight,
                    r.first_start,
                    r.completion,
                    r.jct,
                    r.queueing_delay,
                    r.ftf_rho,
                ]
            )


def jobs_in_system(instance: Instance, completion: dict[str, float]) -> tuple[float, int]:
    """(mean, max) of the number of jobs arrived and not yet complete, sampled at every arrival
    and completion: whether a workload's backlog stays bounded as it grows."""
    arrival = np.array([j.arrival for j in instance.jobs])
    done = np.array([completion[j.id] for j in instance.jobs])
    times = np.concatenate([arrival, done])
    step = np.concatenate([np.ones(len(arrival)), -np.ones(len(done))])
    order = np.lexsort((step, times))  # at one instant, completions first
    inside = np.cumsum(step[order])
    return float(inside.mean()), int(inside.max())
