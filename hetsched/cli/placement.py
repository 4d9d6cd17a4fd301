"""Placement commands (Harmony, ToN'22): ``place`` (every method on one interval, against the
exact optimum) and ``place-sim`` (the interval-driven simulation with metrics). Registered by
:func:`hetsched.cli.build_parser`; errors are :class:`HetschedError` (exit 2)."""

from __future__ import annotations

import argparse
from pathlib import Path

from hetsched.cli.args import MAX_JOBS, MAX_SERVERS, count, name_list, positive
from hetsched.cli.common import EXIT_OK
from hetsched.jsonout import json_text

METHODS = ("load-balancing", "bin-packing", "tetris", "standalone", "greedy", "greedy-learned")


def cmd_place(args: argparse.Namespace) -> int:
    from hetsched.instance.io import load_instance
    from hetsched.placement.heuristics import greedy_by_reward, place_by_rule
    from hetsched.placement.predictor import default_predictor
    from hetsched.placement.problem import check_placement, placement_view
    from hetsched.solve import solve
    from hetsched.solvers import Status

    inst = load_instance(args.instance)
    view = placement_view(inst)
    exact = solve(
        inst,
        "harmony-placement",
        "highs",
        time_limit=args.time_limit,
        options={"place_all": True} if args.place_all else None,
    )
    rows = []
    for name in args.methods:
        if name == "greedy":
            plan = greedy_by_reward(view)
        elif name == "greedy-learned":
            plan = greedy_by_reward(view, default_predictor().speed_fractions)
        else:
            plan = place_by_rule(view, name)
        rep = check_placement(inst, plan)
        if not rep.valid:  # a bug in the method, never a result
            raise AssertionError(f"{name}: {rep.violations[0].message}")
        rows.append(
            {
                "method": name,
                "reward": rep.objective,
                "waiting": [
                    j
                    for j in view.job_ids
                    if view.new[view.job_ids.index(j)] and j not in plan.jobs
                ],
                "placement": plan.to_dict()["placement"],
            }
        )
    ok = (
        exact.status in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT)
        and exact.objective is not None
    )
    for r in rows:
        r["optimum_over_reward"] = exact.objective / r["reward"] if ok and r["reward"] > 0 else None
    summary = {
        "instance": inst.name,
        "exact": {
            "status": exact.status.value,
            "objective": exact.objective,
            "bound": exact.bound,
            "gap": exact.gap,
            "place_all": args.place_all,
            "placement": exact.solution.to_dict()["placement"] if exact.solution else None,
        },
        "methods": rows,
    }
    if args.json:
        print(json_text(summary))
        return EXIT_OK
    print(
        f"instance {inst.name}: {int(view.new.sum())} new job(s), {int((~view.new).sum())} earlier, {view.n_servers} server(s)"
    )
    status = exact.status.value + (" (every new job placed)" if args.place_all else "")
    print(
        f"{'exact (MILP)':<16} reward {exact.objective if exact.objective is not None else float('nan'):.6g}  [{status}; bound {exact.bound}]"
    )
    for r in rows:
        ratio = f"{r['optimum_over_reward']:.4f}" if r["optimum_over_reward"] else "-"
        wait = f"  waiting: {', '.join(r['waiting'])}" if r["waiting"] else ""
        print(f"{r['method']:<16} reward {r['reward']:.6g}  optimum/reward {ratio}{wait}")
    return EXIT_OK


def cmd_place_sim(args: argparse.Namespace) -> int:
    from hetsched.sim.placement import harmony_workload, simulate_placement
    from hetsched.stored_runs import run_or_resume

    wl = harmony_workload(args.seed, args.jobs, args.servers, args.arrivals)
    out = Path(args.out) if args.out else None
    results = []
    for policy in args.policies:
        res = run_or_resume(
            out,
            f"{wl.name}-{policy}-{args.order}",
            lambda: simulate_placement(wl, policy, time_limit=args.time_limit, order=args.order),
            ["id", "model", "arrival", "start", "completion", "jct"],
        )
        results.append(res)
        if not args.json:
            m = res["metrics"]
            print(
                f"{policy:<16} avg JCT {m['avg_jct']:8.2f}  median {m['median_jct']:8.2f}  makespan {m['makespan']:8.2f}  "
                f"waiting {m['waiting_time']:8.2f}  utilization {m['utilization']:.3f}  (intervals)",
                flush=True,
            )
    if args.json:
        print(
            json_text(
                {
                    "workload": wl.name,
                    "order": args.order,
                    "results": [{"policy": r["policy"], "metrics": r["metrics"]} for r in results],
                }
            )
        )
    return EXIT_OK


#: the commands this module registers, with their one-line help (``hetsched --help`` lists
#: them without importing anything a command needs)
COMMANDS = {
    "place": "place one interval's jobs by every method and compare with the exact optimum (Harmony)",
    "place-sim": "simulate interval-by-interval placement (Harmony's setting): JCT, makespan, waiting, utilization",
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add these commands to the ``hetsched`` parser."""
    positive_float = positive(float)
    from hetsched.sim.placement import ORDERS, POLICIES

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
        type=positive_float,
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
        "--order", choices=ORDERS, default="arrival", help="order the waiting jobs are offered in"
    )
    s.add_argument("--seed", type=int, default=0)
    s.add_argument(
        "--time-limit",
        type=positive_float,
        default=10.0,
        metavar="S",
        help="per interval, policy exact",
    )
    s.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="per-job CSVs and the run store runs.jsonl; a rerun resumes",
    )
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_place_sim)
