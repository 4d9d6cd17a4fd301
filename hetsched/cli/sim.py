"""``simulate`` (one online policy on a workload) and ``compare`` (several, with a table, CSVs and the JCT CDF)."""

from __future__ import annotations

import argparse
import sys

from hetsched.cli.args import (
    MAX_JOBS,
    Output,
    count,
    declare_outputs,
    json_flag,
    non_negative_float,
    policy_list,
    seconds,
    seed_value,
)
from hetsched.cli.common import EXIT_FAIL, EXIT_OK, fmt
from hetsched.core.jsonio import json_text


def cmd_simulate(args: argparse.Namespace) -> int:
    from hetsched.sim.run import RunNotFinished, file_stem, run_policy
    from hetsched.sim.workloads import load_workload

    inst = load_workload(args.workload, seed=args.seed, n_jobs=args.jobs)
    try:
        s = run_policy(
            inst,
            args.policy,
            seed=args.seed,
            out=args.out,
            workload=args.workload,
            round_seconds=args.round_seconds,
            restore_seconds=args.restore_seconds,
            convention=args.convention,
            time_limit=args.time_limit,
        )
    except RunNotFinished as exc:  # not the input's fault: the run was stopped
        print(f"hetsched simulate: {args.workload}: {exc}; nothing written", file=sys.stderr)
        return EXIT_FAIL
    s.pop("_jct")
    if args.json:
        print(json_text(s))
    else:
        size = (
            f"{s['tasks']} tasks"
            if s["level"] == "task"
            else f"{s['rounds']} rounds of {s['round_seconds']:g} s, {s['preemptions']} preemptions, "
            f"{s['convention']} convention"
        )
        print(f"workload   {args.workload} ({s['metrics']['jobs']} jobs, {size}), seed {args.seed}")
        print(f"policy     {args.policy}: valid {s['valid']}, simulated in {s['seconds']:.2f} s")
        for k, val in s["metrics"].items():
            print(f"  {k:<20} {fmt(val)}")
        for k, val in s.get("solver", {}).items():
            print(f"  {k:<20} {fmt(val) if not isinstance(val, str) else val}")
        if args.out:
            stem = file_stem(args.policy)
            print(f"-> {args.out}/{stem}.json, {args.out}/{stem}-jobs.csv")
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from hetsched.sim.run import compare, finished
    from hetsched.sim.workloads import load_workload

    inst = load_workload(args.workload, seed=args.seed, n_jobs=args.jobs)
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if not args.quiet else None
    result = compare(
        inst,
        policy_list(args.policies),
        seed=args.seed,
        out=args.out,
        workload=args.workload,
        progress=say,
        round_seconds=args.round_seconds,
        restore_seconds=args.restore_seconds,
        convention=args.convention,
        time_limit=args.time_limit,
    )
    print_comparison(result)
    print(f"-> {args.out}/compare.json and the JCT CDF in {args.out}/")
    return EXIT_OK if all(finished(r) for r in result.rows) else EXIT_FAIL  # not all compared


def shortcut(args: argparse.Namespace, instance, policies: list[str], **engine):
    """``compare`` for a shortcut command (``similarity-sim``, ``place-sim``): the runs go to
    ``--out`` (or a scratch directory); prints ``--json`` or the tables; returns the
    :class:`~hetsched.sim.run.Comparison`. ``engine``: ``compare``'s round options."""
    import tempfile

    from hetsched.sim.run import compare

    say = None if args.json else (lambda line: print(line, file=sys.stderr, flush=True))
    with tempfile.TemporaryDirectory() as scratch:
        result = compare(
            instance,
            policies,
            seed=args.seed,
            out=args.out or scratch,
            workload=instance.name,
            progress=say,
            convention="hetsched",
            **engine,
        )
    if args.json:
        results = [
            {"policy": r["policy"], "metrics": r["metrics"], "ratio_to_bound": r["ratio_to_bound"]}
            for r in result.rows
        ]
        print(json_text({"workload": instance.name, "bounds": result.bounds, "results": results}))
    else:
        print_comparison(result)
        if args.out:
            print(f"-> {args.out}/compare.json, per-job CSVs and the JCT CDF")
    return result


