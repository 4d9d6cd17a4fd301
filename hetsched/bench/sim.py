"""`hetsched bench sim`: simulated jobs per second.

Goals (issue 6): the 480-job Philly window (3 types x 20 GPUs) in < 10 s; 10,000 jobs in < 2 min.
1. Every policy on the Philly window (``hetsched.sim.workloads.philly_window``): seconds end to end
   (planning, simulation, validation), jobs/s and tasks/s.
2. 10,000 jobs of ``gavel-poisson`` (arrivals at 20/h on 60 GPUs) for the online policies;
   ``hare`` (an offline LP plan of the whole trace) and ``allox`` are measured on the window only.
3. The job-level gang policies (the gang engine, 6-minute rounds, 10 s restores) on the window,
   and the cheap ones on the 10,000 jobs; Hadar's online algorithm only on the window (one
   branch and bound or DP per round: minutes, not seconds) and not with ``--quick``.
4. The event rate: the task engine under ``fifo`` against a minimal event loop with the same
   semantics (:mod:`hetsched.bench.event_loop`), CPU time, median of 3 (issue 21: within 2x).
5. Scaling: CPU seconds of every large-trace policy at 1,000 / 2,000 / 4,000 jobs and the log-log
   slope (issue 21: at most 1.1).
"""

from __future__ import annotations

import math
import platform
import statistics
import time
from pathlib import Path

from hetsched.bench import write_result
from hetsched.bench.event_loop import minimal_fifo
from hetsched.instance.hare_view import hare_view
from hetsched.sim.engine import simulate
from hetsched.sim.gang_engine import simulate_gang
from hetsched.sim.policies import POLICIES, make_policy
from hetsched.sim.workloads import gavel_poisson, philly_window
from hetsched.tables import aligned

LARGE_POLICIES = ("fifo", "gavel-fifo", "sched-homo", "srtf", "hlas", "hlas-p", "las2d")
GANG_POLICIES = ("yarn-cs", "tiresias", "gavel", "gavel:makespan")
SLOW_GANG_POLICIES = ("hadar:dp", "hadar")


def _measure_gang(instance, policy: str) -> dict:
    t = time.perf_counter()
    result = simulate_gang(instance, make_policy(policy))
    seconds = time.perf_counter() - t
    return {
        "policy": policy,
        "jobs": len(instance.jobs),
        "rounds": result.rounds,
        "seconds": round(seconds, 3),
        "jobs_per_second": round(len(instance.jobs) / seconds, 1),
        "valid": bool(result.validation.valid),
    }


def _measure(instance, policy: str) -> dict:
    t = time.perf_counter()
    result = simulate(instance, make_policy(policy), record_events=False)
    seconds = time.perf_counter() - t
    tasks = len(result.schedule.assignments)
    return {
        "policy": policy,
        "jobs": len(instance.jobs),
        "tasks": tasks,
        "seconds": round(seconds, 3),
        "jobs_per_second": round(len(instance.jobs) / seconds, 1),
        "tasks_per_second": round(tasks / seconds),
        "valid": bool(result.validation.valid),
    }


