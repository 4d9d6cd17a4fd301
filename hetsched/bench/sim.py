"""`hetsched bench sim`: simulated jobs per second.

Goals (issue 6): the 480-job Philly window (3 types x 20 GPUs) in < 10 s; 10,000 jobs in < 2 min.
1. Every policy on the Philly window (``hetsched.sim.workloads.philly_window``): seconds end to end
   (planning, simulation, validation), jobs/s and tasks/s.
2. 10,000 jobs of ``gavel-poisson`` (arrivals at 20/h on 60 GPUs) for the online policies;
   ``hare`` (an offline LP plan of the whole trace) and ``allox`` are measured on the window only.
3. The job-level gang policies (the gang engine, 6-minute rounds, 10 s restores) on the window,
   and the cheap ones on the 10,000 jobs; Hadar's online algorithm only on the window (one
   branch and bound or DP per round: minutes, not seconds) and not with ``--quick``.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

from hetsched.jsonout import json_text
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
    }
    parts = ("philly_window", "large", "philly_window_gang", "large_gang")
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1) + "\n")
    if as_json:
        print(json_text(result))
    else:
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
        print(f"-> {path}")
    return 0 if all(r["valid"] for part in parts for r in result[part]) else 1