def print_comparison(result) -> None:
    """The table of a :class:`~hetsched.sim.run.Comparison`: each policy's metrics, the proven
    lower bounds and each policy over its bound."""
    from hetsched.sim.run import finished

    rows = [r for r in result.rows if finished(r)]
    stopped = [r for r in result.rows if not finished(r)]
    keys = (
        "avg_jct",
        "median_jct",
        "weighted_completion",
        "makespan",
        "ftf",
        "utilization",
        "queueing_delay",
    )
    from hetsched.core.tables import aligned

    print(
        aligned(
            ("policy", *keys), [(r["policy"], *(fmt(r["metrics"][k]) for k in keys)) for r in rows]
        )
    )
    from hetsched.sim.bounds import BOUNDED

    bounds = result.bounds
    print("\nproven lower bounds (any policy, this workload; see hetsched.sim.bounds):")
    # a policy on GPU groups (hlas:U) is bounded on its grouped model: say whose bound is whose
    of = {
        name: ",".join(r["policy"] for r in rows if r.get("lower_bound") == name) for name in bounds
    }
    print(
        aligned(
            ("bound", *BOUNDED, "how", "policies"),
            [
                (name, *(fmt(b[k]) for k in BOUNDED), b["method"]["weighted_completion"], of[name])
                for name, b in bounds.items()
            ],
        )
    )
    print("\neach policy over its bound:")
    print(
        aligned(
            ("policy", *BOUNDED),
            [(r["policy"], *(f"{r['ratio_to_bound'][k]:.3f}x" for k in BOUNDED)) for r in rows],
        )
    )
    for r in stopped:
        print(f"\n{r['policy']}: did not finish within the time limit ({r['time_limit']:g} s)")


#: the commands this module registers, with their one-line help (``hetsched --help`` lists
#: them without importing anything a command needs)
COMMANDS = {
    "simulate": "simulate an online policy on a workload; validated; metrics",
    "compare": "several policies on one workload: a table, JSON, per-job CSVs, JCT CDF",
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add these commands to the ``hetsched`` parser."""
    from hetsched.sim.registry import usage

    task_names, job_names = usage("task"), usage("job")
    policy_names = task_names + job_names

    def add_engine_options(p: argparse.ArgumentParser, stopped: str) -> None:
        p.add_argument(
            "--round-seconds",
            type=seconds,
            default=360.0,
            metavar="S",
            help="job-level policies: scheduling round length (default 360, Gavel's and Hadar's)",
        )
        p.add_argument(
            "--restore-seconds",
            type=non_negative_float,
            default=None,
            metavar="S",
            help="job-level policies: checkpoint-restore delay when a job resumes or moves "
            "(default 10, Hadar's; 0 under Gavel's convention, as in Gavel's simulator)",
        )
        p.add_argument(
            "--convention",
            choices=("auto", "hetsched", "gavel"),
            default="auto",
            help="job-level policies: round timing and Gavel's mechanism as in Gavel's own "
            "simulator ('gavel'), or fixed rounds ('hetsched'); auto: gavel on gavel-trace: "
            "workloads (see docs/reproduction.md)",
        )
        p.add_argument(
            "--time-limit",
            type=seconds,
            default=None,
            metavar="S",
            help=f"stop a policy's run after S s of wall time (default: none); {stopped}",
        )

    workload_help = (
        "an instance file, hare-table2, gavel-poisson[:LOAD|stable] (LOAD: of the fluid capacity, e.g. 0.8; stable: 0.4), philly[:VC] (480-job busy window), "
        "philly-static[:VC] (its jobs all at time 0), harmony-jobs[:uniform|poisson], "
        "similarity-jobs[:MINUTES] or gavel-trace:PATH (see hetsched.sim.workloads)"
    )
    sm = sub.add_parser("simulate", help=COMMANDS["simulate"])
    sm.add_argument("workload", help=workload_help)
    sm.add_argument(
        "--policy",
        required=True,
        metavar="NAME",
        help=f"task-level: {', '.join(task_names)}; job-level (gang): {', '.join(job_names)}",
    )
    sm.add_argument("--seed", type=seed_value, default=0)
    sm.add_argument(
        "--jobs", type=count(MAX_JOBS), default=None, help="jobs of a generated workload"
    )
    sm.add_argument(
        "--out", default=None, help="directory for POLICY-jobs.csv and the run store runs.jsonl"
    )
    json_flag(sm, "policy, seed, workload, metrics, valid, seconds")
    add_engine_options(sm, "a stopped run writes nothing and exits 1")
    sm.set_defaults(func=cmd_simulate)
    declare_outputs(sm, Output("out", "dir"))

    cp = sub.add_parser("compare", help=COMMANDS["compare"])
    cp.add_argument("workload", help=workload_help)
    cp.add_argument(
        "--policies", required=True, help=f"comma-separated, from: {', '.join(policy_names)}"
    )
    cp.add_argument("--seed", type=seed_value, default=0)
    cp.add_argument("--jobs", type=count(MAX_JOBS), default=None)
    cp.add_argument(
        "--out", default="sim-results", help="results; runs already there are kept (resume)"
    )
    cp.add_argument("--quiet", action="store_true")
    add_engine_options(
        cp,
        "a stopped policy is not stored and gets a row saying so (compare.json: finished false); "
        "the command then exits 1",
    )
    cp.set_defaults(func=cmd_compare)
    declare_outputs(cp, Output("out", "dir"))
