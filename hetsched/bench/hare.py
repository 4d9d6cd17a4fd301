"""`hetsched bench hare`: Algorithm 1's speed and the paper-scale pipeline.

1. Throughput of Algorithm 1 (lines 4-18: the sort by H and the list scheduling) in tasks/s at
   10^3 ... 10^6 tasks on 160 GPUs of 4 types, H from earliest starts. The compiled kernel is
   warmed up first (JIT time is reported separately); the same loop run by the interpreter
   (numba's ``py_func``) is the in-process baseline at 10^4 tasks.
2. The paper-scale pipeline (Hare Sec. 7, 200 jobs x 160 GPUs, Table 2 mix): interval LP,
   H from it, Algorithm 1, independent validation, end to end, with the gap to the LP bound.
3. Memory per task of ``hetsched heuristic --order arrival --json`` (issue 21: under 200 bytes):
   the peak resident memory of the command, in a fresh interpreter, on ``gavel-poisson`` at
   several sizes, less the peak of an interpreter that imports the same modules and loads the
   same instance; the bytes per task are the growth of that difference from one size to the
   next (fixed costs such as numba's kernels cancel), median of ``repeat`` runs.
"""

from __future__ import annotations

import json
import math
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from hetsched.bench import write_result
from hetsched.bench.startup import PEAK_CODE, child_code, run_child
from hetsched.core.jsonio import json_text
from hetsched.hare import list_scheduling as ls
from hetsched.hare.algorithm1 import hare_alg1, precedence_order
from hetsched.hare.heuristic import run_heuristic
from hetsched.hare.view import hare_view
from hetsched.instance.generators import hare_table2, random_instance
from hetsched.instance.model import instance_to_dict
from hetsched.sim.workloads import gavel_poisson

SIZES = (10**3, 10**4, 10**5, 10**6)
MEMORY_JOBS = (6_000, 12_000, 24_000)  # gavel-poisson: ~62 tasks a job
#: the baseline child: the modules `heuristic` imports, and the instance, loaded
_LOADED = (
    "import json, sys\n"
    + PEAK_CODE
    + "import hetsched.cli, hetsched.cli.exact, hetsched.hare.heuristic\n"
    "from hetsched.instance.io import load_instance\n"
    "load_instance(sys.argv[1])\n"
    "print(json.dumps([0, [], _peak_mb()]), file=sys.stderr)\n"
)


def _bench_view(n_tasks: int):
    inst = random_instance(
        0,
        n_gpus=160,
        n_types=4,
        n_jobs=max(1, n_tasks // 100),
        rounds=(10, 10),
        tasks=(10, 10),
        arrival_spread=n_tasks / 50,
    )
    return hare_view(inst)


def _arrival_h(view):
    n, r, _ = view.task_arrays
    return view.arrival[n] + r * view.min_cycle[n] + 0.5 * view.train.max(axis=1)[n]


def throughput(sizes=SIZES, repeats: int = 3) -> list[dict]:
    t0 = time.perf_counter()
    warm = _bench_view(1000)
    for rule in ls.MACHINE_RULES:
        hare_alg1(warm, _arrival_h(warm), rule)
    jit = time.perf_counter() - t0
    rows = []
    for size in sizes:
        view = _bench_view(size)
        h = _arrival_h(view)
        best = min(_timed(lambda: hare_alg1(view, h)) for _ in range(repeats))
        rows.append(
            {
                "tasks": view.n_tasks,
                "gpus": view.n_gpus,
                "seconds": round(best, 6),
                "tasks_per_second": round(view.n_tasks / best),
                "first_call_jit_seconds": round(jit, 3),
            }
        )
    # in-process baseline: the same loop interpreted, at 10^4 tasks
    view = _bench_view(10**4)
    h = _arrival_h(view)
    order = precedence_order(view, h)
    compiled = min(
        _timed(lambda: ls.schedule_in_order(view, order, "earliest_available"))
        for _ in range(repeats)
    )
    interpreted = _timed(
        lambda: ls.schedule_in_order(view, order, "earliest_available", compiled=False)
    )
    rows.append(
        {
            "baseline": "interpreted loop (numba py_func), 10^4 tasks",
            "compiled_seconds": round(compiled, 6),
            "interpreted_seconds": round(interpreted, 6),
            "speedup": round(interpreted / compiled, 1),
        }
    )
    return rows


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def paper_scale(seed: int = 0) -> list[dict]:
    rows = []
    for rule in ls.MACHINE_RULES:
        t = time.perf_counter()
        inst = hare_table2(seed)
        res = run_heuristic(inst, order="hare-interval-lp", rule=rule)
        rows.append(
            {
                "instance": inst.name,
                "jobs": len(inst.jobs),
                "gpus": len(inst.gpus),
                "tasks": sum(j.n_tasks for j in inst.jobs),
                "rule": rule,
                "order": "hare-interval-lp",
                "status": res.status.value,
                "objective": res.objective,
                "lower_bound": res.bound,
                "gap": res.gap,
                "valid": bool(res.validation.valid),
                "seconds_end_to_end": round(time.perf_counter() - t, 3),
                "notes": res.notes,
            }
        )
    return rows


def memory_per_task(jobs=MEMORY_JOBS, repeat: int = 2) -> list[dict]:
    """Part 3 (module doc): net peak MB of `heuristic` per size, and bytes per task between sizes."""
    command = child_code("open(os.devnull, 'w')")  # the schedule's JSON is streamed, not kept
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in jobs:
            inst = gavel_poisson(0, n_jobs=n)
            path = Path(tmp) / f"{inst.name}.json"
            path.write_text(json.dumps(instance_to_dict(inst)), encoding="utf-8")
            argv = ["heuristic", str(path), "--order", "arrival", "--json"]
            runs = [run_child(command, argv) for _ in range(repeat)]
            base = statistics.median(run_child(_LOADED, [str(path)])[3] for _ in range(repeat))
            peak = statistics.median(r[3] for r in runs)
            rows.append(
                {
                    "jobs": n,
                    "tasks": inst.n_tasks,
                    "exit": runs[-1][1],
                    "cpu_seconds": round(statistics.median(r[0] for r in runs), 3),
                    "peak_mb": round(peak, 1),
                    "loaded_instance_mb": round(base, 1),
                    "net_mb": round(peak - base, 1),
                }
            )
    for prev, row in zip(rows, rows[1:]):
        grown = (row["net_mb"] - prev["net_mb"]) * 2**20
        row["bytes_per_task"] = round(grown / (row["tasks"] - prev["tasks"]), 1)
        if prev["net_mb"] > 0 and row["net_mb"] > 0:
            ratio = math.log(row["net_mb"] / prev["net_mb"])
            row["slope"] = round(ratio / math.log(row["tasks"] / prev["tasks"]), 2)
    return rows


def run_hare_bench(
    out: str | Path = "bench-results/hare.json", as_json: bool = False, quick: bool = False
) -> int:
    sizes = SIZES[:2] if quick else SIZES
    result = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "throughput": throughput(sizes),
        "paper_scale": [] if quick else paper_scale(),
        "memory": memory_per_task((250, 500), repeat=1) if quick else memory_per_task(MEMORY_JOBS),
    }
    out = write_result(result, out, as_json)
    if not as_json:
        for row in result["throughput"]:
            print(json_text(row))
        for row in result["paper_scale"]:
            print(json_text({k: v for k, v in row.items() if k != "notes"}))
        for row in result["memory"]:
            print(json_text(row))
        print(f"written to {out}")
    return 0
