"""Placement commands (Harmony, ToN'22): ``place`` (every method on one interval, against the
exact optimum) and ``place-sim`` (a shortcut for ``compare`` of Harmony's methods on its
workload, in the one gang simulator). Registered by
:func:`hetsched.cli.build_parser`; errors are :class:`HetschedError` (exit 2)."""

from __future__ import annotations

import argparse

from hetsched.cli.args import (
    MAX_JOBS,
    MAX_SERVERS,
    add_results_folder,
    count,
    name_list,
    seconds,
    seed_value,
)
from hetsched.cli.common import EXIT_OK
from hetsched.core.jsonio import json_text


def cmd_place(args: argparse.Namespace) -> int:
    from hetsched.harmony.place import place
    from hetsched.instance.io import load_instance

    report = place(load_instance(args.instance), args.methods, args.time_limit, args.place_all)
    if args.json:
        print(json_text(report.to_dict()))
        return EXIT_OK
    ex = report.exact
    print(
        f"instance {report.instance}: {report.new_jobs} new job(s), {report.earlier_jobs} earlier, "
        f"{report.servers} server(s)"
    )
    status = ex["status"] + (" (every new job placed)" if ex["place_all"] else "")
    value = ex["objective"] if ex["objective"] is not None else float("nan")
    print(f"{'exact (MILP)':<16} reward {value:.6g}  [{status}; bound {ex['bound']}]")
    for r in report.methods:
        ratio = f"{r['optimum_over_reward']:.4f}" if r["optimum_over_reward"] else "-"
        wait = f"  waiting: {', '.join(r['waiting'])}" if r["waiting"] else ""
        print(f"{r['method']:<16} reward {r['reward']:.6g}  optimum/reward {ratio}{wait}")
    return EXIT_OK


def cmd_place_sim(args: argparse.Namespace) -> int:
    from hetsched.cli.sim import shortcut
    from hetsched.harmony.data import INTERVAL_SECONDS
    from hetsched.harmony.workload import harmony_workload

    inst = harmony_workload(args.seed, args.jobs, args.servers, args.arrivals)
    suffix = "" if args.order == "arrival" else f":{args.order}"
    limit = f":{args.order}:{args.time_limit:g}" if args.time_limit != 10.0 else suffix
    policies = [f"harmony:{p}{limit if p == 'exact' else suffix}" for p in args.policies]
    result = shortcut(args, inst, policies, round_seconds=INTERVAL_SECONDS)
    if not args.json:
        print(f"\nin {INTERVAL_SECONDS / 60:g}-minute intervals (Harmony's unit):")
        for r in result.rows:
            m = {
                k: r["metrics"][k] / INTERVAL_SECONDS for k in ("avg_jct", "median_jct", "makespan")
            }
            print(
                f"{r['policy']:<28} avg JCT {m['avg_jct']:8.2f}  median {m['median_jct']:8.2f}  "
                f"makespan {m['makespan']:8.2f}  utilization {r['metrics']['utilization']:.3f}"
            )
    return EXIT_OK


#: the commands this module registers, with their one-line help (``hetsched --help`` lists
#: them without importing anything a command needs)
COMMANDS = {
    "place": "place one interval's jobs by every method and compare with the exact optimum (Harmony)",
    "place-sim": "compare Harmony's placement methods on its workload, interval by interval "
    "(a shortcut for compare)",
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add these commands to the ``hetsched`` parser."""
    from hetsched.harmony.methods import HEURISTICS as METHODS
    from hetsched.harmony.methods import METHODS as POLICIES
    from hetsched.harmony.methods import ORDERS

    p = sub.add_parser(
        "place",
        help=COMMANDS["place"],
    )
    p.add_argument("instance", help="instance JSON with metadata.placement")
    p.add_argument(
        "--methods",
        type=name_list(METHODS),
        default=list(METHODS),
        help=f"comma-separated ({', '.join(METHODS)})",
    )
    p.add_argument(
        "--place-all",
        action="store_true",
        help="the optimum must place every new job (as the methods try to)",
    )
    p.add_argument(
        "--time-limit",
        type=seconds,
        default=None,
        metavar="S",
        help="exact solve time limit (s)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_place)

    s = sub.add_parser(
        "place-sim",
        help=COMMANDS["place-sim"],
    )
    s.add_argument(
        "--policies",
        type=name_list(POLICIES),
        default=list(POLICIES[:4]),
        help=f"comma-separated ({', '.join(POLICIES)})",
    )
    s.add_argument("--jobs", type=count(MAX_JOBS), default=60)
    s.add_argument("--servers", type=count(MAX_SERVERS), default=6)
    s.add_argument("--arrivals", choices=("uniform", "poisson"), default="uniform")
    s.add_argument(
        "--order",
        choices=ORDERS,
        default="arrival",
        help="order the waiting jobs are offered in",
    )
    s.add_argument("--seed", type=seed_value, default=0)
    s.add_argument(
        "--time-limit",
        type=seconds,
        default=10.0,
        metavar="S",
        help="per interval, policy exact",
    )
    add_results_folder(s)
    s.set_defaults(func=cmd_place_sim)
