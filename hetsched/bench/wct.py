"""`hetsched bench exact --family pm-wct|rm-wct|hare-random`: the literature's parallel-machine
families and Hare_Sched's own.

P||sum w_j C_j and R||sum w_j C_j (:func:`hetsched.instance.generators.pm_wct`, :func:`rm_wct`; p and w
uniform on 1..100, the distributions of van den Akker, Hoogeveen & van de Velde 1999) at the
sizes of issue 9's goals, and ``hare-random`` (:func:`~hetsched.instance.generators.hare_random`:
jobs of 1-3 rounds of 1-3 tasks, barriers, arrivals, three GPU types) from a few jobs to 20 jobs
on 8 GPUs: each (family, jobs, GPUs, seed) solved by each method within the time limit. Every run is appended to a JSON-lines file as it ends (a rerun skips what is there) and
reports wall and CPU seconds; progress goes to stderr.
"""

from __future__ import annotations

import json
from pathlib import Path

from hetsched.bench.runlog import largest_proven, past_the_limit, run_or_resume, solve_row
from hetsched.core.jsonio import json_text
from hetsched.core.runstore import RunStore
from hetsched.instance.generators import FAMILIES

#: (family, jobs, GPUs): issue 9's 60 s goals (P2 100, P4 60, R4 40) and the steps below them, and
#: issue 44's long machine sequences (200 jobs on 8 GPUs, n/m = 25) beside 200 on 20
SIZES = {
    "pm-wct": (
        (20, 2),
        (40, 2),
        (60, 2),
        (80, 2),
        (100, 2),
        (20, 4),
        (40, 4),
        (60, 4),
        (100, 4),
        (200, 20),
        (200, 8),
    ),
    "rm-wct": ((20, 2), (40, 2), (20, 4), (40, 4), (60, 4), (80, 4), (200, 20), (200, 8)),
    "hare-random": ((4, 4), (6, 4), (8, 4), (10, 4), (6, 8), (10, 8), (20, 8)),
    # Hare's own mix (Table 2) at issue 44's sizes, up to the paper's 200 jobs x 160 GPUs
    "hare-table2": ((6, 8), (20, 16), (50, 40), (200, 160)),
}
#: the methods each family is run with unless ``--solvers`` names others: the machine-schedule
#: branch-and-price where it applies (one task per job), else CP-SAT and column generation
DEFAULT_SOLVERS = {
    "pm-wct": ("bp",),
    "rm-wct": ("bp",),
    "hare-random": ("cpsat", "colgen"),
    "hare-table2": ("auto",),  # the default of `hetsched solve`: the anytime portfolio
}
SEEDS = (1, 2, 3)
#: a family's own seeds where the issue that asks for it names them
FAMILY_SEEDS = {"hare-table2": (0, 1, 2)}


def run_wct_bench(
    families: list[str],
    solvers: list[str] | None,
    time_limit: float = 60.0,
    out: str | Path = "bench-results/exact-wct.jsonl",
    as_json: bool = False,
    quick: bool = False,
) -> int:
    done = RunStore(out, ("family", "jobs", "gpus", "seed", "solver", "time_limit"))
    rows = []
    with done.writer():  # a second run of this benchmark into the same file is refused
        for family in families:
            for n, m in SIZES[family][:2] if quick else SIZES[family]:
                seeds = FAMILY_SEEDS.get(family, SEEDS)
                for seed in seeds[:1] if quick else seeds:
                    for solver in solvers or DEFAULT_SOLVERS[family]:

                        def row(family=family, n=n, m=m, seed=seed, solver=solver) -> dict:
                            inst = FAMILIES[family](seed, n_jobs=n, n_gpus=m)
                            return {
                                "family": family,
                                "jobs": n,
                                "gpus": m,
                                "seed": seed,
                                "solver": solver,
                                "time_limit": time_limit,
                                **solve_row(inst, "hare-sched", solver, time_limit),
                            }

                        key = (family, n, m, seed, solver, time_limit)
                        label = f"{family:>7} n={n:<4} m={m} seed={seed} {solver:<6}"
                        run_or_resume(done, key, rows, row, label, as_json)
    largest = largest_proven(rows, "{family}/{solver}@{gpus}gpus", "jobs")
    late = past_the_limit(rows, "{family}/{solver} n={jobs} m={gpus} seed={seed}")
    if as_json:
        print(
            json_text(
                {
                    "time_limit": time_limit,
                    "largest_all_seeds_proven": largest,
                    "past_the_limit": late,
                    "runs": rows,
                }
            )
        )
    else:
        print(
            "largest size proven optimal on every seed within the limit:",
            json.dumps(largest, indent=1),
        )
        print(f"runs past the limit plus grace: {', '.join(late) or 'none'}")
    return 0
