"""``hetsched bench``: speed and scale measured, results as JSON (never timed tests)."""

from __future__ import annotations

import argparse
import os

from hetsched.cli.args import (
    Output,
    declare_outputs,
    family_list,
    positive_int_list,
    seconds,
    thread_count,
)
from hetsched.core.errors import HetschedError


def cmd_bench(args: argparse.Namespace) -> int:
    from hetsched.bench.exact import run_exact_bench
    from hetsched.bench.hare import run_hare_bench

    out = args.out or f"bench-results/{args.suite}.json"  # the JSON suites' default file
    if args.suite == "gavel":
        from hetsched.bench.gavel import run_gavel_bench

        return run_gavel_bench(out, args.json, args.quick, throughputs=args.throughputs)
    if args.suite == "sim":
        from hetsched.bench.sim import run_sim_bench

        return run_sim_bench(out, args.json, args.quick, all_sizes=args.all_sizes)
    if args.suite == "startup":
        from hetsched.bench.startup import run_startup_bench

        return run_startup_bench(out, args.json)
    if args.suite == "hadar":
        from hetsched.bench.hadar import run_hadar_bench

        return run_hadar_bench(out, args.json, args.quick)
    if args.suite == "hare":
        return run_hare_bench(out, args.json, args.quick)
    if args.suite == "exact" and args.family == "hare-audit-large":
        from hetsched.bench.relaxation import run_relaxation_bench

        return run_relaxation_bench(
            args.solvers.split(",") if args.solvers else None,
            time_limit=args.time_limit,
            out=args.out or "bench-results/exact-audit-large.jsonl",
            as_json=args.json,
            quick=args.quick,
        )
    if args.suite == "exact" and args.family != "ladder":
        from hetsched.bench.wct import run_wct_bench

        return run_wct_bench(
            args.family.split(","),
            args.solvers.split(",") if args.solvers else None,
            time_limit=args.time_limit,
            out=args.out or "bench-results/exact-wct.jsonl",
            as_json=args.json,
            quick=args.quick,
        )
    if args.suite == "exact":
        return run_exact_bench(
            time_limit=args.time_limit,
            out=args.out or "bench-results/exact.jsonl",
            as_json=args.json,
            threads=args.threads,
            solvers=args.solvers.split(",") if args.solvers else None,
            quick=args.quick,
            gpu_counts=tuple(args.gpus),
            all_sizes=args.all_sizes,
        )
    raise HetschedError(f"unknown benchmark '{args.suite}'")


#: the commands this module registers, with their one-line help (``hetsched --help`` lists
#: them without importing anything a command needs)
COMMANDS = {
    "bench": "measure speed; results as JSON",
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add these commands to the ``hetsched`` parser."""
    b = sub.add_parser("bench", help=COMMANDS["bench"])
    b.add_argument(
        "suite",
        choices=["exact", "hare", "gavel", "hadar", "sim", "startup"],
        help="exact: largest sizes each exact method proves; hare: Algorithm 1 tasks/s, the paper-scale "
        "pipeline and heuristic's memory per task; gavel: max-min fairness at 256-16,384 jobs against "
        "cvxpy+ECOS; hadar: DP_allocation "
        "with 2000 queued jobs on 60 GPUs (exact DP vs branch and bound, one round, online rounds); sim: simulated "
        "jobs/s on the Philly window and 10,000 jobs; startup: CPU time, memory and libraries loaded "
        "by --help, simulate and allocate --fast against a bare interpreter",
    )
    b.add_argument("--throughputs", default=None, help="gavel: Gavel's throughput table")
    b.add_argument("--time-limit", type=seconds, default=60.0, metavar="S")
    b.add_argument("--threads", type=thread_count, default=min(2, os.cpu_count() or 1), metavar="N")
    b.add_argument(
        "--solvers",
        default=None,
        help="exact: methods to run (default highs,cpsat,colgen on the ladder, bp on "
        "pm-wct/rm-wct, cpsat,colgen on hare-random, auto on hare-table2)",
    )
    b.add_argument(
        "--family",
        default="ladder",
        type=family_list,
        metavar="F[,F]",
        help="exact: ladder (Hare's rounds; default), or some of the literature's P||sum wC and "
        "R||sum wC families pm-wct and rm-wct, Hare_Sched's hare-random (jobs of 1-3 rounds "
        "of 1-3 tasks, arrivals) and hare-table2 (Hare's mix, 6x8 to 200x160), comma-separated; "
        "or hare-audit-large alone (hare-sched-rl-subsets on the audit's 20-40-task instances)",
    )
    b.add_argument(
        "--gpus",
        default="2,4,8",
        type=positive_int_list,
        metavar="M,M",
        help="exact: the GPU counts of the ladder instances",
    )
    b.add_argument(
        "--all-sizes",
        action="store_true",
        help="exact: run every size, also past the first one a method does not prove (its gap at the "
        "limit); sim: also 100,000 jobs per online policy (minutes each)",
    )
    b.add_argument(
        "--out",
        default=None,
        help="exact: JSON lines (default bench-results/exact.jsonl), appended as "
        "each run ends, rerunning resumes; hare: one JSON file (default bench-results/hare.json)",
    )
    b.add_argument(
        "--quick", action="store_true", help="the two smallest sizes only (a smoke test)"
    )
    b.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    b.set_defaults(func=cmd_bench)
    declare_outputs(b, Output("out"))
