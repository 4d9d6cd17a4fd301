"""Gavel's allocation commands: ``allocate`` (the LPs of one policy) and ``import-gavel`` (a trace -> an instance)."""

from __future__ import annotations

import argparse

from hetsched.cli.args import Output, add_solver_limits, declare_outputs, json_flag
from hetsched.cli.common import EXIT_FAIL, EXIT_OK, fmt
from hetsched.core.jsonio import json_text


def cmd_allocate(args: argparse.Namespace) -> int:
    from hetsched.gavel.allocate import allocate
    from hetsched.instance.io import load_instance
    from hetsched.solvers import Status

    inst = load_instance(args.instance)
    res = allocate(
        inst,
        args.policy,
        packed=args.packed,
        route="fast" if args.fast else "reference" if args.reference else "auto",
        throughputs=args.throughputs,
        time_limit=args.time_limit,
        threads=args.threads,
        convention=args.convention,
    )
    alloc = res.solution
    out = {
        "policy": args.policy,
        "convention": args.convention,
        "solver": res.solver,
        "status": res.status.value,
        "objective": res.objective,
        "bound": res.bound,
        "gap": res.gap,
        "seconds": round(res.seconds, 6),
        "allocation": None if alloc is None else alloc.to_dict()["allocation"],
        "effective_throughput": None if alloc is None else alloc.to_dict()["effective_throughput"],
        "notes": res.notes,
    }
    if args.json:
        print(json_text(out))
    else:
        print(
            f"policy     {args.policy} ({args.convention} convention)\n"
            f"solver     {res.solver}\nstatus     {res.status.value}\n"
            f"objective  {fmt(res.objective)}\n"
            f"seconds    {res.seconds:.3f}"
        )
        if alloc is not None:  # one row per job (or per packed combination), then throughputs
            rows = alloc.rows()
            types = list(rows[0][1]) if rows else []
            width = max([12] + [len(label) + 2 for label, _ in rows])
            print(f"{'shares':<{width}}" + "".join(f"{t:>10}" for t in types))
            for label, shares in rows:
                print(f"{label:<{width}}" + "".join(f"{shares[t]:>10.4f}" for t in types))
            ids = [j.id for j in inst.jobs]
            for job, thr in zip(ids, alloc.throughput()):
                print(f"throughput {job}: {thr:.6g}")
        for n in res.notes:
            print(f"note       {n}")
    return EXIT_OK if res.status == Status.OPTIMAL else EXIT_FAIL


def cmd_import_gavel(args: argparse.Namespace) -> int:
    from hetsched.instance.gavel_table import (
        load_throughputs,
        load_trace,
        parse_cluster,
    )
    from hetsched.instance.io import dump_instance

    inst = load_trace(
        args.trace, load_throughputs(args.throughputs), parse_cluster(args.cluster), name=args.name
    )
    dump_instance(inst, args.out)
    print(f"{len(inst.jobs)} jobs on {len(inst.gpus)} GPUs -> {args.out}")
    return EXIT_OK


#: the commands this module registers, with their one-line help (``hetsched --help`` lists
#: them without importing anything a command needs)
COMMANDS = {
    "allocate": "Gavel's heterogeneity-aware allocation LPs (x_{j,r} per GPU type)",
    "import-gavel": "a Gavel trace + throughput table -> an instance file",
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add these commands to the ``hetsched`` parser."""
    from hetsched.gavel.conventions import CONVENTIONS
    from hetsched.gavel.policies import POLICIES as ALLOCATION_POLICIES

    al = sub.add_parser("allocate", help=COMMANDS["allocate"])
    al.add_argument("instance", help="instance JSON file (jobs need a throughput per GPU type)")
    al.add_argument("--policy", required=True, choices=ALLOCATION_POLICIES)
    al.add_argument(
        "--packed",
        action="store_true",
        help="space sharing over job pairs (pair throughputs from "
        "--throughputs): max-min-fairness-perf, max-throughput",
    )
    al.add_argument(
        "--throughputs",
        default=None,
        help="Gavel's throughput table for --packed (default: data/gavel/simulation_throughputs.json)",
    )
    route = al.add_mutually_exclusive_group()
    route.add_argument(
        "--fast",
        action="store_true",
        help="insist on the fast path: identical jobs merged, the max-min LPs solved by "
        "column generation over the GPU types, certified by their Lagrangian bound "
        "(max-min-fairness, max-min-fairness-perf, makespan, min-total-duration, "
        "finish-time-fairness[-agnostic]); the default "
        "takes it wherever it exists",
    )
    route.add_argument(
        "--reference",
        action="store_true",
        help="solve the Pyomo model (models/gavel) instead of the fast path; same validation",
    )
    al.add_argument(
        "--convention",
        choices=CONVENTIONS,
        default="hetsched",
        help="whose normalizers: hetsched's (equal share; default) or Gavel's code's "
        "(proportional share, raw throughput sums, its isolated share in finish-time fairness); "
        "see docs/conventions.md",
    )
    add_solver_limits(al, "solver time limit (s)")
    json_flag(al, "policy, status, objective, allocation, seconds, ...")
    al.set_defaults(func=cmd_allocate)

    ig = sub.add_parser("import-gavel", help=COMMANDS["import-gavel"])
    ig.add_argument("trace", help="Gavel trace (10-field physical_cluster or 7-field format)")
    ig.add_argument("--throughputs", default=None)
    ig.add_argument("--cluster", default="v100=4,p100=4,k80=4", help="GPU counts per worker type")
    ig.add_argument("--name", default=None)
    ig.add_argument("--out", required=True)
    ig.set_defaults(func=cmd_import_gavel)
    declare_outputs(ig, Output("out"))
