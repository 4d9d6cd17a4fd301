"""`hetsched bench exact`: how far each exact method proves optimality within a time limit.

Instances from :func:`hetsched.instance.generators.ladder` (jobs of 2 rounds x 2 tasks, 3 GPU types)
grow from 8 to 64 tasks on 2, 4 and 8 GPUs. Each run is appended to a JSON-lines file as it
ends; a rerun skips what is there (resume). Once a method fails to prove a size on some
GPU count, the larger sizes on that count are recorded as skipped rather than run, unless
``all_sizes`` asks for the gap at every size.
"""

from __future__ import annotations

import json
from pathlib import Path

from hetsched.bench.runlog import largest_proven, past_the_limit, run_line, solve_row
from hetsched.core.jsonio import json_text
from hetsched.core.runstore import RunStore
from hetsched.instance.generators import ladder
from hetsched.solvers import Status

TASKS = (8, 16, 24, 32, 48, 64)
GPUS = (2, 4, 8)
METHODS = (
    ("hare-sched", "cpsat"),
    ("hare-sched-ti", "highs"),
    ("hare-sched", "highs"),
    ("hare-sched", "colgen"),
    ("hare-sched", "dfs"),
)


def run_exact_bench(
    time_limit: float = 60.0,
    out: str | Path = "bench-results/exact.jsonl",
    as_json: bool = False,
    threads: int = 2,
    solvers: list[str] | None = None,
    quick: bool = False,
    gpu_counts: tuple[int, ...] = GPUS,
    all_sizes: bool = False,
) -> int:
    done = RunStore(out, ("model", "solver", "tasks", "gpus", "time_limit"))
    methods = [m for m in METHODS if solvers is None or m[1] in solvers]
    tasks = TASKS[:2] if quick else TASKS
    rows = []
    with done.writer():  # a second run of this benchmark into the same file is refused
        for gpus in gpu_counts:
            for model, solver in methods:
                failed = False
                for n in tasks:
                    key = (model, solver, n, gpus, time_limit)
                    base = {
                        "model": model,
                        "solver": solver,
                        "tasks": n,
                        "gpus": gpus,
                        "time_limit": time_limit,
                    }
                    if key in done:
                        row = done.get(key)
                    elif failed and not all_sizes:
                        row = {
                            **base,
                            "status": "skipped",
                            "note": "not proven at a smaller size on this GPU count",
                        }
                    else:
                        inst = ladder(n, gpus, seed=0)
                        row = {
                            **base,
                            **solve_row(inst, model, solver, time_limit, threads=threads),
                            "threads": threads,
                        }
                        done.add(row)
                    if row["status"] != Status.OPTIMAL.value:
                        failed = True
                    rows.append(row)
                    if not as_json:
                        label = f"{model:>14}/{solver:<6} tasks={n:<3} gpus={gpus}"
                        print(run_line(label, row), flush=True)
    largest = largest_proven(rows, "{model}/{solver}@{gpus}gpus", "tasks")
    late = past_the_limit(rows, "{model}/{solver} tasks={tasks} gpus={gpus}")
    summary = {
        "time_limit": time_limit,
        "largest_proven_tasks": largest,
        "past_the_limit": late,
        "runs": rows,
    }
    if as_json:
        print(json_text(summary))
    else:
        print("largest size proven optimal within the limit:", json.dumps(largest, indent=1))
        print(f"runs past the limit plus grace: {', '.join(late) or 'none'}")
    return 0