def _cpu(run, repeat: int) -> float:
    """Median CPU seconds of ``repeat`` calls of ``run()``."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        run()
        times.append(time.process_time() - t)
    return statistics.median(times)


def _slope(points: list[tuple[int, float]]) -> float | None:
    """Log-log slope of CPU time against jobs, first to last point."""
    (n0, t0), (n1, t1) = points[0], points[-1]
    if t0 <= 0 or t1 <= 0 or n1 == n0:
        return None
    return round(math.log(t1 / t0) / math.log(n1 / n0), 2)


def event_rate(sizes: tuple[int, ...], repeat: int = 3) -> list[dict]:
    """The task engine under ``fifo`` against the minimal event loop with the same semantics
    (:mod:`hetsched.bench.event_loop`), same workload, same process: CPU seconds (median of
    ``repeat``), events per second and their ratio; completion times must agree."""
    rows = []
    for n in sizes:
        inst = gavel_poisson(0, n_jobs=n)
        view = hare_view(inst)
        base, events = minimal_fifo(view)
        run = simulate(inst, make_policy("fifo"), record_events=False, check=False)
        agree = all(
            abs(run.completion[j] - base[k]) <= 1e-9 * max(1.0, base[k])
            for k, j in enumerate(view.job_ids)
        )
        t_min = _cpu(lambda: minimal_fifo(hare_view(inst)), repeat)
        t_eng = _cpu(
            lambda: simulate(inst, make_policy("fifo"), record_events=False, check=False), repeat
        )
        t_val = _cpu(lambda: simulate(inst, make_policy("fifo"), record_events=False), repeat)
        rows.append(
            {
                "jobs": n,
                "events": events,
                "minimal_cpu_seconds": round(t_min, 3),
                "engine_cpu_seconds": round(t_eng, 3),
                "engine_validated_cpu_seconds": round(t_val, 3),
                "minimal_events_per_second": round(events / t_min),
                "engine_events_per_second": round(events / t_eng),
                "engine_to_minimal": round(t_eng / t_min, 2),
                "validated_to_minimal": round(t_val / t_min, 2),
                "same_completions": agree,
            }
        )
    return rows


def scaling(sizes: tuple[int, ...]) -> list[dict]:
    """CPU seconds of every large-trace policy (task and gang engines) on ``gavel-poisson`` at
    each size, validated, and the log-log slope from the smallest to the largest size."""
    rows = []
    for engine, policies in (("task", LARGE_POLICIES), ("gang", GANG_POLICIES)):
        for policy in policies:
            points = []
            for n in sizes:
                inst = gavel_poisson(0, n_jobs=n)
                if engine == "task":
                    t = _cpu(lambda: simulate(inst, make_policy(policy), record_events=False), 1)
                else:
                    t = _cpu(
                        lambda: simulate_gang(inst, make_policy(policy), record_events=False), 1
                    )
                points.append((n, t))
            rows.append(
                {
                    "engine": engine,
                    "policy": policy,
                    "cpu_seconds": {str(n): round(t, 3) for n, t in points},
                    "slope": _slope(points),
                }
            )
    return rows


def run_sim_bench(
    out: str | Path = "bench-results/sim.json", as_json: bool = False, quick: bool = False
) -> int:
    window = philly_window(0, n_jobs=60 if quick else 480)
    large = gavel_poisson(0, n_jobs=200 if quick else 10_000)
    result = {
        "suite": "sim",
        "machine": platform.machine(),
        "python": platform.python_version(),
        "philly_window": [_measure(window, p) for p in sorted(POLICIES)],
        "large": [_measure(large, p) for p in LARGE_POLICIES],
        "philly_window_gang": [
            _measure_gang(window, p) for p in GANG_POLICIES + (() if quick else SLOW_GANG_POLICIES)
        ],
        "large_gang": [_measure_gang(large, p) for p in GANG_POLICIES],
        "event_rate": event_rate((200,), repeat=1) if quick else event_rate((2000, 8000)),
        "scaling": scaling((40, 80) if quick else (1000, 2000, 4000)),
    }
    parts = ("philly_window", "large", "philly_window_gang", "large_gang")
    path = write_result(result, out, as_json)
    if not as_json:
        rows = [
            (
                part,
                r["policy"],
                r["jobs"],
                r.get("tasks", ""),
                r.get("rounds", ""),
                f"{r['seconds']:.2f}",
                r["jobs_per_second"],
            )
            for part in parts
            for r in result[part]
        ]
        print(
            aligned(
                ("part", "policy", "jobs", "tasks", "rounds", "seconds", "jobs/s"), rows, left=2
            )
        )
        for r in result["event_rate"]:
            print(
                f"event rate, {r['jobs']} jobs: engine {r['engine_events_per_second']}/s, minimal "
                f"loop {r['minimal_events_per_second']}/s (engine/minimal {r['engine_to_minimal']}, "
                f"with validation {r['validated_to_minimal']}; same completions {r['same_completions']})"
            )
        for r in result["scaling"]:
            times = ", ".join(f"{n}: {t:.2f}" for n, t in r["cpu_seconds"].items())
            print(f"scaling {r['engine']} {r['policy']}: CPU s {times}; slope {r['slope']}")
        print(f"-> {path}")
    ok = all(r["valid"] for part in parts for r in result[part])
    return 0 if ok and all(r["same_completions"] for r in result["event_rate"]) else 1
