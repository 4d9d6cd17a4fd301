"""`hetsched bench gavel`: heterogeneity-aware max-min fairness at 256 / 1024 / 2048 / 16,384 jobs.

Workload (issue 5): equal V100/P100/K80 counts (n/4 each), scale factors from {1, 2, 4, 8}, job
types drawn uniformly among the throughput table's types for that scale factor (seeded), all
priority weights 1. Every method's time includes building its model, in the same process:

* ``fast``: :func:`hetsched.gavel.fast.fast_solve`, the default of ``hetsched allocate``
  (identical jobs merged, the LP by column generation over the GPU types);
* ``fast-unmerged``: the same without merging (what the structure is worth);
* ``highs-ipm``: the merged LP whole, as arrays, by HiGHS's interior point (the default until
  2026-11-25);
* ``pyomo``: what ``allocate --reference`` runs, the declarative model through Pyomo (compiled
  to arrays by Pyomo's standard-form compiler) and Clarabel's interior point;
* ``pyomo-highs``: the same model by HiGHS's interior point (``--solver highs``);
* ``cvxpy-ecos``: the same LP written in cvxpy, solved by ECOS (bench-only extra
  ``pip install -e ".[bench]"``; reported as missing when not installed).

A second workload with a distinct random throughput row per job (nothing to merge) shows the
worst case of the fast path. Objectives of all methods are compared. Times are CPU seconds, the
median of ``repeats`` runs (one for Pyomo with HiGHS), each including building its model; the
methods run interleaved, one run of each a round, so a passing load falls on all of them alike.
"""

from __future__ import annotations

import platform
import statistics
import time
from pathlib import Path

import numpy as np

from hetsched.bench import write_result
from hetsched.core.jsonio import json_text
from hetsched.exact.solve import solve
from hetsched.gavel.allocate import allocate
from hetsched.gavel.fast import fast_solve, solve_max_min
from hetsched.gavel.policies import coefficients
from hetsched.gavel.problem import allocation_view
from hetsched.instance.gavel_table import load_throughputs
from hetsched.instance.model import Cluster, Gpu, GpuType, Instance, Job, Server

SIZES = (256, 1024, 2048, 16_384)
PYOMO_UP_TO = 16_384  # every size since the Pyomo LPs go to HiGHS as arrays (issue 41, item 6)
TYPES = ("k80", "p100", "v100")


def workload(n: int, table=None, seed: int = 0) -> Instance:
    rng = np.random.default_rng([seed, n])
    gpus = tuple(Gpu(f"{t}-{i}", t, "s") for t in TYPES for i in range(n // 4))
    cluster = Cluster({t: GpuType(t) for t in TYPES}, (Server("s", gpus),))
    jobs = []
    for j in range(n):
        scale = int(rng.choice([1, 2, 4, 8]))
        if table is not None:
            keys = sorted(
                k
                for k in table.isolated["v100"]
                if k[1] == scale and all(table.isolated[t].get(k, 0) > 0 for t in TYPES[1:])
            )
            key = keys[int(rng.integers(len(keys)))]
            thr = {t: table.isolated[t].get(key, 0.0) for t in TYPES}
        else:
            thr = dict(zip(TYPES, np.sort(rng.uniform(0.1, 10.0, size=3)).tolist()))
        jobs.append(
            Job(
                f"J{j}",
                0.0,
                1.0,
                1,
                scale,
                {t: 1.0 for t in TYPES},
                {t: 0.0 for t in TYPES},
                requested_workers=scale,
                throughput=thr,
            )
        )
    return Instance(
        f"gavel-bench-{n}{'' if table is not None else '-distinct'}", cluster, tuple(jobs)
    )


def cvxpy_ecos(inst: Instance) -> tuple[float | None, float | None]:
    try:
        import cvxpy as cp
    except ImportError:
        return None, None
    t = time.process_time()
    from hetsched.gavel.policies import max_min_coefficients as coefficients

    v = allocation_view(inst)
    a = coefficients(v, aware=True)  # the same data; only the modelling route differs
    x = cp.Variable(a.shape)
    problem = cp.Problem(
        cp.Maximize(cp.min(cp.sum(cp.multiply(a, x), axis=1))),
        [x >= 0, cp.sum(x, axis=1) <= 1, v.scale @ x <= v.count],
    )
    problem.solve(solver="ECOS")
    return time.process_time() - t, float(problem.value)


def _timed_ecos(inst: Instance) -> float | None:
    """cvxpy + ECOS's objective (the caller times the run)."""
    return cvxpy_ecos(inst)[1]


def _whole_lp(inst: Instance) -> float:
    """The merged max-min LP whole, by HiGHS's interior point (its z)."""
    view = allocation_view(inst)
    a = coefficients(view, "max-min-fairness-perf", "hetsched")
    return solve_max_min(a, view.scale, view.count, method="ipm")[1]


def run_gavel_bench(
    out: str | Path = "bench-results/gavel.json",
    as_json: bool = False,
    quick: bool = False,
    throughputs: str | Path | None = None,
    repeats: int = 5,
) -> int:
    table = load_throughputs(throughputs)
    rows = []
    for n in SIZES[:1] if quick else SIZES:
        for inst in (workload(n, table), workload(n, None)):
            row: dict = {"instance": inst.name, "jobs": n}
            methods = [
                ("fast", lambda: fast_solve(inst, "max-min-fairness-perf")),
                ("fast-unmerged", lambda: fast_solve(inst, "max-min-fairness-perf", merge=False)),
                ("highs-ipm", lambda: _whole_lp(inst)),
            ]
            if n <= PYOMO_UP_TO:
                methods += [
                    ("pyomo", lambda: allocate(inst, "max-min-fairness-perf", route="reference")),
                    ("pyomo-highs", lambda: solve(inst, "gavel-max-min-fairness-perf", "highs")),
                ]
            ecos = cvxpy_ecos(inst)
            if ecos[0] is not None:
                methods.append(("cvxpy-ecos", lambda: _timed_ecos(inst)))
            times: dict[str, list[float]] = {name: [] for name, _ in methods}
            objectives: dict[str, float | None] = {}
            # interleaved, one run of each method a round: a load that comes and goes on a
            # shared machine falls on every method alike, and the ratios compare like with like
            for k in range(repeats):
                for method, run in methods:
                    if method == "pyomo-highs" and k:
                        continue  # seconds at 16,384 jobs; one run says what it costs
                    t = time.process_time()
                    obj = run()
                    times[method].append(time.process_time() - t)
                    objectives[method] = getattr(obj, "objective", obj)
            for method, _ in methods:
                row[method] = {
                    "seconds": round(statistics.median(times[method]), 4),
                    "objective": objectives[method],
                }
            if ecos[0] is None:
                row["cvxpy-ecos"] = {
                    "seconds": None,
                    "note": "cvxpy not installed (pip install -e '.[bench]')",
                }
            else:
                row["fast_over_cvxpy"] = round(
                    row["fast"]["seconds"] / row["cvxpy-ecos"]["seconds"], 3
                )
                if "pyomo" in row:  # the --reference route against Gavel's modelling route
                    row["pyomo_over_cvxpy"] = round(
                        row["pyomo"]["seconds"] / row["cvxpy-ecos"]["seconds"], 3
                    )
            rows.append(row)
            if not as_json:
                print(json_text(row), flush=True)
    result = {"python": platform.python_version(), "policy": "max-min-fairness-perf", "runs": rows}
    write_result(result, out, as_json)
    if not as_json:
        print(f"written to {out}")
    return 0
